"""In-process local models: litellm provider ``local/<registry name>`` on llama-cpp-python.

Each registry GGUF (configs/models.yaml ``llms``) is sha256-checked and loaded once per
process, and every call to it holds that model's lock (llama.cpp contexts are not
thread-safe). The prompt is the chat template from the GGUF metadata (or the registry's
inline Jinja template). Sampling follows the OpenAI parameters: ``temperature`` 0 = greedy,
else pure temperature sampling (no top-k/min-p) seeded by ``seed``; ``max_tokens`` is capped
to the context left after the prompt; ``stop`` strings cut the text. ``logprobs`` and
``top_logprobs`` are the model's raw log-softmax at each generated position (OpenAI format).
When a stop string cuts the text, the tokens that start at or after the cut (the stop string
and anything after it) are dropped from ``logprobs`` and ``completion_tokens``, so both cover
exactly the tokens that produced the returned text (a token straddling the cut is kept: it
contributes returned characters).
``response_format`` json_object / json_schema become a llama.cpp grammar.

Prompt-prefix reuse (``prefix_reuse``, on by default): the context keeps the KV state of the
last prompt, and the next prompt evaluates only the tokens after their longest common prefix
(``prefix_hit_tokens``; evaluated = prompt - hit). It must not change a reply. Measured on the
CPU build here: a token's KV came out bit-identical whatever multi-token batch computed it, but
a token evaluated in a 1-token batch could change later logits by up to 0.5 (probably another
ggml kernel path for a single row; not verified in ggml's source). So every prompt,
reused or not, is evaluated in batches of at least 2 tokens (see ``batch_bounds``), the reused
prefix never includes generated tokens (they were evaluated one at a time) and leaves at least
2 prompt tokens to evaluate. ``tests/slow/test_prefix_reuse_identity.py`` checks replies and
probabilities are identical with reuse on and off.

``candidate_labels`` (ragcourt extension used by ``Gateway.next_token_probs``): exact
log-probabilities of each label's first token at the first answer position, from the full
vocabulary logits. A label's first token is the first token after the prompt when
``prompt + label`` is tokenised (what the model would emit right after the assistant prefix:
no leading space for ChatML templates); when that split does not align with the prompt's
tokens the label is tokenised alone. Returned in ``_hidden_params["candidate_logprobs"]``.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, partial
from itertools import pairwise
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ragcourt.core.errors import ConfigError
from ragcourt.core.model_registry import LLMEntry, load_registry, registry_path
from ragcourt.llm import providers
from ragcourt.llm.cpu_features import use_extra_bufts
from ragcourt.llm.gguf_files import resolve_gguf

if TYPE_CHECKING:
    from litellm.llms.custom_llm import CustomLLM
    from litellm.types.utils import ModelResponse
    from llama_cpp.llama_types import ChatCompletionRequestMessage

Messages = list[dict[str, str]]  # [{"role": ..., "content": ...}, ...]


def _env_threads() -> int | None:
    """``$RAGCOURT_LLM_THREADS``, else ``$OMP_NUM_THREADS`` when set: the cores this process
    may use (a Dask worker's nanny sets it to 1, so two worker processes on two cores run one
    llama.cpp thread each instead of four spin-waiting threads), else None."""
    own = os.environ.get("RAGCOURT_LLM_THREADS", "").strip()
    if own:
        if not own.isdigit():
            raise ConfigError(f"RAGCOURT_LLM_THREADS={own!r}: a whole number of threads")
        return max(1, int(own))
    omp = os.environ.get("OMP_NUM_THREADS", "").strip()
    return max(1, int(omp)) if omp.isdigit() else None


def default_threads() -> int:
    """:func:`_env_threads`, else half the cores (1 on 2 cores: llama.cpp threads spin-wait,
    so sharing a busy 2-core machine with 2 threads is several times slower)."""
    return _env_threads() or max(1, min(8, (os.cpu_count() or 2) // 2))


def default_batch_threads() -> int:
    """Threads for prompt evaluation: :func:`_env_threads`, else every core (at most 8).
    Prompt evaluation is a batched matmul that scales with cores (2 idle cores: 123 -> 244
    prompt tok/s on SmolLM2-135M) and dominates RAG prompts; token-by-token generation
    keeps ``default_threads()``."""
    return _env_threads() or max(1, min(8, os.cpu_count() or 2))


def registry_entry(model: str, models_file: str | None) -> tuple[str, LLMEntry]:
    """(name, entry) of ``local/<name>`` (ConfigError when absent)."""
    name = model.split("/", 1)[1] if model.startswith("local/") else model
    return name, load_registry(registry_path(models_file)).llm(name)


def model_identity(model: str, models_file: str | None) -> dict[str, Any]:
    """What pins a local model's replies beyond its name: the registry entry's GGUF sha256,
    chat template and context size. Part of the gateway cache key and of the answer stage's
    partition hash (a new file, template or n_ctx = new key)."""
    entry = registry_entry(model, models_file)[1]
    return {"sha256": entry.sha256, "chat_template": entry.chat_template, "n_ctx": entry.n_ctx}


def batch_bounds(n: int, size: int) -> list[int]:
    """Boundaries of the evaluation batches of ``n`` tokens: ``size`` tokens each, except that a
    1-token last batch takes one token from the batch before it (a 1-token batch uses another
    kernel path, so its KV could differ from a batched evaluation's). ``size >= 3``."""
    bounds = [*range(0, n, size), n]
    if len(bounds) > 2 and bounds[-1] - bounds[-2] == 1:
        bounds[-2] -= 1
    return bounds


def common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two token lists."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _errors() -> ModuleType:
    """litellm's exception classes (the provider's errors; litellm is imported only to raise
    one, so a local call that succeeds never imports it)."""
    providers.configure_litellm()
    from litellm import exceptions

    return exceptions


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    x = logits.astype(np.float64)
    m = float(x.max())
    return x - (m + float(np.log(np.exp(x - m).sum())))


_PARAMS_LOCK = threading.RLock()


@contextmanager
def model_params_override(**fields: Any) -> Iterator[None]:
    """Set llama.cpp model params that ``llama_cpp.Llama`` does not expose (``use_extra_bufts``)
    for the models loaded inside the block: ``Llama.__init__`` starts from
    ``llama_model_default_params()``, so that function is wrapped while the block runs (under
    a lock: one load at a time) and restored after."""
    import llama_cpp.llama_cpp as lib

    with _PARAMS_LOCK:
        original = lib.llama_model_default_params

        def defaults() -> Any:
            params = original()
            for name, value in fields.items():
                setattr(params, name, value)
            return params

        lib.llama_model_default_params = defaults
        try:
            yield
        finally:
            lib.llama_model_default_params = original


@dataclass
class Generation:
    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    logprobs: list[dict[str, Any]] | None
    candidate_logprobs: dict[str, tuple[str, float]] | None = None
    prefix_hit_tokens: int = 0  # prompt tokens whose KV state was reused, not evaluated


class LocalModel:
    """One loaded GGUF with its chat template and a lock serialising every call."""

    def __init__(
        self, name: str, entry: LLMEntry, path: Path, n_threads: int, n_threads_batch: int
    ) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.name = name
        self.lock = threading.Lock()
        with model_params_override(use_extra_bufts=use_extra_bufts()):
            self.llm = Llama(
                model_path=str(path),
                n_ctx=entry.n_ctx,
                n_threads=n_threads,
                n_threads_batch=n_threads_batch,
                logits_all=False,
                verbose=False,
            )
        template = (
            self.llm.metadata.get("tokenizer.chat_template")
            if entry.chat_template == "gguf"
            else entry.chat_template
        )
        if not template:
            from ragcourt.core.errors import ConfigError

            raise ConfigError(
                f"local model '{name}': the GGUF has no chat template; set chat_template "
                "in configs/models.yaml to a Jinja template"
            )
        eos = self.llm.token_eos()
        bos = self.llm.token_bos()
        self.formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=self.llm._model.token_get_text(eos) if eos != -1 else "",
            bos_token=self.llm._model.token_get_text(bos) if bos != -1 else "",
            stop_token_ids=[eos],
        )
        self.add_bos = self.llm._model.add_bos_token()
        self.n_vocab = self.llm.n_vocab()
        self._grammars: dict[str, Any] = {}
        # the prompt tokens whose KV state in the context came from batched evaluation
        self._batched: list[int] = []
        # partial KV removal is what prefix reuse needs: not available for recurrent models
        self.can_reuse = not (self.llm._is_recurrent or self.llm._is_hybrid)

    # ------------------------------------------------------------ helpers
    def prompt_text(self, messages: Messages) -> str:
        """The chat template applied to ``messages`` (with the assistant prefix)."""
        # llama_cpp types messages as per-role TypedDicts; ours are plain role/content dicts
        typed = cast("list[ChatCompletionRequestMessage]", messages)
        return self.formatter(messages=typed).prompt

    def prompt_tokens(self, messages: Messages) -> list[int]:
        prompt = self.prompt_text(messages)
        return self.llm.tokenize(prompt.encode("utf-8"), add_bos=self.add_bos, special=True)

    def is_eog(self, tok: int) -> bool:
        import llama_cpp

        return bool(llama_cpp.llama_vocab_is_eog(self.llm._model.vocab, tok))

    def token_text(self, tok: int) -> str:
        return self.llm.detokenize([tok]).decode("utf-8", errors="replace")

    def _logprob_item(self, logits_lp: np.ndarray, tok: int, k: int) -> dict[str, Any]:
        item: dict[str, Any] = {
            "token": self.token_text(tok),
            "logprob": float(logits_lp[tok]),
            "bytes": list(self.llm.detokenize([tok])),
        }
        top: list[dict[str, Any]] = []
        if k > 0:
            idx = np.argpartition(-logits_lp, k - 1)[:k]
            for t in idx[np.argsort(-logits_lp[idx])]:
                tt = int(t)
                top.append({"token": self.token_text(tt), "logprob": float(logits_lp[tt])})
        item["top_logprobs"] = top
        return item

    def last_logits(self) -> np.ndarray:
        ptr = self.llm._ctx.get_logits_ith(-1)
        return np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy()

    def grammar(self, response_format: dict[str, Any] | None) -> Any:
        """A llama.cpp grammar for a json_object / json_schema response format (memoised)."""
        if not response_format or response_format.get("type") not in ("json_object", "json_schema"):
            return None
        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        schema = (response_format.get("json_schema") or {}).get("schema")
        key = json.dumps(schema, sort_keys=True) if schema else ""
        if key not in self._grammars:
            try:
                self._grammars[key] = (
                    LlamaGrammar.from_json_schema(key, verbose=False)
                    if schema
                    else LlamaGrammar.from_string(JSON_GBNF, verbose=False)
                )
            except Exception:  # schema feature the converter lacks: any JSON object
                self._grammars[key] = LlamaGrammar.from_string(JSON_GBNF, verbose=False)
        return self._grammars[key]

    def first_token_id(self, prompt_ids: list[int], prompt_text: str, label: str) -> int:
        full = self.llm.tokenize(
            (prompt_text + label).encode("utf-8"), add_bos=self.add_bos, special=True
        )
        n = len(prompt_ids)
        if len(full) > n and full[:n] == prompt_ids:
            return int(full[n])
        alone = self.llm.tokenize(label.encode("utf-8"), add_bos=False, special=False)
        return int(alone[0])

    def eval_prompt(self, prompt_ids: list[int], reuse: bool) -> int:
        """Evaluate ``prompt_ids`` into the context, reusing the KV state of the longest prefix
        shared with the last evaluated prompt when ``reuse`` (at least 2 tokens are always
        evaluated); returns the reused (prefix-hit) token count. See the module doc."""
        hit = 0
        if reuse and self.can_reuse:
            hit = max(0, min(common_prefix(self._batched, prompt_ids), len(prompt_ids) - 2))
        self._batched = []  # unknown until the evaluation below completes
        if hit == 0:
            self.llm.reset()  # type: ignore[no-untyped-call]
        self.llm.n_tokens = hit  # Llama.eval drops the KV from position n_tokens on
        bounds = batch_bounds(len(prompt_ids) - hit, max(3, self.llm.n_batch))
        for lo, hi in pairwise(bounds):
            self.llm.eval(prompt_ids[hit + lo : hit + hi])
        self._batched = list(prompt_ids)
        return hit

    def tokenize_prompt(self, messages: Messages) -> tuple[str, list[int]]:
        """(chat-templated prompt, its token ids); a prompt that leaves no room in the context
        for one more token is a ContextWindowExceededError."""
        prompt = self.prompt_text(messages)
        prompt_ids = self.llm.tokenize(prompt.encode("utf-8"), add_bos=self.add_bos, special=True)
        if len(prompt_ids) >= self.llm.n_ctx():
            raise _errors().ContextWindowExceededError(
                message=f"prompt has {len(prompt_ids)} tokens, context is {self.llm.n_ctx()}",
                model=self.name,
                llm_provider="local",
            )
        return prompt, prompt_ids

    # ------------------------------------------------------------ calls (hold self.lock)
    def generate(
        self,
        messages: Messages,
        *,
        temperature: float,
        max_tokens: int,
        seed: int | None,
        stop: list[str],
        top_logprobs: int,
        want_logprobs: bool,
        top_p: float,
        response_format: dict[str, Any] | None,
        deadline: float | None,
        reuse: bool = True,
    ) -> Generation:
        prompt_ids = self.tokenize_prompt(messages)[1]
        max_new = min(max_tokens, self.llm.n_ctx() - len(prompt_ids))
        self.llm.set_seed(seed if seed is not None else int(time.time_ns() % 2**31))
        completion: list[int] = []
        ends: list[int] = []  # ends[i]: decoded text length after completion[: i + 1]
        positions: list[dict[str, Any]] = []
        finish = "length"
        text = ""
        hit = self.eval_prompt(prompt_ids, reuse)
        # the prompt is evaluated: Llama.generate finds it cached and samples at once
        gen = self.llm.generate(
            prompt_ids,
            temp=temperature,
            top_k=0,
            top_p=top_p,
            min_p=0.0,
            typical_p=1.0,
            repeat_penalty=1.0,
            grammar=self.grammar(response_format),
        )
        try:
            for tok in gen:
                if want_logprobs:
                    lp = _log_softmax(self.last_logits())
                    positions.append(self._logprob_item(lp, tok, top_logprobs))
                if self.is_eog(tok):
                    if positions:
                        positions.pop()
                    finish = "stop"
                    break
                completion.append(tok)
                raw = self.llm.detokenize(completion, prev_tokens=prompt_ids)
                text = raw.decode("utf-8", errors="ignore")
                ends.append(len(text))
                cut = _stop_cut(text, stop, ends)
                if cut is not None:
                    text, keep = cut
                    finish = "stop"
                    del completion[keep:]
                    del positions[keep:]
                    break
                if len(completion) >= max_new:
                    break
                if deadline is not None and time.monotonic() > deadline:
                    raise _errors().Timeout(
                        message=f"local model exceeded its {len(completion)}-token deadline",
                        model=self.name,
                        llm_provider="local",
                    )
        finally:
            gen.close()
        return Generation(
            text=text,
            prompt_tokens=len(prompt_ids),
            completion_tokens=len(completion),
            finish_reason=finish,
            logprobs=positions if want_logprobs else None,
            prefix_hit_tokens=hit,
        )

    def candidates(self, messages: Messages, labels: list[str], reuse: bool = True) -> Generation:
        """Exact first-token log-probabilities of ``labels`` (see module doc)."""
        prompt, prompt_ids = self.tokenize_prompt(messages)
        first = {lab: self.first_token_id(prompt_ids, prompt, lab) for lab in labels}
        by_id: dict[int, list[str]] = {}
        for lab, tid in first.items():
            by_id.setdefault(tid, []).append(lab)
        clash = [labs for labs in by_id.values() if len(labs) > 1]
        if clash:
            raise _errors().BadRequestError(
                message=f"candidates {clash[0]} share their first token; use distinct labels",
                model=self.name,
                llm_provider="local",
            )
        hit = self.eval_prompt(prompt_ids, reuse)
        gen = self.llm.generate(prompt_ids, temp=0.0, top_k=0, top_p=1.0, min_p=0.0)
        try:
            tok = next(gen)
            lp = _log_softmax(self.last_logits())
        finally:
            gen.close()
        eog = self.is_eog(tok)
        return Generation(
            text="" if eog else self.token_text(tok),
            prompt_tokens=len(prompt_ids),
            completion_tokens=0 if eog else 1,
            finish_reason="stop" if eog else "length",
            logprobs=[self._logprob_item(lp, tok, 5)],
            candidate_logprobs={
                lab: (self.token_text(tid), float(lp[tid])) for lab, tid in first.items()
            },
            prefix_hit_tokens=hit,
        )


def _stop_cut(text: str, stop: list[str], ends: list[int]) -> tuple[str, int] | None:
    """(text cut before the first stop string in it, tokens kept) or None when none occurs;
    ``ends[i]`` is the decoded length after token i, and token i is kept only if it starts
    before the cut (starts: 0, ends[:-1])."""
    cut = [text.index(s) for s in stop if s and s in text]
    if not cut:
        return None
    text = text[: min(cut)]
    return text, sum(1 for start in [0, *ends[:-1]] if start < len(text))


_MODELS: dict[tuple[str, str], LocalModel] = {}
_MODELS_LOCK = threading.Lock()


@atexit.register
def _close_models() -> None:
    """Free llama.cpp models before interpreter teardown (avoids noisy __del__ errors)."""
    with _MODELS_LOCK:
        for lm in _MODELS.values():
            lm.llm.close()
        _MODELS.clear()


def get_model(model: str, models_file: str | None, n_threads: int | None = None) -> LocalModel:
    """The loaded model for ``local/<name>`` (load + sha256 check on first use)."""
    name, entry = registry_entry(model, models_file)
    key = (str(registry_path(models_file).resolve()), name)
    with _MODELS_LOCK:
        if key not in _MODELS:
            path = resolve_gguf(name, entry)
            _MODELS[key] = LocalModel(
                name,
                entry,
                path,
                n_threads or default_threads(),
                n_threads or default_batch_threads(),
            )
        return _MODELS[key]


def complete(
    model: str, messages: list[dict[str, Any]], optional_params: dict[str, Any], timeout: Any
) -> tuple[str, Generation]:
    """One chat call as litellm hands it to a custom provider (``optional_params``: the OpenAI
    parameters plus ``ragcourt_models_file``, ``ragcourt_prefix_reuse`` and
    ``candidate_labels``); returns (``local/<name>``, the generation). Shared by the litellm
    handler and the gateway, which calls it directly (see ``acomplete``)."""
    models_file = optional_params.get("ragcourt_models_file")
    lm = get_model(model, models_file)
    msgs = [{"role": m["role"], "content": m.get("content") or ""} for m in messages]
    labels = optional_params.get("candidate_labels")
    reuse = bool(optional_params.get("ragcourt_prefix_reuse", True))
    with lm.lock:
        if labels:
            g = lm.candidates(msgs, list(labels), reuse=reuse)
        else:
            stop = optional_params.get("stop") or []
            g = lm.generate(
                msgs,
                temperature=float(optional_params.get("temperature") or 0.0),
                max_tokens=int(optional_params.get("max_tokens") or 256),
                seed=optional_params.get("seed"),
                stop=[stop] if isinstance(stop, str) else list(stop),
                top_logprobs=int(optional_params.get("top_logprobs") or 0),
                want_logprobs=bool(optional_params.get("logprobs")),
                top_p=float(optional_params.get("top_p") or 1.0),
                response_format=optional_params.get("response_format"),
                deadline=time.monotonic() + float(timeout) if timeout else None,
                reuse=reuse,
            )
    return f"local/{lm.name}", g


# Local calls run on these threads, not on a new thread per call (asyncio.to_thread under the
# gateway's per-batch event loop made one, and with it a new OpenMP thread team in llama.cpp);
# an idle worker is reused, so calls one after another run on the same thread.
_EXECUTOR = ThreadPoolExecutor(
    max_workers=min(32, (os.cpu_count() or 1) + 4), thread_name_prefix="ragcourt-local"
)


async def acomplete(
    model: str, messages: list[dict[str, Any]], optional_params: dict[str, Any], timeout: Any
) -> tuple[str, Generation]:
    """``complete`` on a worker thread (the event loop stays free while the model runs)."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(
        _EXECUTOR, partial(complete, model, messages, optional_params, timeout)
    )


def _response(name: str, g: Generation) -> ModelResponse:
    resp = providers.model_response(
        name,
        g.text,
        prompt_tokens=g.prompt_tokens,
        completion_tokens=g.completion_tokens,
        finish_reason=g.finish_reason,
        logprobs_content=g.logprobs,
    )
    resp._hidden_params["prefix_hit_tokens"] = g.prefix_hit_tokens
    if g.candidate_logprobs is not None:
        resp._hidden_params["candidate_logprobs"] = g.candidate_logprobs
    return resp


@cache
def _handler() -> CustomLLM:
    from litellm.llms.custom_llm import CustomLLM

    class LocalProvider(CustomLLM):
        """litellm custom provider ``local`` (``litellm.completion("local/<name>", ...)``);
        the gateway skips litellm for local models and calls ``acomplete`` itself.

        litellm calls a handler with keyword arguments only (``model``, ``messages``,
        ``optional_params``, ``timeout`` and more that this provider does not use)."""

        def completion(self, *args: Any, **kwargs: Any) -> ModelResponse:
            return _response(
                *complete(
                    kwargs["model"],
                    kwargs["messages"],
                    kwargs["optional_params"],
                    kwargs.get("timeout"),
                )
            )

        async def acompletion(self, *args: Any, **kwargs: Any) -> ModelResponse:
            return _response(
                *await acomplete(
                    kwargs["model"],
                    kwargs["messages"],
                    kwargs["optional_params"],
                    kwargs.get("timeout"),
                )
            )

    return LocalProvider()


def ensure_registered() -> None:
    """Register the ``local`` provider with litellm (idempotent)."""
    if providers.registered("local") is not _handler():
        providers.register("local", _handler())
