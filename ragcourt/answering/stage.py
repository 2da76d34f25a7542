"""Answer stage (SPEC 3): every candidate system answers every QA question.

Per system and question: retrieve (optionally with RAG-Fusion), number the top-k passages into
the prompt of ``configs/prompts/answer.yaml``, generate through the LLM gateway. Output rows
(table ``answers``): one per (system, question), an answer or an explicit ``error``.

Rules a reviewer should know:

* **Abstention**: ``abstained`` is true iff the reply, after leading non-word characters
  (quotes, asterisks, spaces) are stripped, starts with the token NO-RESPONSE as a whole word:
  in any case when written with a hyphen, an underscore or nothing between the words
  (``no-response``, ``NO_RESPONSE``), with a space only in capitals (``NO RESPONSE``), so a real
  answer such as "No response was given by Congress" is not an abstention. Regex
  ``ABSTAIN_RE``. Error rows have it null.
* **Shared retrieval**: systems are grouped by :class:`~ragcourt.answering.systems.RetrievalKey`
  (chunking, embedder, retriever, depth, RAG-Fusion config); each group ranks every question
  once to ``depth = max(retrieval.depth, top_k)`` and every system keeps its first ``top_k``
  passages. Dense and BM25 rankings are prefix-consistent, so this equals retrieving ``top_k``
  alone; hybrid and RAG-Fusion fuse component rankings taken to ``depth`` and then cut to
  ``top_k`` (fuse deep lists, then cut), so a system's passages never depend on which other
  systems share its group.
* **Accounting per row**: ``latency_s`` = the group's retrieval wall time / #questions +
  RAG-Fusion variant call latency + answer call latency (as the gateway reports them; a cache hit
  reports the gateway's figure). Tokens = answer call + variant call (what the system spends
  per question, even though the variant call is shared inside a group).
* **Partitions and freshness**: each system is written to ``data/answers/systems/<name>.parquet``
  with Parquet metadata ``ragcourt.config_hash`` (resolved system config, local generator /
  fusion model identity (registry GGUF sha256, chat template, n_ctx), prompt texts, sampling
  and retrieval params, sha256 of the chunks, FAISS index and embeddings files it reads) and
  ``ragcourt.qa_hash`` (question ids and texts). A partition whose hashes match and which has no
  error rows is reused as is (no retrieval, no model call); otherwise the system is re-run (the
  gateway's disk cache still makes unchanged calls free, so failed pairs are retried cheaply).
  ``data/answers/answers.parquet`` is the concatenation in config order; partitions of systems
  no longer configured are removed on a full run.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import polars as pl

from ragcourt.answering.rag_fusion import Variants, fused_search, generate_variants
from ragcourt.answering.systems import (
    RetrievalKey,
    System,
    effective_config,
    group_by_retrieval,
    load_systems,
)
from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError, RagcourtError
from ragcourt.core.io import read_table, write_json, write_with
from ragcourt.core.params import Params
from ragcourt.core.prompts import prompt
from ragcourt.core.schemas import TABLES, check
from ragcourt.llm.types import ChatRequest, ChatResult

if TYPE_CHECKING:
    from ragcourt.core.params import LLMParams

log = logging.getLogger("ragcourt.answer")

QA_PATH = catalog.path("qa")
ANSWERS_PATH = catalog.path("answers")
SUMMARY_PATH = catalog.path("answers_summary")
META_CONFIG = "ragcourt.config_hash"
META_QA = "ragcourt.qa_hash"

ABSTAIN_RE = re.compile(r"^\W*(?:(?i:no[-_]?response)|NO\s+RESPONSE)\b")
_HIT_COLS = ["chunk_id", "rank", "score", "doc_id", "char_start", "char_end", "text"]
ANSWER_SCHEMA: dict[str, Any] = {c: t for c, t in TABLES["answers"].items()}


class Retriever(Protocol):
    name: str

    def search(self, queries: pl.DataFrame, k: int) -> pl.DataFrame: ...


RetrieverFactory = Callable[[str, str, "str | None", Params], Retriever]


class Chatter(Protocol):
    def chat(self, reqs: list[ChatRequest], desc: str = "") -> list[ChatResult]: ...


def is_abstention(reply: str) -> bool:
    """True iff ``reply`` is the abstention token NO-RESPONSE (rule in the module docstring)."""
    return ABSTAIN_RE.match(reply) is not None


# --------------------------------------------------------------------------------------------
# Prompt assembly


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


# --------------------------------------------------------------------------------------------
# Retrieval, once per group


@dataclass
class GroupRetrieval:
    """A group's ranking at ``key.depth`` with passage data, plus its RAG-Fusion variants."""

    key: RetrievalKey
    hits: pl.DataFrame  # query_id + _HIT_COLS, sorted by query_id, rank
    variants: Variants | None
    seconds_per_query: float


def chunks_path(chunking: str) -> Path:
    return catalog.path("chunks", chunking=chunking)


def dense_inputs(chunking: str, embedder: str) -> list[Path]:
    """The artifacts a dense ranking reads besides the chunks (index + row -> chunk_id map)."""
    return [
        catalog.path("index", chunking=chunking, embedder=embedder),
        catalog.path("embeddings", chunking=chunking, embedder=embedder),
    ]


def _questions(qa: pl.DataFrame) -> pl.DataFrame:
    return qa.select(pl.col("question_id").alias("query_id"), pl.col("question").alias("query"))


def attach_passages(run: pl.DataFrame, chunks: pl.DataFrame, source: Path) -> pl.DataFrame:
    """Join a retrieval run with chunk text and offsets; a chunk id missing from ``chunks``
    means index and chunks are out of sync (error naming the chunks file)."""
    hits = run.select("query_id", "chunk_id", "rank", "score").join(
        chunks.select("chunk_id", "doc_id", "char_start", "char_end", "text"),
        on="chunk_id",
        how="left",
    )
    missing = hits.filter(pl.col("doc_id").is_null())
    if missing.height:
        raise RagcourtError(
            f"{source}: retrieved chunk '{missing['chunk_id'][0]}' is not in the chunks table "
            "(index and chunks out of sync: re-run the index stage)"
        )
    return hits.with_columns(pl.col("rank").cast(pl.Int32), pl.col("score").cast(pl.Float64)).sort(
        "query_id", "rank"
    )


def retrieve_group(
    key: RetrievalKey,
    qa: pl.DataFrame,
    params: Params,
    retriever: Retriever,
    gateway: Chatter,
    prompts_dir: Path | None = None,
) -> GroupRetrieval:
    """Rank every question once for this retrieval key (RAG-Fusion: variants, then RRF)."""
    queries = _questions(qa)
    variants: Variants | None = None
    if key.fusion_variants:
        assert key.fusion_model is not None and key.fusion_prompt_version is not None
        variants = generate_variants(
            gateway,
            queries,
            key.fusion_variants,
            key.fusion_model,
            params.llm,
            prompt_version=key.fusion_prompt_version,
            max_tokens=key.fusion_max_tokens or 128,
            prompts_dir=prompts_dir,
        )
    t0 = time.perf_counter()
    if variants is not None:
        ok = queries.filter(~pl.col("query_id").is_in(list(variants.errors)))
        per_q = {q: variants.queries[q] for q in ok["query_id"].to_list()}
        run = fused_search(retriever, ok, per_q, key.depth, params.retrieval.rrf_k)
    else:
        run = retriever.search(queries, key.depth)
    src = chunks_path(key.chunking)
    hits = attach_passages(run, read_table(src, "chunks"), src)
    elapsed = time.perf_counter() - t0
    return GroupRetrieval(key, hits, variants, elapsed / max(qa.height, 1))


# --------------------------------------------------------------------------------------------
# One system's rows


def answer_system(
    system: System,
    qa: pl.DataFrame,
    group: GroupRetrieval,
    params: Params,
    gateway: Chatter,
    prompts_dir: Path | None = None,
) -> pl.DataFrame:
    """Rows of table ``answers`` for ``system``: one per question, in QA order."""
    top = group.hits.filter(pl.col("rank") <= system.spec.top_k)
    per_q: dict[str, list[dict[str, Any]]] = {
        qid: sub.select(_HIT_COLS).to_dicts()
        for (qid,), sub in top.group_by("query_id", maintain_order=True)
    }
    var = group.variants
    qids, questions = qa["question_id"].to_list(), qa["question"].to_list()
    to_ask = [i for i, q in enumerate(qids) if var is None or q not in var.errors]
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
    results = dict(zip(to_ask, gateway.chat(reqs, desc=f"answers {system.name}"), strict=True))

    rows: list[dict[str, Any]] = []
    for i, qid in enumerate(qids):
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
        if res is None:  # the RAG-Fusion variant call failed: nothing to retrieve with
            assert var is not None
            row |= {
                "answer": None,
                "abstained": None,
                "error": var.errors[qid],
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
                "latency_s": group.seconds_per_query + v_lat + res.latency_s,
                "prompt_tokens": v_pt + res.prompt_tokens,
                "completion_tokens": v_ct + res.completion_tokens,
            }
        rows.append(row)
    return pl.DataFrame(rows, schema=ANSWER_SCHEMA).select(list(ANSWER_SCHEMA))


# --------------------------------------------------------------------------------------------
# Freshness hashes and partitions


def _sha256_file(path: Path) -> str:
    """sha256 of a file's bytes ("missing" if absent), memoised on (path, size, mtime)."""
    if not path.is_file():
        return "missing"
    st = path.stat()
    return _sha256_cached(str(path.resolve()), st.st_size, st.st_mtime_ns)


@functools.cache
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _digest(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def model_identity(model: str | None, params: Params) -> dict[str, Any] | None:
    """What pins a model's replies beyond its name: for ``local/<name>`` the gateway's own
    ``local_provider.model_identity`` (GGUF sha256, chat template, n_ctx; the gateway refuses
    a file whose sha256 differs from the registry's); None for remote / scripted models."""
    if model is None:
        return None
    from ragcourt.llm.providers import provider_of

    if provider_of(model) != "local":
        return None
    from ragcourt.llm.local_provider import model_identity as local_identity

    return local_identity(model, params.llm.models_file)


def config_hash(system: System, params: Params, prompts_dir: Path | None = None) -> str:
    """Hash of everything that fixes a system's answers apart from the questions (including
    ``model_identity`` of the generator and the RAG-Fusion query model)."""
    spec, key = system.spec, system.retrieval
    names = ["answer_system", "answer_user", "passage", "no_passages"]
    texts = {n: prompt("answer", n, spec.prompt_version, prompts_dir) for n in names}
    if spec.fusion:
        texts |= {
            f"fusion.{n}": prompt("answer", n, spec.fusion.prompt_version, prompts_dir)
            for n in ("variants_system", "variants_user")
        }
    inputs = {"chunks": _sha256_file(chunks_path(key.chunking))}
    if key.embedder is not None:
        inputs |= {p.name: _sha256_file(p) for p in dense_inputs(key.chunking, key.embedder)}
    return _digest(
        {
            "system": {"name": system.name, **effective_config(system)},
            "models": {
                "generator": model_identity(system.generator_model, params),
                "fusion": model_identity(system.retrieval.fusion_model, params),
            },
            "prompts": texts,
            "sampling": {"temperature": params.llm.temperature, "seed": params.llm.seed},
            "retrieval": {
                "rrf_k": params.retrieval.rrf_k,
                "bm25": params.retrieval.bm25.model_dump() if key.retriever != "dense" else None,
            },
            "chunking": params.chunkings[key.chunking].model_dump(),
            "chunk_tokenizer": params.chunk_tokenizer,
            "embedder": params.embedders[key.embedder].model_dump() if key.embedder else None,
            "inputs": inputs,
        }
    )


def qa_hash(qa: pl.DataFrame) -> str:
    """Hash of the question ids and texts, in order (all the answers depend on)."""
    return _digest(qa.select("question_id", "question").rows())


def partition_path(name: str) -> Path:
    return catalog.path("answer_partition", system=name)


def write_partition(df: pl.DataFrame, name: str, cfg_hash: str, q_hash: str) -> Path:
    """Atomically write one system's rows with its freshness hashes as Parquet metadata."""
    path = partition_path(name)
    check(df, "answers", path)
    meta = {META_CONFIG: cfg_hash, META_QA: q_hash}
    return write_with(path, lambda tmp: df.write_parquet(tmp, compression="zstd", metadata=meta))


def partition_state(name: str, cfg_hash: str, q_hash: str) -> str:
    """``missing``, ``stale`` (hashes differ or unreadable), ``errors`` (hashes match but some
    rows are error rows) or ``fresh``."""
    path = partition_path(name)
    if not path.is_file():
        return "missing"
    try:
        meta = pl.read_parquet_metadata(path)
        n_errors = pl.read_parquet(path, columns=["error"])["error"].drop_nulls().len()
    except Exception:  # an unreadable partition is regenerated
        return "stale"
    if meta.get(META_CONFIG) != cfg_hash or meta.get(META_QA) != q_hash:
        return "stale"
    return "errors" if n_errors else "fresh"


# --------------------------------------------------------------------------------------------
# The whole stage


def _default_factory() -> RetrieverFactory:
    from ragcourt.retrieval.retrieve import open_retriever

    return open_retriever  # type: ignore[return-value]


def answer_systems(
    systems: Sequence[System],
    qa: pl.DataFrame,
    params: Params,
    gateway: Chatter,
    retriever_factory: RetrieverFactory | None = None,
    prompts_dir: Path | None = None,
    *,
    reuse_fresh: bool = True,
) -> dict[str, str]:
    """Write the partition of every system that is not fresh; retrieval runs once per group of
    systems sharing a retrieval key. Returns ``{system: "kept" | "answered"}``."""
    factory = retriever_factory or _default_factory()
    q_hash = qa_hash(qa)
    hashes = {s.name: config_hash(s, params, prompts_dir) for s in systems}
    status = {
        s.name: "kept"
        if reuse_fresh and partition_state(s.name, hashes[s.name], q_hash) == "fresh"
        else "answered"
        for s in systems
    }
    for name in (n for n, st in status.items() if st == "kept"):
        log.info("%s: partition is fresh, kept (no retrieval, no model calls)", name)
    pending = [s for s in systems if status[s.name] == "answered"]
    retrievers: dict[tuple[str, str, str | None], Retriever] = {}
    for key, members in group_by_retrieval(pending).items():
        rkey = (key.retriever, key.chunking, key.embedder)
        if rkey not in retrievers:
            retrievers[rkey] = factory(key.retriever, key.chunking, key.embedder, params)
        group = retrieve_group(key, qa, params, retrievers[rkey], gateway, prompts_dir)
        log.info(
            "retrieval %s: %d questions, shared by %s",
            key.label,
            qa.height,
            [s.name for s in members],
        )
        for s in members:
            df = answer_system(s, qa, group, params, gateway, prompts_dir)
            write_partition(df, s.name, hashes[s.name], q_hash)
            n_err = df["error"].drop_nulls().len()
            log.info(
                "%s: %d answers (%d abstained), %d error rows",
                s.name,
                df.height - n_err,
                int(df["abstained"].sum() or 0),
                n_err,
            )
    return status


def summarise(answers: pl.DataFrame) -> dict[str, dict[str, float | int]]:
    """Per system: questions, answered, abstained, errors, abstention rate, mean latency, tokens."""
    out: dict[str, dict[str, float | int]] = {}
    for (name,), df in answers.group_by("system", maintain_order=True):
        ok = df.filter(pl.col("error").is_null())
        out[str(name)] = {
            "questions": df.height,
            "answered": ok.height,
            "abstained": int(ok["abstained"].sum() or 0),
            "errors": df.height - ok.height,
            "abstention_rate": float(ok["abstained"].mean() or 0.0) if ok.height else 0.0,
            "mean_latency_s": float(df["latency_s"].mean() or 0.0),
            "prompt_tokens": int(df["prompt_tokens"].sum()),
            "completion_tokens": int(df["completion_tokens"].sum()),
        }
    return out


def combine(systems: Sequence[System], *, prune: bool) -> pl.DataFrame:
    """Concatenate the partitions of ``systems`` (config order) into answers.parquet + summary;
    with ``prune``, delete partitions of systems that are no longer configured."""
    partitions_dir = catalog.path("answer_partition", system="x").parent
    if prune and partitions_dir.is_dir():
        keep = {partition_path(s.name).name for s in systems}
        for stale in partitions_dir.glob("*.parquet"):
            if stale.name not in keep:
                stale.unlink()
                log.info("removed partition of unconfigured system: %s", stale)
    frames = [read_table(partition_path(s.name), "answers") for s in systems]
    answers = pl.concat(frames, how="vertical") if frames else pl.DataFrame(schema=ANSWER_SCHEMA)
    write_with(ANSWERS_PATH, lambda tmp: answers.write_parquet(tmp, compression="zstd"))
    write_json(summarise(answers), SUMMARY_PATH)
    return answers


def check_questions(qa: pl.DataFrame, source: Path) -> pl.DataFrame:
    """Question ids must be non-null and unique, question texts non-empty (error names the row)."""
    bad_id = qa.filter(pl.col("question_id").is_null() | (pl.col("question_id") == ""))
    if bad_id.height:
        raise RagcourtError(f"{source}: a row has an empty question_id")
    dup = qa.filter(pl.col("question_id").is_duplicated())
    if dup.height:
        raise RagcourtError(f"{source}: duplicate question_id '{dup['question_id'][0]}'")
    empty = qa.filter(pl.col("question").is_null() | (pl.col("question").str.strip_chars() == ""))
    if empty.height:
        raise RagcourtError(
            f"{source}: question_id '{empty['question_id'][0]}': column 'question' is empty"
        )
    return qa


def select_systems(systems: Sequence[System], names: Sequence[str] | None) -> list[System]:
    if names is None:
        return list(systems)
    known = {s.name: s for s in systems}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ConfigError(f"unknown system(s) {unknown} (configured: {sorted(known)})")
    return [known[n] for n in names]


def run(
    params: Params,
    systems: Sequence[str] | None = None,
    *,
    gateway: Chatter | None = None,
    retriever_factory: RetrieverFactory | None = None,
    prompts_dir: Path | None = None,
) -> None:
    """The whole stage in the cwd. ``systems`` limits which partitions are (re)computed; the
    combined table is written when every configured system has an up-to-date partition."""
    configured = load_systems(params, prompts_dir=prompts_dir)
    chosen = select_systems(configured, systems)
    qa = check_questions(read_table(QA_PATH, "qa"), QA_PATH)
    own_gateway = gateway is None
    if gateway is None:
        from ragcourt.llm import Gateway

        gateway = Gateway(params.llm, stage="answer")
    answer_systems(chosen, qa, params, gateway, retriever_factory, prompts_dir)
    q_hash = qa_hash(qa)
    unready = [
        s.name
        for s in configured
        if partition_state(s.name, config_hash(s, params, prompts_dir), q_hash)
        in ("missing", "stale")
    ]
    if unready:
        log.info("combined table not written: partitions missing or stale for %s", unready)
    else:
        combine(configured, prune=systems is None)
    if own_gateway:
        gateway.write_metrics()  # type: ignore[attr-defined]
