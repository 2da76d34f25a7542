"""The LLM gateway: every model call goes through it, hosted ones via ``litellm.acompletion``
(in-process local models are called directly; see ``gateway``).

    from ragcourt.llm import Gateway, ChatRequest
    gw = Gateway(params.llm, stage="qagen")
    results = gw.chat([ChatRequest.of("local/smollm2-135m", None, "Hi")])
    gw.write_metrics()

Entry points apply the offline environment (``ragcourt.core.offline.apply``) before litellm
is imported; litellm itself is imported lazily, on the first model call.
"""

from ragcourt.llm.gateway import Gateway
from ragcourt.llm.types import (
    ChatRequest,
    ChatResult,
    PositionLogprobs,
    StructuredResult,
    TokenDistribution,
    TokenLogprob,
)

__all__ = [
    "ChatRequest",
    "ChatResult",
    "Gateway",
    "PositionLogprobs",
    "StructuredResult",
    "TokenDistribution",
    "TokenLogprob",
]
