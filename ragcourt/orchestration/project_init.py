"""``ragcourt init DIR``: a new project, the same one a checkout is.

It copies the template (:data:`~ragcourt.orchestration.project_code.TEMPLATE_ROOT`): params,
``configs/``, ``stages/``, ``flows/``, ``.dvcignore``, ``.gitignore`` and the demo inputs under
``data/`` (the corpus, a hand-written QA file, the human labels folder), writes ``dvc.yaml``
for it (code deps: each stage's folder; the library is the installed package) and, with
``vcs``, makes it a git + DVC repository, so ``dvc repro`` runs there. The folder must be
empty or absent: nothing of the user's is overwritten.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from contextlib import chdir
from pathlib import Path

from ragcourt.core.catalog import DEFAULT_PARAMS_FILE, PROJECT_INPUTS
from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.project_code import TEMPLATE_ROOT

#: what a project holds (folders copied whole, less caches), relative to its root
PROJECT_FILES = (
    DEFAULT_PARAMS_FILE,
    "configs",
    "stages",
    "flows",
    ".dvcignore",
    ".gitignore",
    *PROJECT_INPUTS,
)
_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc")


def init_project(dest: Path, template: Path = TEMPLATE_ROOT, vcs: bool = True) -> list[str]:
    """Copy the template's :data:`PROJECT_FILES` into ``dest`` (empty or absent), write its
    dvc.yaml and, with ``vcs``, run ``git init`` and ``dvc init``; return what was written."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ConfigError(f"{dest}: not an empty folder; `ragcourt init` writes into a new one")
    missing = [rel for rel in PROJECT_FILES if not (template / rel).exists()]
    if missing:
        raise ConfigError(f"{template}: the project template lacks {', '.join(missing)}")
    dest.mkdir(parents=True, exist_ok=True)
    for rel in PROJECT_FILES:
        src, out = template / rel, dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, out, ignore=_SKIP)
        else:
            shutil.copy2(src, out)
    from ragcourt.orchestration import dvc_yaml

    with chdir(dest):  # params name their files relative to the project root
        dvc_yaml.write(dest)
    written = [*PROJECT_FILES, "dvc.yaml"]
    if vcs:
        _run(["git", "init", "-q"], dest)
        _run([sys.executable, "-m", "dvc", "init", "-q"], dest)
        written += [".git", ".dvc"]
    return written


def _run(cmd: list[str], cwd: Path) -> None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    except FileNotFoundError:
        raise ConfigError(f"`{cmd[0]}` is not installed: run `ragcourt init --no-vcs`") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise ConfigError(f"`{' '.join(cmd[-3:])}` failed in {cwd}: {tail[0]}")
