"""The artifact catalog: one name per path, templates with partition fields, no other
``data/`` paths in the library."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError
from ragcourt.core.schemas import TABLES
from ragcourt.orchestration.stage_graph import stage_graph

ROOT = Path(__file__).resolve().parents[3]


def test_paths_fill_partition_fields_and_refuse_wrong_ones() -> None:
    assert catalog.path("chunks", chunking="c256") == Path("data/chunks/c256.parquet")
    assert catalog.path("index", chunking="c1", embedder="e") == Path("data/index/c1__e.faiss")
    with pytest.raises(ConfigError, match="needs \\['chunking'\\]"):
        catalog.path("chunks")
    with pytest.raises(ConfigError, match="unknown artifact 'nope'"):
        catalog.path("nope")


def test_every_artifact_is_unique_made_by_a_stage_with_a_known_schema() -> None:
    templates = [a.template for a in catalog.ARTIFACTS.values()]
    assert len(templates) == len(set(templates))
    for a in catalog.ARTIFACTS.values():
        assert a.stage in stage_graph(), a.name
        assert a.schema is None or a.schema in TABLES, a.name
        assert a.template.startswith("data/"), a.name
    for stage in stage_graph():
        assert catalog.produced_by(stage), f"stage {stage} writes nothing catalogued"


def test_no_data_path_is_spelled_outside_the_catalog() -> None:
    """Only ragcourt/core/catalog.py spells a ``data/...`` path in the package, stage entry
    and flows included (docstrings and comments aside)."""
    literal = re.compile(r"""["'](?:\./)?data/[\w./{}-]*["']""")
    offenders = []
    for folder in ("ragcourt", "stages", "flows"):
        for f in (ROOT / folder).rglob("*.py"):
            if f == ROOT / "ragcourt/core/catalog.py":
                continue
            for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
                code = line.split("#", 1)[0]
                if literal.search(code):
                    offenders.append(f"{f.relative_to(ROOT)}:{i}: {line.strip()}")
    assert offenders == []
