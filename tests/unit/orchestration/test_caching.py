"""The stage cache key and output stamps (no Prefect server needed)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ragcourt.core.errors import ConfigError
from ragcourt.core.fingerprint import MISSING, path_sha256
from ragcourt.orchestration.caching import (
    call_key,
    code_digest,
    params_subset,
    stamp_matches,
    write_stamp,
)
from ragcourt.orchestration.code_deps import PROJECT_ROOT, _ragcourt_imports, code_paths
from ragcourt.orchestration.params import Params
from ragcourt.orchestration.plan import StageCall

CALL = StageCall(
    "chunk",
    kwargs=(("chunking", "c64"),),
    inputs=("data/documents.parquet",),
    outputs=("data/chunks/c64.parquet",),
    params_keys=("chunk_tokenizer", "chunkings.c64"),
)


def _params(size: int = 64, extra_chunk: int = 128, k1: float = 1.5) -> Params:
    return Params.model_validate(
        {
            "chunkings": {
                "c64": {"size": size, "overlap": 8},
                "c128": {"size": extra_chunk, "overlap": 8},
            },
            "qagen": {"reference_chunking": "c64"},
            "retrieval": {"bm25": {"k1": k1}},
        }
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    (tmp_path / "data/documents.parquet").write_bytes(b"docs v1")
    return tmp_path


def test_key_follows_inputs_params_and_partition(ws: Path) -> None:
    base = call_key(CALL, ws, _params())
    assert call_key(CALL, ws, _params()) == base
    # params the call does not read leave the key alone
    assert call_key(CALL, ws, _params(extra_chunk=256, k1=0.9)) == base
    # its own params, its input bytes, its partition change it
    assert call_key(CALL, ws, _params(size=96)) != base
    (ws / "data/documents.parquet").write_bytes(b"docs v2")
    changed = call_key(CALL, ws, _params())
    assert changed != base
    other = StageCall(
        "chunk", kwargs=(("chunking", "c128"),), inputs=CALL.inputs, params_keys=CALL.params_keys
    )
    assert call_key(other, ws, _params()) != changed


def test_missing_input_is_part_of_the_key(ws: Path) -> None:
    present = call_key(CALL, ws, _params())
    (ws / "data/documents.parquet").unlink()
    assert path_sha256(ws / "data/documents.parquet") == MISSING
    assert call_key(CALL, ws, _params()) != present


def test_key_is_the_sha256_of_the_sorted_json_payload(ws: Path) -> None:
    """The key is pinned: sha256 of ``json.dumps(payload, sort_keys=True)`` (stored Prefect
    records stay valid across refactors of the hashing helpers)."""
    doc = ws / "data/documents.parquet"
    payload = {
        "stage": "chunk",
        "kwargs": [["chunking", "c64"]],
        "params": {"chunk_tokenizer": "cl100k_base", "chunkings.c64": {"size": 64, "overlap": 8}},
        "inputs": {"data/documents.parquet": hashlib.sha256(doc.read_bytes()).hexdigest()},
        "code": code_digest("chunk"),
    }
    expected = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    assert call_key(CALL, ws, _params()) == expected


def test_params_subset_names_unknown_key() -> None:
    assert params_subset(_params(), ("chunkings.c64",)) == {
        "chunkings.c64": {"size": 64, "overlap": 8}
    }
    with pytest.raises(ConfigError, match=r"params key 'chunkings\.c999' not found"):
        params_subset(_params(), ("chunkings.c999",))


def test_stamp_matches_only_the_outputs_it_recorded(ws: Path) -> None:
    key = call_key(CALL, ws, _params())
    out = ws / "data/chunks/c64.parquet"
    assert not stamp_matches(CALL, ws, key)  # never run
    out.parent.mkdir(parents=True)
    out.write_bytes(b"chunks")
    write_stamp(CALL, ws, key)
    assert stamp_matches(CALL, ws, key)
    assert not stamp_matches(CALL, ws, "another-key")  # inputs changed since
    out.write_bytes(b"chunks from someone else")  # e.g. `dvc checkout` of another run
    assert not stamp_matches(CALL, ws, key)
    out.unlink()
    assert not stamp_matches(CALL, ws, key)


def test_code_digest_covers_the_imported_modules(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "import os\nimport ragcourt.core.io\nfrom ragcourt.core.params import Params\n"
        "from ragcourt.llm import gateway\nfrom . import sibling\n"
        "def f():\n    from ragcourt.judging import dafe\n"
    )
    found = _ragcourt_imports(src)
    assert {"ragcourt.core.io", "ragcourt.core.params", "ragcourt.llm.gateway"} <= found
    assert "ragcourt.judging" in found  # lazy imports inside functions count
    assert not any(f.startswith("os") or "sibling" in f for f in found)
    assert code_digest("chunk") != code_digest("embed")
    # pinned: sha256 of the sorted JSON {path: sha256 of the file's bytes}
    files = {
        f: hashlib.sha256((PROJECT_ROOT / f).read_bytes()).hexdigest() for f in code_paths("chunk")
    }
    declaration = PROJECT_ROOT / "stages/chunk/__init__.py"  # the stage's own folder
    files["stages/chunk/0"] = hashlib.sha256(declaration.read_bytes()).hexdigest()
    assert (
        code_digest("chunk")
        == hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    )
    # the chunking module, the package inits and the core modules it imports, file by file
    chunk = code_paths("chunk")
    assert {"ragcourt/__init__.py", "ragcourt/corpus/__init__.py", "ragcourt/corpus/chunking.py",
            "ragcourt/core/params.py"} <= set(chunk)  # fmt: skip
    assert all(f.startswith(("ragcourt/core/", "ragcourt/corpus/", "ragcourt/__")) for f in chunk)
    assert "ragcourt/corpus/ingest.py" not in chunk  # a sibling it does not import
    assert "ragcourt/llm/gateway.py" in code_paths("answer")
    assert not any("__pycache__" in f for f in code_paths("answer"))
    with pytest.raises(ConfigError, match=r"no stage 'nope'"):
        code_paths("nope")
