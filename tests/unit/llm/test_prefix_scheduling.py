"""Prefix-reuse helpers: batch boundaries, common prefix, request scheduling, accounting."""

from __future__ import annotations

import asyncio
from itertools import pairwise
from pathlib import Path

import pytest

from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import StageAccount, merge_account_dicts, reset_accounts
from ragcourt.llm.gateway import prefix_order
from ragcourt.llm.local_provider import batch_bounds, common_prefix
from ragcourt.llm.params import LLMParams


@pytest.mark.parametrize("n", [0, 1, 2, 3, 511, 512, 513, 514, 1024, 1025, 1500])
def test_batch_bounds_cover_all_tokens_without_one_token_batches(n: int) -> None:
    bounds = batch_bounds(n, 512)
    assert bounds[0] == 0 and bounds[-1] == n
    sizes = [b - a for a, b in pairwise(bounds)]
    assert all(0 < s <= 512 for s in sizes)
    assert n < 2 or all(s >= 2 for s in sizes)  # a 1-token prompt is the only 1-token batch


def test_batch_bounds_moves_one_token_into_the_last_batch() -> None:
    assert batch_bounds(513, 512) == [0, 511, 513]
    assert batch_bounds(1025, 512) == [0, 512, 1023, 1025]
    assert batch_bounds(514, 512) == [0, 512, 514]


def test_common_prefix() -> None:
    assert common_prefix([1, 2, 3], [1, 2, 4, 5]) == 2
    assert common_prefix([], [1]) == 0
    assert common_prefix([1, 2], [1, 2, 3]) == 2
    assert common_prefix([9], [1]) == 0


def test_prefix_order_groups_local_requests_sharing_a_prefix() -> None:
    q = "Question: q\nPassage: "
    reqs = [
        ChatRequest.of("local/m", "judge", q + "b"),
        ChatRequest.of("openai/x", "judge", "hosted"),
        ChatRequest.of("local/m", "other", "x"),
        ChatRequest.of("local/m", "judge", q + "a"),
        ChatRequest.of("local/m", "judge", "Question: r\nPassage: a"),
    ]
    order = prefix_order(reqs)
    assert sorted(order) == list(range(len(reqs)))
    assert order[0] == 1  # other providers keep their place, first
    local = [reqs[i].messages[1][1] for i in order[1:]]
    assert local == [q + "a", q + "b", "Question: r\nPassage: a", "x"]


def test_batch_starts_in_prefix_order_and_returns_request_order(tmp_path: Path) -> None:
    reset_accounts()
    params = LLMParams(cache=False, cache_dir=str(tmp_path / "c"), metrics_dir=str(tmp_path))
    gw = Gateway(params, stage="t_order")
    reqs = [ChatRequest.of("local/m", "judge", t) for t in ["c", "a", "b"]]
    started: list[str] = []

    async def one(req: ChatRequest) -> str:
        started.append(req.messages[-1][1])
        await asyncio.sleep(0)
        return req.messages[-1][1].upper()

    out = asyncio.run(gw._batch(reqs, one, "", lambda _: True))
    assert started == ["a", "b", "c"]
    assert out == ["C", "A", "B"]
    reset_accounts()


def test_account_prefix_hit_and_evaluated_tokens() -> None:
    acc = StageAccount("s")
    acc.record("local/m", cached=False, ok=True, prompt_tokens=100, prefix_hit_tokens=70)
    acc.record("local/m", cached=False, ok=True, prompt_tokens=50)
    acc.record("local/m", cached=True, ok=True, prompt_tokens=999, prefix_hit_tokens=999)
    total = acc.as_dict()["total"]
    assert (total["prompt_tokens"], total["prefix_hit_tokens"], total["evaluated_tokens"]) == (
        150,
        70,
        80,
    )
    merged = merge_account_dicts("s", [acc.as_dict(), acc.as_dict()]).as_dict()["total"]
    assert merged["prefix_hit_tokens"] == 140 and merged["evaluated_tokens"] == 160
