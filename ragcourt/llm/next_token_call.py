"""Next-token distributions over candidate labels, one request at a time.

Local models: one token with the provider's exact candidate logprobs (``method="logits"``).
Hosted models: one token with ``top_logprobs`` (:mod:`ragcourt.llm.next_token`); when a label
is not in the top k, one yes/no probe per label, else the greedy label, else the floors
(:mod:`ragcourt.llm.label_probe`); a reply without logprobs gives the greedy label as a hard
distribution.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from ragcourt.llm import label_probe, next_token, providers
from ragcourt.llm.replies import Call
from ragcourt.llm.types import ChatRequest, ChatResult, TokenDistribution

log = logging.getLogger("ragcourt.llm")


def checked_candidates(candidates: Sequence[str]) -> list[str]:
    """``candidates`` as a list; empty, blank or repeated labels are a ValueError."""
    cands = list(candidates)
    if not cands or any(not c for c in cands) or len(set(cands)) != len(cands):
        raise ValueError(f"candidates must be distinct non-empty strings, got {cands!r}")
    return cands


def failed_distribution(res: ChatResult, method: str) -> TokenDistribution:
    """The ``ok=False`` distribution of a failed call (its error kept)."""
    return TokenDistribution(
        ok=False, method=method, model=res.model, cached=res.cached, error=res.error
    )


async def distribution_one(
    call: Call, req: ChatRequest, candidates: list[str], top_logprobs: int
) -> TokenDistribution:
    """P(first answer token) over ``candidates`` for one request (module doc); hosted models
    ask for ``top_logprobs`` alternatives."""
    if providers.provider_of(req.model) == "local":
        this = req.model_copy(update={"max_tokens": 1, "top_logprobs": 0})
        reply = await call(this, candidates=candidates)
        if not reply.result.ok:
            return failed_distribution(reply.result, "logits")
        return next_token.from_candidate_logprobs(
            candidates, reply.candidate_logprobs or {}, req.model, reply.result.cached
        )
    this = req.model_copy(update={"max_tokens": 1, "top_logprobs": top_logprobs})
    reply = await call(this)
    if not reply.result.ok:
        return failed_distribution(reply.result, "top_logprobs")
    lps, text, cached = reply.result.logprobs, reply.result.text, reply.result.cached
    if not lps:  # no logprobs at all: the greedy label, a hard distribution
        return label_probe.from_generated(candidates, text, req.model, cached, True)
    dist = next_token.from_top_logprobs(candidates, lps[0], req.model, cached)
    if not dist.ok or not dist.fallback:
        return dist
    # some label is not in the top k: one yes/no probe per label, else the greedy label,
    # else the floors (``fallback`` names them); see ragcourt.llm.label_probe
    probes = [label_probe.probe_request(this, c) for c in candidates]
    replies = [r.result for r in await asyncio.gather(*(call(p) for p in probes))]
    all_cached = cached and all(r.cached for r in replies)
    probed = label_probe.from_probes(candidates, replies, req.model, all_cached)
    if probed.ok:
        return probed
    log.debug("%s: %s", req.model, probed.error)
    greedy = label_probe.from_generated(candidates, text, req.model, cached, False)
    return greedy if greedy.ok else dist
