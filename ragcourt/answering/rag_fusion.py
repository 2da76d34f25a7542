"""RAG-Fusion (RAGElo section 6.2; SPEC 3): LLM query variants + reciprocal rank fusion.

For each question the LLM writes ``n`` rewrites (one per line). The question and each variant
are searched to the same depth and the rankings are fused per question with
``ragcourt.retrieval.retrieve.rrf_fuse``: score(d) = Σ_rankings 1 / (rrf_k + rank_d), rankings
where d is absent contribute nothing. A question whose variant call failed gets an error (the stage
writes an error row); a reply that parses to fewer than ``n`` usable lines keeps what it has
(possibly none: then only the original ranking is "fused"), and the variants used are stored per
row.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict, Unpack

import polars as pl

from ragcourt.answering.protocols import Chatter, Retriever
from ragcourt.core.prompts import prompt
from ragcourt.llm.types import ChatRequest
from ragcourt.retrieval.embedders import singly
from ragcourt.retrieval.retrieve import rrf_fuse

if TYPE_CHECKING:
    from ragcourt.llm.params import LLMParams

_BULLET = re.compile(  # "- ", "* ", "1. ", "(2) ", "3 - ", "Query 1:", "Variant:"
    r"^\s*(?:[-*•]+|\(?\d{1,2}[.):]|\d{1,2}\s+-|(?:query|variant)\s*\d*\s*:)\s*", re.I
)
_QUOTES = "\"'`“”‘’"


@dataclass
class Variants:
    """Per question id: the parsed variants, the call's error (if it failed) and its accounting."""

    queries: dict[str, list[str]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    latency_s: dict[str, float] = field(default_factory=dict)
    prompt_tokens: dict[str, int] = field(default_factory=dict)
    completion_tokens: dict[str, int] = field(default_factory=dict)


def _normal(text: str) -> str:
    return " ".join(text.lower().split()).rstrip("?.!")


def parse_variants(reply: str, question: str, n: int) -> list[str]:
    """The first ``n`` usable lines of ``reply``: bullets/numbering/quotes stripped; empty
    lines, header lines ending in ':', repeats (case/space-insensitive) and copies of the
    question dropped."""
    seen = {_normal(question)}
    out: list[str] = []
    for line in reply.splitlines():
        text = _BULLET.sub("", line).strip().strip(_QUOTES).strip()
        key = _normal(text)
        if not key or key in seen or text.endswith(":"):
            continue
        seen.add(key)
        out.append(text)
        if len(out) == n:
            break
    return out


class VariantPrompt(TypedDict, total=False):
    """How the variants are asked for (keywords of :func:`variant_requests`)."""

    prompt_version: str
    max_tokens: int
    prompts_dir: Path | None


def variant_requests(
    questions: Sequence[str],
    n: int,
    model: str,
    llm: LLMParams,
    *,
    prompt_version: str = "v1",
    max_tokens: int = 128,
    prompts_dir: Path | None = None,
) -> list[ChatRequest]:
    """One chat request per question asking for ``n`` rewrites, one per line."""
    system = prompt("answer", "variants_system", prompt_version, prompts_dir)
    user = prompt("answer", "variants_user", prompt_version, prompts_dir)
    return [
        ChatRequest.of(
            model,
            system,
            user.format(n=n, question=q),
            max_tokens=max_tokens,
            temperature=llm.temperature,
            seed=llm.seed,
            tag="answer.variants",
        )
        for q in questions
    ]


def generate_variants(
    gateway: Chatter,
    queries: pl.DataFrame,
    n: int,
    model: str,
    llm: LLMParams,
    **prompt: Unpack[VariantPrompt],
) -> Variants:
    """Ask the gateway for variants of every ``query`` (columns ``query_id``, ``query``);
    ``prompt``: as :func:`variant_requests` takes it."""
    qids = queries["query_id"].to_list()
    texts = queries["query"].to_list()
    reqs = variant_requests(texts, n, model, llm, **prompt)
    results = gateway.chat(reqs, desc=f"RAG-Fusion variants ({model})") if reqs else []
    out = Variants()
    for qid, question, res in zip(qids, texts, results, strict=True):
        out.latency_s[qid] = res.latency_s
        out.prompt_tokens[qid] = res.prompt_tokens
        out.completion_tokens[qid] = res.completion_tokens
        if not res.ok:
            out.errors[qid] = f"RAG-Fusion variant call failed: {res.error}"
            out.queries[qid] = []
        else:
            out.queries[qid] = parse_variants(res.text, question, n)
    return out


def fused_search(
    retriever: Retriever,
    queries: pl.DataFrame,
    variants: Mapping[str, Sequence[str]],
    depth: int,
    rrf_k: int,
) -> pl.DataFrame:
    """Search each question and its variants to ``depth``; fuse per question by RRF.

    Returns a ``retrieval_run`` frame (query_id = the question's id), ranks 1..depth.
    All variant queries go to the retriever in one batch, each embedded in a batch of its own
    (:func:`ragcourt.retrieval.embedders.singly`): a variant's vector is the same whether its
    question is answered alone, in a question block (a shard) or with every other question.
    """
    runs = [retriever.search(queries.select("query_id", "query"), depth)]
    rows = [
        (f"{qid}\x1f{i}", qid, i, text)
        for qid, texts in variants.items()
        for i, text in enumerate(texts)
    ]
    if rows:
        var = pl.DataFrame(
            rows, schema=["query_id", "question_id", "variant", "query"], orient="row"
        )
        with singly():
            found = retriever.search(var.select("query_id", "query"), depth)
        hits = found.join(
            var.select("query_id", "question_id", "variant"), on="query_id", how="left"
        )
        for i in range(max(r[2] for r in rows) + 1):
            one = hits.filter(pl.col("variant") == i)
            runs.append(
                one.with_columns(pl.col("question_id").alias("query_id")).select(runs[0].columns)
            )
    # one run per variant index: rrf_fuse counts each run once per chunk (at its best rank)
    fused = rrf_fuse(runs, k=rrf_k, depth=depth, name=f"{retriever.name}+fusion")
    return fused.sort("query_id", "rank")
