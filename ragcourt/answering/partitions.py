"""Per-system answer partitions and their freshness (SPEC 3).

Each system is written to ``data/answers/systems/<name>.parquet`` with Parquet metadata
``ragcourt.config_hash`` (:func:`config_hash`: resolved system config, local generator / fusion
model identity (registry GGUF sha256, chat template, n_ctx), prompt texts, sampling and
retrieval params, sha256 of the chunks, FAISS index and embeddings files it reads) and
``ragcourt.qa_hash`` (:func:`qa_hash`: question ids and texts). Both are
``ragcourt.core.fingerprint.object_sha256`` of a JSON-able record (sorted keys); an input file
that is absent hashes as ``"missing"``. A partition whose hashes match and which has no error
rows is ``fresh`` and reused as is.

An external system's config hash is
:func:`ragcourt.answering.external.inputs.external_config_hash` (its config as written and the
sha256 of its answers file / project module / declared inputs; never a secret), with the same
QA hash and the same metadata keys.

Control systems: an ``oracle`` system's hash also holds the sha256 of the QA table (its
passages follow the ground-truth spans), ``random`` and ``shuffled`` hold ``controls.seed``;
a ``shuffled`` system's hash is its config, the seed and the sha256 of its base's partition.

Shards (``scale.shard_questions`` > 0): a built-in system's questions split into blocks
(:mod:`ragcourt.core.shards`), each answered into ``data/answers/shards/<name>/<block>.parquet``
with the same metadata (its QA hash over the block's questions) and the same freshness rule;
the partition is their concatenation in block order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from ragcourt.answering.candidate_system import CandidateSystem
from ragcourt.answering.params import AnsweringView
from ragcourt.core import catalog
from ragcourt.core.fingerprint import MISSING, file_sha256, object_sha256
from ragcourt.core.io import write_with
from ragcourt.core.schemas import TABLES, check
from ragcourt.core.shards import shard_file

META_CONFIG = "ragcourt.config_hash"
META_QA = "ragcourt.qa_hash"


def chunks_path(chunking: str) -> Path:
    return catalog.path("chunks", chunking=chunking)


def dense_inputs(chunking: str, embedder: str) -> list[Path]:
    """The artifacts a dense ranking reads besides the chunks (index + row -> chunk_id map)."""
    return [
        catalog.path("index", chunking=chunking, embedder=embedder),
        catalog.path("embeddings", chunking=chunking, embedder=embedder),
    ]


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes (memoised per process on path, size, mtime); ``"missing"``
    when ``path`` is not a file."""
    return file_sha256(path) if path.is_file() else MISSING


def model_identity(model: str | None, params: AnsweringView) -> dict[str, Any] | None:
    """What pins a model's replies beyond its name: for ``local/<name>`` the gateway's own
    ``local_provider.model_identity`` (GGUF sha256, chat template, n_ctx; the gateway refuses
    a file whose sha256 differs from the registry's); None for remote / scripted models."""
    if model is None:
        return None
    from ragcourt.llm.providers import provider_of

    if provider_of(model) != "local":
        return None
    from ragcourt.llm.local_provider import model_identity as local_identity

    return local_identity(model, params.llm.models_file)


def config_hash(
    system: CandidateSystem, params: AnsweringView, prompts_dir: Path | None = None
) -> str:
    """Hash of everything that fixes a system's answers apart from the questions (its kind's
    :meth:`~ragcourt.answering.candidate_system.CandidateSystem.config_hash`; a built-in
    system's: :meth:`~ragcourt.answering.system_kinds.builtin.System.config_hash`)."""
    return system.config_hash(params, prompts_dir)


def qa_hash(qa: pl.DataFrame) -> str:
    """Hash of the question ids and texts, in order (all the answers depend on)."""
    return object_sha256(qa.select("question_id", "question").rows())


def partition_path(name: str) -> Path:
    return catalog.path("answer_partition", system=name)


def shard_path(name: str, block: int) -> Path:
    """The file of block ``block`` of system ``name``'s questions."""
    return shard_file(catalog.path("answer_shards") / name, block)


def write_partition(
    df: pl.DataFrame, name: str, cfg_hash: str, q_hash: str, path: Path | None = None
) -> Path:
    """Atomically write one system's rows (or, at ``path``, one shard's) with its freshness
    hashes as Parquet metadata."""
    path = path or partition_path(name)
    check(df, "answers", path)
    meta = {META_CONFIG: cfg_hash, META_QA: q_hash}
    return write_with(
        path, lambda tmp: df.write_parquet(tmp, compression="zstd", metadata=meta), durable=True
    )


#: answers columns added after partitions were first written, and their value in an old one
ADDED_COLUMNS = {"cached": pl.lit(None, dtype=pl.Boolean)}


def upgrade_partition(name: str) -> bool:
    """Add the :data:`ADDED_COLUMNS` an older partition lacks (null: not known), keeping its
    rows and freshness hashes, so it is reused instead of answered again; True if rewritten."""
    path = partition_path(name)
    try:
        columns = pl.read_parquet_schema(path) if path.is_file() else {}
        missing = {c: v for c, v in ADDED_COLUMNS.items() if columns and c not in columns}
        if not missing:
            return False
        meta = pl.read_parquet_metadata(path)
        df = pl.read_parquet(path).with_columns(v.alias(c) for c, v in missing.items())
        table = list(TABLES["answers"])  # the table's column order, then the others (control)
        df = df.select([*table, *(c for c in df.columns if c not in table)])
    except Exception:  # an unreadable partition is regenerated (partition_state: stale)
        return False
    write_partition(df, name, meta.get(META_CONFIG, ""), meta.get(META_QA, ""))
    return True


def partition_state(name: str, cfg_hash: str, q_hash: str, path: Path | None = None) -> str:
    """``missing``, ``stale`` (hashes differ or unreadable), ``errors`` (hashes match but some
    rows are error rows) or ``fresh``, of the system's partition (or of the shard at ``path``)."""
    path = path or partition_path(name)
    if not path.is_file():
        return "missing"
    try:
        meta = pl.read_parquet_metadata(path)
        n_errors = pl.read_parquet(path, columns=["error"])["error"].drop_nulls().len()
    except Exception:  # an unreadable partition is regenerated
        return "stale"
    if meta.get(META_CONFIG) != cfg_hash or meta.get(META_QA) != q_hash:
        return "stale"
    return "errors" if n_errors else "fresh"


def read_partition(name: str) -> pl.DataFrame | None:
    """The system's partition, or None when absent or unreadable."""
    path = partition_path(name)
    try:
        return pl.read_parquet(path) if path.is_file() else None
    except Exception:  # an unreadable partition is regenerated
        return None


def partitions_dir() -> Path:
    """The folder holding every system's partition."""
    return partition_path("x").parent
