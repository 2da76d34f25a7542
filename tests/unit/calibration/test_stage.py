"""The calibrate stage on a synthetic judged world with known truth."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from ragcourt.calibration.agreement import AGREEMENT_SCHEMA
from ragcourt.calibration.labels import LabelStore, make_label
from ragcourt.calibration.sampling import SampleParams, sample_items
from ragcourt.calibration.stage import (
    PPI_PAIRS_SCHEMA,
    PPI_SYSTEMS_SCHEMA,
    CalibrationInputs,
    CalibrationOutputs,
    CalibrationParams,
    compute,
    has_labels,
    run,
)
from ragcourt.core.errors import RagcourtError


def _label(w: Any, sample: pl.DataFrame, labeler: str = "ann") -> list[Any]:
    """The true label of every sampled item, as a person would give it."""
    out = []
    for it in sample.iter_rows(named=True):
        if it["kind"] == "answer":
            v: str | int = "correct" if w.truth[(it["system"], it["question_id"])] else "incorrect"
        else:
            v = w.grade[(it["question_id"], it["chunk_id"])]
        out.append(make_label(it, v, labeler, "web"))
    return out


def _sample(w: Any, **kw: Any) -> pl.DataFrame:
    return sample_items(w.qa, w.answers, w.verdicts, w.correctness, w.relevance, SampleParams(**kw))


def _compute(w: Any, records: list[Any], **kw: Any) -> Any:
    return compute(
        w.qa, w.answers, w.verdicts, w.correctness, w.relevance, w.pairwise, records, **kw
    )


FAST = CalibrationParams(bootstrap_resamples=200)


def test_ppi_corrects_a_lenient_judge(world_factory: Any) -> None:
    w = world_factory(n_questions=300, seed=1)
    sample = _sample(w, n_answer_items=180, n_passage_items=30)
    res = _compute(w, _label(w, sample), params=FAST)
    assert res.ppi_systems.schema == pl.Schema(PPI_SYSTEMS_SCHEMA)
    assert res.ppi_pairs.schema == pl.Schema(PPI_PAIRS_SCHEMA)
    assert res.agreement.schema == pl.Schema(AGREEMENT_SCHEMA)
    assert res.ppi_systems.height == 3 * 4  # systems x (dafe, correctness, 2 primaries)
    qids = w.qa["question_id"].to_list()
    dafe = res.ppi_systems.filter(pl.col("predictor") == "dafe")
    for r in dafe.iter_rows(named=True):
        truth = float(np.mean([w.truth[(r["system"], q)] for q in qids]))
        assert r["n_labeled"] == 60 and r["n_unlabeled"] == 300
        assert r["ppi_lo"] <= truth <= r["ppi_hi"], r
        assert abs(r["ppi_mean"] - truth) < abs(r["judge_mean"] - truth), r
        assert r["judge_mean"] - truth > 0.05  # the lenient judge over-scores every system
    # the tournament's win rate of alpha over gamma, corrected
    wr = res.ppi_pairs.filter(
        (pl.col("target") == "win_rate")
        & (pl.col("system_a") == "alpha")
        & (pl.col("system_b") == "gamma")
    ).row(0, named=True)
    true_wr = float(
        np.mean([(1 + w.truth[("alpha", q)] - w.truth[("gamma", q)]) / 2 for q in qids])
    )
    assert wr["ppi_lo"] <= true_wr <= wr["ppi_hi"] and wr["ppi_excludes_null"] is True
    diff = res.ppi_pairs.filter(
        (pl.col("target") == "accuracy_diff") & (pl.col("predictor") == "dafe")
    )
    assert diff.height == 3 and diff["n_labeled"].to_list() == [60, 60, 60]
    roles = set(res.agreement["role"].to_list())
    assert roles == {"primary1", "primary2", "arbitrator", "final", "correctness", "relevance"}
    assert set(res.agreement["judge"]) >= {"token_f1", "ref_similarity", "llm", "dafe"}
    s = res.summary
    assert s.answers.usable == 180 and s.passages.usable == 30
    # only the arbitrator (judging the hard, disagreed items alone) may fall below kappa 0.4
    assert set(s.low_agreement) <= {"llm/arbitrator"}
    assert all(("low judge-human" in x) or ("wider than the human-only" in x) for x in s.warnings)
    assert any("win rate" in c for c in s.corrected)
    assert any("Elo" in c for c in s.not_corrected)


def test_stale_cant_tell_and_conflicting_labels_are_counted_not_used(world: Any) -> None:
    sample = _sample(world, n_answer_items=30, n_passage_items=0)
    items = sample.filter(pl.col("kind") == "answer").rows(named=True)
    recs = _label(world, sample)
    recs.append(make_label(items[1], "cant_tell", "ann", "web"))  # relabel: can't tell
    recs.append(make_label(items[2], "correct", "bob", "web"))
    recs.append(make_label(items[2], "incorrect", "ann", "web"))  # ann and bob disagree
    # the answer of items[0] changes after it was labelled
    changed = world.answers.with_columns(
        pl.when(
            (pl.col("system") == items[0]["system"])
            & (pl.col("question_id") == items[0]["question_id"])
        )
        .then(pl.lit("a new answer"))
        .otherwise(pl.col("answer"))
        .alias("answer")
    )
    res = compute(
        world.qa, changed, world.verdicts, world.correctness, None, None, recs, params=FAST
    )
    a = res.summary.answers
    assert (a.labeled, a.stale, a.cant_tell, a.conflicting, a.usable) == (30, 1, 1, 1, 27)
    assert any("stale" in x for x in res.summary.warnings)
    assert any("conflicting" in x for x in res.summary.warnings)
    assert res.ppi_pairs.filter(pl.col("target") == "win_rate").is_empty()
    assert any("tournament" in x for x in res.summary.not_corrected)


def test_low_agreement_is_warned_with_the_number(world_factory: Any) -> None:
    w = world_factory(n_questions=60, fpr=0.5, fnr=0.5, seed=3)  # a coin-flip judge
    sample = _sample(w, n_answer_items=120, n_passage_items=0)
    res = _compute(w, _label(w, sample), params=FAST)
    low = res.agreement.filter(pl.col("role") == "final").row(0, named=True)
    assert low["kappa"] < 0.4 and low["low_agreement"] is True
    msg = next(x for x in res.summary.warnings if "dafe (final)" in x)
    assert f"{low['kappa']:.2f}" in msg and f"n={low['n']}" in msg
    assert "dafe/final" in res.summary.low_agreement
    # a coin-flip judge only adds noise: PPI (λ = 1) is wider than human-only, and says so
    dafe = res.ppi_systems.filter(pl.col("predictor") == "dafe")
    assert (dafe["width_ratio"] > 1.0).all()
    assert any("wider than the human-only" in x and "alpha/dafe" in x for x in res.summary.warnings)
    tuned = _compute(w, _label(w, sample), params=FAST.model_copy(update={"power_tuning": True}))
    t_dafe = tuned.ppi_systems.filter(pl.col("predictor") == "dafe")
    assert (t_dafe["lam"] < 1.0).all() and (t_dafe["width_ratio"] <= 1.0 + 1e-9).all()


def test_too_few_labels_and_unlabelled_strata_are_explicit(world: Any) -> None:
    sample = _sample(world, n_answer_items=6, n_passage_items=0)
    res = _compute(world, _label(world, sample))
    assert res.ppi_systems["ppi_mean"].is_null().all()
    assert res.ppi_systems["note"].str.contains("fewer than 10").all()
    assert any("no system has 10 usable" in x for x in res.summary.warnings)
    many = _sample(world, n_answer_items=60, n_passage_items=0)
    only_split = many.filter(pl.col("stratum") == "split")
    res = _compute(world, _label(world, only_split), params=FAST)
    notes = res.ppi_systems["note"].drop_nulls().to_list()
    assert notes and all("strata without labels" in n for n in notes)
    assert any("not corrected" in x for x in res.summary.warnings)


def test_run_reads_artifacts_and_label_files_and_writes_outputs(tmp_path: Path, world: Any) -> None:
    world.write(tmp_path)
    inputs = CalibrationInputs.default(tmp_path)
    outputs = CalibrationOutputs.default(tmp_path)
    assert not has_labels(inputs.labels_dir)
    with pytest.raises(RagcourtError, match="no label files"):
        run(FAST, inputs, outputs)
    sample = _sample(world, n_answer_items=60, n_passage_items=12)
    store = LabelStore(inputs.labels_dir, "ann")
    store.append(*_label(world, sample))
    assert has_labels(inputs.labels_dir)
    summary = run(FAST, inputs, outputs)
    assert summary.answers.usable == 60 and summary.passages.usable == 12
    assert summary.label_files == [str(store.path)]
    on_disk = json.loads(outputs.summary.read_text())
    assert on_disk["answers"]["usable"] == 60
    assert pl.read_parquet(outputs.ppi_systems).height == 12
    assert pl.read_parquet(outputs.ppi_pairs).height == 3 * 5
    assert pl.read_parquet(outputs.agreement).height == 6
    with store.path.open("a") as f:
        f.write('{"kind": "answer", "item_id": "bad"}\n')
    with pytest.raises(RagcourtError, match=r"ann\.jsonl:73: invalid label row"):
        run(FAST, inputs, outputs)
