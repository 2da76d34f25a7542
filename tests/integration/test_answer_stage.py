"""The answer stage end to end in a temp project: real chunks, real BM25/FAISS retrieval, the
real gateway with a scripted generator (exact replies), per-system partitions and reuse."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from _llm_testing import scripted_model
from litellm import exceptions as litellm_errors

from ragcourt.answering import stage as answer
from ragcourt.answering.generation import is_abstention
from ragcourt.answering.partitions import config_hash, model_identity
from ragcourt.answering.protocols import Retriever
from ragcourt.core import prompts as prompt_files
from ragcourt.core.errors import ConfigError, RagcourtError, StageFailed
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.schemas import frame_schema
from ragcourt.orchestration.params import Params, load_params
from ragcourt.retrieval.params import RetrievalView
from ragcourt.retrieval.retrieve import open_retriever

ROOT = Path(__file__).resolve().parents[2]

CHUNKS = [
    ("d1", "The Louisiana Purchase doubled the size of the nation in 1803."),
    ("d1", "Congress approved the treaty with France after a long debate."),
    ("d2", "The transcontinental railroad was completed at Promontory Summit in 1869."),
    ("d2", "Workers drove a golden spike to join the two railroad lines."),
    ("d3", "Tariffs on imported steel were raised to protect domestic mills."),
    ("d3", "The income tax became permanent with the Sixteenth Amendment."),
]
QUESTIONS = [
    ("q1", "When was the Louisiana Purchase made?", "1803"),
    ("q2", "Where was the transcontinental railroad completed?", "Promontory Summit"),
    ("q3", "Which amendment made the income tax permanent?", "the Sixteenth Amendment"),
]


def _write_chunks(chunking: str = "c256") -> pl.DataFrame:
    rows: list[dict[str, Any]] = []
    offsets: dict[str, int] = {}
    for doc, text in CHUNKS:
        start = offsets.get(doc, 0)
        idx = sum(1 for r in rows if r["doc_id"] == doc)
        rows.append(
            {
                "chunk_id": f"{chunking}:{doc}:{idx}",
                "chunking": chunking,
                "doc_id": doc,
                "chunk_index": idx,
                "char_start": start,
                "char_end": start + len(text),
                "n_tokens": len(text.split()),
                "text": text,
            }
        )
        offsets[doc] = start + len(text) + 1
    df = pl.DataFrame(rows).with_columns(
        pl.col("chunk_index", "n_tokens").cast(pl.Int32),
        pl.col("char_start", "char_end").cast(pl.Int64),
    )
    write_parquet(df, f"data/chunks/{chunking}.parquet", "chunks")
    return df


def _write_qa() -> pl.DataFrame:
    qa = pl.DataFrame(
        {
            "question_id": [q for q, _, _ in QUESTIONS],
            "question": [t for _, t, _ in QUESTIONS],
            "reference_answers": [[a] for _, _, a in QUESTIONS],
            "doc_id": ["d1", "d2", "d3"],
            "char_start": [0, 0, 63],
            "char_end": [10, 10, 90],
            "context": ["", "", ""],
        }
    )
    # provenance columns of the qa table (qagen's record) are null here
    qa = qa.with_columns(
        pl.lit(None, dtype=t).alias(c) for c, t in frame_schema("qa").items() if c not in qa.columns
    )
    write_parquet(qa, "data/qa/qa.parquet", "qa")
    return qa


def generator(messages: list[dict[str, str]]) -> str:
    """Answers from passage [1] when it holds the keyword; otherwise abstains."""
    user = messages[-1]["content"]
    if "search queries" in user:  # RAG-Fusion query writer
        q = user.split("Question:")[-1].strip()
        return f"{q} history\n{q} date"
    passages = user.split("Question:")[0]
    for keyword in ("1803", "Promontory Summit", "Sixteenth Amendment"):
        if keyword in passages:
            return keyword
    return "NO-RESPONSE"


def _systems(*specs: dict[str, Any]) -> None:
    """Write systems.yaml. Each system gets its own answer ``max_tokens`` (part of the gateway's
    cache key), so two systems whose prompts happen to coincide never share a cache entry and
    model-call counts are exact."""
    systems = [{"max_tokens": 40 + zlib.crc32(s["name"].encode()) % 400, **s} for s in specs]
    Path("systems.yaml").write_text(
        yaml.safe_dump({"defaults": {"chunking": "c256", "embedder": "minilm"}, "systems": systems})
    )


def answer_project(root: Path) -> Params:
    """An answer-stage workspace in ``root`` (the current directory): the answer prompts and
    model registry, chunks and QA of :data:`QUESTIONS`, the shipped params with their own
    reply cache, no retries, ``systems.yaml`` and no control systems (a test adds them)."""
    (root / "configs/prompts").mkdir(parents=True)
    shutil.copy(ROOT / "configs/prompts/answer.yaml", root / "configs/prompts/answer.yaml")
    shutil.copy(ROOT / "configs/models.yaml", root / "configs/models.yaml")
    params = load_params(ROOT / "params.yaml").model_copy(deep=True)
    params.controls.kinds = []
    params.llm.cache_dir = str(root / ".cache")
    params.llm.max_retries = 0
    params.systems_file = "systems.yaml"
    _write_chunks()
    _write_qa()
    return params


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Params:
    monkeypatch.chdir(tmp_path)
    return answer_project(tmp_path)


class Spy:
    """Wraps ``open_retriever``: counts retrievers opened and search batches run."""

    def __init__(self) -> None:
        self.opened: list[tuple[str, str, str | None]] = []
        self.searches: list[tuple[str, int, int]] = []

    def __call__(
        self, kind: str, chunking: str, embedder: str | None, params: RetrievalView
    ) -> Retriever:
        self.opened.append((kind, chunking, embedder))
        inner = open_retriever(kind, chunking, embedder, params)
        spy = self

        class _R:
            name = inner.name

            def search(self, queries: pl.DataFrame, k: int) -> pl.DataFrame:
                spy.searches.append((kind, queries.height, k))
                return inner.search(queries, k)

        return _R()


BM25_SYSTEMS = (
    {"name": "bm25-k1", "retriever": "bm25", "top_k": 1},
    {"name": "bm25-k3", "retriever": "bm25", "top_k": 3},
    {"name": "bm25-k3-fusion2", "retriever": "bm25", "top_k": 3, "fusion": {"n_variants": 2}},
)


def test_every_pair_gets_a_row_scripted_model(project: Params) -> None:
    _systems(*BM25_SYSTEMS)
    with scripted_model("gen", generator) as m:
        project.llm.model = m.model
        answer.run(project)
    out = read_table("data/answers/answers.parquet", "answers")
    assert out.height == 9 and out["error"].null_count() == 9
    assert out.select("system", "question_id").rows() == [
        (s["name"], q) for s in BM25_SYSTEMS for q, _, _ in QUESTIONS
    ]
    assert set(out["model"]) == {"scripted/gen"}
    chunks = read_table("data/chunks/c256.parquet", "chunks")
    texts = dict(zip(chunks["chunk_id"], chunks["text"], strict=True))
    for row in out.iter_rows(named=True):
        top_k = 1 if row["system"] == "bm25-k1" else 3
        assert 1 <= len(row["retrieved"]) <= top_k
        assert [h["rank"] for h in row["retrieved"]] == list(range(1, len(row["retrieved"]) + 1))
        for h in row["retrieved"]:
            assert h["text"] == texts[h["chunk_id"]] and h["doc_id"] == h["chunk_id"].split(":")[1]
        # the scripted generator answers iff passage text holds the answer, else abstains
        assert row["abstained"] == (row["answer"] == "NO-RESPONSE")
        assert row["prompt_tokens"] > 0 and row["latency_s"] >= 0
    fusion = out.filter(pl.col("system") == "bm25-k3-fusion2")
    assert fusion["query_variants"].to_list()[0] == [
        "When was the Louisiana Purchase made? history",
        "When was the Louisiana Purchase made? date",
    ]
    assert out.filter(pl.col("system") != "bm25-k3-fusion2")["query_variants"].list.len().sum() == 0
    for s in BM25_SYSTEMS:
        part = read_table(f"data/answers/systems/{s['name']}.parquet", "answers")
        assert part.equals(out.filter(pl.col("system") == s["name"]))
    summary = json.loads(Path("data/answers/summary.json").read_text())
    assert summary["bm25-k3"]["questions"] == 3 and summary["bm25-k3"]["errors"] == 0
    assert Path("data/metrics/llm_answer.json").is_file()


def test_bm25_top1_answers_when_passage_holds_answer_scripted_model(project: Params) -> None:
    _systems(BM25_SYSTEMS[0])
    with scripted_model("gen1", generator) as m:
        project.llm.model = m.model
        answer.run(project)
    out = read_table("data/answers/answers.parquet", "answers")
    top = [r[0]["chunk_id"] for r in out["retrieved"]]
    assert top == ["c256:d1:0", "c256:d2:0", "c256:d3:1"]
    assert out["answer"].to_list() == ["1803", "Promontory Summit", "Sixteenth Amendment"]
    assert out["abstained"].to_list() == [False, False, False]


def test_failing_model_gives_error_rows_scripted_model(project: Params) -> None:
    _systems(BM25_SYSTEMS[1], BM25_SYSTEMS[2])

    def flaky(messages: list[dict[str, str]]) -> str:
        if "transcontinental" in messages[-1]["content"]:
            raise RuntimeError("model exploded")
        return generator(messages)

    with scripted_model("flaky", flaky) as m:
        project.llm.model = m.model
        answer.run(project)
    out = read_table("data/answers/answers.parquet", "answers")
    assert out.height == 6
    bad = out.filter(pl.col("question_id") == "q2")
    # plain system: generation failed; fusion system: its variant call already failed
    assert bad["error"].to_list()[0].startswith("generation failed:")
    assert bad["error"].to_list()[1].startswith("RAG-Fusion variant call failed:")
    assert all("model exploded" in e for e in bad["error"])
    assert bad["answer"].null_count() == 2 and bad["abstained"].null_count() == 2
    assert bad["retrieved"].list.len().to_list()[0] >= 1  # the plain system did retrieve
    good = out.filter(pl.col("question_id") != "q2")
    assert good["error"].null_count() == 4 and good["answer"].null_count() == 0
    # a partition with error rows is not reused: the next run retries those pairs
    with scripted_model("flaky", generator) as m2:
        answer.run(project)
    assert len(m2.calls) == 3  # q2: plain answer, variant call, fusion answer; rest cached
    out2 = read_table("data/answers/answers.parquet", "answers")
    assert out2["error"].null_count() == 6


def test_retrieval_shared_by_systems_differing_in_generator_or_k_scripted_model(
    project: Params,
) -> None:
    _systems(
        {"name": "a", "retriever": "bm25", "top_k": 3},
        {"name": "b", "retriever": "bm25", "top_k": 1, "generator": "scripted/other"},
        {"name": "c", "retriever": "bm25", "top_k": 3, "fusion": True},
        {
            "name": "d",
            "retriever": "bm25",
            "top_k": 2,
            "fusion": True,
            "generator": "scripted/other",
        },
    )
    spy = Spy()
    with scripted_model("gen", generator) as m, scripted_model("other", generator) as o:
        project.llm.model = m.model
        answer.run(project, retriever_factory=spy)
    # one BM25 retriever; one ranking batch for {a, b}; question + variant batches for {c, d}
    assert spy.opened == [("bm25", "c256", None)]
    assert spy.searches == [("bm25", 3, 10), ("bm25", 3, 10), ("bm25", 6, 10)]
    out = read_table("data/answers/answers.parquet", "answers")
    a, b = (out.filter(pl.col("system") == s)["retrieved"].to_list() for s in "ab")
    assert [r[:1] for r in a] == b  # b keeps the first passage of the shared ranking
    c, d = (out.filter(pl.col("system") == s) for s in "cd")
    assert c["query_variants"].to_list() == d["query_variants"].to_list()
    assert [r[:2] for r in c["retrieved"].to_list()] == d["retrieved"].to_list()
    assert len(m.calls) == 3 + 3 + 3  # variants (once, shared by c and d) + answers of a and c
    assert len(o.calls) == 3 + 3  # answers of b and d


def test_rerun_reuses_partitions_and_new_system_runs_alone_scripted_model(
    project: Params,
) -> None:
    _systems(*BM25_SYSTEMS[:2])
    with scripted_model("gen", generator) as m:
        project.llm.model = m.model
        answer.run(project)
        assert len(m.calls) == 6
        before = {p.name: p.read_bytes() for p in Path("data/answers/systems").iterdir()}

        spy = Spy()
        answer.run(project, retriever_factory=spy)  # nothing changed
        assert len(m.calls) == 6 and spy.searches == []

        _systems(*BM25_SYSTEMS)  # one system added
        spy = Spy()
        answer.run(project, retriever_factory=spy)
        assert len(m.calls) == 6 + 3 + 3  # the new system's variant + answer calls only
        assert spy.searches == [("bm25", 3, 10), ("bm25", 6, 10)]
        for name, data in before.items():
            assert Path("data/answers/systems", name).read_bytes() == data

        _systems(BM25_SYSTEMS[2])  # two removed: their partitions stay, left out of the table
        answer.run(project, retriever_factory=Spy())
        assert len(m.calls) == 12
    assert sorted(p.name for p in Path("data/answers/systems").iterdir()) == [
        "bm25-k1.parquet",
        "bm25-k3-fusion2.parquet",
        "bm25-k3.parquet",
    ]
    assert set(read_table("data/answers/answers.parquet", "answers")["system"]) == {
        "bm25-k3-fusion2"
    }


def test_changed_questions_or_prompt_rerun_the_system_scripted_model(project: Params) -> None:
    _systems(BM25_SYSTEMS[0])
    with scripted_model("gen", generator) as m:
        project.llm.model = m.model
        answer.run(project)
        qa = read_table("data/qa/qa.parquet", "qa")
        write_parquet(qa.head(2), "data/qa/qa.parquet", "qa")
        spy = Spy()
        answer.run(project, retriever_factory=spy)  # qa hash changed: re-run, calls cached
        assert spy.searches == [("bm25", 2, 10)] and len(m.calls) == 3
        assert read_table("data/answers/answers.parquet", "answers").height == 2
        prompts = Path("configs/prompts/answer.yaml")
        prompts.write_text(prompts.read_text().replace("one or two sentences", "one sentence"))
        prompt_files._load.cache_clear()  # prompt files are memoised per process
        answer.run(project)
        assert len(m.calls) == 5  # the new prompt text is a new cache key


def test_config_hash_follows_the_local_model_identity(project: Params) -> None:
    """A new GGUF (new registry sha256) for the generator or the fusion model changes the
    partition's config hash even though the model string stays the same."""
    from ragcourt.answering.systems import load_systems

    _systems(
        {"name": "gen", "retriever": "bm25", "top_k": 1, "generator": "local/smollm2-135m"},
        {"name": "fus", "retriever": "bm25", "top_k": 1, "generator": "scripted/x",
         "fusion": {"n_variants": 2, "model": "local/smollm2-135m"}},
    )  # fmt: skip
    project.llm.model = "scripted/x"

    def hashes() -> dict[str, str]:
        return {s.name: config_hash(s, project) for s in load_systems(project)}

    before = hashes()
    assert before == hashes()  # deterministic
    registry = yaml.safe_load(Path("configs/models.yaml").read_text())
    registry["llms"]["smollm2-135m"]["sha256"] = "f" * 64
    Path("configs/models2.yaml").write_text(yaml.safe_dump(registry))
    project.llm.models_file = "configs/models2.yaml"
    after = hashes()
    assert after["gen"] != before["gen"] and after["fus"] != before["fus"]
    assert model_identity("scripted/x", project) is None


def test_subset_run_then_full_combine_scripted_model(project: Params) -> None:
    _systems(*BM25_SYSTEMS[:2])
    with scripted_model("gen", generator) as m:
        project.llm.model = m.model
        answer.run(project, systems=["bm25-k1"])
        assert not Path("data/answers/answers.parquet").exists()  # bm25-k3 has no partition
        answer.run(project, systems=["bm25-k3"])
    assert read_table("data/answers/answers.parquet", "answers").height == 6
    with pytest.raises(ConfigError, match=r"unknown system\(s\) \['nope'\]"):
        answer.run(project, systems=["nope"])


@pytest.mark.slow  # loads the real MiniLM embedder (~25 s on 2 busy cores)
def test_dense_and_hybrid_on_real_faiss_index_scripted_model(project: Params) -> None:
    from ragcourt.retrieval import indexing as embed

    embed.run(project, chunking="c256", embedder="minilm")
    _systems(
        {"name": "dense-k1", "retriever": "dense", "top_k": 1},
        {"name": "dense-k2", "retriever": "dense", "top_k": 2},
        {"name": "hybrid-k2", "retriever": "hybrid", "top_k": 2},
    )
    spy = Spy()
    with scripted_model("gen", generator) as m:
        project.llm.model = m.model
        answer.run(project, retriever_factory=spy)
    assert spy.opened == [("dense", "c256", "minilm"), ("hybrid", "c256", "minilm")]
    assert [s[0] for s in spy.searches] == ["dense", "hybrid"]
    out = read_table("data/answers/answers.parquet", "answers")
    dense1 = out.filter(pl.col("system") == "dense-k1")
    assert [r[0]["chunk_id"] for r in dense1["retrieved"]] == [
        "c256:d1:0",
        "c256:d2:0",
        "c256:d3:1",
    ]
    assert dense1["answer"].to_list() == ["1803", "Promontory Summit", "Sixteenth Amendment"]
    assert out.filter(pl.col("system") == "hybrid-k2")["retrieved"].list.len().to_list() == [2] * 3


def test_bad_systems_file_is_one_line_error_naming_system_and_file(project: Params) -> None:
    _systems({"name": "lost", "retriever": "dense", "chunking": "c999"})
    Path("params.yaml").write_text(yaml.safe_dump(project.model_dump(mode="json"), sort_keys=False))
    proc = subprocess.run(
        [sys.executable, "-m", "stages", "answer", "--params", "params.yaml"],
        capture_output=True,
        text=True,
        cwd=Path.cwd(),
        timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "ragcourt: error: systems.yaml: system 'lost': unknown chunking 'c999' "
        f"(params chunkings: {sorted(project.chunkings)})"
    )


def test_smoke_real_local_model(project: Params) -> None:
    """The embedded SmolLM2-135M answers through the whole stage (whatever it says, each row
    is an answer with a consistent abstention flag, or an explicit error)."""
    _systems(
        {"name": "bm25-k2", "retriever": "bm25", "top_k": 2, "max_tokens": 12,
         "generator": "local/smollm2-135m"}
    )  # fmt: skip
    write_parquet(read_table("data/qa/qa.parquet", "qa").head(1), "data/qa/qa.parquet", "qa")
    answer.run(project)
    out = read_table("data/answers/answers.parquet", "answers")
    assert out.height == 1 and set(out["model"]) == {"local/smollm2-135m"}
    assert out["error"].null_count() == 1, out["error"].to_list()
    for row in out.iter_rows(named=True):
        assert isinstance(row["answer"], str)
        assert row["abstained"] == is_abstention(row["answer"])
        assert row["completion_tokens"] > 0


def test_bad_or_empty_question_sets_scripted_model(project: Params) -> None:
    _systems(BM25_SYSTEMS[0])
    qa = read_table("data/qa/qa.parquet", "qa")
    write_parquet(
        qa.with_columns(pl.when(pl.col("question_id") == "q2").then(pl.lit("  "))
                        .otherwise(pl.col("question")).alias("question")),
        "data/qa/qa.parquet", "qa",
    )  # fmt: skip
    with pytest.raises(RagcourtError, match=r"qa.parquet: question_id 'q2': column 'question'"):
        answer.run(project)
    write_parquet(pl.concat([qa, qa.head(1)]), "data/qa/qa.parquet", "qa")
    with pytest.raises(RagcourtError, match="duplicate question_id 'q1'"):
        answer.run(project)
    write_parquet(qa.head(0), "data/qa/qa.parquet", "qa")  # no questions: empty, valid tables
    with scripted_model("gen", generator) as m:
        project.llm.model = m.model
        answer.run(project)
    assert m.calls == []
    assert read_table("data/answers/answers.parquet", "answers").height == 0
    assert read_table("data/answers/systems/bm25-k1.parquet", "answers").height == 0


def test_a_system_whose_every_call_fails_stops_the_stage_loudly_scripted_model(
    project: Params,
) -> None:
    """A 401 for one system's model: its error rows are written, then the stage fails in one
    line naming the system (exit 3 under run_entry); the other system is unaffected."""
    _systems(
        {"name": "good", "retriever": "bm25", "top_k": 1},
        {"name": "revoked", "retriever": "bm25", "top_k": 1, "generator": "scripted/revoked"},
    )

    def unauthorised(messages: list[dict[str, str]]) -> str:
        raise litellm_errors.AuthenticationError("401 invalid api key", "scripted", "revoked")

    with scripted_model("gen", generator) as m, scripted_model("revoked", unauthorised):
        project.llm.model = m.model
        with pytest.raises(StageFailed, match=r"answer: answers: every row failed for 'revoked'"):
            answer.run(project)
    out = read_table("data/answers/answers.parquet", "answers")  # written before failing
    assert out.filter(pl.col("system") == "revoked")["error"].null_count() == 0
    assert out.filter(pl.col("system") == "good")["error"].null_count() == 3
    # the policy is a param: accepting total failure of a system lets the stage pass
    project.failure.fail_on_system = False
    with scripted_model("gen", generator), scripted_model("revoked", unauthorised):
        answer.run(project)


def test_resumed_rows_are_marked_cached_and_left_out_of_latency_scripted_model(
    project: Params,
) -> None:
    """A scripted model that takes 0.3 s per call: rows replayed from the reply cache on a
    resume say ``cached`` and the summary's mean latency is over the measured rows only."""
    _systems(BM25_SYSTEMS[0])
    qa = read_table("data/qa/qa.parquet", "qa")
    write_parquet(qa.head(2), "data/qa/qa.parquet", "qa")
    with scripted_model("slow", generator, delay_s=0.3) as m:
        project.llm.model = m.model
        answer.run(project)
        first = read_table("data/answers/answers.parquet", "answers")
        assert first["cached"].to_list() == [False, False]
        assert min(first["latency_s"]) >= 0.3
        write_parquet(qa, "data/qa/qa.parquet", "qa")  # one question more: a resume
        answer.run(project)
    out = read_table("data/answers/answers.parquet", "answers")
    assert len(m.calls) == 3  # the two earlier calls were replayed from the cache
    assert out["cached"].to_list() == [True, True, False]
    replayed = out.filter(pl.col("cached"))["latency_s"]
    assert max(replayed) < 0.3
    summary = json.loads(Path("data/answers/summary.json").read_text())["bm25-k1"]
    assert summary["cached"] == 2 and summary["latency_rows"] == 1
    assert summary["mean_latency_s"] >= 0.3  # only the measured row


def test_a_partition_without_the_cached_column_is_kept_and_upgraded_scripted_model(
    project: Params,
) -> None:
    """A partition written before ``cached`` existed is reused (no model call) and upgraded."""
    _systems(BM25_SYSTEMS[0])
    with scripted_model("gen", generator) as m:
        project.llm.model = m.model
        answer.run(project)
        path = Path("data/answers/systems/bm25-k1.parquet")
        meta = pl.read_parquet_metadata(path)
        old = pl.read_parquet(path).drop("cached")
        old.write_parquet(path, metadata=meta)
        calls = len(m.calls)
        answer.run(project)
        assert len(m.calls) == calls
    assert pl.read_parquet(path)["cached"].null_count() == 3
    assert read_table("data/answers/answers.parquet", "answers")["cached"].null_count() == 3


def _answers_without_measurements() -> pl.DataFrame:
    return read_table("data/answers/answers.parquet", "answers").drop("latency_s", "cached")


def _sharded_equals_unsharded(project: Params, systems: list[dict[str, Any]]) -> None:
    """Answer unsharded, then in blocks of one question (fresh partitions each time): the same
    answers table, and a block file per question for every system."""
    _systems(*systems)
    with scripted_model("gen", generator) as m:
        project.llm.model = m.model
        answer.run(project)
        whole = _answers_without_measurements()
        shutil.rmtree("data/answers")
        project.scale.shard_questions = 1
        answer.run(project)
    assert _answers_without_measurements().equals(whole)
    for s in systems:
        assert len(list(Path(f"data/answers/shards/{s['name']}").glob("*.parquet"))) == 3


def test_a_fusion_system_is_answered_in_question_blocks_like_the_others_scripted_model(
    project: Params,
) -> None:
    _sharded_equals_unsharded(project, [BM25_SYSTEMS[1], BM25_SYSTEMS[2]])


@pytest.mark.slow  # loads the real MiniLM embedder
def test_dense_fusion_variants_embed_the_same_in_any_block_scripted_model(project: Params) -> None:
    from ragcourt.retrieval import indexing as embed
    from ragcourt.retrieval.embedders import encode, singly

    texts = ["When was the Louisiana Purchase made?", "a much longer text " * 20, "short"]
    with singly():
        alone = encode("all-minilm-l6-v2", texts[:1], role="query")
        beside = encode("all-minilm-l6-v2", texts, role="query")
    assert alone[0].tobytes() == beside[0].tobytes()
    embed.run(project, chunking="c256", embedder="minilm")
    fusion = {
        "name": "dense-k2-fusion2",
        "retriever": "dense",
        "top_k": 2,
        "fusion": {"n_variants": 2},
    }
    _sharded_equals_unsharded(project, [fusion])
