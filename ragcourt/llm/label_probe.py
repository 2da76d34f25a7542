"""Label distributions for a hosted model whose ``top_logprobs`` do not cover the labels.

``label_probe`` (one short call per label): the judge's messages with "Would your answer be
"<label>"? Reply with one word: yes or no." appended to the last user message, one token,
``top_logprobs``; per label p = P(yes) / (P(yes) + P(no)) at that position (listed tokens
that are "yes" / "no" once stripped of spaces and punctuation, any case, summed; when one of
the two is not listed it gets the smallest listed probability, an upper bound, and the label
is named in ``fallback``). ``raw[label] = p``, ``probs = raw / sum(raw)``. A probe whose list
holds neither yes nor no (or whose call fails) makes the whole probe fail.

``generated_label``: the greedy first token the model generated for the judge prompt, matched
to a label as in :mod:`ragcourt.llm.next_token`; a hard distribution (1 on that label, 0 on
the others). With a single candidate a reply that is not the label gives ``raw = probs = 0``
(the label was not generated); with several, no match is a failure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ragcourt.llm.next_token import label_of
from ragcourt.llm.types import (
    ChatRequest,
    ChatResult,
    PositionLogprobs,
    TokenDistribution,
    TokenLogprob,
)

PROBE = "label_probe"
GENERATED = "generated_label"
_PUNCT = " \t\r\n.,:;!?\"'`*()[]"


def probe_question(label: str) -> str:
    """The yes/no question appended to the judge prompt for ``label``."""
    return f'Would your answer be "{label}"? Reply with one word: yes or no.'


def probe_request(req: ChatRequest, label: str) -> ChatRequest:
    """``req`` (one token, ``top_logprobs`` as asked) with :func:`probe_question` appended to
    its last user message (or as a new user message when the last one is not the user's)."""
    msgs = list(req.messages)
    ask = probe_question(label)
    if msgs and msgs[-1][0] == "user":
        msgs[-1] = ("user", f"{msgs[-1][1]}\n\n{ask}")
    else:
        msgs.append(("user", ask))
    return req.model_copy(update={"messages": tuple(msgs), "max_tokens": 1, "temperature": 0.0})


def yes_probability(first: PositionLogprobs | None) -> tuple[float, bool] | None:
    """(P(yes) / (P(yes) + P(no)), whether one of them is the floor upper bound) from the first
    position's list; None when neither is listed (or there are no logprobs)."""
    if first is None:
        return None
    listed: list[TokenLogprob | PositionLogprobs] = [*first.top_logprobs] or [first]
    mass = {"yes": 0.0, "no": 0.0}
    seen: set[str] = set()
    for item in listed:
        if item.token in seen:
            continue
        seen.add(item.token)
        word = item.token.strip(_PUNCT).lower()
        if word in mass:
            mass[word] += math.exp(item.logprob)
    if mass["yes"] == 0.0 and mass["no"] == 0.0:
        return None
    floor = min(math.exp(i.logprob) for i in listed)
    bounded = False
    for word in mass:
        if mass[word] == 0.0:
            mass[word], bounded = floor, True
    return mass["yes"] / (mass["yes"] + mass["no"]), bounded


def from_probes(
    candidates: Sequence[str], probes: Sequence[ChatResult], model: str, cached: bool
) -> TokenDistribution:
    """The ``label_probe`` distribution from one probe reply per candidate (module doc)."""
    raw: dict[str, float] = {}
    fallback: list[str] = []
    for cand, res in zip(candidates, probes, strict=True):
        if not res.ok:
            return _failed(PROBE, model, cached, f"probe for {cand!r} failed: {res.error}")
        yes = yes_probability(res.logprobs[0] if res.logprobs else None)
        if yes is None:
            reply = res.logprobs[0].token if res.logprobs else res.text
            err = f"probe for {cand!r}: neither yes nor no among the top logprobs ({reply!r})"
            return _failed(PROBE, model, cached, err)
        raw[cand] = yes[0]
        if yes[1]:
            fallback.append(cand)
    total = sum(raw.values())
    if not total > 0:
        return _failed(PROBE, model, cached, "every probe gave P(yes) = 0")
    return TokenDistribution(
        ok=True,
        probs={c: p / total for c, p in raw.items()},
        raw=raw,
        method=PROBE,
        model=model,
        cached=cached,
        candidate_tokens=dict.fromkeys(candidates, "yes"),
        fallback=fallback,
    )


def from_generated(
    candidates: Sequence[str], text: str, model: str, cached: bool, no_logprobs: bool
) -> TokenDistribution:
    """The ``generated_label`` distribution from the greedy reply ``text`` (module doc);
    ``no_logprobs`` is kept on the result (the provider returned none)."""
    label = label_of(text, candidates)
    if label is None and len(candidates) > 1:
        err = f"generated reply {text!r} is none of the labels {list(candidates)}"
        failed = _failed(GENERATED, model, cached, err)
        return failed.model_copy(update={"no_logprobs": no_logprobs})
    raw = {c: 1.0 if c == label else 0.0 for c in candidates}
    return TokenDistribution(
        ok=True,
        probs=dict(raw),
        raw=raw,
        method=GENERATED,
        model=model,
        cached=cached,
        candidate_tokens={c: (text if c == label else "") for c in candidates},
        no_logprobs=no_logprobs,
    )


def _failed(method: str, model: str, cached: bool, error: str) -> TokenDistribution:
    return TokenDistribution(ok=False, method=method, model=model, cached=cached, error=error)
