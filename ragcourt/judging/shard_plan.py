"""How the judge stages split their rows into shards (``scale.shard_questions`` > 0).

``judge`` shards by (system, question block): each system's rows of the answers table, in
table order, in blocks of ``shard_questions``. ``judge_retrieval`` shards by question block
alone: a passage is judged once per (question, chunk) across systems, so a block holds every
system's rows of its questions (the questions in order of first appearance). A shard file's
key (:func:`ragcourt.core.shards.shard_key`) holds the stage's settings (:func:`settings`) and
the shard's input rows. Merged, a table whose rows follow the input rows is put back in input
order (:func:`in_input_order`), so it is the table one unsharded call writes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import polars as pl
from pydantic import BaseModel

from ragcourt.core import catalog
from ragcourt.core.fingerprint import MISSING, file_sha256
from ragcourt.core.shards import Shard, blocks, is_done, merge, prune, shard_file, write_shard
from ragcourt.judging.params import JudgingView
from ragcourt.judging.vocabulary import JudgeContext

T = TypeVar("T")
log = logging.getLogger("ragcourt.judge")


@dataclass(frozen=True)
class RowShard:
    """Rows ``rows`` (positions in the input table) of one shard; ``system`` is None for a
    question block across systems."""

    system: str | None
    block: int
    rows: tuple[int, ...]

    @property
    def kwargs(self) -> tuple[tuple[str, Any], ...]:
        """The stage function's keyword arguments selecting this shard."""
        head = () if self.system is None else (("system", self.system),)
        return (*head, ("block", self.block))

    @property
    def label(self) -> str:
        return f"{self.system or ''}#{self.block}"

    def file(self, artifact: str, table: str) -> Path:
        """Its file of ``table`` in the stage's shard folder (catalog ``artifact``)."""
        folder = catalog.path(artifact) / table
        return shard_file(folder / self.system if self.system else folder, self.block)

    def task(self, artifact: str, tables: tuple[str, ...]) -> Shard:
        """The shard as a task of the flow (its kwargs and the files it writes)."""
        outs = tuple(self.file(artifact, t).as_posix() for t in tables)
        return Shard(self.kwargs, outs, self.label)


def by_system(df: pl.DataFrame, size: int) -> list[RowShard]:
    """Each system's rows (systems in order of first appearance) in blocks of ``size``."""
    systems = df["system"].to_list()
    rows: dict[str, list[int]] = {}
    for i, s in enumerate(systems):
        rows.setdefault(s, []).append(i)
    return [
        RowShard(s, b, tuple(idx[lo:hi]))
        for s, idx in rows.items()
        for b, (lo, hi) in enumerate(blocks(len(idx), size))
    ]


def by_question(df: pl.DataFrame, size: int) -> list[RowShard]:
    """Every system's rows of each block of ``size`` questions (order of first appearance)."""
    qids = df["question_id"].to_list()
    order = list(dict.fromkeys(qids))
    block_of = {q: b for b, (lo, hi) in enumerate(blocks(len(order), size)) for q in order[lo:hi]}
    rows: list[list[int]] = [[] for _ in blocks(len(order), size)]
    for i, q in enumerate(qids):
        rows[block_of[q]].append(i)
    return [RowShard(None, b, tuple(r)) for b, r in enumerate(rows)]


def select(plan: list[RowShard], system: str | None, block: int, stage: str) -> RowShard:
    """The shard of ``plan`` a task names (one-line ValueError when there is none)."""
    for s in plan:
        if s.system == system and s.block == block:
            return s
    raise ValueError(f"{stage}: no shard {system or ''}#{block} (there are {len(plan)})")


def rows_of(df: pl.DataFrame, shard: RowShard) -> pl.DataFrame:
    return df.select(pl.all().gather(list(shard.rows)))


def in_input_order(merged: pl.DataFrame, plan: list[RowShard]) -> pl.DataFrame:
    """Rows of ``merged`` (one per input row, shards concatenated in ``plan`` order) put
    back in input order."""
    positions = [i for s in plan for i in s.rows]
    return (
        merged.with_columns(pl.Series("_input_row", positions, dtype=pl.Int64))
        .sort("_input_row")
        .drop("_input_row")
    )


def judge_shard(
    stage: str,
    artifact: str,
    shard: RowShard,
    key: str,
    judge: Callable[[], Sequence[pl.DataFrame]],
    tables: Sequence[str],
) -> None:
    """Write ``judge()``'s tables (in ``tables`` order) as ``shard``'s files under ``key``;
    none when every file already holds ``key`` (the shard is done and kept)."""
    files = {t: shard.file(artifact, t) for t in tables}
    if all(is_done(f, key) for f in files.values()):
        log.info("%s: shard %s is done, kept", stage, shard.label)
        return
    for table, df in zip(tables, judge(), strict=True):
        write_shard(df, files[table], table, key)


def merge_shards(plan: list[RowShard], artifact: str, table: str) -> pl.DataFrame:
    """The shard files of ``table`` in ``plan`` order, concatenated (any other file of the
    table's shard folder removed)."""
    files = [s.file(artifact, table) for s in plan]
    prune(catalog.path(artifact) / table, files)
    return merge(files, table)


def judged_tables(
    ctx: JudgeContext,
    artifact: str,
    block: int | None,
    in_shards: Callable[[], T | None],
    whole: Callable[[], T],
) -> T | None:
    """A judge stage's tables: ``in_shards()`` when ``scale.shard_questions`` > 0 or ``block``
    names a shard (None for one shard of a Prefect run, its model calls accounted: the merging
    call writes the tables), else ``whole()`` with the shards of an earlier run removed."""
    folder = catalog.path(artifact)  # an output of the stage, even empty
    folder.mkdir(parents=True, exist_ok=True)
    if ctx.params.scale.shard_questions > 0 or block is not None:
        judged = in_shards()
        if judged is None:
            ctx.gateway.write_metrics()
        return judged
    prune(folder, [])  # unsharded: no shard of an earlier run stays
    return whole()


def _digest(path: str | Path) -> str:
    p = Path(path)
    return file_sha256(p) if p.is_file() else MISSING


#: params values a key may hold (a strict run's guard on an undeclared key is none of them)
_PLAIN = (BaseModel, dict, list, tuple, str, int, float, bool, type(None))


def _json(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


def settings(params: JudgingView, judge_keys: tuple[str, ...], embedders: bool) -> dict[str, Any]:
    """What a judge shard's rows depend on besides its input rows: the ``judge.<key>`` params
    its stage reads, the LLM params, the embedders (when it reads them), the judge prompts and
    the model registry."""
    fields = type(params.judge).model_fields
    values = {k: getattr(params.judge, k) for k in judge_keys if k in fields}
    out = {
        "judge": {k: _json(v) for k, v in values.items() if isinstance(v, _PLAIN)},
        "llm": _json(params.llm),
        "prompts": _digest(catalog.prompts_file("judge")),
        "models": _digest(params.llm.models_file),
    }
    if embedders:
        out["embedders"] = _json(params.embedders)
    return out
