"""The qagen stage fails loudly when no candidate is accepted: outputs written (the rejected
table says why for each), then one line with the attempts, the top rejection reasons and what
to change, and exit code 3 through the stage entry. A scripted model controls every reply."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import yaml
from _llm_testing import scripted_model

from ragcourt.core.entry import run_entry
from ragcourt.core.errors import StageFailed
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.prompts import prompt
from ragcourt.core.schemas import frame_schema
from ragcourt.orchestration.params import parse_params
from ragcourt.qagen.stage import run as run_qagen

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ROOT / "configs" / "prompts"
QUESTION_SYSTEM = prompt("qagen", "question_system", "v1", PROMPTS)
ANSWER_SYSTEM = prompt("qagen", "answer_system", "v1", PROMPTS)
ANSWERABILITY_SYSTEM = prompt("qagen_filters", "answerability_system", "v1", PROMPTS)


def reply(msgs: list[dict[str, str]]) -> str:
    """Good questions and answers, but the answerability filter says 0 to every one."""
    system = msgs[0]["content"]
    if system == QUESTION_SYSTEM:
        n = sum(c.isdigit() for c in msgs[-1]["content"])  # a distinct question per context
        return f"Which cargo did the harbour office log in ledger {n}?"
    if system == ANSWER_SYSTEM:
        return "Tea."
    score = 0 if system == ANSWERABILITY_SYSTEM else 1
    return json.dumps({"reason": "scripted", "score": score})


def _project(tmp: Path, model: str) -> None:
    texts = [
        f"The harbour office logged shipment {d} of tea in a green ledger in 185{d}. " * 3
        for d in range(2)
    ]
    docs, chunks = [], []
    for d, text in enumerate(texts):
        docs.append((f"doc{d}", f"d{d}.txt", f"D{d}", "txt", text, len(text), None, "en", 1.0))
        half = len(text) // 2
        for j, (s, e) in enumerate([(0, half), (half, len(text))]):
            chunks.append((f"c256-doc{d}-{j}", "c256", f"doc{d}", j, s, e, 60, text[s:e]))
    write_parquet(
        pl.DataFrame(docs, schema=frame_schema("documents"), orient="row"),
        tmp / "data/documents.parquet",
        "documents",
    )
    write_parquet(
        pl.DataFrame(chunks, schema=frame_schema("chunks"), orient="row"),
        tmp / "data/chunks/c256.parquet",
        "chunks",
    )
    params = {
        "chunkings": {"c256": {"size": 256, "overlap": 32}},
        "llm": {"model": model, "max_retries": 0, "parse_retries": 0},
        "qagen": {"reference_chunking": "c256", "n_items": 3, "max_attempts": 4,
                  "min_context_tokens": 10,
                  "method": "agents", "question_model": None, "answer_model": None,
                  "prompt_version": "v1", "filter_prompt_version": "v1",
                  "filter_kinds": {"answerability": "answerability"},
                  "thresholds": {"answerability": 0.5, "faithfulness": 0.9, "relevance": 0.9},},
    }  # fmt: skip
    (tmp / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")


def test_no_accepted_item_fails_with_one_line_after_writing_scripted_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").symlink_to(ROOT / "configs", target_is_directory=True)
    with scripted_model("qagen-none", reply) as m:
        _project(tmp_path, m.model)
        params = parse_params(yaml.safe_load((tmp_path / "params.yaml").read_text()))
        with pytest.raises(StageFailed) as failed:
            run_qagen(params)
        assert m.calls
        message = str(failed.value)
        assert message == (
            "qagen: 0 of 3 items accepted after 4 attempts (max_attempts_reached); top "
            "rejection reasons: answerability x4 (every candidate and its reason is in "
            "data/qa/qa_rejected.parquet); try a stronger qagen.question_model (now "
            f"{m.model}), more qagen.max_attempts (now 4) or a lower "
            "qagen.thresholds.answerability (now 0.5)"
        )
        # the outputs were written first: an empty QA set, every candidate with its reason
        assert read_table("data/qa/qa.parquet", "qa").height == 0
        rejected = read_table("data/qa/qa_rejected.parquet", "qa_rejected")
        assert rejected.height == 4 and set(rejected["failed_filter"]) == {"answerability"}
        summary = json.loads(Path("data/qa/summary.json").read_text(encoding="utf-8"))
        assert (summary["accepted"], summary["attempts"]) == (0, 4)

        # through the stage entry (replies from the cache): exit code 3 and one line
        capsys.readouterr()
        with pytest.raises(SystemExit) as exited:
            run_entry(lambda: run_qagen(params))
        assert exited.value.code == 3
        [line] = capsys.readouterr().err.strip().splitlines()[-1:]
        assert line == f"ragcourt: stage failed: {message}"
