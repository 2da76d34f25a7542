"""The ``calibrate`` pipeline stage (params -> catalog paths) and its report section: without
label files it says nothing was calibrated; with labels the report shows PPI next to the
judge-only and human-only estimates and warns about a judge with low kappa."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragcourt.calibration.labels import LabelStore, make_label
from ragcourt.calibration.sampling import SampleParams, sample_items
from ragcourt.calibration.stage import run_stage
from ragcourt.core import catalog
from ragcourt.core.io import read_table
from ragcourt.orchestration.params import Params
from ragcourt.reporting.stage import build


@pytest.fixture
def params() -> Params:
    return Params.model_validate({"calibration": {"bootstrap_resamples": 200}})


def test_without_labels_the_stage_writes_empty_tables_and_says_so(
    tmp_path: Path, world: Any, params: Params, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.write(tmp_path)
    monkeypatch.chdir(tmp_path)
    summary = run_stage(params)
    assert summary.label_files == [] and summary.corrected == []
    assert "no label files under data/labels" in summary.warnings[0]
    for name in ("calibration_agreement", "calibration_ppi_systems", "calibration_ppi_pairs"):
        assert read_table(catalog.path(name), name).height == 0
    _, _, sections = build(params, tmp_path)
    sec = {s.key: s for s in sections}["human_labels"]
    assert any("no label files" in n for n in sec.notes)


def test_with_labels_the_report_shows_ppi_and_warns_on_low_kappa(
    tmp_path: Path, world: Any, params: Params, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.write(tmp_path)
    sample = sample_items(
        world.qa,
        world.answers,
        world.verdicts,
        world.correctness,
        world.relevance,
        SampleParams(n_answer_items=60, n_passage_items=0),
    )
    store = LabelStore(tmp_path / catalog.DEFAULT_LABELS_DIR, "ann")
    for it in sample.iter_rows(named=True):
        ok = world.truth[(it["system"], it["question_id"])]
        store.append(make_label(it, "correct" if ok else "incorrect", "ann", "web"))
    monkeypatch.chdir(tmp_path)
    summary = run_stage(params)
    assert summary.answers.usable == sample.height
    ppi = read_table(catalog.path("calibration_ppi_systems"), "calibration_ppi_systems")
    assert set(ppi["system"]) == set(world.answers["system"])
    _, md, sections = build(params, tmp_path)
    sec = {s.key: s for s in sections}["human_labels"]
    assert [t.caption for t in sec.tables] == [
        "Accuracy per system",
        "Agreement of each judge with the human labels",
    ]
    assert "PPI \\[95% CI\\]" in md  # brackets escaped: report.md text is inert Markdown
    assert summary.low_agreement  # the world's judge is lenient (fpr 0.4): kappa is low
    assert any(w.startswith("Warning:") and "kappa" in w for w in sec.notes)
