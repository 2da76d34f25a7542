"""The shipped reading model: P(answerable from this passage alone) and the answer span.

``reader.onnx`` (int8, onnxruntime on CPU) reads ``[CLS] question [SEP] passage [SEP]``
windows (:mod:`.windows`). Per pair: P(answerable) is the largest sigmoid(answerability logit)
over its windows, and the span is the best (start <= end, at most ``max_answer_tokens``)
passage-token pair of that window, as characters of the caller's passage. Each window is read
alone (one session call at its own length, on one thread; windows run in parallel), so a pair's
reading is the same bits whatever else is read in the same call. Text is data here: it only
becomes token ids, so nothing in a passage can address the reader.

``reader.json`` beside the model holds its threshold, recipe, metrics and the SHA-256 of the
ONNX file; a missing, altered or corrupt file is one line naming the command that builds it.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ragcourt.core.errors import ConfigError
from ragcourt.core.fingerprint import hash_file_bytes
from ragcourt.retrieval.reader.windows import Window, encode_windows, load_tokenizer, stack

WEIGHTS_DIR = Path(__file__).parent / "weights"
MODEL_FILE = "reader.onnx"
CARD_FILE = "reader.json"
TOKENIZER_FILE = "tokenizer.json"
BUILD_COMMAND = "ragcourt judges train-reader"


@dataclass(frozen=True)
class Reading:
    """What the reader made of one (question, passage): P(answerable) and, where it is
    answerable, the span (characters ``start``..``end`` of the passage)."""

    p_answerable: float
    span: str | None
    start: int
    end: int


@dataclass(frozen=True)
class ReaderCard:
    """``reader.json``: the threshold, window shape, SHA-256 of the model and its record."""

    threshold: float
    max_len: int
    stride: int
    max_answer_tokens: int
    sha256: str
    record: dict[str, Any]

    @classmethod
    def load(cls, path: Path) -> ReaderCard:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
            card = cls(
                threshold=float(raw["threshold"]),
                max_len=int(raw["max_len"]),
                stride=int(raw["stride"]),
                max_answer_tokens=int(raw["max_answer_tokens"]),
                sha256=str(raw["sha256"]),
                record=dict(raw.get("record", {})),
            )
        except FileNotFoundError:
            raise ConfigError(
                f"reader card not found: {path}; build the reader with `{BUILD_COMMAND}`"
            ) from None
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ConfigError(
                f"reader card {path} is invalid ({type(err).__name__}); rebuild it with "
                f"`{BUILD_COMMAND}`"
            ) from None
        if not (0.0 <= card.threshold <= 1.0) or not 16 <= card.max_len <= 512 or card.stride < 1:
            raise ConfigError(
                f"reader card {path} holds out-of-range values; rebuild it with `{BUILD_COMMAND}`"
            )
        return card


def reader_threads() -> int:
    """Windows the reader reads at once: ``$RAGCOURT_READER_THREADS``, else ``$OMP_NUM_THREADS``
    (the process's core budget; a Dask worker's nanny sets it to 1), else the cores (at most
    8). Each window runs on one thread, so windows, not operators, share the cores
    (measured in docs/results/reader.md, Speed)."""
    own = os.environ.get("RAGCOURT_READER_THREADS", "").strip()
    if own:
        if not own.isdigit() or int(own) < 1:
            raise ConfigError(f"RAGCOURT_READER_THREADS={own!r}: a whole number of threads, >= 1")
        return int(own)
    omp = os.environ.get("OMP_NUM_THREADS", "").strip()  # OpenMP also allows lists: ignored
    if omp.isdigit():
        return max(1, int(omp))
    return max(1, min(8, os.cpu_count() or 1))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(x, -60, 60))), dtype=np.float64)


class Reader:
    """The reader of one weights folder (module doc). ``threads``: windows read at once, each
    on one onnxruntime thread (0: :func:`reader_threads`)."""

    def __init__(self, directory: Path = WEIGHTS_DIR, threads: int = 0) -> None:
        self.directory = directory
        self.card = ReaderCard.load(directory / CARD_FILE)
        model = directory / MODEL_FILE
        if not model.is_file():
            raise ConfigError(f"reader model not found: {model}; build it with `{BUILD_COMMAND}`")
        if hash_file_bytes(model) != self.card.sha256:
            raise ConfigError(
                f"reader model {model} does not match its card's SHA-256 (altered or "
                f"truncated); rebuild it with `{BUILD_COMMAND}`"
            )
        tok_path = directory / TOKENIZER_FILE
        try:
            self.tokenizer = load_tokenizer(tok_path)
        except Exception as err:
            raise ConfigError(
                f"reader tokenizer {tok_path} is missing or invalid ({type(err).__name__}); "
                f"rebuild it with `{BUILD_COMMAND}`"
            ) from None
        import onnxruntime as ort

        opts = ort.SessionOptions()
        self.threads = threads or reader_threads()
        opts.intra_op_num_threads = 1  # one window one core; windows in parallel (read)
        opts.inter_op_num_threads = 1
        try:
            self.session = ort.InferenceSession(
                str(model), opts, providers=["CPUExecutionProvider"]
            )
        except Exception as err:
            raise ConfigError(
                f"reader model {model} cannot be loaded ({type(err).__name__}); rebuild it "
                f"with `{BUILD_COMMAND}`"
            ) from None
        self._inputs = {i.name for i in self.session.get_inputs()}

    @property
    def threshold(self) -> float:
        return self.card.threshold

    def _run(self, window: Window) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start logits, end logits (one per token) and the answerability logit (shape (1,),
        the model's float32) of one window, read alone."""
        feeds = stack([window])
        out = self.session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})
        return np.asarray(out[0])[0], np.asarray(out[1])[0], np.asarray(out[2]).reshape(-1)

    def read(self, questions: Sequence[str], passages: Sequence[str]) -> list[Reading]:
        """One :class:`Reading` per (question, passage), in order (module doc). Every window is
        its own session call at its own length: the int8 graph quantises each activation
        tensor with one scale over the whole input, so a batch would make a pair's score
        depend on the pairs read with it; alone, it depends on the pair only."""
        if len(questions) != len(passages):
            raise ValueError(f"{len(questions)} questions for {len(passages)} passages")
        if not questions:
            return []
        windows = encode_windows(
            self.tokenizer, questions, passages, self.card.max_len, self.card.stride
        )
        if self.threads > 1 and len(windows) > 1:
            with ThreadPoolExecutor(min(self.threads, len(windows))) as pool:
                runs = list(pool.map(self._run, windows))
        else:
            runs = [self._run(w) for w in windows]
        best: dict[int, tuple[float, int, int]] = {}
        for w, (s_log, e_log, a_log) in zip(windows, runs, strict=True):
            p = float(_sigmoid(a_log)[0])
            if not math.isfinite(p):
                raise ConfigError(
                    f"reader model {self.directory / MODEL_FILE} gives non-finite scores; "
                    f"rebuild it with `{BUILD_COMMAND}`"
                )
            if w.pair in best and best[w.pair][0] >= p:
                continue
            best[w.pair] = (p, *self._span(s_log, e_log, w.offsets))
        out = []
        for i, passage in enumerate(passages):
            p, start, end = best[i]
            span = passage[start:end].strip() if end > start else None
            out.append(Reading(p, span or None, start, end))
        return out

    def _span(self, s: np.ndarray, e: np.ndarray, offsets: np.ndarray) -> tuple[int, int]:
        """Characters (start, end) of the best passage-token span: argmax of s[i] + e[j] over
        passage tokens i <= j < i + ``max_answer_tokens`` (first in (i, j) order on ties), or
        (0, 0) when the window has no passage token."""
        n, m = len(s), self.card.max_answer_tokens
        ok = offsets[:n, 0] >= 0
        if not ok.any():
            return 0, 0
        s = np.where(ok, s, -np.inf)
        e = np.concatenate([np.where(ok, e, -np.inf), np.full(m - 1, -np.inf, dtype=e.dtype)])
        scores = s[:, None] + sliding_window_view(e, m)  # scores[i, k] = s[i] + e[i + k]
        i, k = np.unravel_index(int(np.argmax(scores)), scores.shape)
        return int(offsets[i, 0]), int(offsets[i + k, 1])

    def answerability(self, questions: Sequence[str], passages: Sequence[str]) -> list[float]:
        """P(answerable from the passage alone) per pair."""
        return [r.p_answerable for r in self.read(questions, passages)]


@cache
def shipped_reader(directory: str = str(WEIGHTS_DIR)) -> Reader:
    """The reader of ``directory`` (default: the one shipped in the package), shared by the
    callers of one process."""
    return Reader(Path(directory))
