"""Registering an imported answers file: the systems file keeps its text, gains one item."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragcourt.answering.external.registration import (
    appended_text,
    entry_line,
    imported_path,
    register_answers_file,
)
from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[3]
LINE = "{name: t, kind: answers_file, path: data/external/t.jsonl}"


def test_entry_line_and_destination() -> None:
    dest = imported_path("team-b", Path("/tmp/Answers.JSONL"))
    assert dest == Path("data/external/team-b.jsonl")
    assert entry_line("team-b", dest) == (
        "{name: team-b, kind: answers_file, path: data/external/team-b.jsonl}"
    )
    with pytest.raises(ConfigError, match=r"system name '\.\./x' must match"):
        imported_path("../x", Path("a.jsonl"))
    with pytest.raises(ConfigError, match=r"must end in \.parquet, \.jsonl, \.csv"):
        imported_path("x", Path("a.xlsx"))


def test_append_after_last_item_keeping_comments() -> None:
    text = (
        "# header\n"
        "defaults: {chunking: c256}\n"
        "systems:\n"
        "  - {name: a, retriever: bm25}   # first\n"
        "  - name: b\n"
        "    retriever: dense\n"
        "    # inner comment\n"
        "\n"
        "# about the grids\n"
        "grids: []\n"
    )
    assert appended_text(text, LINE) == (
        "# header\n"
        "defaults: {chunking: c256}\n"
        "systems:\n"
        "  - {name: a, retriever: bm25}   # first\n"
        "  - name: b\n"
        "    retriever: dense\n"
        "    # inner comment\n"
        f"  - {LINE}\n"
        "\n"
        "# about the grids\n"
        "grids: []\n"
    )


def test_append_variants() -> None:
    assert appended_text("systems:\n- {name: a}", LINE) == f"systems:\n- {{name: a}}\n- {LINE}\n"
    assert appended_text("defaults: {}\n", LINE) == f"defaults: {{}}\nsystems:\n  - {LINE}\n"
    assert appended_text("", LINE) == f"systems:\n  - {LINE}\n"
    assert appended_text("systems: [{name: a}]\n", LINE) is None  # flow style: by hand
    assert appended_text("systems: []\n", LINE) is None


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Params:
    monkeypatch.chdir(tmp_path)
    params = load_params(ROOT / "params.yaml").model_copy(deep=True)
    params.controls.kinds = []  # the systems file's own systems only
    params.systems_file = "systems.yaml"
    params.llm.models_file = str(ROOT / "configs/models.yaml")
    (tmp_path / "configs/prompts").mkdir(parents=True)
    (tmp_path / "configs/prompts/answer.yaml").write_bytes(
        (ROOT / "configs/prompts/answer.yaml").read_bytes()
    )
    Path("systems.yaml").write_text(
        "defaults: {chunking: c256, embedder: minilm}\n"
        "systems:\n"
        "  - {name: bm25-k3, retriever: bm25, top_k: 3}  # keep me\n"
    )
    Path("answers.jsonl").write_text('{"question_id": "q1", "answer": "x"}\n')
    return params


def test_register_copies_and_appends_once(project: Params) -> None:
    reg = register_answers_file(Path("answers.jsonl"), "team-b", project)
    assert reg.state == "added"
    assert Path("data/external/team-b.jsonl").read_bytes() == Path("answers.jsonl").read_bytes()
    text = Path("systems.yaml").read_text()
    assert text.endswith(
        "  - {name: bm25-k3, retriever: bm25, top_k: 3}  # keep me\n"
        "  - {name: team-b, kind: answers_file, path: data/external/team-b.jsonl}\n"
    )
    Path("answers.jsonl").write_text('{"question_id": "q1", "answer": "y"}\n')
    again = register_answers_file(Path("answers.jsonl"), "team-b", project)
    assert again.state == "present" and Path("systems.yaml").read_text() == text
    assert "y" in Path("data/external/team-b.jsonl").read_text()  # the copy was refreshed


def test_register_refuses_a_taken_name_and_can_print_only(project: Params) -> None:
    before = Path("systems.yaml").read_text()
    with pytest.raises(ConfigError, match="system 'bm25-k3' already exists"):
        register_answers_file(Path("answers.jsonl"), "bm25-k3", project)
    assert not Path("data/external").exists()
    reg = register_answers_file(Path("answers.jsonl"), "team-c", project, edit_systems_file=False)
    assert reg.state == "printed" and Path("systems.yaml").read_text() == before
    assert Path("data/external/team-c.jsonl").is_file()
    Path("systems.yaml").write_text("systems: [{name: a, retriever: bm25, chunking: c256}]\n")
    with pytest.raises(ConfigError, match=r"add this item by hand: - \{name: team-d"):
        register_answers_file(Path("answers.jsonl"), "team-d", project)
