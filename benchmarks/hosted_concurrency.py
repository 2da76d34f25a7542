"""The hosted route's concurrency on demo-sized stages: per-model concurrency 1 vs 8, side by side.

A local OpenAI-compatible server (``tests/_llm_testing.py``: ``openai_test_server``) adds a fixed
``--delay`` per request, standing in for a hosted provider's latency; every model string is
``openai/bench-model`` (litellm's real ``openai`` provider, over HTTP). The stages are the
real stage functions with the demo's shapes: the 12 hand-written demo questions, the four
systems of ``configs/systems.yaml`` (RAG-Fusion variants for the fusion system through
``generate_variants``, then every system's answers through ``answer_batch``), then
``judge_retrieval`` (relevance + UDCG in one grouped batch) on those answers. Retrieval is
replaced by a fixed word-overlap ranking of the demo corpus's paragraphs (no index needed);
the requests are the stages' own.

Runs: ``llm.concurrency_per_model['openai/']`` = 1, then 8 (``llm.concurrency`` 8), each with
its own empty reply cache; plus, for reference, the answer stage's old shape at 8 (one batch
per system). Checks: identical answers (latency columns aside), relevance, utility and UDCG
tables, and identical reply-cache contents (key -> stored JSON) between 1 and 8.

    python -m benchmarks hosted_concurrency [--delay 0.5] [--out FILE]

(default FILE: benchmarks/data/hosted_concurrency.txt)
"""

from __future__ import annotations

import argparse
import os
import re
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import polars as pl

from benchmarks._common import DATA, ROOT, llm_testing
from ragcourt.answering.generation import answer_batch, answer_system
from ragcourt.answering.rag_fusion import generate_variants
from ragcourt.answering.retrieval_groups import HIT_COLS, GroupRetrieval
from ragcourt.answering.systems import System, builtin_systems, group_by_retrieval, load_systems
from ragcourt.core.offline import apply as apply_offline
from ragcourt.judging.retrieval_stage import judge_retrieval
from ragcourt.judging.vocabulary import JudgeContext
from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.cache import STORE_NAME
from ragcourt.orchestration.params import Params, load_params

if TYPE_CHECKING:  # the tests' helper module (mypy_path: tests)
    from _llm_testing import OpenAITestServer, openai_test_server
else:
    openai_test_server = llm_testing().openai_test_server


T = TypeVar("T")
MODEL = "openai/bench-model"
QA_FILE = ROOT / "data" / "demo_qa" / "handwritten.jsonl"
CORPUS = ROOT / "data" / "corpus"
WORD = re.compile(r"[a-z0-9]+")
NEXT_TOKEN = {"2": 0.5, "1": 0.2, "0": 0.2, "NO": 0.1}  # first-position top_logprobs


def reply(messages: list[dict[str, str]]) -> str:
    """A deterministic reply that depends on the request (so cross-wired replies would show)."""
    user = messages[-1]["content"]
    words = WORD.findall(user.lower())
    return f"Answer {len(user)}: {' '.join(words[-6:])}"


def passages() -> pl.DataFrame:
    """The demo corpus's paragraphs (>= 200 characters) as chunk rows."""
    rows = []
    for path in sorted(CORPUS.glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        start = 0
        for para in text.split("\n\n"):
            at = text.index(para, start)
            start = at + len(para)
            if len(para.strip()) >= 200:
                rows.append(
                    {
                        "chunk_id": f"{path.stem}:{at}",
                        "doc_id": path.stem,
                        "char_start": at,
                        "char_end": at + len(para),
                        "text": para.strip(),
                    }
                )
    return pl.DataFrame(rows)


def ranked_hits(qa: pl.DataFrame, chunks: pl.DataFrame, depth: int, skip: int) -> pl.DataFrame:
    """query_id + HIT_COLS: ``depth`` paragraphs by shared words, after the best ``skip`` (a
    different ``skip`` per retrieval group stands in for different retrievers)."""
    bags = [set(WORD.findall(t.lower())) for t in chunks["text"].to_list()]
    out = []
    for qid, q in qa.select("question_id", "question").iter_rows():
        words = set(WORD.findall(q.lower()))
        scored = sorted(range(len(bags)), key=lambda i: (-len(words & bags[i]), i))
        for rank, i in enumerate(scored[skip : skip + depth], start=1):
            row = chunks.row(i, named=True)
            out.append({"query_id": qid, **row, "rank": rank, "score": float(len(words & bags[i]))})
    return pl.DataFrame(out).select("query_id", *HIT_COLS)


@dataclass
class Run:
    label: str
    seconds: dict[str, float]
    peak_in_flight: int
    requests: int
    answers: pl.DataFrame
    tables: tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]
    cache: dict[str, str]


def params_for(base: Params, concurrency: int, cache_dir: Path) -> Params:
    llm = base.llm.model_copy(
        update={
            "model": MODEL,
            "cache_dir": str(cache_dir / "cache"),
            "metrics_dir": str(cache_dir / "metrics"),
            "concurrency": 8,
            "concurrency_per_model": {"local/": 1, "openai/": concurrency},
        }
    )
    return base.model_copy(update={"llm": llm})


def cache_contents(cache_dir: Path) -> dict[str, str]:
    conn = sqlite3.connect(cache_dir / "cache" / STORE_NAME)
    try:
        return dict(conn.execute("SELECT key, value FROM replies").fetchall())
    finally:
        conn.close()


def timed(seconds: dict[str, float], name: str, fn: Callable[[], T]) -> T:
    t0 = time.perf_counter()
    out = fn()
    seconds[name] = time.perf_counter() - t0
    return out


def run_stages(
    label: str,
    base: Params,
    concurrency: int,
    srv: OpenAITestServer,
    qa: pl.DataFrame,
    chunks: pl.DataFrame,
    *,
    per_system: bool = False,
) -> Run:
    """Variants, answers (one batch, or one per system with ``per_system``), judge_retrieval."""
    reset_accounts()
    folder = Path(tempfile.mkdtemp(prefix="bench_hosted_"))
    params = params_for(base, concurrency, folder)
    systems = builtin_systems(load_systems(params))
    gw = Gateway(params.llm, stage="answer")
    sent0, srv.max_in_flight = len(srv.requests), 0
    seconds: dict[str, float] = {}
    queries = qa.select(pl.col("question_id").alias("query_id"), pl.col("question").alias("query"))
    jobs: list[tuple[System, GroupRetrieval]] = []
    t0 = time.perf_counter()
    for n, (key, members) in enumerate(group_by_retrieval(systems).items()):
        variants = None
        if key.fusion_variants:
            assert key.fusion_model is not None and key.fusion_prompt_version is not None
            variants = timed(
                seconds,
                "variants",
                partial(
                    generate_variants,
                    gw,
                    queries,
                    key.fusion_variants,
                    key.fusion_model,
                    params.llm,
                    prompt_version=key.fusion_prompt_version,
                    max_tokens=key.fusion_max_tokens or 128,
                ),
            )
        hits = ranked_hits(qa, chunks, key.depth, skip=n)
        jobs += [(s, GroupRetrieval(key, hits, variants, 0.0)) for s in members]
    if per_system:
        frames = timed(
            seconds,
            "answers",
            lambda: [answer_system(s, qa, g, params, gw) for s, g in jobs],
        )
    else:
        frames = timed(seconds, "answers", lambda: answer_batch(jobs, qa, params, gw))
    answers = pl.concat(frames, how="vertical").with_columns(
        pl.lit(None, pl.String).alias("control")
    )
    ctx = JudgeContext(params, stage="judge_retrieval")
    tables = timed(seconds, "judge_retrieval", lambda: judge_retrieval(answers, qa, ctx))
    seconds["total"] = time.perf_counter() - t0
    return Run(
        label,
        seconds,
        srv.max_in_flight,
        len(srv.requests) - sent0,
        answers,
        tables,
        cache_contents(folder),
    )


def comparable(df: pl.DataFrame) -> pl.DataFrame:
    return df.drop([c for c in df.columns if "latency" in c])


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=0.5, help="seconds the server adds per request")
    ap.add_argument("--params", default=str(ROOT / "params.yaml"))
    ap.add_argument("--out", default=str(DATA / "hosted_concurrency.txt"))
    args = ap.parse_args(argv)
    apply_offline()
    base = load_params(args.params)
    qa = pl.read_ndjson(QA_FILE).select("question_id", "question", "reference_answers")
    chunks = passages()
    lines: list[str] = []
    with openai_test_server(delay_s=args.delay, reply=reply, next_token=NEXT_TOKEN) as srv:
        os.environ["OPENAI_API_BASE"] = srv.base_url
        os.environ.setdefault("OPENAI_API_KEY", "sk-local-bench-server")
        warm = Gateway(params_for(base, 8, Path(tempfile.mkdtemp())).llm, stage="warmup")
        warm.chat([ChatRequest.of(MODEL, None, f"warm-up {i}") for i in range(2)])  # imports
        one = run_stages("concurrency 1", base, 1, srv, qa, chunks)
        eight = run_stages("concurrency 8", base, 8, srv, qa, chunks)
        old = run_stages("concurrency 8, answers one batch per system (before)", base, 8, srv,
                         qa, chunks, per_system=True)  # fmt: skip
    same_answers = comparable(one.answers).equals(comparable(eight.answers))
    same_tables = all(
        comparable(a).equals(comparable(b)) for a, b in zip(one.tables, eight.tables, strict=True)
    )
    same_cache = one.cache == eight.cache and one.cache == old.cache
    lines.append(
        f"hosted route (litellm openai/ -> local OpenAI-compatible server, {args.delay:g} s per "
        f"request); {qa.height} demo questions, {one.answers['system'].n_unique()} systems; "
        f"python {sys.version.split()[0]}"
    )
    lines.append(
        f"{'run':58s} {'requests':>8s} {'peak':>5s} {'variants':>9s} {'answers':>8s} "
        f"{'judge_ret':>9s} {'total':>7s}"
    )
    for r in (one, eight, old):
        s = r.seconds
        lines.append(
            f"{r.label:58s} {r.requests:8d} {r.peak_in_flight:5d} {s.get('variants', 0):8.1f}s "
            f"{s['answers']:7.1f}s {s['judge_retrieval']:8.1f}s {s['total']:6.1f}s"
        )
    lines.append(
        f"speed-up 8 vs 1: {one.seconds['total'] / eight.seconds['total']:.2f}x total "
        f"(answers {one.seconds['answers'] / eight.seconds['answers']:.2f}x, judge_retrieval "
        f"{one.seconds['judge_retrieval'] / eight.seconds['judge_retrieval']:.2f}x); answers "
        f"one batch vs one batch per system at 8: "
        f"{old.seconds['answers'] / eight.seconds['answers']:.2f}x"
    )
    lines.append(
        f"identical at 1 and 8: answers {same_answers}, relevance/utility/udcg {same_tables}, "
        f"reply cache {same_cache} ({len(one.cache)} entries)"
    )
    text = "\n".join(lines)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(
        text + f"\n\ncommand: python -m benchmarks hosted_concurrency --delay {args.delay:g}\n"
    )
    if not (same_answers and same_tables and same_cache):
        sys.exit(1)
