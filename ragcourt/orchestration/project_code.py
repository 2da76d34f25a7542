"""The project's own code folders, ``stages/`` and ``flows/``, found and imported.

A project (``ragcourt init DIR``, or this checkout) holds ``stages/`` and ``flows/`` beside
``params.yaml``. :func:`code_root` is the working directory when it has the folder, else the
checkout ragcourt runs from (its template). :func:`import_flows` imports ``flows.<module>``
from there under its real name (Prefect deployments and ``python -m flows`` name it so);
:func:`child_env` lets a child process (``python -m flows``, ``python -m stages``) import them
from any working directory.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError

#: the checkout holding ragcourt/, whose stages/ and flows/ are the project template
TEMPLATE_ROOT = catalog.SOURCE_ROOT


def code_root(folder: str, root: Path | None = None) -> Path:
    """``root`` (default: the working directory) when ``root/<folder>`` is a package, else
    :data:`TEMPLATE_ROOT`."""
    here = root or Path.cwd()
    return here if (here / folder / "__init__.py").is_file() else TEMPLATE_ROOT


def import_flows(module: str, root: Path | None = None) -> ModuleType:
    """``flows.<module>`` of the project at ``root`` (a ``flows`` package imported from another
    folder earlier in this process is replaced)."""
    folder = (code_root("flows", root) / "flows").resolve()
    loaded = sys.modules.get("flows")
    if loaded is None or Path(str(loaded.__file__)).resolve().parent != folder:
        for name in [n for n in sys.modules if n == "flows" or n.startswith("flows.")]:
            del sys.modules[name]
        spec = importlib.util.spec_from_file_location(
            "flows", folder / "__init__.py", submodule_search_locations=[str(folder)]
        )
        if spec is None or spec.loader is None:
            raise ConfigError(f"{folder}: no flows package (run `ragcourt init` to make one)")
        package = importlib.util.module_from_spec(spec)
        sys.modules["flows"] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"flows.{module}")


def child_env(root: Path | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this environment) with the folders holding the project's ``flows/``
    and ``stages/`` first on ``PYTHONPATH``."""
    env = dict(os.environ if base is None else base)
    roots = [str(code_root(f, root).resolve()) for f in ("flows", "stages")]
    parts = [*roots, *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))
    return env
