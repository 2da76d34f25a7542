"""A stage sees only the params it declares.

:func:`declared_view` gives a stage function a copy of the params in which every key the stage
does not declare (in its ``params``, as a path-valued input, or as the key that picks an
input's partition) is an :class:`Undeclared` guard: reading it is a one-line error naming the
stage and the key. DVC tracks exactly the declared keys, so a read the declaration misses
would let a changed value leave stale results; the guard makes that read fail in the tests.
It is on where ``RAGCOURT_STRICT_PARAMS=1`` (the test suite sets it); elsewhere the stage gets
the params unchanged.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn

from pydantic import BaseModel

from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.params import Params
from ragcourt.orchestration.stage_def import StageDef

STRICT_ENV = "RAGCOURT_STRICT_PARAMS"


class Undeclared:
    """Stands for a params key a stage did not declare; any use raises :class:`ConfigError`."""

    def __init__(self, stage: str, key: str) -> None:
        self._where = (stage, key)

    def _fail(self, detail: str = "") -> NoReturn:
        stage, key = self._where
        raise ConfigError(
            f"stage '{stage}' reads params '{key}{detail}', which stages/{stage} does not "
            "declare: add it to the stage's params"
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        self._fail(f".{name}")

    def __getitem__(self, item: object) -> Any:
        self._fail(f"[{item!r}]")

    def __iter__(self) -> Any:
        self._fail()

    def __bool__(self) -> bool:
        self._fail()

    def __len__(self) -> int:
        self._fail()

    def __str__(self) -> str:
        self._fail()

    def __eq__(self, other: object) -> bool:
        self._fail()

    def __hash__(self) -> int:
        self._fail()

    def __repr__(self) -> str:
        stage, key = self._where
        return f"<params '{key}' undeclared by stage '{stage}'>"


def _failing(name: str) -> Any:
    def use(self: Undeclared, *args: object) -> NoReturn:
        self._fail()

    use.__name__ = name
    return use


# any other use of a guarded value (arithmetic, comparison, conversion, a path) fails too
# fmt: off
_USES = ("add", "radd", "sub", "rsub", "mul", "rmul", "truediv", "rtruediv", "floordiv", "mod",
         "pow", "neg", "lt", "le", "gt", "ge", "int", "float", "index", "format", "fspath",
         "contains")
# fmt: on
for _dunder in _USES:
    setattr(Undeclared, f"__{_dunder}__", _failing(f"__{_dunder}__"))


def declared_keys(sd: StageDef, partition: Mapping[str, str | None]) -> set[str]:
    """The dotted params keys ``sd`` may read for this partition: its ``params`` (filled), the
    keys naming its path inputs, the keys picking an input's partition, and the model registry
    path when it resolves models."""
    fill = {k: v for k, v in partition.items() if v is not None}
    keys = {k.format(**fill) if "{" in k else k for k in sd.params}
    for dep in sd.deps:
        keys.update(k for k in (dep.param, dep.unless) if k)
        keys.update(how[1:] for _, how in dep.bind if how.startswith("@"))
    if sd.models:
        keys.add("llm.models_file")
    return keys


def _covered(path: str, keys: Iterable[str]) -> bool:
    return any(path == k or path.startswith(k + ".") for k in keys)


def _restrict(model: BaseModel, keys: set[str], stage: str, prefix: str) -> BaseModel:
    update: dict[str, Any] = {}
    for name in type(model).model_fields:
        path = prefix + name
        if _covered(path, keys):
            continue
        inner = any(k.startswith(path + ".") for k in keys)
        value = getattr(model, name)
        if inner and isinstance(value, BaseModel):
            update[name] = _restrict(value, keys, stage, path + ".")
        elif not inner:
            update[name] = Undeclared(stage, path)
        # a dict section with declared keys inside (chunkings.c256.size) stays whole
    return model.model_copy(update=update)


def strict() -> bool:
    """Whether stages get guarded views (``RAGCOURT_STRICT_PARAMS=1``)."""
    return os.environ.get(STRICT_ENV) == "1"


def declared_view(params: Params, sd: StageDef, partition: Mapping[str, str | None]) -> Params:
    """``params`` as stage ``sd`` may read it (module doc); unchanged unless :func:`strict`."""
    if not strict():
        return params
    view = _restrict(params, declared_keys(sd, partition), sd.name, "")
    assert isinstance(view, Params)
    return view
