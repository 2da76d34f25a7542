"""Pooled hidden states of a local model: features for probes trained on its reading.

:func:`pooled_states` gives each text's last-layer hidden state of ``local/<name>`` (a GGUF of
the model registry), pooled over the text's tokens: ``last`` (the state after the last token,
which has read the whole text) or ``mean``, L2-normalised. It loads the model a second time in
llama.cpp's embedding mode (the chat model of :mod:`ragcourt.llm.local_provider` keeps its
own context), once per process and (model, pooling), and reads the texts one at a time under
a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import cache
from typing import Any, Literal

import numpy as np

from ragcourt.core.model_registry import registry_path
from ragcourt.llm.cpu_features import use_extra_bufts
from ragcourt.llm.gguf_files import resolve_gguf
from ragcourt.llm.local_provider import (
    default_batch_threads,
    default_threads,
    model_params_override,
    registry_entry,
)

Pooling = Literal["last", "mean"]
_POOLING_TYPE = {"mean": 1, "last": 3}  # llama.cpp's LLAMA_POOLING_TYPE_MEAN / _LAST
_CONTEXT_TOKENS = 512  # a question, or a sentence: longer texts are cut by llama.cpp
_LOCK = threading.Lock()


@cache
def _embedding_model(key: str, name: str, pooling: Pooling, models_file: str | None) -> Any:
    from llama_cpp import Llama

    entry = registry_entry(f"local/{name}", models_file)[1]
    with model_params_override(use_extra_bufts=use_extra_bufts()):
        return Llama(
            model_path=str(resolve_gguf(name, entry)),
            embedding=True,
            pooling_type=_POOLING_TYPE[pooling],
            n_ctx=_CONTEXT_TOKENS,
            n_threads=default_threads(),
            n_threads_batch=default_batch_threads(),
            verbose=False,
        )


def pooled_states(
    model: str, texts: Sequence[str], pooling: Pooling = "last", models_file: str | None = None
) -> np.ndarray:
    """(len(texts), hidden size) float64: each text's pooled hidden state of ``model``
    (``local/<name>``), L2-normalised (module doc)."""
    name = registry_entry(model, models_file)[0]
    key = str(registry_path(models_file).resolve())
    with _LOCK:
        llm = _embedding_model(key, name, pooling, models_file)
        states = np.array([llm.embed(t) for t in texts], dtype=np.float64)
    if not len(texts):
        return states.reshape(0, 0)
    norms = np.linalg.norm(states, axis=1, keepdims=True)
    return np.asarray(states / np.where(norms > 0, norms, 1.0))
