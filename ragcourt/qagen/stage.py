"""Synthetic QA generation with answerability filtering (SPEC 2; RAGalyst, RAGElo few-shot).

Contexts are chunks of ``qagen.reference_chunking`` drawn in a seeded order (round-robin over
documents in a seeded order when ``stratify_by_document``). Per context: a user agent writes one
question (optionally shown ``few_shot_k`` example questions from ``few_shot_file``; a question
that points at "the text" instead of standing alone is rejected at once), an expert agent
answers from the context alone (the reference answer), then the judges of
:mod:`ragcourt.qagen.filters` score answerability (must be 1), faithfulness and relevance (>= the
thresholds), and exact / near-duplicate questions are dropped against those already kept.
Candidates are generated in rounds of up to ``batch_size`` (the gateway runs a round
concurrently) until ``n_items`` are accepted, ``max_attempts`` candidates were tried, or the
contexts run out; ``summary.json`` says which. Every candidate ends in ``qa.parquet`` or in
``qa_rejected.parquet`` with the first failed check and its reason (model and parse failures
included). The ground-truth span of an item is its context chunk's (doc_id, char_start,
char_end), and ``context`` is ``documents.text[char_start:char_end]``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError, RagcourtError, SchemaError
from ragcourt.core.io import read_table, write_json, write_parquet
from ragcourt.core.params import Params
from ragcourt.core.prompts import prompt
from ragcourt.core.schemas import TABLES
from ragcourt.llm.types import ChatRequest
from ragcourt.qagen.filters import (
    JUDGES,
    DuplicateIndex,
    JudgeOutcome,
    JudgeSettings,
    judge_answerability,
    judge_faithfulness,
    judge_relevance,
    not_standalone_reason,
)

if TYPE_CHECKING:
    from ragcourt.llm import Gateway

log = logging.getLogger("ragcourt.qagen")

DOCUMENTS_PATH = catalog.path("documents")
QA_PATH = catalog.path("qa")
REJECTED_PATH = catalog.path("qa_rejected")
SUMMARY_PATH = catalog.path("qa_summary")

STOP_N_ITEMS = "n_items_reached"
STOP_MAX_ATTEMPTS = "max_attempts_reached"
STOP_EXHAUSTED = "contexts_exhausted"
STOP_QA_FILE = "qa_file"

# failed_filter values, in the order the checks run
QUESTION_ERROR = "question_generation_error"
NOT_STANDALONE = "question_not_standalone"
ANSWER_ERROR = "answer_generation_error"
OVER_QUOTA = "over_quota"

Encoder = Callable[[list[str]], np.ndarray]


# --- context sampling ---------------------------------------------------------------------


def sample_contexts(
    chunks: pl.DataFrame,
    documents: pl.DataFrame,
    *,
    n: int,
    seed: int,
    stratify: bool,
    min_tokens: int = 1,
) -> pl.DataFrame:
    """Up to ``n`` distinct chunks in a seeded order, with ``context`` = the document slice.

    Without ``stratify``: a seeded permutation of all eligible chunks. With it: documents in a
    seeded order, each document's chunks in a seeded order, then round-robin (one chunk per
    document per turn), so the first ``n_docs`` contexts cover every document. Chunks with
    fewer than ``min_tokens`` tokens are not eligible. The result does not depend on the
    input row order. Raises RagcourtError if a chunk's text is not its document slice.
    """
    eligible = chunks.filter(pl.col("n_tokens") >= min_tokens).sort("chunk_id")
    if eligible.is_empty():
        return _contexts_frame([])
    rng = np.random.default_rng(seed)
    if stratify:
        per_doc = eligible.partition_by("doc_id", as_dict=True, maintain_order=True)
        doc_ids = sorted(k[0] for k in per_doc)
        order_docs = [doc_ids[i] for i in rng.permutation(len(doc_ids))]
        queues: list[list[int]] = []
        positions = {cid: i for i, cid in enumerate(eligible["chunk_id"].to_list())}
        for d in order_docs:
            ids = per_doc[(d,)]["chunk_id"].to_list()
            queues.append([positions[ids[j]] for j in rng.permutation(len(ids))])
        order: list[int] = []
        for turn in range(max(len(q) for q in queues)):
            order.extend(q[turn] for q in queues if turn < len(q))
    else:
        order = rng.permutation(eligible.height).tolist()
    picked = eligible[order[:n]]
    texts = dict(zip(documents["doc_id"].to_list(), documents["text"].to_list(), strict=True))
    rows = []
    for r in picked.iter_rows(named=True):
        text = texts.get(r["doc_id"])
        if text is None:
            raise RagcourtError(f"chunk '{r['chunk_id']}': doc_id '{r['doc_id']}' not in documents")
        span = text[r["char_start"] : r["char_end"]]
        if span != r["text"]:
            raise RagcourtError(
                f"chunk '{r['chunk_id']}': text differs from its document slice "
                f"[{r['char_start']}:{r['char_end']}] (re-run the chunk stage)"
            )
        rows.append((r["chunk_id"], r["doc_id"], r["char_start"], r["char_end"], span))
    return _contexts_frame(rows)


def _contexts_frame(rows: list[tuple[str, str, int, int, str]]) -> pl.DataFrame:
    schema = {
        "source_chunk_id": pl.String,
        "doc_id": pl.String,
        "char_start": pl.Int64,
        "char_end": pl.Int64,
        "context": pl.String,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


# --- few-shot examples and reply cleaning --------------------------------------------------


def load_few_shot(path: Path | str) -> list[str]:
    """Example user questions: .txt (one per line, '#' comments), .json (list of strings or
    of {"question": ...}), or .jsonl ({"question": ...} per line)."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: qagen.few_shot_file not found")
    text = p.read_text(encoding="utf-8")
    try:
        if p.suffix == ".json":
            items: list[Any] = json.loads(text)
        elif p.suffix == ".jsonl":
            items = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            items = [ln.strip() for ln in text.splitlines()]
            items = [ln for ln in items if ln and not ln.startswith("#")]
    except json.JSONDecodeError as err:
        raise ConfigError(f"{p}: invalid JSON in qagen.few_shot_file ({err})") from None
    if not isinstance(items, list):
        raise ConfigError(f"{p}: qagen.few_shot_file must hold a list of questions")
    questions: list[str] = []
    for i, it in enumerate(items, start=1):
        q = it.get("question") if isinstance(it, dict) else it
        if not isinstance(q, str) or not q.strip():
            raise ConfigError(f"{p}: item {i}: expected a non-empty question string")
        questions.append(" ".join(q.split()))
    if not questions:
        raise ConfigError(f"{p}: qagen.few_shot_file holds no questions")
    return questions


MAX_QUESTION_CHARS = 300
_LABEL = re.compile(r"^\s*(?:\*\*)?(?:question|q|answer|a)\s*\d*\s*[:.)-]\s*(?:\*\*)?\s*", re.I)
_ENUM = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s+")


def clean_question(text: str) -> str | None:
    """The question in a user-agent reply: the first non-empty line, labels ('Question:',
    '1.') and quotes removed, cut after its first '?'. None if nothing usable remains (fewer
    than 8 or more than ``MAX_QUESTION_CHARS`` characters: a run-on reply is not a question)."""
    for line in text.strip().splitlines():
        line = _ENUM.sub("", _LABEL.sub("", line)).strip().strip("\"'`“”").strip()
        if not line:
            continue
        if "?" in line:
            line = line[: line.index("?") + 1]
        return line if 8 <= len(line) <= MAX_QUESTION_CHARS else None
    return None


def clean_answer(text: str) -> str | None:
    """The reference answer in an expert reply: stripped of an 'Answer:' label; None if empty."""
    out = _LABEL.sub("", text.strip(), count=1).strip()
    return out or None


# --- the generation loop -------------------------------------------------------------------


@dataclass
class Candidate:
    """One attempted QA item, filled in as it passes through the agents and judges."""

    attempt_index: int
    source_chunk_id: str
    doc_id: str
    char_start: int
    char_end: int
    context: str
    question: str | None = None
    answer: str | None = None
    outcomes: dict[str, JudgeOutcome] = field(default_factory=dict)
    question_id: str | None = None
    failed_filter: str | None = None
    reason: str | None = None
    raw_output: str | None = None
    duplicate_of: str | None = None

    @property
    def candidate_id(self) -> str:
        return f"cand-{self.attempt_index:05d}"

    @property
    def alive(self) -> bool:
        return self.failed_filter is None

    def fail(
        self, check: str, reason: str, raw: str | None = None, duplicate_of: str | None = None
    ) -> None:
        self.failed_filter, self.reason = check, reason
        self.raw_output, self.duplicate_of = raw, duplicate_of


@dataclass(frozen=True)
class Roles:
    """Resolved model strings for the three agent roles."""

    question: str
    answer: str
    judge: str

    @classmethod
    def from_params(cls, params: Params) -> Roles:
        q, r = params.qagen, params.llm.resolve
        return cls(r(q.question_model), r(q.answer_model), r(q.filter_model))


@dataclass
class QAGenResult:
    qa: pl.DataFrame
    rejected: pl.DataFrame
    summary: dict[str, Any]


def question_id_for(c: Candidate) -> str:
    """Stable id from the span and the question text."""
    key = f"{c.doc_id}|{c.char_start}|{c.char_end}|{c.question}"
    return "q-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]


def next_batch_size(needed: int, accepted: int, attempts: int, batch_size: int, left: int) -> int:
    """Candidates for the next round: enough to fill ``needed`` at the acceptance rate seen so
    far (assumed 1 before any attempt, floored at 0.1), capped by ``batch_size`` and ``left``."""
    rate = accepted / attempts if attempts else 1.0
    want = math.ceil(needed / max(rate, 0.1))
    return max(1, min(batch_size, left, want))


class Generator:
    """Runs the agents and judges of SPEC 2 over candidates, one round at a time."""

    def __init__(
        self,
        gw: Gateway,
        params: Params,
        examples: Sequence[str] = (),
        prompts_dir: Path | None = None,
    ) -> None:
        self.gw, self.params, self.q = gw, params, params.qagen
        self.roles = Roles.from_params(params)
        self.examples = list(examples)
        self.prompts_dir = prompts_dir
        self.judge_cfg = JudgeSettings(
            model=self.roles.judge,
            prompt_version=self.q.prompt_version,
            prompts_dir=prompts_dir,
            temperature=params.llm.temperature,
            seed=params.llm.seed,
            max_tokens=self.q.judge_max_tokens,
        )

    def _prompt(self, name: str) -> str:
        return prompt("qagen", name, self.q.prompt_version, self.prompts_dir)

    def _examples_block(self, attempt_index: int) -> str:
        k = min(self.q.few_shot_k, len(self.examples))
        if k == 0:
            return ""
        rng = np.random.default_rng([self.q.seed, attempt_index])
        chosen = [self.examples[i] for i in sorted(rng.choice(len(self.examples), k, False))]
        lines = "\n".join(f"- {q}" for q in chosen)
        return self._prompt("question_examples").format(questions=lines)

    def _chat(self, model: str, system: str, user: str, max_tokens: int, tag: str) -> ChatRequest:
        return ChatRequest.of(
            model,
            system,
            user,
            max_tokens=max_tokens,
            temperature=self.params.llm.temperature,
            seed=self.params.llm.seed,
            tag=tag,
        )

    def write_questions(self, batch: Sequence[Candidate]) -> None:
        system, user = self._prompt("question_system"), self._prompt("question_user")
        reqs = [
            self._chat(
                self.roles.question,
                system,
                user.format(examples=self._examples_block(c.attempt_index), context=c.context),
                self.q.question_max_tokens,
                "qagen.question",
            )
            for c in batch
        ]
        for c, res in zip(batch, self.gw.chat(reqs, desc="qagen questions"), strict=True):
            if not res.ok:
                c.fail(QUESTION_ERROR, f"model call failed: {res.error}", res.text or None)
            elif (q := clean_question(res.text)) is None:
                c.fail(QUESTION_ERROR, "reply holds no usable question", res.text)
            else:
                c.question = q
                if (why := not_standalone_reason(q)) is not None:
                    c.fail(NOT_STANDALONE, why)

    def write_answers(self, batch: Sequence[Candidate]) -> None:
        live = [c for c in batch if c.alive]
        system, user = self._prompt("answer_system"), self._prompt("answer_user")
        reqs = [
            self._chat(
                self.roles.answer,
                system,
                user.format(context=c.context, question=c.question),
                self.q.answer_max_tokens,
                "qagen.answer",
            )
            for c in live
        ]
        results = self.gw.chat(reqs, desc="qagen answers") if reqs else []
        for c, res in zip(live, results, strict=True):
            if not res.ok:
                c.fail(ANSWER_ERROR, f"model call failed: {res.error}", res.text or None)
            elif (a := clean_answer(res.text)) is None:
                c.fail(ANSWER_ERROR, "empty answer", res.text)
            else:
                c.answer = a

    def judge(self, batch: Sequence[Candidate]) -> None:
        """Judges in order answerability, faithfulness, relevance; a candidate fails on the
        first judge that errs or scores below its threshold. With ``qagen.short_circuit`` a
        judge runs only on candidates every earlier judge passed (the others' scores stay
        null); without it every judge scores every candidate that reached the judges."""
        reached = [c for c in batch if c.alive]
        thresholds = self.thresholds()
        for name in JUDGES:
            todo = [c for c in reached if c.alive] if self.q.short_circuit else reached
            out = self._run_judge(name, todo)
            for c, o in zip(todo, out, strict=True):
                c.outcomes[name] = o
                if not c.alive:
                    continue  # already failed an earlier judge (no short-circuit mode)
                if not o.ok:
                    c.fail(f"{name}_error", f"judge failed: {o.error}", o.raw or None)
                elif not o.passes(thresholds[name]):
                    c.fail(name, f"score {o.score:g} < {thresholds[name]:g}: {o.reason}")

    def _run_judge(self, name: str, todo: Sequence[Candidate]) -> list[JudgeOutcome]:
        qs = [c.question or "" for c in todo]
        ans = [c.answer or "" for c in todo]
        ctx = [c.context for c in todo]
        desc, cfg = f"qagen {name}", self.judge_cfg
        if name == "answerability":
            return judge_answerability(self.gw, qs, ctx, cfg, desc)
        if name == "faithfulness":
            return judge_faithfulness(self.gw, ans, ctx, cfg, desc)
        return judge_relevance(self.gw, qs, ans, cfg, desc)

    def thresholds(self) -> dict[str, float]:
        """Pass marks per filter: ``score >= threshold``. Faithfulness and relevance (0-1)
        take ``qagen.thresholds``; answerability is binary (0/1, SPEC 2: all needed facts
        are in the context) and must be 1, so its threshold is fixed, not a parameter."""
        t = self.q.thresholds
        return {"answerability": 1.0, "faithfulness": t.faithfulness, "relevance": t.relevance}

    def run_round(self, batch: Sequence[Candidate]) -> None:
        self.write_questions(batch)
        self.write_answers(batch)
        self.judge(batch)


def generate_qa(
    contexts: pl.DataFrame,
    generator: Generator,
    encode: Encoder,
) -> QAGenResult:
    """The budgeted loop of SPEC 2 over ``contexts`` (in order; see :func:`sample_contexts`)."""
    q = generator.q
    budget = min(q.max_attempts, contexts.height)
    dups = DuplicateIndex(q.near_duplicate_threshold)
    accepted: list[Candidate] = []
    tried: list[Candidate] = []
    rows = contexts.to_dicts()
    rnd = 0
    while len(accepted) < q.n_items and len(tried) < budget:
        size = next_batch_size(
            q.n_items - len(accepted), len(accepted), len(tried), q.batch_size, budget - len(tried)
        )
        batch = [Candidate(len(tried) + i, **rows[len(tried) + i]) for i in range(size)]
        tried.extend(batch)
        generator.run_round(batch)
        passed = [c for c in batch if c.alive]
        vectors = encode([c.question or "" for c in passed]) if passed else np.empty((0, 1))
        for c, vec in zip(passed, vectors, strict=True):
            if len(accepted) >= q.n_items:
                c.fail(OVER_QUOTA, f"passed every filter after n_items={q.n_items} were accepted")
                continue
            hit = dups.check(c.question or "", vec)
            if hit is not None:
                c.fail(hit.kind, hit.reason, duplicate_of=hit.of_id)
                continue
            c.question_id = question_id_for(c)
            dups.add(c.question_id, c.question or "", vec)
            accepted.append(c)
        rnd += 1
        log.info(
            "qagen round %d: %d candidates, %d accepted in total after %d attempts",
            rnd, size, len(accepted), len(tried),
        )  # fmt: skip
    if len(accepted) >= q.n_items:
        stop = STOP_N_ITEMS
    elif len(tried) >= q.max_attempts:
        stop = STOP_MAX_ATTEMPTS
    else:
        stop = STOP_EXHAUSTED
    rejected = [c for c in tried if not c.alive]
    summary = build_summary(generator, tried, accepted, stop, contexts.height)
    return QAGenResult(qa_frame(accepted, generator), rejected_frame(rejected, generator), summary)


def _judge_columns(c: Candidate) -> dict[str, Any]:
    cols: dict[str, Any] = {}
    for name in JUDGES:
        o = c.outcomes.get(name)
        cols[f"{name}_score"] = o.score if o is not None else None
        cols[f"{name}_reason"] = (o.reason if o.ok else o.error) if o is not None else None
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
        "question_model": g.roles.question,
        "answer_model": g.roles.answer,
        "filter_model": g.roles.judge,
        "prompt_version": g.q.prompt_version,
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
    return pl.DataFrame(rows, schema=TABLES["qa"])


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
    return pl.DataFrame(rows, schema=TABLES["qa_rejected"])


def build_summary(
    g: Generator,
    tried: Sequence[Candidate],
    accepted: Sequence[Candidate],
    stop: str,
    n_contexts: int,
) -> dict[str, Any]:
    """Deterministic run summary (no timings, so a re-run writes the same file)."""
    q = g.q
    thresholds = g.thresholds()
    judged = [c for c in tried if c.outcomes]
    ran = {n: [c.outcomes[n] for c in judged if n in c.outcomes] for n in JUDGES}
    below = {n: sum(1 for o in ran[n] if o.ok and not o.passes(thresholds[n])) for n in JUDGES}
    errors = {n: sum(1 for o in ran[n] if not o.ok) for n in JUDGES}
    means = {
        n: float(np.mean([o.score for o in ran[n] if o.ok])) if any(o.ok for o in ran[n]) else None
        for n in JUDGES
    }
    return {
        "requested": q.n_items,
        "accepted": len(accepted),
        "attempts": len(tried),
        "acceptance_rate": len(accepted) / len(tried) if tried else 0.0,
        "stop_reason": stop,
        "max_attempts": q.max_attempts,
        "contexts_available": n_contexts,
        "documents_covered": len({c.doc_id for c in accepted}),
        "rejections": dict(sorted(Counter(c.failed_filter for c in tried if not c.alive).items())),
        "judged": {n: len(ran[n]) for n in JUDGES},
        "judge_below_threshold": below,
        "judge_errors": errors,
        "judge_mean_score": means,
        "thresholds": thresholds,
        "models": {"question": g.roles.question, "answer": g.roles.answer, "filter": g.roles.judge},
        "prompt_version": q.prompt_version,
        "reference_chunking": q.reference_chunking,
        "seed": q.seed,
    }


# --- bring your own QA file ----------------------------------------------------------------

BYO_REQUIRED = ("question_id", "question", "reference_answers", "doc_id", "char_start", "char_end")


def _read_any(path: Path) -> pl.DataFrame:
    try:
        if path.suffix == ".parquet":
            return pl.read_parquet(path)
        if path.suffix == ".jsonl":
            return pl.read_ndjson(path)
        if path.suffix == ".json":
            return pl.read_json(path)
    except Exception as err:  # polars raises several types for malformed files
        raise SchemaError(f"{path}: cannot read bring-your-own QA file ({err})") from None
    raise SchemaError(f"{path}: bring-your-own QA file must be .parquet, .jsonl or .json")


def load_byo_qa(path: Path | str, documents: pl.DataFrame) -> pl.DataFrame:
    """Validate a user's QA file against the qa schema and the documents; return a ``qa`` frame.

    Required: question_id (unique), question, reference_answers (non-empty list of strings, a
    plain string is taken as a one-item list), doc_id (a known document), char_start < char_end
    within the document. ``context`` is optional; when present it must equal the document
    slice. Provenance columns are null, ``origin`` is 'byo'. Errors name file, row, column.
    """
    path = Path(path)
    if not path.is_file():
        raise SchemaError(f"{path}: qagen.qa_file not found")
    df = _read_any(path)
    for col in BYO_REQUIRED:
        if col not in df.columns:
            raise SchemaError(f"{path}: missing column '{col}' (bring-your-own QA file)")
    if df.schema["reference_answers"] == pl.String:
        df = df.with_columns(pl.concat_list(pl.col("reference_answers")))
    wanted = {"question_id": pl.String, "question": pl.String, "doc_id": pl.String,
              "char_start": pl.Int64, "char_end": pl.Int64,
              "reference_answers": pl.List(pl.String)}  # fmt: skip
    for col, dtype in wanted.items():
        try:
            df = df.with_columns(pl.col(col).cast(dtype, strict=True))
        except Exception:
            raise SchemaError(
                f"{path}: column '{col}' has dtype {df.schema[col]}, expected {dtype}"
            ) from None
    texts = dict(zip(documents["doc_id"].to_list(), documents["text"].to_list(), strict=True))
    has_context = "context" in df.columns
    seen: set[str] = set()
    contexts: list[str] = []
    for i, r in enumerate(df.iter_rows(named=True), start=1):
        where = f"{path}: row {i}"

        def bad(col: str, msg: str, where: str = where) -> SchemaError:
            return SchemaError(f"{where}: column '{col}': {msg}")

        qid = r["question_id"]
        if not qid:
            raise bad("question_id", "empty")
        if qid in seen:
            raise bad("question_id", f"duplicate id '{qid}'")
        seen.add(qid)
        if not (r["question"] or "").strip():
            raise bad("question", "empty")
        refs = r["reference_answers"] or []
        if not refs or any(not (a or "").strip() for a in refs):
            raise bad("reference_answers", "needs at least one non-empty answer")
        text = texts.get(r["doc_id"])
        if text is None:
            raise bad("doc_id", f"unknown document '{r['doc_id']}' (not in {DOCUMENTS_PATH})")
        s, e = r["char_start"], r["char_end"]
        if s is None or e is None or not 0 <= s < e <= len(text):
            raise bad("char_start", f"span [{s}:{e}] not inside document of {len(text)} chars")
        span = text[s:e]
        if has_context and r["context"] is not None and r["context"] != span:
            raise bad("context", "differs from the document text at [char_start:char_end]")
        contexts.append(span)
    out = df.select(*BYO_REQUIRED).with_columns(
        pl.Series("context", contexts, dtype=pl.String),
        pl.lit("byo").alias("origin"),
    )
    missing = [c for c in TABLES["qa"] if c not in out.columns]
    out = out.with_columns(pl.lit(None, dtype=TABLES["qa"][c]).alias(c) for c in missing)
    return out.select(list(TABLES["qa"]))


def empty_rejected() -> pl.DataFrame:
    return pl.DataFrame(schema=TABLES["qa_rejected"])


# --- stage ---------------------------------------------------------------------------------


def near_duplicate_encoder(params: Params) -> Encoder:
    """``ragcourt.retrieval.embedders.encode`` with the embedder named by
    ``qagen.near_duplicate_embedder``
    (a key of ``embedders``; default the first)."""
    from ragcourt.retrieval.embedders import encode

    key = params.qagen.near_duplicate_embedder or next(iter(params.embedders))
    if key not in params.embedders:
        raise ConfigError(
            f"qagen.near_duplicate_embedder '{key}' is not one of embedders "
            f"{sorted(params.embedders)}"
        )
    model = params.embedders[key].model
    return lambda texts: encode(model, texts)


def run(params: Params) -> None:
    """Whole stage, paths relative to the cwd: writes qa.parquet, qa_rejected.parquet and
    summary.json (and the gateway's llm_qagen.json metrics)."""
    from ragcourt.llm import Gateway

    q = params.qagen
    documents = read_table(DOCUMENTS_PATH, "documents")
    gw = Gateway(params.llm, stage="qagen")
    if q.qa_file is not None:
        qa = load_byo_qa(q.qa_file, documents)
        write_parquet(qa, QA_PATH, "qa")
        write_parquet(empty_rejected(), REJECTED_PATH, "qa_rejected")
        write_json(
            {"requested": qa.height, "accepted": qa.height, "attempts": 0,
             "acceptance_rate": None, "stop_reason": STOP_QA_FILE, "qa_file": q.qa_file,
             "rejections": {}},
            SUMMARY_PATH,
        )  # fmt: skip
        gw.write_metrics()  # zero calls; the file is a DVC metric either way
        log.info("qagen: %d items from %s (generation skipped)", qa.height, q.qa_file)
        return

    chunks = read_table(catalog.path("chunks", chunking=q.reference_chunking), "chunks")
    contexts = sample_contexts(
        chunks,
        documents,
        n=q.max_attempts,
        seed=q.seed,
        stratify=q.stratify_by_document,
        min_tokens=q.min_context_tokens,
    )
    if contexts.is_empty():
        raise RagcourtError(
            f"{catalog.path('chunks', chunking=q.reference_chunking)}: no chunk has "
            f">= qagen.min_context_tokens={q.min_context_tokens} tokens"
        )
    examples = load_few_shot(q.few_shot_file) if q.few_shot_file else []
    encode = near_duplicate_encoder(params)
    t0 = time.perf_counter()
    result = generate_qa(contexts, Generator(gw, params, examples), encode)
    minutes = (time.perf_counter() - t0) / 60
    write_parquet(result.qa, QA_PATH, "qa")
    write_parquet(result.rejected, REJECTED_PATH, "qa_rejected")
    write_json(result.summary, SUMMARY_PATH)
    gw.write_metrics()
    s = result.summary
    log.info(
        "qagen: %d/%d accepted after %d attempts (%s), %.2f accepted items/min",
        s["accepted"], s["requested"], s["attempts"], s["stop_reason"],
        s["accepted"] / minutes if minutes > 0 else float("nan"),
    )  # fmt: skip
