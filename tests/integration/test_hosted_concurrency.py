"""Independent hosted-model calls run concurrently, bounded by ``llm.concurrency_per_model``,
and give the same results and the same reply cache at any concurrency: litellm's real
``openai/`` provider against a local OpenAI-compatible server that sleeps per request."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
import yaml
from _llm_testing import OpenAITestServer, openai_test_server

from ragcourt.answering.generation import answer_batch
from ragcourt.answering.retrieval_groups import HIT_COLS, GroupRetrieval
from ragcourt.answering.systems import builtin_systems, load_systems
from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.cache import STORE_NAME
from ragcourt.llm.params import LLMParams
from ragcourt.orchestration.params import Params, load_params
from ragcourt.tournament.llm_judge import LLMPairwiseJudge
from ragcourt.tournament.params import TournamentParams
from ragcourt.tournament.runner import run_tournament

MODEL = "openai/concurrency-test"


def _reply(messages: list[dict[str, str]]) -> str:
    """A reply that names its request (so a reply given to the wrong request shows)."""
    return "reply " + hashlib.sha256(repr(messages).encode()).hexdigest()[:16]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAITestServer]:
    with openai_test_server(
        delay_s=0.15, reply=_reply, next_token={"A": 0.5, "B": 0.3, "C": 0.2}
    ) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-local-concurrency-test")
        reset_accounts()
        yield srv
        reset_accounts()


def _llm(tmp: Path, per_model: int) -> LLMParams:
    return LLMParams(
        model=MODEL,
        cache_dir=str(tmp / "cache"),
        metrics_dir=str(tmp / "metrics"),
        concurrency=8,
        concurrency_per_model={"local/": 1, "openai/": per_model},
    )


def _cache(tmp: Path) -> dict[str, str]:
    conn = sqlite3.connect(tmp / "cache" / STORE_NAME)
    try:
        return dict(conn.execute("SELECT key, value FROM replies").fetchall())
    finally:
        conn.close()


def test_a_batch_runs_at_the_per_model_limit_with_the_same_results_at_1_and_4(
    server: OpenAITestServer, tmp_path: Path
) -> None:
    reqs = [ChatRequest.of(MODEL, "You are terse.", f"question {i}") for i in range(12)]
    texts, caches = {}, {}
    for c in (1, 4):
        server.max_in_flight = 0
        res = Gateway(_llm(tmp_path / str(c), c), stage="t_conc").chat(reqs)
        assert all(r.ok for r in res)
        assert server.max_in_flight == c  # the per-model limit (global is 8), and reached
        texts[c] = [r.text for r in res]
        caches[c] = _cache(tmp_path / str(c))
    sent = [[{"role": r, "content": c} for r, c in req.messages] for req in reqs]
    assert texts[1] == texts[4] == [_reply(m) for m in sent]
    assert caches[1] == caches[4] and len(caches[1]) == 12


def _hits(qa: pl.DataFrame) -> pl.DataFrame:
    rows = [
        {
            "query_id": qid,
            "chunk_id": f"{qid}-{r}",
            "rank": r,
            "score": 1.0 / r,
            "doc_id": "d0",
            "char_start": 0,
            "char_end": 10,
            "text": f"Passage {r} about {qid}.",
        }
        for qid in qa["question_id"].to_list()
        for r in (1, 2, 3)
    ]
    return pl.DataFrame(rows).select("query_id", *HIT_COLS)


def test_answers_of_several_systems_run_as_one_concurrent_batch(
    server: OpenAITestServer, tmp_path: Path, repo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo_root)  # configs/prompts
    base = load_params(repo_root / "params.yaml")
    # two systems answering on llm.model (the hosted test model) that share one retrieval
    base.systems_file = str(tmp_path / "systems.yaml")
    Path(base.systems_file).write_text(
        yaml.safe_dump(
            {
                "defaults": {"chunking": "c256", "embedder": "minilm", "generator": None},
                "systems": [
                    {"name": "dense-k3", "retriever": "dense", "top_k": 3},
                    {"name": "dense-k1", "retriever": "dense", "top_k": 1},
                ],
            }
        )
    )
    base.controls.kinds = []  # the systems file's own systems, without control systems
    qa = pl.DataFrame(
        {"question_id": ["q1", "q2", "q3"], "question": [f"What is {w}?" for w in "xyz"]}
    )
    frames: dict[int, list[pl.DataFrame]] = {}
    for c in (1, 4):
        params: Params = base.model_copy(update={"llm": _llm(tmp_path / str(c), c)})
        systems = builtin_systems(load_systems(params))[:2]  # dense-k3, dense-k1: one group
        assert systems[0].retrieval == systems[1].retrieval
        group = GroupRetrieval(systems[0].retrieval, _hits(qa), None, 0.0)
        server.max_in_flight = 0
        gw = Gateway(params.llm, stage="t_answers")
        frames[c] = answer_batch([(s, group) for s in systems], qa, params, gw)
        # 3 questions per system: one batch per system could never have 4 calls in flight
        assert server.max_in_flight == c
    for one, four in zip(frames[1], frames[4], strict=True):
        assert one.height == 3 and one["error"].null_count() == 3
        assert one.drop("latency_s").equals(four.drop("latency_s"))
    assert frames[1][0]["answer"].to_list() != frames[1][1]["answer"].to_list()  # top 3 vs 1


def test_round_robin_tournament_judges_every_pair_in_one_concurrent_batch(
    server: OpenAITestServer, tmp_path: Path
) -> None:
    from _tournament_data import answers_frame, qa_frame

    systems, questions = ["s1", "s2", "s3"], ["q00", "q01"]
    answers, qa = answers_frame(systems, 2), qa_frame(2)
    tp = TournamentParams(round_robin=True, bootstrap=20, analysis_max_tokens=32)
    out = {}
    for c in (1, 6):  # a Swiss round here is 1 pair (4 orders): 6 in flight needs the batch
        gw = Gateway(_llm(tmp_path / str(c), c), stage="t_tournament")
        judge = LLMPairwiseJudge(gw, MODEL, answers, qa, tp)
        server.max_in_flight, sent = 0, len(server.requests)
        out[c] = run_tournament(judge, systems, questions, tp)
        # 3 pairs x 2 questions x 2 orders, an analysis and a verdict call each, no repeats
        assert len(server.requests) - sent == 24
        assert server.max_in_flight == c
    one, six = out[1], out[6]
    assert one.pairwise.drop_nulls("p_a").height == 6
    assert one.pairwise.equals(six.pairwise) and one.leaderboard.equals(six.leaderboard)
    assert one.summary == six.summary
    assert (
        one.summary.swiss.judge_calls_executed + (one.summary.round_robin.judge_calls_executed or 0)
        == one.summary.judge_calls_executed
        == 12
    )
    assert _cache(tmp_path / "1") == _cache(tmp_path / "6")
