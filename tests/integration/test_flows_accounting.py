"""LLM call accounting under the flow: fresh, private accounts per task, and the answer
stage's per-system partitions summed into one metrics file by ``answer[combine]`` (no Prefect
server, no model)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

import ragcourt.orchestration.stage_tasks as pipeline_mod
from ragcourt.llm.accounting import (
    fresh_accounts,
    merge_account_dicts,
    reset_accounts,
    stage_account,
)
from ragcourt.orchestration.params import Params
from ragcourt.orchestration.plan import StageCall


@pytest.fixture(autouse=True)
def _clean() -> None:
    reset_accounts()


def test_fresh_accounts_start_at_zero_and_stay_private_to_their_thread() -> None:
    stage_account("answer").record("m", cached=False, ok=True)  # the process-wide account
    seen: dict[str, int] = {}
    start = threading.Barrier(2)

    def task(name: str, n: int) -> None:
        with fresh_accounts() as accounts:
            start.wait()
            for _ in range(n):
                stage_account("answer").record("m", cached=False, ok=True)
            seen[name] = accounts["answer"].models["m"].requests

    threads = [threading.Thread(target=task, args=(f"t{n}", n)) for n in (2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"t2": 2, "t3": 3}
    assert stage_account("answer").models["m"].requests == 1  # untouched by the blocks


def test_merge_sums_every_counter_and_wall_time() -> None:
    with fresh_accounts():
        a = stage_account("answer")
        a.record("m1", cached=False, ok=True, attempts=2, prompt_tokens=10, cost_usd=0.5)
        a.add_wall_time(1.0)
    with fresh_accounts():
        b = stage_account("answer")
        b.record("m1", cached=True, ok=True)
        b.record("m2", cached=False, ok=False, completion_tokens=4)
        b.add_wall_time(2.5)
    merged = merge_account_dicts("answer", [a.as_dict(), b.as_dict()]).as_dict()
    assert merged["wall_time_s"] == 3.5
    assert merged["models"]["m1"] == {
        **merged["models"]["m1"],
        "requests": 2,
        "cache_hits": 1,
        "model_calls": 2,
        "retries": 1,
        "prompt_tokens": 10,
        "cost_usd": 0.5,
    }
    assert merged["total"]["requests"] == 3 and merged["total"]["errors"] == 1
    assert merged["total"]["completion_tokens"] == 4


def test_combine_writes_the_sum_of_this_runs_partitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Partitions ran on different workers (each wrote its own llm_answer.json, last writer
    wins); combine replaces it with the sum over the run's partitions, not older runs'."""
    params = Params.model_validate({})
    run_id = {"id": "run-1"}
    monkeypatch.setattr(pipeline_mod, "accounts_dir", lambda root: root / "accounts" / run_id["id"])

    def run_call(call: StageCall, calls: int) -> None:
        with fresh_accounts() as accounts:
            for _ in range(calls):
                stage_account("answer").record("local/m", cached=False, ok=True)
        pipeline_mod._record_accounts(call, tmp_path, params, accounts)

    metrics = tmp_path / params.llm.metrics_dir / "llm_answer.json"
    sys_a = StageCall("answer", kwargs=(("systems", ("a",)),))
    sys_b = StageCall("answer", kwargs=(("systems", ("b",)),))
    combine = StageCall("answer", tag="combine")
    run_call(sys_a, 2)
    run_call(sys_b, 3)
    run_call(StageCall("tournament"), 7)  # another stage's calls are not summed in
    run_call(combine, 0)
    total = json.loads(metrics.read_text())["total"]
    assert total["requests"] == 5 and total["model_calls"] == 5

    run_id["id"] = "run-2"  # the next flow run: only sys_b re-ran (a was cached)
    run_call(sys_b, 1)
    run_call(combine, 0)
    assert json.loads(metrics.read_text())["total"]["requests"] == 1
