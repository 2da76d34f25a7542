"""litellm setup and in-process custom providers (``local/...``, and any registered here).

In-process providers are ``litellm.CustomLLM`` handlers listed in
``litellm.custom_provider_map``, so they go through ``litellm.acompletion`` like any hosted
model (the gateway calls the ``local`` provider's code directly, skipping litellm's per-call
work; see ``gateway``). litellm is imported lazily (it takes seconds): callers run
:func:`configure_litellm` and then ``import litellm``. Entry points apply
``ragcourt.core.offline`` before any of that.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from ragcourt.llm import http_guard

if TYPE_CHECKING:
    from litellm.llms.custom_llm import CustomLLM
    from litellm.types.utils import ModelResponse

#: providers whose handlers run in this process: ``local`` (llama.cpp), and every provider
#: :func:`register` adds (a plug-in's, or a test's scripted models)
_IN_PROCESS: set[str] = {"local"}
_LOCK = threading.Lock()


def configure_litellm() -> None:
    """Import litellm and configure it (quiet: no per-call INFO lines, no debug banner; its
    HTTP clients guarded: :mod:`ragcourt.llm.http_guard`)."""
    import litellm

    logging.getLogger("LiteLLM").setLevel(logging.WARNING)  # per-call INFO lines
    litellm.suppress_debug_info = True
    http_guard.install()


def provider_of(model: str) -> str:
    """The litellm provider prefix of a model string (``openai/gpt-4o`` -> ``openai``)."""
    return model.split("/", 1)[0] if "/" in model else ""


def is_in_process(model: str) -> bool:
    """Whether ``model``'s provider runs in this process (no route, key or network)."""
    return provider_of(model) in _IN_PROCESS


def register(provider: str, handler: CustomLLM) -> None:
    """Add (or replace) ``provider -> handler`` in ``litellm.custom_provider_map``; its
    models are in-process from now on (:func:`is_in_process`)."""
    configure_litellm()
    import litellm

    with _LOCK:
        _IN_PROCESS.add(provider)
        items = [i for i in litellm.custom_provider_map if i["provider"] != provider]
        items.append({"provider": provider, "custom_handler": handler})
        litellm.custom_provider_map = items


def registered(provider: str) -> CustomLLM | None:
    """The handler registered for ``provider`` in ``litellm.custom_provider_map``, if any."""
    configure_litellm()
    import litellm

    for item in litellm.custom_provider_map:
        if item["provider"] == provider:
            return item["custom_handler"]
    return None


def model_response(
    model: str,
    text: str,
    *,
    prompt_tokens: int,
    completion_tokens: int,
    finish_reason: str = "stop",
    logprobs_content: list[dict[str, Any]] | None = None,
) -> ModelResponse:
    """An OpenAI-format chat completion (``logprobs.content`` when given)."""
    from litellm.types.utils import ModelResponse

    choice: dict[str, Any] = {
        "index": 0,
        "finish_reason": finish_reason,
        "message": {"role": "assistant", "content": text},
    }
    if logprobs_content is not None:
        choice["logprobs"] = {"content": logprobs_content}
    return ModelResponse(
        model=model,
        choices=[choice],
        usage={
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    )
