"""Sentence-transformers embedders resolved offline through the model registry.

``load_embedder(name)`` maps a registry name (configs/models.yaml ``embedders``) to a local
model folder and loads it once per process on CPU; ``encode`` returns float32 L2-normalised
vectors (so inner product = cosine similarity). Sources:

* ``package``: a folder inside an installed package (``package`` + ``subdir``).
* ``zip_parts``: a zip split over several installed distributions (``parts``, in order). The
  parts are read as one virtual file (no concatenated copy on disk), the ``subdir`` folder is
  extracted once into ``$RAGCOURT_MODEL_CACHE`` (default ``~/.cache/ragcourt/models``) under a
  temporary name and renamed into place, so a crash or a concurrent process never leaves a
  half-extracted model behind.
* ``path``: a local folder.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import io
import logging
import os
import shutil
import tempfile
import zipfile
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ragcourt.core.errors import ConfigError
from ragcourt.core.model_registry import EmbedderEntry, load_registry, registry_path

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer
    from sentence_transformers import SentenceTransformer

log = logging.getLogger("ragcourt.embedders")

_COMPLETE = ".ragcourt-complete"  # marker written last inside an extracted model folder


def cache_root() -> Path:
    """Extraction folder of zip-part models: $RAGCOURT_MODEL_CACHE or ~/.cache/ragcourt/models."""
    env = os.environ.get("RAGCOURT_MODEL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "ragcourt" / "models"


def registry_entry(name: str) -> EmbedderEntry:
    """The registry entry of embedder ``name`` (configs/models.yaml of the cwd, else the
    shipped one: :func:`ragcourt.core.model_registry.registry_path`)."""
    return load_registry(registry_path()).embedder(name)


class _ConcatReader(io.RawIOBase):
    """A read-only, seekable view of several files as one (a split zip read in place)."""

    def __init__(self, paths: list[Path]) -> None:
        self._files = [p.open("rb") for p in paths]
        self._sizes = [p.stat().st_size for p in paths]
        self._starts = list(np.cumsum([0, *self._sizes[:-1]]).tolist())
        self._total = sum(self._sizes)
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._total}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer: WriteableBuffer, /) -> int:
        view = memoryview(buffer).cast("B")
        done = 0
        while done < len(view) and self._pos < self._total:
            i = max(j for j, s in enumerate(self._starts) if s <= self._pos)
            f = self._files[i]
            f.seek(self._pos - self._starts[i])
            want = min(len(view) - done, self._sizes[i] - (self._pos - self._starts[i]))
            got = f.readinto(view[done : done + want])
            if not got:
                break
            done += got
            self._pos += got
        return done

    def close(self) -> None:
        for f in self._files:
            f.close()
        super().close()


def _missing(name: str, entry: EmbedderEntry, what: str) -> ConfigError:
    hint = f"; install it with: {entry.install_hint}" if entry.install_hint else ""
    kind = "optional embedder" if entry.optional else "embedder"
    return ConfigError(f"{kind} '{name}' is not installed ({what}){hint}")


def _part_file(name: str, entry: EmbedderEntry, dist: str) -> Path:
    """The one data file a zip-part distribution ships (found through its RECORD)."""
    try:
        files = md.distribution(dist).files or []
    except md.PackageNotFoundError:
        raise _missing(name, entry, f"distribution '{dist}' not found") from None
    data = [f for f in files if ".zip" in f.name and "dist-info" not in str(f)]
    if len(data) != 1:
        raise ConfigError(f"embedder '{name}': distribution '{dist}' has no single zip part")
    return Path(str(md.distribution(dist).locate_file(data[0])))


def _extract_zip_parts(name: str, entry: EmbedderEntry) -> Path:
    if not entry.parts or not entry.subdir:
        raise ConfigError(f"embedder '{name}': source zip_parts needs 'parts' and 'subdir'")
    target = cache_root() / name
    if (target / _COMPLETE).is_file():
        return target
    parts = [_part_file(name, entry, d) for d in entry.parts]
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=target.parent))
    prefix = entry.subdir.strip("/") + "/"
    log.info("extracting embedder '%s' from %d zip parts into %s (once)", name, len(parts), target)
    try:
        with _ConcatReader(parts) as raw, zipfile.ZipFile(io.BufferedReader(raw, 1 << 20)) as zf:
            members = [m for m in zf.namelist() if m.startswith(prefix) and m != prefix]
            if not members:
                raise ConfigError(f"embedder '{name}': zip has no folder '{entry.subdir}'")
            for m in members:
                dest = tmp / m[len(prefix) :]
                if m.endswith("/"):
                    dest.mkdir(parents=True, exist_ok=True)
                    continue
                dest.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(m) as src, dest.open("wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
        (tmp / _COMPLETE).write_text("ok\n")
        tmp.chmod(0o755)  # mkdtemp makes it 0700
        if target.exists():  # a stale partial folder from an old crash, or a concurrent winner
            if (target / _COMPLETE).is_file():
                return target
            shutil.rmtree(target)
        os.replace(tmp, target)
    except zipfile.BadZipFile as err:
        raise ConfigError(f"embedder '{name}': zip parts are corrupt ({err})") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def resolve_model_dir(name: str) -> Path:
    """Local sentence-transformers folder of registry embedder ``name`` (extracting if needed)."""
    entry = registry_entry(name)
    if entry.source == "package":
        if not entry.package:
            raise ConfigError(f"embedder '{name}': source package needs 'package'")
        spec = importlib.util.find_spec(entry.package)
        if spec is None or not spec.submodule_search_locations:
            raise _missing(name, entry, f"package '{entry.package}' not found")
        folder = Path(next(iter(spec.submodule_search_locations))) / (entry.subdir or "")
    elif entry.source == "zip_parts":
        folder = _extract_zip_parts(name, entry)
    else:
        if not entry.path:
            raise ConfigError(f"embedder '{name}': source path needs 'path'")
        folder = Path(entry.path).expanduser()
    if not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
        raise _missing(name, entry, f"{folder} is not a sentence-transformers folder")
    return folder


@cache
def load_embedder(registry_name: str) -> SentenceTransformer:
    """The SentenceTransformer for a registry name, loaded once per process, CPU, offline."""
    from sentence_transformers import SentenceTransformer

    folder = resolve_model_dir(registry_name)
    model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    dim = model.get_embedding_dimension()
    expected = registry_entry(registry_name).dim
    if dim != expected:
        raise ConfigError(
            f"embedder '{registry_name}': model dimension {dim} != registry dim {expected}"
        )
    return model


def encode(
    registry_name: str,
    texts: list[str],
    batch_size: int = 32,
    show_progress: bool = False,
) -> np.ndarray:
    """Embed ``texts``: float32 array (len(texts), dim), each row L2-normalised."""
    model = load_embedder(registry_name)
    if not texts:
        return np.zeros((0, registry_entry(registry_name).dim), dtype=np.float32)
    vecs = model.encode(
        texts,
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=show_progress,
    )
    return np.ascontiguousarray(vecs, dtype=np.float32)


def max_seq_length(registry_name: str) -> int:
    """Word pieces the model reads per text; longer chunks are truncated by the model."""
    n = load_embedder(registry_name).max_seq_length
    if n is None:
        raise ConfigError(f"embedder '{registry_name}': the model declares no max_seq_length")
    return int(n)
