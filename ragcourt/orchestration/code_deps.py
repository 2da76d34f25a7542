"""The source files a stage's results depend on, from the imports its code really makes.

:func:`code_paths` starts at the stage function's module (and its volatile data's) and follows
every ``ragcourt`` import, transitively, file by file: module-level and lazy ones inside
functions alike, the built-in modules a registry imports on its first lookup (read with
``ast``, nothing is imported), and the ``tables`` module of every package it enters (the
table schemas :mod:`ragcourt.core.schemas` finds by name). Importing ``ragcourt.a.b`` runs
``ragcourt/__init__.py`` and ``ragcourt/a/__init__.py`` too, so those count (and their own
imports). Package data beside an included module (``reporting/templates``) counts as source.
:func:`code_digest` hashes exactly these files and the stage's declaration
(:func:`stage_files`): the identity of a stage's code in both engines. The Prefect cache key
holds it; for DVC, ``python -m stages code`` writes every stage's digest into
:data:`~ragcourt.core.catalog.CODE_DIGESTS` (:func:`write_code_digests`) and each stage tracks
its own key there as a param. So an edit re-runs exactly the stages whose code it touches, and
an edit to a file no stage's code imports re-runs none.
"""

from __future__ import annotations

import ast
from pathlib import Path

import yaml

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError
from ragcourt.core.fingerprint import file_sha256, object_sha256
from ragcourt.core.io import write_text
from ragcourt.orchestration.stage_graph import stage_graph, stages_dir

PROJECT_ROOT = catalog.SOURCE_ROOT  # holds ragcourt/
PACKAGE = "ragcourt"
#: the module of a package that declares its tables (:data:`ragcourt.core.schemas.TABLES`)
TABLES_MODULE = "tables"


def _ragcourt_imports(path: Path, module: str | None = None) -> set[str]:
    """``ragcourt.*`` names imported anywhere in the file (also lazy imports inside
    functions): ``from m import x`` gives ``m`` and ``m.x`` (``x`` may be a submodule).
    ``module``: the file's own dotted name, to resolve relative imports (else skipped).
    The modules a registry imports on first lookup count too: the string names in a call's
    ``builtins=`` argument (:class:`ragcourt.core.registry.Registry`), a package marked with
    a trailing ``.*`` (it stands for every module in it)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = (module or "").split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == PACKAGE)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if module is None or node.level > len(package):
                    continue
                base = package[: len(package) - node.level + 1]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            if name.split(".")[0] == PACKAGE:
                found.add(name)
                found.update(f"{name}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg == "builtins":
                    found.update(f"{n}.*" for n in _strings(kw.value) if n.startswith(PACKAGE))
    return found


def _strings(node: ast.expr) -> list[str]:
    """The string constants of a literal (a string, or a tuple/list of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List):
        return [
            e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
        ]
    return []


def _package_modules(package: str, root: Path) -> list[str]:
    """``package`` and, when it is a package, every module and subpackage in it whose name
    does not start with ``_`` (what the registry imports), recursively."""
    path = module_file(package, root)
    if path is None or path.name != "__init__.py":
        return [package]
    out = [package]
    for child in sorted(path.parent.iterdir()):
        name = child.stem if child.suffix == ".py" else child.name
        if name.startswith("_") or not (child.suffix == ".py" or (child / "__init__.py").is_file()):
            continue
        out.extend(_package_modules(f"{package}.{name}", root))
    return out


def module_file(module: str, root: Path) -> Path | None:
    """The file of a ``ragcourt`` module under ``root`` (``x.py`` or ``x/__init__.py``), or
    None when the dotted name is not a module (an attribute, a missing module)."""
    base = root.joinpath(*module.split("."))
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _with_parents(module: str) -> list[str]:
    """``ragcourt.a.b`` -> ``ragcourt``, ``ragcourt.a``, ``ragcourt.a.b`` (all run on import)."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _package_data(folder: Path) -> set[Path]:
    """Non-Python files in the non-package subfolders of a package folder (templates)."""
    out: set[Path] = set()
    for sub in folder.iterdir():
        if not sub.is_dir() or sub.name == "__pycache__" or (sub / "__init__.py").is_file():
            continue
        out.update(f for f in sub.rglob("*") if f.is_file() and f.suffix not in {".py", ".pyc"})
    return out


#: the ``ragcourt`` imports of a file, by (file, module): :func:`code_digests` shares one
#: across every stage, so each file is parsed once
ImportsMemo = dict[tuple[Path, str], set[str]]


def module_closure(
    modules: list[str], root: Path = PROJECT_ROOT, memo: ImportsMemo | None = None
) -> list[str]:
    """Sorted paths (relative to ``root``) of ``modules``, their parent packages and every
    ``ragcourt`` module they import, transitively, plus those packages' data files. Memoised
    only in the caller's ``memo``: callers serialise ``ast.parse`` themselves (CPython 3.11's
    parser is not thread-safe)."""
    memo = {} if memo is None else memo
    files: set[Path] = set()
    todo = [m for name in modules for m in _with_parents(name)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = module_file(name, root)
        if path is None:
            continue
        files.add(path)
        if name.count(".") == 1:  # a package's table schemas (found by name, not imported)
            todo.append(f"{name}.{TABLES_MODULE}")
        if (path, name) not in memo:
            memo[(path, name)] = _ragcourt_imports(path, name)
        for imported in memo[(path, name)]:
            if imported.endswith(".*"):  # a registry's built-in modules
                todo.extend(_package_modules(imported[:-2], root))
            else:
                todo.extend(m for m in _with_parents(imported) if m not in seen)
    data = {d for f in files if f.name == "__init__.py" for d in _package_data(f.parent)}
    return sorted(p.relative_to(root).as_posix() for p in files | data)


def code_paths(
    stage: str,
    root: Path = PROJECT_ROOT,
    memo: ImportsMemo | None = None,
    project: Path | None = None,
) -> list[str]:
    """Sorted source files (relative to ``root``) the results of ``stage`` depend on: the
    modules of its function (and volatile data) and everything they import, transitively
    (:func:`module_closure`); ``project`` declares the stage (default: the working
    directory). What :func:`code_digest` hashes."""
    graph = stage_graph(project)
    sd = graph.get(stage)
    if sd is None:
        raise ConfigError(f"no stage '{stage}' (stages: {', '.join(graph)})")
    # a function of the project's own stage folder (``stages.<name>``) is covered by the
    # folder dep; only the library modules are followed here
    library = [m for m in sd.modules if m.split(".")[0] == PACKAGE]
    missing = [m for m in library if module_file(m, root) is None]
    if missing:
        raise ConfigError(f"stage '{stage}': no module {missing[0]} under {root}")
    return module_closure(library, root, memo)


def stage_files(stage: str, root: Path | None = None) -> list[Path]:
    """The Python files of the stage's own folder (``stages/<stage>/``) in the project at
    ``root`` (default: the working directory)."""
    return sorted((stages_dir(root) / stage).rglob("*.py"))


def code_digest(
    stage: str,
    root: Path = PROJECT_ROOT,
    memo: ImportsMemo | None = None,
    project: Path | None = None,
) -> str:
    """sha256 over (path, sha256) of :func:`code_paths` of ``stage`` (every ``ragcourt`` file
    its function imports, transitively, under ``root``) and of its own declaration,
    ``stages/<stage>/*.py`` of the project (:func:`stage_files`; default: the working
    directory)."""
    files = {f: file_sha256(root / f) for f in code_paths(stage, root, memo, project)}
    own = stage_files(stage, project)
    files |= {f"stages/{stage}/{i}": file_sha256(f) for i, f in enumerate(own)}
    return object_sha256(files)


def code_digests(root: Path = PROJECT_ROOT, project: Path | None = None) -> dict[str, str]:
    """:func:`code_digest` of every stage of the project (default: the working directory), in
    run order (each source file parsed once)."""
    memo: ImportsMemo = {}
    return {name: code_digest(name, root, memo, project) for name in stage_graph(project)}


#: hex characters of a digest the file keeps (64 bits: readable in ``dvc params diff``, and a
#: changed stage's key still changes but for a 2**-64 chance)
DIGEST_CHARS = 16

_DIGESTS_HEADER = """\
# GENERATED by `python -m stages code` (a dvc.yaml stage): the digest of each stage's code,
# the ragcourt files its function imports and its stages/<name>/ declaration. Each stage
# tracks its own key as a DVC param, so an edit re-runs exactly the stages it touches.
"""


def write_code_digests(project: Path | None = None) -> bool:
    """Write :func:`code_digests` (their first :data:`DIGEST_CHARS` characters) to the
    project's :data:`~ragcourt.core.catalog.CODE_DIGESTS` (``project``: default the working
    directory) when they differ from what it holds; True when the file changed."""
    path = (project or Path.cwd()) / catalog.CODE_DIGESTS
    short = {name: d[:DIGEST_CHARS] for name, d in code_digests(project=project).items()}
    text = _DIGESTS_HEADER + yaml.safe_dump(short, sort_keys=False)
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except FileNotFoundError:
        pass
    write_text(text, path)  # makes the folder
    return True


def refresh_code_digests(project: Path) -> bool:
    """Where ``project`` does not hold the package source (``ragcourt init``: the library is
    the installed package, which DVC's ``code`` step does not read), :func:`write_code_digests`
    before ``dvc repro``, so an upgrade re-runs the stages whose code it changed; True when
    the file changed. In a checkout the ``code`` step sees the package itself."""
    if (project / PACKAGE / "__init__.py").is_file():
        return False
    return write_code_digests(project)
