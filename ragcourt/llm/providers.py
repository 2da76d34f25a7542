"""litellm setup and in-process custom providers (``local/...``, ``scripted/...``).

In-process providers are ``litellm.CustomLLM`` handlers listed in
``litellm.custom_provider_map``, so they go through ``litellm.acompletion`` like any hosted
model. litellm is imported lazily (it takes seconds) and only after ``ragcourt.core.offline`` set
the offline environment (``import stages`` does that first).
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

import ragcourt.core.offline  # noqa: F401  (offline env before litellm is imported)

if TYPE_CHECKING:
    import litellm as litellm_mod
    from litellm.types.utils import ModelResponse

IN_PROCESS_PROVIDERS = ("local", "scripted")
_LOCK = threading.Lock()


def litellm_module() -> litellm_mod:
    """Import and configure litellm once (quiet, no telemetry, local cost map)."""
    import litellm

    logging.getLogger("LiteLLM").setLevel(logging.WARNING)  # per-call INFO lines
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


def provider_of(model: str) -> str:
    """The litellm provider prefix of a model string (``openai/gpt-4o`` -> ``openai``)."""
    return model.split("/", 1)[0] if "/" in model else ""


def is_in_process(model: str) -> bool:
    return provider_of(model) in IN_PROCESS_PROVIDERS


def register(provider: str, handler: object) -> None:
    """Add (or replace) ``provider -> handler`` in ``litellm.custom_provider_map``."""
    litellm = litellm_module()
    with _LOCK:
        items = [i for i in litellm.custom_provider_map if i["provider"] != provider]
        items.append({"provider": provider, "custom_handler": handler})  # type: ignore[typeddict-item]
        litellm.custom_provider_map = items


def registered(provider: str) -> object | None:
    litellm = litellm_module()
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
