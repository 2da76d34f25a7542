"""Locate a registry LLM's GGUF file and verify its sha256 (memoised by size + mtime).

``package``: ``<package dir>/<filename>`` of an installed (never imported) package.
``parts``: each part is ``<package>:<path inside the package>``; the parts are concatenated
in order, once, into ``<cache root>/models/<sha256>.gguf``. ``path``: a file on disk.
The sha256 of a file is :func:`ragcourt.core.fingerprint.file_sha256` with ``persist=True``:
computed once and remembered in ``<cache root>/sha256.json`` under (path, size, mtime), so
later processes do not re-hash 100 MB - 1 GB files.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from ragcourt.core.errors import ConfigError
from ragcourt.core.fingerprint import cache_root, file_sha256, remember
from ragcourt.core.io import atomic_path
from ragcourt.core.model_registry import LLMEntry

_BLOCK = 1 << 20


def package_dir(package: str, name: str) -> Path:
    """The folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"local model '{name}': package '{package}' is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _hint(name: str, entry: LLMEntry) -> str:
    return f" ({entry.install_hint})" if entry.install_hint else ""


def _assemble_parts(name: str, entry: LLMEntry) -> Path:
    """Concatenate the parts into ``<cache>/models/<sha256>.gguf``, hashing while writing.

    The rename onto the cached name happens only if the concatenation's sha256 equals the
    registry's; otherwise a ConfigError is raised and no file is left (the temp file is
    removed), so a corrupt assembly is never cached. A cached file whose hash no longer
    matches is removed and assembled again.
    """
    expected = entry.sha256.lower()
    target = cache_root() / "models" / f"{expected}.gguf"
    if target.is_file():
        if file_sha256(target, persist=True) == expected:
            return target
        target.unlink()
    files: list[Path] = []
    for part in entry.parts:
        package, _, rel = part.partition(":")
        if not rel:
            raise ConfigError(f"local model '{name}': part '{part}' must be '<package>:<path>'")
        f = package_dir(package, name) / rel
        if not f.is_file():
            raise ConfigError(f"local model '{name}': part file {f} not found{_hint(name, entry)}")
        files.append(f)
    h = hashlib.sha256()
    with atomic_path(target) as tmp:
        with tmp.open("wb") as out:
            for f in files:
                with f.open("rb") as src:
                    while block := src.read(_BLOCK):
                        h.update(block)
                        out.write(block)
        if h.hexdigest() != expected:
            raise ConfigError(
                f"local model '{name}': parts {', '.join(entry.parts)} concatenate to sha256 "
                f"{h.hexdigest()}, registry says {entry.sha256} (nothing cached)"
            )
    remember(target, expected, persist=True)
    return target


def resolve_gguf(name: str, entry: LLMEntry) -> Path:
    """The GGUF path of registry model ``name``, sha256-verified (ConfigError otherwise)."""
    try:
        if entry.source == "package":
            if not entry.package or not entry.filename:
                raise ConfigError(f"local model '{name}': source 'package' needs package+filename")
            path = package_dir(entry.package, name) / entry.filename
        elif entry.source == "parts":
            if not entry.parts:
                raise ConfigError(f"local model '{name}': source 'parts' needs a parts list")
            path = _assemble_parts(name, entry)
        else:
            if not entry.path:
                raise ConfigError(f"local model '{name}': source 'path' needs a path")
            path = Path(entry.path).expanduser()
    except ConfigError as err:
        raise ConfigError(f"{err}{_hint(name, entry)}") from None
    if not path.is_file():
        raise ConfigError(f"local model '{name}': GGUF file {path} not found{_hint(name, entry)}")
    actual = file_sha256(path, persist=True)
    if actual != entry.sha256.lower():
        raise ConfigError(
            f"local model '{name}': {path} has sha256 {actual}, registry says {entry.sha256}"
        )
    return path
