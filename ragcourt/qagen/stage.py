"""The qagen stage (spec §2; RAGalyst, RAGElo few-shot): a filtered synthetic QA set, or the
user's own QA file.

Contexts come from :mod:`ragcourt.qagen.contexts`, the agents, QA filters and budgeted loop
from :mod:`ragcourt.qagen.generator`, a bring-your-own file from :mod:`ragcourt.qagen.byo`.
Generation runs until ``n_items`` are accepted, ``max_attempts`` candidates were tried, or the
contexts run out; ``summary.json`` (:class:`~ragcourt.qagen.summaries.QASummary`) says which.
Every candidate ends in ``qa.parquet`` or in ``qa_rejected.parquet`` with the first failed
check and its reason (model and parse failures included). The ground-truth span of an item is
its context chunk's (doc_id, char_start, char_end), and ``context`` is
``documents.text[char_start:char_end]``.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError, RagcourtError, StageFailed
from ragcourt.core.failures import assess, enforce
from ragcourt.core.io import read_table, write_json, write_parquet
from ragcourt.core.schemas import frame_schema
from ragcourt.qagen.answer_first import AnswerFirstGenerator, DocumentInfo, read_span_contexts
from ragcourt.qagen.byo import load_byo_qa
from ragcourt.qagen.contexts import load_few_shot, qagen_contexts
from ragcourt.qagen.filter_registry import FILTER_ROLES
from ragcourt.qagen.generator import Candidate, Encoder, Generation, Generator, generate_candidates
from ragcourt.qagen.params import QAGenParams, QAGenView
from ragcourt.qagen.summaries import ByoQASummary, QAModels, QASummary

log = logging.getLogger("ragcourt.qagen")

DOCUMENTS_PATH = catalog.path("documents")
QA_PATH = catalog.path("qa")
REJECTED_PATH = catalog.path("qa_rejected")
SUMMARY_PATH = catalog.path("qa_summary")


@dataclass
class QAGenResult:
    """The stage's three outputs: accepted items, rejected candidates, the run summary."""

    qa: pl.DataFrame
    rejected: pl.DataFrame
    summary: QASummary


def generate_qa(contexts: pl.DataFrame, generator: Generator, encode: Encoder) -> QAGenResult:
    """:func:`~ragcourt.qagen.generator.generate_candidates`, as tables and summary."""
    gen = generate_candidates(contexts, generator, encode)
    return QAGenResult(
        qa_frame(gen.accepted, generator),
        rejected_frame(gen.rejected, generator),
        build_summary(generator, gen),
    )


# --- tables and summary --------------------------------------------------------------------


def _judge_columns(c: Candidate) -> dict[str, Any]:
    cols: dict[str, Any] = {}
    for name in FILTER_ROLES:
        o = c.outcomes.get(name)
        cols[f"{name}_score"] = o.score if o is not None else None
        cols[f"{name}_reason"] = (o.reason if o.ok else o.error) if o is not None else None
        cols[f"{name}_form"] = o.form if o is not None else None
    return cols


def _common_columns(c: Candidate, g: Generator) -> dict[str, Any]:
    return {
        "doc_id": c.doc_id,
        "char_start": c.char_start,
        "char_end": c.char_end,
        "context": c.context,
        "candidate_id": c.candidate_id,
        "source_chunk_id": c.source_chunk_id,
        "reference_chunking": g.q.reference_chunking,
        "attempt_index": c.attempt_index,
        **_judge_columns(c),
        "question_model": c.question_writer or g.roles.question,
        "answer_model": g.roles.answer,
        "filter_model": g.roles.judge,
        "prompt_version": g.q.prompt_version,
        "filter_prompt_version": g.q.filter_prompt_version,
        "method": g.q.method,
        "answer_start": c.answer_start,
        "answer_end": c.answer_end,
        "answer_type": c.answer_type,
        "long_reference": c.long_reference,
        "reader_answer": c.reader_answer,
        "roundtrip_f1": c.roundtrip_f1,
        "closed_book_answer": c.closed_book_answer,
    }


def qa_frame(accepted: Sequence[Candidate], g: Generator) -> pl.DataFrame:
    rows = [
        {
            "question_id": c.question_id,
            "question": c.question,
            "reference_answers": [c.answer],
            "origin": "generated",
            **_common_columns(c, g),
        }
        for c in accepted
    ]
    return pl.DataFrame(rows, schema=frame_schema("qa"))


def rejected_frame(rejected: Sequence[Candidate], g: Generator) -> pl.DataFrame:
    rows = [
        {
            "failed_filter": c.failed_filter,
            "reason": c.reason,
            "raw_output": c.raw_output,
            "duplicate_of": c.duplicate_of,
            "question": c.question,
            "answer": c.answer,
            **_common_columns(c, g),
        }
        for c in rejected
    ]
    return pl.DataFrame(rows, schema=frame_schema("qa_rejected"))


def failed_calls(result: QAGenResult) -> pl.DataFrame:
    """One row per tried candidate with ``error`` set when a model call or its parse failed
    (``failed_filter`` ending in ``_error``); filter rejections are not failures."""
    rejected = result.rejected.select(
        pl.when(pl.col("failed_filter").str.ends_with("_error"))
        .then(pl.col("failed_filter") + ": " + pl.col("reason").fill_null(""))
        .otherwise(None)
        .alias("error")
    )
    accepted = pl.DataFrame({"error": [None] * result.qa.height}, schema={"error": pl.String})
    return pl.concat([rejected, accepted], how="vertical")


def empty_rejected() -> pl.DataFrame:
    return pl.DataFrame(schema=frame_schema("qa_rejected"))


def _answer_types(
    tried: Sequence[Candidate], accepted: Sequence[Candidate]
) -> dict[str, dict[str, int]]:
    """Answer type -> tried / accepted counts (answer-first candidates; {} for the agents)."""
    out: dict[str, dict[str, int]] = {}
    for rows, key in ((tried, "tried"), (accepted, "accepted")):
        for c in rows:
            if c.answer_type is not None:
                out.setdefault(c.answer_type, {"tried": 0, "accepted": 0})[key] += 1
    return dict(sorted(out.items()))


def build_summary(g: Generator, gen: Generation) -> QASummary:
    """Deterministic run summary (no timings, so a re-run writes the same file)."""
    q = g.q
    tried, accepted = gen.tried, gen.accepted
    thresholds = g.thresholds()
    judged = [c for c in tried if c.outcomes]
    ran = {n: [c.outcomes[n] for c in judged if n in c.outcomes] for n in FILTER_ROLES}
    below: dict[str, int] = {
        n: sum(1 for o in ran[n] if o.ok and not o.passes(thresholds[n])) for n in FILTER_ROLES
    }
    errors: dict[str, int] = {n: sum(1 for o in ran[n] if not o.ok) for n in FILTER_ROLES}
    means: dict[str, float | None] = {
        n: float(np.mean([o.score for o in ran[n] if o.ok])) if any(o.ok for o in ran[n]) else None
        for n in FILTER_ROLES
    }
    rejections = Counter(c.failed_filter for c in gen.rejected if c.failed_filter is not None)
    forms: dict[str, dict[str, int]] = {
        n: dict(sorted(Counter(o.form or "none" for o in ran[n]).items())) for n in FILTER_ROLES
    }
    return QASummary(
        requested=q.n_items,
        accepted=len(accepted),
        attempts=len(tried),
        acceptance_rate=len(accepted) / len(tried) if tried else 0.0,
        stop_reason=gen.stop_reason,
        max_attempts=q.max_attempts,
        contexts_available=gen.contexts_available,
        documents_covered=len({c.doc_id for c in accepted}),
        rejections=dict(sorted(rejections.items())),
        judged={n: len(ran[n]) for n in FILTER_ROLES},
        judge_below_threshold=below,
        judge_errors=errors,
        judge_mean_score=means,
        thresholds=thresholds,
        judge_forms=forms,
        models=QAModels(question=g.roles.question, answer=g.roles.answer, filter=g.roles.judge),
        prompt_version=q.prompt_version,
        filter_prompt_version=q.filter_prompt_version,
        reference_chunking=q.reference_chunking,
        seed=q.seed,
        method=q.method,
        answer_types=_answer_types(tried, accepted),
    )


def no_items_message(s: QASummary, q: QAGenParams) -> str:
    """The one-line reason a generation that accepted no item fails: attempts, the top
    rejection reasons with counts, and the params to change."""
    top = sorted(s.rejections.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    reasons = ", ".join(f"{name} x{n}" for name, n in top) or "none recorded"
    changes = [
        f"a stronger qagen.question_model (now {s.models.question})",
        f"more qagen.max_attempts (now {q.max_attempts})",
    ]
    thresholds = q.thresholds.model_dump()
    lower = [name for name, _ in top if name in thresholds]
    changes += [f"a lower qagen.thresholds.{n} (now {thresholds[n]})" for n in lower]
    if not lower:
        changes.append("lower qagen.thresholds")
    return (
        f"qagen: 0 of {s.requested} items accepted after {s.attempts} attempts "
        f"({s.stop_reason}); top rejection reasons: {reasons} (every candidate and its reason "
        f"is in {REJECTED_PATH}); try " + ", ".join(changes[:-1]) + f" or {changes[-1]}"
    )


# --- stage ---------------------------------------------------------------------------------


def near_duplicate_encoder(params: QAGenView) -> Encoder:
    """``ragcourt.retrieval.embedders.encode`` with the embedder named by
    ``qagen.near_duplicate_embedder`` (a key of ``embedders``; default the first)."""
    from ragcourt.retrieval.embedders import encode

    key = params.qagen.near_duplicate_embedder or next(iter(params.embedders))
    if key not in params.embedders:
        raise ConfigError(
            f"qagen.near_duplicate_embedder '{key}' is not one of embedders "
            f"{sorted(params.embedders)}"
        )
    model = params.embedders[key].model
    return lambda texts: encode(model, texts)


def run(params: QAGenView) -> None:
    """Whole stage, paths relative to the cwd: writes qa.parquet, qa_rejected.parquet and
    summary.json (and the gateway's llm_qagen.json metrics). Generation that accepted no item
    raises :class:`StageFailed` after writing them (:func:`no_items_message`)."""
    from ragcourt.llm import Gateway

    q = params.qagen
    documents = read_table(DOCUMENTS_PATH, "documents")
    gw = Gateway(params.llm, stage="qagen")
    if q.qa_file is not None:
        qa = load_byo_qa(q.qa_file, documents)
        write_parquet(qa, QA_PATH, "qa")
        write_parquet(empty_rejected(), REJECTED_PATH, "qa_rejected")
        byo = ByoQASummary(requested=qa.height, accepted=qa.height, qa_file=q.qa_file)
        write_json(byo.model_dump(mode="json"), SUMMARY_PATH)
        gw.write_metrics()  # zero calls; the file is a DVC metric either way
        log.info("qagen: %d items from %s (generation skipped)", qa.height, q.qa_file)
        return

    chunks = read_table(catalog.path("chunks", chunking=q.reference_chunking), "chunks")
    contexts = qagen_contexts(chunks, documents, q)
    if contexts.is_empty():
        raise RagcourtError(
            f"{catalog.path('chunks', chunking=q.reference_chunking)}: no chunk has "
            f">= qagen.min_context_tokens={q.min_context_tokens} tokens"
        )
    examples = load_few_shot(q.few_shot_file) if q.few_shot_file else []
    encode = near_duplicate_encoder(params)
    generator = Generator(gw, params, examples)
    if q.method == "answer_first":
        docs = DocumentInfo.of(chunks, documents)
        spans = read_span_contexts(chunks, documents, q, docs, params.llm.models_file)
        if spans.frame.is_empty() and spans.spans_not_askable:
            probe = ", then standalone_probe" if q.answer_first.standalone_probe else ""
            raise RagcourtError(
                f"qagen answer_first: the {spans.chunks_used} sampled chunks hold "
                f"{spans.spans_not_askable} answer spans, but no standalone question is asked "
                f"in place for any (qagen.answer_first.ask_in_place rules{probe}): set "
                "qagen.answer_first.ask_in_place: [] to let the writer model ask"
            )
        if spans.frame.is_empty():
            raise RagcourtError(
                f"qagen answer_first: none of {spans.chunks_used} sampled chunks holds an "
                "answer span (entity, number, date, noun phrase of <= "
                f"qagen.answer_first.max_answer_words={q.answer_first.max_answer_words} words)"
            )
        contexts, generator = spans.frame, AnswerFirstGenerator(gw, params)
    t0 = time.perf_counter()
    result = generate_qa(contexts, generator, encode)
    minutes = (time.perf_counter() - t0) / 60
    write_parquet(result.qa, QA_PATH, "qa")
    write_parquet(result.rejected, REJECTED_PATH, "qa_rejected")
    write_json(result.summary.model_dump(mode="json"), SUMMARY_PATH)
    gw.write_metrics()
    enforce("qagen", [assess("candidates", failed_calls(result))], params.failure)
    s = result.summary
    log.info(
        "qagen: %d/%d accepted after %d attempts (%s), %.2f accepted items/min",
        s.accepted, s.requested, s.attempts, s.stop_reason,
        s.accepted / minutes if minutes > 0 else float("nan"),
    )  # fmt: skip
    if s.accepted == 0:
        raise StageFailed(no_items_message(s, q))
