"""Control systems from params (spec §3): ``controls.kinds`` adds a ``control-<kind>`` system
per kind, built on ``controls.base`` (null: the first built-in real system; with none, only
external systems, no control is added and a warning says why). A control
retriever kind (:data:`~ragcourt.answering.retriever_kinds.CONTROL_RETRIEVERS`) copies the
base's chunking, top-k, generator, prompt and max_tokens; ``shuffled`` takes its answers.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from ragcourt.answering.candidate_system import CandidateSystem
from ragcourt.answering.params import AnsweringView
from ragcourt.answering.system_kinds.builtin import builtin_systems, resolve
from ragcourt.answering.system_kinds.shuffled import ShuffledSystem
from ragcourt.answering.system_registry import CONTROL_PREFIX, SHUFFLED
from ragcourt.answering.system_specs import ShuffledSpec
from ragcourt.core.errors import ConfigError

log = logging.getLogger("ragcourt.answering")


def param_controls(
    systems: Sequence[CandidateSystem], params: AnsweringView, source: Path | str = "params"
) -> list[CandidateSystem]:
    """The ``control-<kind>`` systems of ``params.controls.kinds`` (rules in the module
    docstring); a name already used in the systems file is a one-line ConfigError."""
    cp = params.controls
    if not cp.kinds:
        return []
    builtin = [s for s in builtin_systems(systems) if s.control is None]
    if cp.base is None:
        if not builtin:
            log.warning(
                "%s: no built-in system to build the controls %s on (controls.base is null): "
                "no controls, so the discrimination check cannot run",
                source, list(cp.kinds),
            )  # fmt: skip
            return []
        base = builtin[0]
    else:
        named = {s.name: s for s in builtin}
        if cp.base not in named:
            raise ConfigError(
                f"params: key 'controls.base': '{cp.base}' is not a built-in real system "
                f"of {source} (have {sorted(named)})"
            )
        base = named[cp.base]
    out: list[CandidateSystem] = []
    for kind in cp.kinds:
        name = f"{CONTROL_PREFIX}{kind}"
        if any(s.name == name for s in systems):
            raise ConfigError(
                f"params: key 'controls.kinds': system name '{name}' is already used in {source}"
            )
        if kind == SHUFFLED:
            out.append(ShuffledSystem(ShuffledSpec(name=name, answers="shuffled", base=base.name)))
            continue
        spec = base.spec.model_copy(
            update={"name": name, "retriever": kind, "embedder": None, "fusion": None}
        )
        out.append(resolve(spec, params, f"params: key 'controls.kinds' ({kind})"))
    return out
