"""The partition freshness hashes are pinned: a refactor must not change ``config_hash`` or
``qa_hash`` (existing ``data/answers/systems/*.parquet`` partitions must stay fresh).

The expected digests below were computed with the code as it was BEFORE the answering stage
was split into modules (``ragcourt/answering/stage.py`` with its private ``_sha256_file`` /
``_digest`` helpers) and hard-coded here. Do not update them unless a change is *meant* to
invalidate every existing partition.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import yaml

from ragcourt.answering.partitions import config_hash, qa_hash
from ragcourt.answering.system_kinds.builtin import System, builtin_systems
from ragcourt.answering.systems import parse_systems
from ragcourt.orchestration.params import Params, parse_params

PROMPTS = {
    "v1": {
        "answer_system": "Answer from the passages only, else NO-RESPONSE.",
        "answer_user": "Passages:\n{passages}\n\nQuestion: {question}",
        "passage": "[{n}] {text}",
        "no_passages": "(none)",
        "variants_system": "You rewrite search queries.",
        "variants_user": "Write {n} queries for: {question}",
    }
}
SYSTEMS = [
    {"name": "dense-k2", "retriever": "dense", "top_k": 2, "max_tokens": 64},
    {"name": "bm25-k3", "retriever": "bm25", "top_k": 3},
    {
        "name": "hybrid-fusion",
        "retriever": "hybrid",
        "top_k": 4,
        "fusion": {"n_variants": 3, "model": "scripted/fusion"},
    },
]
# Pinned with the pre-split code (see the module docstring); the BM25 systems re-pinned when
# retrieval.bm25.tokenizer joined the BM25 config their answers depend on, the dense ones when the
# embedder's long-chunk strategy joined the dense config.
CONFIG_HASHES_WITH_INPUTS = {
    "dense-k2": "ca5ef4fd2e3f3af6e17a4c90b1c74aa8c7f00d5cc60d013924e5a4736b2f6744",
    "bm25-k3": "c590f158f40984cedf75474f1d9c8012e1e7149656d2bb8a1996e53694f6bb5a",
    "hybrid-fusion": "8d248fd8dc00d132d7218b35831b4df640f8330553457e2e3063722bcd8912dd",
}
CONFIG_HASHES_INPUTS_MISSING = {
    "dense-k2": "e5623c8f49e44ad227946b7e10b31c804858811611bba197b354fe28137285af",
    "bm25-k3": "16f1c489bf16c194051348830f0fe69fa1b3bd5f0f94c91a47a3fbd81824fb62",
    "hybrid-fusion": "6607dddeb2842591b28101f0471e56f474e22bc31411ec770ce8bf32774f3b7a",
}
QA_HASH = "2c3faefaff5d2efbd26d8db2461573a22a114739ae8ae9a1a77d88820844f543"


@pytest.fixture
def fixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[System], Params, Path]:
    monkeypatch.chdir(tmp_path)
    prompts_dir = tmp_path / "prompts"
    prompts_dir.mkdir()
    (prompts_dir / "answer.yaml").write_text(yaml.safe_dump(PROMPTS), encoding="utf-8")
    params = parse_params(
        {
            "chunk_tokenizer": "cl100k_base",
            "chunkings": {"c256": {"size": 256, "overlap": 32}},
            "embedders": {"minilm": {"model": "all-minilm-l6-v2", "batch_size": 64}},
            "llm": {"model": "scripted/gen", "temperature": 0.0, "seed": 0},
            "qagen": {"reference_chunking": "c256"},
            "controls": {"kinds": []},  # the pinned systems only, whatever the default controls
        }
    )
    systems = parse_systems(
        {"defaults": {"chunking": "c256", "embedder": "minilm"}, "systems": SYSTEMS},
        params,
        "systems.yaml",
        check_models=False,
        prompts_dir=prompts_dir,
    )
    builtin = builtin_systems(systems)
    assert len(builtin) == len(systems)  # every pinned system is built-in
    return builtin, params, prompts_dir


def _write_inputs() -> None:
    for rel, data in (
        ("data/chunks/c256.parquet", b"chunk bytes"),
        ("data/index/c256__minilm.faiss", b"index bytes"),
        ("data/embeddings/c256__minilm.parquet", b"embedding bytes"),
    ):
        Path(rel).parent.mkdir(parents=True, exist_ok=True)
        Path(rel).write_bytes(data)


def test_config_hash_is_pinned(fixed: tuple[list[System], Params, Path]) -> None:
    systems, params, prompts_dir = fixed
    missing = {s.name: config_hash(s, params, prompts_dir) for s in systems}
    assert missing == CONFIG_HASHES_INPUTS_MISSING  # absent input files hash as "missing"
    _write_inputs()
    present = {s.name: config_hash(s, params, prompts_dir) for s in systems}
    assert present == CONFIG_HASHES_WITH_INPUTS


def test_qa_hash_is_pinned() -> None:
    qa = pl.DataFrame(
        {
            "question_id": ["q1", "q2", "q3"],
            "question": ["When was it?", "Where is “it”?", "Who signed it?"],
            "doc_id": ["d1", "d2", "d3"],
        }
    )
    assert qa_hash(qa) == QA_HASH
    assert qa_hash(qa.reverse()) != QA_HASH  # order matters
