"""The params model is the one source of the defaults: every key params.yaml sets equals the
model's default, except the keys that are a project's own choices by design (listed below)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from ragcourt.orchestration.params import Params, load_params, tracked_keys

ROOT = Path(__file__).resolve().parents[3]

# key path -> why params.yaml may set it apart from the model's default
PROJECT_CHOICES: dict[str, str] = {
    "corpus.dir": "where this project's documents live",
    "chunkings": "the chunking grid this project compares",
    "embedders": "the embedder grid this project compares (and each one's batch size)",
    "systems_file": "the systems this project compares",
    "gate.baseline": "the system this project runs in production (`ragcourt gate`)",
}


def _leaves(data: Any, path: str = "") -> list[tuple[str, Any]]:
    """(dotted key, value) of every scalar or list under a mapping; mappings are walked."""
    if not isinstance(data, dict):
        return [(path, data)]
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        out.extend(_leaves(value, f"{path}.{key}" if path else str(key)))
    return out


def _exempt(key: str) -> bool:
    return any(key == k or key.startswith(f"{k}.") for k in PROJECT_CHOICES)


def _at(data: Any, key: str) -> Any:
    for part in key.split("."):
        if not isinstance(data, dict) or part not in data:
            return "<absent>"
        data = data[part]
    return data


def test_params_yaml_sets_only_the_model_defaults() -> None:
    shipped = yaml.safe_load((ROOT / "params.yaml").read_text())
    defaults = Params().model_dump(mode="json")
    loaded = load_params(ROOT / "params.yaml").model_dump(mode="json")
    differ = [
        f"{key}: params.yaml {_at(loaded, key)!r}, model {_at(defaults, key)!r}"
        for key, _ in _leaves(shipped)
        if not _exempt(key) and _at(loaded, key) != _at(defaults, key)
    ]
    assert differ == []


def test_exemptions_name_keys_of_the_model() -> None:
    for key in PROJECT_CHOICES:
        head, *rest = key.split(".")
        node: Any = Params()
        for part in [head, *rest]:
            assert isinstance(node, BaseModel) and part in type(node).model_fields, key
            node = getattr(node, part)


def test_tracked_keys_leave_out_runtime_settings() -> None:
    """A section holding a runtime setting becomes its other settings' keys; a section whose
    other settings are not all written in the params file stays one key."""
    keys = tracked_keys(["llm", "scale", "chunkings.c256.size", "qagen"])
    assert "llm.model" in keys and "llm.temperature" in keys and "llm.seed" in keys
    assert not {"llm", "llm.concurrency", "llm.cache_dir", "llm.timeout_s"} & set(keys)
    assert "scale.shard_questions" in keys and "scale.shard_retries" not in keys
    assert "chunkings.c256.size" in keys and "qagen" in keys
    assert tracked_keys(["llm"], present=lambda k: k != "llm.top_p") == ("llm",)
    assert tracked_keys(["scale.shard_chunks", "llm.concurrency", "llm.seed"]) == ("llm.seed",)
