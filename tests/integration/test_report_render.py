"""The report stage on small synthetic artifacts: every section carries its figures, the HTML
is self-contained, and missing or malformed artifacts degrade to notes instead of failures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from _report_data import write_artifacts

from ragcourt.orchestration.params import Params
from ragcourt.reporting.headline import Headline
from ragcourt.reporting.stage import FIGURES_DIR, HEADLINE_PATH, HTML_PATH, MD_PATH, build, run

SECTION_TITLES = [
    "Headline",
    "Run overview",
    "Leaderboard",
    "Human labels: judge agreement and prediction-powered scores",
    "Swiss vs round-robin cost",
    "DAFE judging: agreement and arbitration",
    "Retrieval metrics vs chunk size",
    "Which retrieval metric predicts correct answers?",
    "Synthetic QA generation",
    "Model calls and cost",
    "Example judgements",
]


@pytest.fixture
def params() -> Params:
    chunkings = {"c256": {"size": 256, "overlap": 32}}
    return Params.model_validate({"chunkings": chunkings, "qagen": {"reference_chunking": "c256"}})


def _img_count(html: str) -> int:
    return len(re.findall(r'<img [^>]*src="data:image/png;base64,[A-Za-z0-9+/=]{200,}"', html))


def test_full_report_has_every_section_figure_and_value(tmp_path: Path, params: Params) -> None:
    write_artifacts(tmp_path)
    html, md, sections = build(params, tmp_path)
    for title in SECTION_TITLES:
        assert f"<h2>{title}</h2>" in html
        assert f"## {title}" in md
    # leaderboard and Elo gaps (headline), swiss, dafe, retrieval, correlation, qa
    # rejections, cost per stage
    assert _img_count(html) == 8
    assert html.index('<section id="headline">') < html.index('<section id="validity">')
    assert not any(s.notes and s.empty for s in sections)
    # leaderboard with CIs, in rank order
    assert "1562 [1532, 1592]" in html and "1438 [1408, 1468]" in html
    assert html.index("dense-k5") < html.index("dense-k1")
    # DAFE: disagreement, calls saved, per-judge agreement
    assert "11.1%" in html and "8 (29.6%)" in html and "88.9%" in html
    # retrieval table pivots metrics at cutoff 5; BM25 shown without embedder
    assert "Recall@5" in md and "| c512 | 512 | – | bm25 |" in md
    # QA acceptance and rejection counts; model calls and cost
    assert "42.9%" in md and "| answerability | 2 |" in md
    assert "| answer | local/smollm2-135m | 9 | 4 | 5 |" in md
    # example judgements carry the reasoning of the arbitrator and the pairwise judge
    assert "ARBITER-REASONING: the answer matches" in html
    assert "PAIRWISE-REASONING: B cites the passage" in html
    assert "final: correct (majority)" in md


def test_html_is_self_contained(tmp_path: Path, params: Params) -> None:
    write_artifacts(tmp_path)
    html, _, _ = build(params, tmp_path)
    assert not re.search(r"""(src|href)=["'](https?:)?//""", html)
    assert "<link" not in html and "<script" not in html


def test_missing_artifacts_become_notes_naming_file_and_stage(
    tmp_path: Path, params: Params
) -> None:
    html, md, sections = build(params, tmp_path)  # nothing exists yet
    by_key = {s.key: s for s in sections}
    assert _img_count(html) == 0
    lb = by_key["leaderboard"]
    assert lb.empty and lb.notes == [
        "Not available: data/tournament/leaderboard.parquet is missing "
        "(made by stage 'tournament': `dvc repro tournament`)"
    ]
    note = by_key["dafe"].notes[0]
    assert "data/judge/summary.json is missing (made by stage 'judge_summary'" in note
    assert "data/retrieval/summary.parquet is missing" in by_key["retrieval"].notes[0]
    assert "no data/metrics/llm_*.json" in by_key["calls"].notes[0]
    assert md.count("> **Note:** Not available:") >= 7


def test_partial_results_keep_the_sections_that_have_data(tmp_path: Path, params: Params) -> None:
    write_artifacts(tmp_path, skip={"leaderboard", "tournament_summary", "pairwise"})
    html, _, sections = build(params, tmp_path)
    by_key = {s.key: s for s in sections}
    assert by_key["leaderboard"].empty and by_key["swiss"].empty
    assert by_key["dafe"].figures and by_key["retrieval"].figures and by_key["udcg"].figures
    assert by_key["examples"].examples  # DAFE examples still shown
    assert any("pairwise.parquet is missing" in n for n in by_key["examples"].notes)
    assert _img_count(html) == 5


def test_malformed_artifact_is_reported_not_raised(tmp_path: Path, params: Params) -> None:
    write_artifacts(tmp_path)
    bad = tmp_path / "data/tournament/leaderboard.parquet"
    pl.DataFrame({"rank": [1], "system": ["x"]}).write_parquet(bad)  # no elo columns
    (tmp_path / "data/judge/summary.json").write_text("{not json")
    _, _, sections = build(params, tmp_path)
    by_key = {s.key: s for s in sections}
    assert "missing column 'elo'" in by_key["leaderboard"].notes[0]
    assert "unreadable JSON" in by_key["dafe"].notes[0]


def test_stage_entry_writes_both_files_atomically(tmp_path: Path) -> None:
    write_artifacts(tmp_path)
    (tmp_path / "params.yaml").write_text(
        "chunkings: {c256: {size: 256, overlap: 32}}\nqagen: {reference_chunking: c256}\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "stages", "report", "--params", "params.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / HTML_PATH).stat().st_size > 10_000
    md = (tmp_path / MD_PATH).read_text()
    assert md.startswith("# ragcourt report")
    head = Headline.model_validate_json((tmp_path / HEADLINE_PATH).read_text())
    assert (head.best_system, head.runner_up, head.significant) == ("dense-k5", "bm25-k5", True)
    figures = sorted(p.name for p in (tmp_path / FIGURES_DIR).iterdir())
    assert figures == ["cost_per_stage.png", "elo_gaps.png", "leaderboard.png"]
    assert all((tmp_path / FIGURES_DIR / f).read_bytes()[:4] == b"\x89PNG" for f in figures)
    assert "![Elo-gap matrix of the real systems](figures/elo_gaps.png)" in md
    assert not list((tmp_path / "data/report").glob(".*"))  # no temp files left


def test_run_in_cwd_with_bad_params_is_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "params.yaml").write_text("chunkings: {c256: {size: 0, overlap: 0}}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "stages", "report"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("ragcourt: error: params.yaml: key 'chunkings.c256")
    assert not (tmp_path / "data").exists()


def test_run_writes_into_the_cwd(
    tmp_path: Path, params: Params, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_artifacts(tmp_path, skip={"metrics"})
    monkeypatch.chdir(tmp_path)
    html_path, md_path = run(params)
    assert (tmp_path / html_path).is_file() and (tmp_path / md_path).is_file()


def test_retrieval_section_states_the_chunk_size_bias_and_unevaluable_counts(
    tmp_path: Path, params: Params
) -> None:
    from ragcourt.core.io import read_table, write_parquet

    write_artifacts(tmp_path)
    path = tmp_path / "data/retrieval/summary.parquet"
    summary = read_table(path, "retrieval_summary")
    write_parquet(
        summary.with_columns(
            pl.when(pl.col("chunking") == "c256")
            .then(2)
            .otherwise(0)
            .cast(pl.Int64)
            .alias("n_unevaluable")
        ),
        path,
        "retrieval_summary",
    )
    _, _, sections = build(params, tmp_path)
    sec = {s.key: s for s in sections}["retrieval"]
    assert "whole 256-token chunk of the reference chunking (c256)" in sec.intro
    assert "MRR@k and Hits@k" in sec.intro and "Recall@1 near 0.5" in sec.intro
    facts = dict(sec.facts)
    assert facts["questions with no relevant chunk (left out of the means)"] == "c256: 2"


def test_qa_section_reads_models_nested_as_qagen_writes_them(
    tmp_path: Path, params: Params
) -> None:
    import json

    write_artifacts(tmp_path)
    path = tmp_path / "data/qa/summary.json"
    summary = json.loads(path.read_text())
    # the shape of ragcourt.qagen.stage.build_summary
    summary["models"] = {"question": "local/q", "answer": "local/a", "filter": "openai/f"}
    summary["reference_chunking"] = "c512"
    path.write_text(json.dumps(summary))
    _, md, sections = build(params, tmp_path)
    facts = dict({s.key: s for s in sections}["qa"].facts)
    assert (facts["question model"], facts["answer model"], facts["filter model"]) == (
        "local/q",
        "local/a",
        "openai/f",
    )
    assert facts["contexts from chunking"] == "c512"
    assert "openai/f" in md


def test_summary_that_does_not_match_its_writers_model_is_a_note(
    tmp_path: Path, params: Params
) -> None:
    """The report validates each summary.json against the pydantic model its stage writes
    it with: a hand-edited or stale summary is named in a note, never half-read."""
    import json

    write_artifacts(tmp_path)
    path = tmp_path / "data/tournament/summary.json"
    data = json.loads(path.read_text())
    data["swiss"]["rounds"] = "three"
    path.write_text(json.dumps(data))
    _, _, sections = build(params, tmp_path)
    notes = [n for s in sections for n in s.notes]
    assert any("does not match the summary its stage writes (swiss.rounds" in n for n in notes)


def test_unranked_leaderboard_names_no_best_system(tmp_path: Path, params: Params) -> None:
    write_artifacts(tmp_path)
    path = tmp_path / "data/tournament/leaderboard.parquet"
    board = pl.read_parquet(path).with_columns(pl.lit(None, dtype=pl.Int64).alias("rank"))
    board.write_parquet(path)
    _, md, _ = build(params, tmp_path)
    assert "none: no valid judgements" in md and "No valid judgements: every pairwise" in md
    assert "dense-k5 (Swiss Elo" not in md
