"""Kind ``shuffled``: ``{name, answers: shuffled, base}``, the base system's rows re-assigned to
other questions (:mod:`ragcourt.answering.shuffled`). It calls no model; its answer task reads
the base's partition, so the base must be declared before it and is not itself shuffled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ragcourt.answering.candidate_system import AnswerJob, CandidateSystem
from ragcourt.answering.params import AnsweringView
from ragcourt.answering.partitions import file_digest, partition_path
from ragcourt.answering.shuffled import shuffled_answers
from ragcourt.answering.system_registry import SHUFFLED, SYSTEM_KINDS, ParseContext, SystemKind
from ragcourt.answering.system_specs import ShuffledSpec
from ragcourt.core.errors import ConfigError, RagcourtError
from ragcourt.core.fingerprint import object_sha256
from ragcourt.core.io import read_table


@dataclass(frozen=True)
class ShuffledSystem(CandidateSystem):
    """The ``shuffled`` control: rows of ``base`` re-assigned to other questions."""

    spec: ShuffledSpec
    # constants of the kind: class attributes, not dataclass fields
    kind = SHUFFLED
    control = SHUFFLED
    answer_order = 2  # after every other system: its base may be answered in the same run

    @property
    def base(self) -> str:
        return self.spec.base

    @property
    def generator_model(self) -> str:
        return f"answers of {self.base}"

    def config_hash(self, params: AnsweringView, prompts_dir: Path | None = None) -> str:
        """The configuration, ``controls.seed`` and the digest of the base's partition."""
        base = file_digest(partition_path(self.base))
        return object_sha256(
            {"system": self.describe(), "seed": params.controls.seed, "base_partition": base}
        )

    def inputs(self) -> list[Path]:
        """The base's partition."""
        return [partition_path(self.base)]

    def answer(self, job: AnswerJob) -> pl.DataFrame:
        """The base's rows, deranged over the questions (the base partition must exist)."""
        base_path = partition_path(self.base)
        if not base_path.is_file():
            raise RagcourtError(
                f"{base_path}: system '{self.name}' needs the answers of its base "
                f"'{self.base}'; answer the base first"
            )
        base_rows = read_table(base_path, "answers")
        return shuffled_answers(self.name, self.base, base_rows, job.qa, job.params.controls.seed)


def _parse(raw: Mapping[str, Any], ctx: ParseContext) -> ShuffledSystem:
    spec = ShuffledSpec.model_validate({k: v for k, v in raw.items() if k != "kind"})
    bases = {s.name: s for s in ctx.earlier}
    where = f"{ctx.source}: {ctx.label}"
    if spec.base not in bases:
        raise ConfigError(
            f"{where}: key 'base': '{spec.base}' is not a system declared before it "
            f"(earlier systems: {sorted(bases)})"
        )
    if bases[spec.base].kind == SHUFFLED:
        raise ConfigError(f"{where}: key 'base': '{spec.base}' is itself shuffled")
    return ShuffledSystem(spec)


SYSTEM_KINDS.register(SHUFFLED)(SystemKind(_parse))
