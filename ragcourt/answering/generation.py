"""An answer per (system, question) (SPEC 3): the generator's request and the answer row.

The request numbers the system's top-k passages into the prompt of
``configs/prompts/answer.yaml`` (instruction as system message, numbered passages, question).
Output rows (table ``answers``): one per (system, question), an answer or an explicit
``error``. :func:`answer_batch` sends the requests of several systems as one gateway batch
(concurrent calls); rows never depend on the batching or on the order replies arrive in.

* **Abstention**: ``abstained`` is true iff the reply, after leading non-word characters
  (quotes, asterisks, spaces) are stripped, starts with the token NO-RESPONSE as a whole word:
  in any case when written with a hyphen, an underscore or nothing between the words
  (``no-response``, ``NO_RESPONSE``), with a space only in capitals (``NO RESPONSE``), so a real
  answer such as "No response was given by Congress" is not an abstention. Regex
  ``ABSTAIN_RE``. Error rows have it null.
* **Accounting per row**: ``latency_s`` = the group's retrieval wall time / #questions +
  RAG-Fusion variant call latency + answer call latency (as the gateway reports them; a cache hit
  reports the gateway's figure, the replay's, and sets ``cached``: latency statistics leave
  such rows out). Tokens = answer call + variant call (what the system spends
  per question, even though the variant call is shared inside a group).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from ragcourt.answering.params import AnsweringView
from ragcourt.answering.protocols import Chatter
from ragcourt.answering.retrieval_groups import HIT_COLS, GroupRetrieval
from ragcourt.answering.system_kinds.builtin import System
from ragcourt.core.prompts import prompt
from ragcourt.core.schemas import frame_schema
from ragcourt.llm.types import ChatRequest, ChatResult

if TYPE_CHECKING:
    from ragcourt.llm.params import LLMParams

ABSTAIN_RE = re.compile(r"^\W*(?:(?i:no[-_]?response)|NO\s+RESPONSE)\b")
ANSWER_SCHEMA = frame_schema("answers")


def is_abstention(reply: str) -> bool:
    """True iff ``reply`` is the abstention token NO-RESPONSE (rule in the module docstring)."""
    return ABSTAIN_RE.match(reply) is not None


def format_passages(
    texts: Sequence[str], version: str = "v1", prompts_dir: Path | None = None
) -> str:
    """Passages numbered from 1 with the ``passage`` template, blank-line separated."""
    if not texts:
        return prompt("answer", "no_passages", version, prompts_dir)
    tpl = prompt("answer", "passage", version, prompts_dir)
    return "\n\n".join(tpl.format(n=i, text=t.strip()) for i, t in enumerate(texts, start=1))


def build_request(
    system: System,
    question: str,
    passages: Sequence[str],
    llm: LLMParams,
    prompts_dir: Path | None = None,
) -> ChatRequest:
    """The generator's chat request: instruction (system message), numbered passages, question."""
    version = system.spec.prompt_version
    user = prompt("answer", "answer_user", version, prompts_dir).format(
        passages=format_passages(passages, version, prompts_dir), question=question.strip()
    )
    return ChatRequest.of(
        system.generator_model,
        prompt("answer", "answer_system", version, prompts_dir),
        user,
        max_tokens=system.spec.max_tokens,
        temperature=llm.temperature,
        seed=llm.seed,
        tag="answer.generate",
    )


def _requests(
    system: System,
    qa: pl.DataFrame,
    group: GroupRetrieval,
    params: AnsweringView,
    prompts_dir: Path | None,
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str], list[int], list[ChatRequest]]:
    """(passages per question, question -> why it has no passages, the QA rows asked, their
    requests) of one system."""
    top = group.hits.filter(pl.col("rank") <= system.spec.top_k)
    per_q: dict[str, list[dict[str, Any]]] = {
        qid: sub.select(HIT_COLS).to_dicts()
        for (qid,), sub in top.group_by("query_id", maintain_order=True)
    }
    var = group.variants
    failed = {**(var.errors if var else {}), **group.errors}  # no passages to answer with
    qids, questions = qa["question_id"].to_list(), qa["question"].to_list()
    to_ask = [i for i, q in enumerate(qids) if q not in failed]
    reqs = [
        build_request(
            system,
            questions[i],
            [h["text"] for h in per_q.get(qids[i], [])],
            params.llm,
            prompts_dir,
        )
        for i in to_ask
    ]
    return per_q, failed, to_ask, reqs


def answer_batch(
    jobs: Sequence[tuple[System, GroupRetrieval]],
    qa: pl.DataFrame,
    params: AnsweringView,
    gateway: Chatter,
    prompts_dir: Path | None = None,
) -> list[pl.DataFrame]:
    """Rows of table ``answers`` for every (system, its group's retrieval) in ``jobs``, one
    frame per job in QA order. Every job's requests go to the gateway as ONE batch, so the
    systems' calls run concurrently (up to ``llm.concurrency`` / ``concurrency_per_model``);
    the gateway returns results in request order, so the rows do not depend on it."""
    if not jobs:
        return []
    prepared = [_requests(s, qa, g, params, prompts_dir) for s, g in jobs]
    flat = [req for *_, reqs in prepared for req in reqs]
    names = ", ".join(s.name for s, _ in jobs)
    replies = gateway.chat(flat, desc=f"answers {names}") if flat else []
    if len(replies) != len(flat):
        raise RuntimeError(f"the gateway gave {len(replies)} replies to {len(flat)} requests")
    it = iter(replies)
    frames = []
    for (system, group), (per_q, failed, to_ask, _) in zip(jobs, prepared, strict=True):
        results = {i: next(it) for i in to_ask}
        frames.append(_rows(system, qa, group, per_q, failed, results))
    return frames


def answer_system(
    system: System,
    qa: pl.DataFrame,
    group: GroupRetrieval,
    params: AnsweringView,
    gateway: Chatter,
    prompts_dir: Path | None = None,
) -> pl.DataFrame:
    """Rows of table ``answers`` for ``system``: one per question, in QA order."""
    return answer_batch([(system, group)], qa, params, gateway, prompts_dir)[0]


def _rows(
    system: System,
    qa: pl.DataFrame,
    group: GroupRetrieval,
    per_q: dict[str, list[dict[str, Any]]],
    failed: dict[str, str],
    results: dict[int, ChatResult],
) -> pl.DataFrame:
    """The ``answers`` frame of one system from its replies (by QA row index)."""
    var = group.variants
    rows: list[dict[str, Any]] = []
    for i, qid in enumerate(qa["question_id"].to_list()):
        v_lat = var.latency_s.get(qid, 0.0) if var else 0.0
        v_pt = var.prompt_tokens.get(qid, 0) if var else 0
        v_ct = var.completion_tokens.get(qid, 0) if var else 0
        row: dict[str, Any] = {
            "system": system.name,
            "question_id": qid,
            "retrieved": per_q.get(qid, []),
            "query_variants": list(var.queries.get(qid, [])) if var else [],
            "model": system.generator_model,
        }
        res = results.get(i)
        if res is None:  # variant call failed / control retrieval had no passage: no answer
            row |= {
                "answer": None,
                "abstained": None,
                "error": failed[qid],
                "cached": False,
                "latency_s": v_lat,
                "prompt_tokens": v_pt,
                "completion_tokens": v_ct,
            }
        else:
            text = res.text.strip() if res.ok else None
            row |= {
                "answer": text,
                "abstained": is_abstention(text) if text is not None else None,
                "error": None if res.ok else f"generation failed: {res.error}",
                "cached": res.cached,
                "latency_s": group.seconds_per_query + v_lat + res.latency_s,
                "prompt_tokens": v_pt + res.prompt_tokens,
                "completion_tokens": v_ct + res.completion_tokens,
            }
        rows.append(row)
    return pl.DataFrame(rows, schema=ANSWER_SCHEMA).select(list(ANSWER_SCHEMA))
