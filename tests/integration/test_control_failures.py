"""The failure policy counts real systems only: a control system that cannot answer (the
oracle on questions without a ground-truth span, the shuffled control with one question)
gives explicit error rows with their reason and a WARNING naming it, never a failed stage;
a real system whose every row failed still fails it. The answer stage runs on real chunks
with a scripted generator; the judge and tournament policies on their tables."""

from __future__ import annotations

import logging
from pathlib import Path

import polars as pl
import pytest
import yaml
from _llm_testing import scripted_model
from integration.test_answer_stage import answer_project, generator
from litellm import exceptions as litellm_errors

from ragcourt.answering import stage as answer
from ragcourt.answering.shuffled import ONE_QUESTION
from ragcourt.core.errors import StageFailed
from ragcourt.core.failures import assess, enforce
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.params import FailureParams
from ragcourt.judging import answers_stage, retrieval_stage
from ragcourt.judging.params import JudgeSpec
from ragcourt.orchestration.params import Params
from ragcourt.tournament import stage as tournament_stage

ROOT = Path(__file__).resolve().parents[2]
NO_SPAN = "oracle: the QA item has no ground-truth document span"
CONTROLS = {"control-oracle": "oracle", "control-random": "random"}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Params:
    """Three questions on real chunks; controls oracle, random and shuffled on ``bm25-k3``."""
    monkeypatch.chdir(tmp_path)
    params = answer_project(tmp_path)
    params.controls.kinds = ["oracle", "random", "shuffled"]
    params.controls.base = None  # the first built-in real system: bm25-k3
    params.failure = FailureParams()  # max_error_rate 0.5, fail_on_system
    return params


def _systems(*extra: dict[str, object]) -> None:
    systems = [{"name": "bm25-k3", "retriever": "bm25", "top_k": 3}, *extra]
    Path("systems.yaml").write_text(
        yaml.safe_dump({"defaults": {"chunking": "c256", "embedder": "minilm"}, "systems": systems})
    )


def _drop_spans() -> None:
    """The QA set as a bring-your-own set without ground-truth document spans."""
    qa = read_table("data/qa/qa.parquet", "qa").with_columns(
        pl.lit(None, dtype=pl.String).alias("doc_id"),
        pl.lit(None, dtype=pl.Int64).alias("char_start"),
        pl.lit(None, dtype=pl.Int64).alias("char_end"),
    )
    write_parquet(qa, "data/qa/qa.parquet", "qa")


def _rows(system: str) -> pl.DataFrame:
    out = read_table("data/answers/answers.parquet", "answers")
    return out.filter(pl.col("system") == system)


def _unauthorised(messages: list[dict[str, str]]) -> str:
    raise litellm_errors.AuthenticationError("401 invalid api key", "scripted", "revoked")


def test_an_oracle_without_spans_never_fails_the_answer_stage_scripted_model(
    project: Params, caplog: pytest.LogCaptureFixture
) -> None:
    _systems()
    _drop_spans()
    project.failure.max_error_rate = 0.2  # the oracle's 3 of 12 rows (25%) would breach it
    with (
        scripted_model("gen", generator) as m,
        caplog.at_level(logging.WARNING, logger="ragcourt.failures"),
    ):
        project.llm.model = m.model
        answer.run(project)  # every oracle row failed: no StageFailed
    oracle = _rows("control-oracle")
    assert oracle.height == 3 and oracle["control"].to_list() == ["oracle"] * 3
    assert oracle["error"].to_list() == [NO_SPAN] * 3 and oracle["answer"].null_count() == 3
    for system in ("bm25-k3", "control-random", "control-shuffled"):
        assert _rows(system)["error"].null_count() == 3, system
    assert (
        "answer: answers: control system 'control-oracle' (oracle): 3/3 rows failed; "
        f"most common reason: {NO_SPAN!r} (x3) (a control never fails the stage)"
    ) in caplog.text
    # 3 of 12 rows failed, all the oracle's: the real systems' rows are not reported as failed
    assert "answer: answers: 3/12 rows failed" not in caplog.text

    # the next stages carry the oracle's error rows without failing either (no LLM judge)
    project.judge.judges["contains"] = JudgeSpec(kind="containment")
    project.judge.arbitrator = "contains"
    with caplog.at_level(logging.WARNING, logger="ragcourt.failures"):
        answers_stage.run(project)
        retrieval_stage.run(project)
        tournament_stage.run(project)
    verdicts = read_table("data/judge/verdicts.parquet", "verdicts")
    oracle_verdicts = verdicts.filter(pl.col("system") == "control-oracle")["error"]
    assert oracle_verdicts.to_list() == [f"answer failed: {NO_SPAN}"] * 3
    assert "judge: verdicts: control system 'control-oracle' (oracle): 3/3" in caplog.text
    assert "tournament: pairwise: control system 'control-oracle' (oracle)" in caplog.text


def test_a_real_system_that_fails_entirely_still_fails_the_stage_scripted_model(
    project: Params,
) -> None:
    _systems({"name": "revoked", "retriever": "bm25", "top_k": 1, "generator": "scripted/revoked"})
    _drop_spans()
    with scripted_model("gen", generator) as m, scripted_model("revoked", _unauthorised):
        project.llm.model = m.model
        with pytest.raises(StageFailed, match="every row failed for 'revoked'") as err:
            answer.run(project)
    assert "control-oracle" not in str(err.value)  # the control is no reason to fail
    assert _rows("revoked")["error"].null_count() == 0  # written before failing
    assert _rows("control-oracle")["error"].to_list() == [NO_SPAN] * 3


def test_shuffled_with_one_question_never_fails_the_answer_stage_scripted_model(
    project: Params,
) -> None:
    _systems()
    write_parquet(read_table("data/qa/qa.parquet", "qa").head(1), "data/qa/qa.parquet", "qa")
    with scripted_model("gen", generator) as m:
        project.llm.model = m.model
        answer.run(project)
    assert _rows("control-shuffled")["error"].to_list() == [ONE_QUESTION]
    assert _rows("bm25-k3")["error"].to_list() == [None]


def _verdicts(errors: dict[str, list[str | None]]) -> pl.DataFrame:
    rows = [(s, e) for s, es in errors.items() for e in es]
    return pl.DataFrame(rows, schema={"system": pl.String, "error": pl.String}, orient="row")


def test_judge_and_tournament_policies_leave_the_controls_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    policy = FailureParams()
    verdicts = _verdicts({"real": [None, None], "control-oracle": [NO_SPAN, NO_SPAN]})
    t = assess("verdicts", verdicts, controls=CONTROLS)
    assert (t.rows, t.failed, t.groups) == (2, 0, {"real": (0, 2)})
    assert [(c.system, c.kind, c.failed, c.rows) for c in t.controls] == [
        ("control-oracle", "oracle", 2, 2)
    ]
    with caplog.at_level(logging.WARNING, logger="ragcourt.failures"):
        enforce("judge", [t], policy)
    assert "judge: verdicts: control system 'control-oracle' (oracle): 2/2" in caplog.text
    # without the controls named, the same rows fail the stage
    with pytest.raises(StageFailed, match="every row failed for 'control-oracle'"):
        enforce("judge", [assess("verdicts", verdicts)], policy)
    # a real system's total failure still fails, whatever the controls do
    dead = _verdicts({"real": ["401", "401"], "ok": [None, None], "control-oracle": [None] * 2})
    with pytest.raises(StageFailed, match="every row failed for 'real'"):
        enforce("judge", [assess("verdicts", dead, controls=CONTROLS)], policy)

    pairwise = pl.DataFrame(
        {
            "system_a": ["a", "a", "b"],
            "system_b": ["b", "control-oracle", "control-oracle"],
            "error": [None, "answer failed", "answer failed"],
        }
    )
    # a pair with a control on either side is the control's row: 2 of 3 rows failed, none real
    enforce("tournament", tournament_stage.pairwise_failures(pairwise, CONTROLS), policy)
    (rows,) = tournament_stage.pairwise_failures(pairwise, CONTROLS)
    assert (rows.rows, rows.failed, rows.groups) == (1, 0, {"a": (0, 1), "b": (0, 1)})
    assert [(c.system, c.failed, c.rows) for c in rows.controls] == [("control-oracle", 2, 2)]
    with pytest.raises(StageFailed, match="every row failed for 'control-oracle'"):
        enforce("tournament", tournament_stage.pairwise_failures(pairwise), policy)
    # a failed judgement between real systems still counts
    judge_down = pairwise.with_columns(pl.lit("401 invalid api key").alias("error"))
    with pytest.raises(StageFailed, match=r"pairwise: 1/1 rows failed .*'a', 'b'"):
        enforce("tournament", tournament_stage.pairwise_failures(judge_down, CONTROLS), policy)
