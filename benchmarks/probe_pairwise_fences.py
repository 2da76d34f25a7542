"""Where the pairwise signal goes: a minimal known-order probe on one local model.

For the first N hand-written demo questions, answer X = the reference, Y = the next question's
reference, both orders, labels A / B / C read from the exact next-token logits
(``LocalModel.candidates``). One short comparison prompt in three forms:

- ``plain``: no system message, unfenced fields;
- ``fenced``: the same, each field inside :func:`ragcourt.core.fencing.fence`;
- ``tagged``: the same, each field inside :func:`ragcourt.core.fencing.tag` (XML-style);
- ``system``: unfenced, with the tournament v3 system prompt (long rubric + fence rule).

Prints per question the renormalised A/B/C of each order and the combined P(ref better) /
P(wrong better). Bypasses the gateway and its cache: every line is a model call.

    python -m benchmarks probe_pairwise_fences --model local/qwen2.5-coder-1.5b \\
        --questions 2 --forms plain,fenced,system
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path

from ragcourt.core import offline
from ragcourt.core.fencing import fence, tag
from ragcourt.core.prompts import prompt
from ragcourt.llm.local_provider import get_model
from ragcourt.orchestration.params import load_params

ASK = (
    "Which answer agrees with the reference answer? "
    "Reply with one letter: A, B or C (equally good)."
)


def user_prompt(question: str, ref: str, a: str, b: str, style: str) -> str:
    def f(text: str, name: str) -> str:
        if style == "fenced":
            return fence(text, name)
        if style == "tagged":
            return tag(text, name.lower().replace(" ", "_"))
        return text

    return (
        f"Question:\n{f(question, 'QUESTION')}\nReference answer:\n{f(ref, 'REFERENCES')}\n\n"
        f"Answer A:\n{f(a, 'ANSWER A')}\nAnswer B:\n{f(b, 'ANSWER B')}\n\n{ASK}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="local/qwen2.5-coder-1.5b")
    ap.add_argument("--qa", default="data/demo_qa/handwritten.jsonl")
    ap.add_argument("--questions", type=int, default=2)
    ap.add_argument("--forms", default="plain,fenced,system")
    args = ap.parse_args(argv)
    offline.apply()
    lm = get_model(args.model, load_params("params.yaml").llm.models_file)
    lines = Path(args.qa).read_text(encoding="utf-8").splitlines()
    qa = [json.loads(x) for x in lines if x.strip()]
    system = prompt("tournament", "system", "v3")
    for form in args.forms.split(","):
        for i in range(args.questions):
            q, w = qa[i], qa[(i + 1) % len(qa)]
            ref, wrong = q["reference_answers"][0], w["reference_answers"][0]
            orders = []
            for a, b in ((ref, wrong), (wrong, ref)):
                user = user_prompt(q["question"], ref, a, b, form)
                msgs = [{"role": "user", "content": user}]
                if form == "system":
                    msgs.insert(0, {"role": "system", "content": system})
                got = lm.candidates(msgs, ["A", "B", "C"]).candidate_logprobs or {}
                raw = {k: math.exp(lp) for k, (_, lp) in got.items()}
                total = sum(raw.values())
                orders.append({k: v / total for k, v in raw.items()})
            p_ref = (orders[0]["A"] + orders[1]["B"]) / 2
            p_wrong = (orders[0]["B"] + orders[1]["A"]) / 2
            shown = [{k: round(v, 3) for k, v in o.items()} for o in orders]
            print(form, q["question_id"], shown, f"P(ref)={p_ref:.3f} P(wrong)={p_wrong:.3f}")
