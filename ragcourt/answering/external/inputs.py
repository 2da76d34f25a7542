"""The files an external system's answers depend on, and its freshness hash.

* ``answers_file``: the file (its sha256: a changed file re-answers that system only);
* ``python``: the module's source file when it lives in the project (``a/b.py`` or
  ``a/b/__init__.py`` under the project root; an installed package is not hashed) plus the
  ``inputs`` the config lists (files or folders: helper modules, an index the code reads);
* ``http``: none (the service is outside the project; only its config is hashed).

:func:`external_config_hash` = ``object_sha256`` of the system's name, its config as written
(header *templates* and variable names only: never a secret value) and the sha256 of each
input (``"missing"`` when absent). With the QA hash it decides freshness, exactly as for
built-in systems.
"""

from __future__ import annotations

from pathlib import Path

from ragcourt.answering.external.specs import AnswersFileSpec, ExternalSpec, PythonSpec
from ragcourt.core.fingerprint import object_sha256, path_sha256


def module_file(module: str, root: Path | None = None) -> Path | None:
    """The source file of ``module`` when it lives under ``root`` (default: the cwd), relative
    to ``root``; None otherwise. Nothing is imported."""
    base_root = root or Path.cwd()
    rel = Path(*module.split("."))
    for cand in (rel.with_suffix(".py"), rel / "__init__.py"):
        if (base_root / cand).is_file():
            return cand
    return None


def input_paths(spec: ExternalSpec) -> list[Path]:
    """Paths (as configured, relative to the project root) the system's answers depend on."""
    if isinstance(spec, AnswersFileSpec):
        return [Path(spec.path)]
    if isinstance(spec, PythonSpec):
        own = module_file(spec.module)
        return [*([own] if own is not None else []), *(Path(p) for p in spec.inputs)]
    return []


def external_config_hash(spec: ExternalSpec) -> str:
    """Freshness hash of an external system (see the module docstring)."""
    return object_sha256(
        {
            "system": spec.model_dump(mode="json"),
            "inputs": {p.as_posix(): path_sha256(p) for p in input_paths(spec)},
        }
    )
