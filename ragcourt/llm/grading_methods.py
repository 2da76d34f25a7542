"""How one judge row was graded: the ``grading_method`` column and which values are fallbacks.

Values: ``logits`` (local model, exact), ``top_logprobs`` (hosted, every label listed),
``top_logprobs+floor`` (hosted, some label's probability is the smallest listed one, an
upper bound), ``label_probe`` (one yes/no call per label; ``label_probe+floor`` when a
probe's yes or no was unlisted), ``generated_label`` (the greedy label: a hard 0/1
distribution), ``generated`` (a generated JSON reply, asked for) and
``generated_no_logprobs`` (the same, because the model returned no logprobs). Every value
except ``logits``, ``top_logprobs`` and ``generated`` is a fallback: a summary counts them.
"""

from __future__ import annotations

from collections.abc import Iterable

from ragcourt.llm.types import TokenDistribution

FLOOR = "+floor"
GENERATED = "generated"
GENERATED_NO_LOGPROBS = "generated_no_logprobs"
NOT_FALLBACK = frozenset({"logits", "top_logprobs", GENERATED})


def of_distribution(d: TokenDistribution) -> str:
    """The method a next-token distribution was read by, ``+floor`` when ``d.fallback``."""
    return d.method + (FLOOR if d.fallback else "")


def is_fallback(method: str | None) -> bool:
    """True for a method that stands in for exact label probabilities (module doc); None
    (no LLM, or not graded) is not."""
    return method is not None and method not in NOT_FALLBACK


def fallback_rows(methods: Iterable[str | None]) -> int:
    """How many of ``methods`` are fallbacks."""
    return sum(is_fallback(m) for m in methods)
