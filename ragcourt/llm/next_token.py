"""Candidate next-token distributions from exact logits or from hosted ``top_logprobs``.

Exact (local model, ``method="logits"``): the provider returns, per candidate label, the
log-probability of the label's first token under a full-vocabulary softmax at the first
answer position; ``raw[c] = exp(logprob)``.

Hosted (``method="top_logprobs"``): from the first position's top-k list, a listed token
``t`` counts for candidate ``c`` when ``t.strip()`` is non-empty and ``c`` starts with it
(a token that would fit several candidates counts only for an exact match, else none);
``raw[c]`` sums the probabilities of its tokens. A candidate with no listed token gets the
smallest listed probability as ``raw`` - an upper bound, since every unlisted token is at most
that likely - and is named in ``fallback``. In both cases ``probs = raw / sum(raw)``.
The gateway does not grade from such floors when it can help it: a hosted distribution with
a ``fallback`` (or no logprobs) is replaced by :mod:`ragcourt.llm.label_probe`'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ragcourt.llm.types import PositionLogprobs, TokenDistribution, TokenLogprob


def _normalise(raw: Mapping[str, float]) -> dict[str, float] | None:
    total = sum(raw.values())
    if not total > 0 or not math.isfinite(total):
        return None
    return {c: p / total for c, p in raw.items()}


def _from_raw(
    raw: dict[str, float],
    method: str,
    model: str,
    cached: bool,
    candidate_tokens: dict[str, str],
    fallback: list[str] | None = None,
) -> TokenDistribution:
    """The distribution ``probs = raw / sum(raw)``; not ok when ``raw`` sums to zero."""
    probs = _normalise(raw)
    if probs is None:
        return TokenDistribution(
            ok=False, raw=raw, method=method, model=model, cached=cached,
            error="candidate probabilities sum to zero",
        )  # fmt: skip
    return TokenDistribution(
        ok=True, probs=probs, raw=raw, method=method, model=model, cached=cached,
        candidate_tokens=candidate_tokens, fallback=fallback or [],
    )  # fmt: skip


def from_candidate_logprobs(
    candidates: Sequence[str],
    cand_logprobs: Mapping[str, tuple[str, float]],
    model: str,
    cached: bool,
) -> TokenDistribution:
    """Exact distribution from ``{label: (first_token_text, logprob)}``."""
    missing = [c for c in candidates if c not in cand_logprobs]
    if missing:
        return TokenDistribution(
            ok=False,
            method="logits",
            model=model,
            cached=cached,
            error=f"provider returned no logprob for candidates {missing}",
        )
    raw = {c: math.exp(cand_logprobs[c][1]) for c in candidates}
    tokens = {c: cand_logprobs[c][0] for c in candidates}
    return _from_raw(raw, "logits", model, cached, tokens)


def label_of(token: str, candidates: Sequence[str]) -> str | None:
    """The candidate ``token`` stands for: an exact match of ``token.strip()``, else the one
    candidate starting with it (None when blank, unmatched or ambiguous)."""
    t = token.strip()
    if not t:
        return None
    exact = [c for c in candidates if c == t]
    if exact:
        return exact[0]
    fits = [c for c in candidates if c.startswith(t)]
    return fits[0] if len(fits) == 1 else None


def from_top_logprobs(
    candidates: Sequence[str],
    first: PositionLogprobs | None,
    model: str,
    cached: bool,
) -> TokenDistribution:
    """Distribution from the first generated position's ``top_logprobs`` (see module doc)."""
    if first is None:
        return TokenDistribution(
            ok=False,
            method="top_logprobs",
            model=model,
            cached=cached,
            no_logprobs=True,
            error=(
                f"model '{model}' returned no logprobs; next_token_probs needs a provider "
                "that supports logprobs/top_logprobs (e.g. openai/*) or a local/ model"
            ),
        )
    # some providers only give the chosen token
    listed: list[TokenLogprob | PositionLogprobs] = [*first.top_logprobs] or [first]
    seen: set[str] = set()
    raw = dict.fromkeys(candidates, 0.0)
    tokens: dict[str, list[str]] = {c: [] for c in candidates}
    for item in listed:
        if item.token in seen:
            continue
        seen.add(item.token)
        cand = label_of(item.token, candidates)
        if cand is not None:
            raw[cand] += math.exp(item.logprob)
            tokens[cand].append(item.token)
    floor = min(math.exp(i.logprob) for i in listed)
    fallback = [c for c in candidates if not tokens[c]]
    for c in fallback:
        raw[c] = floor
    shown = {c: "|".join(tokens[c]) for c in candidates}
    return _from_raw(raw, "top_logprobs", model, cached, shown, fallback)
