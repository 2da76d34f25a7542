"""Embedding stage, FAISS index, dense/hybrid retrieval with the real MiniLM, schema checks,
and the embedder registry (split-zip reader, missing optional model)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import faiss
import numpy as np
import polars as pl
import pytest

from ragcourt.core.errors import ConfigError, RagcourtError, SchemaError
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.schemas import frame_schema
from ragcourt.orchestration.params import Params, parse_params
from ragcourt.retrieval import indexing as embed
from ragcourt.retrieval.embedders import _ConcatReader, encode, resolve_model_dir
from ragcourt.retrieval.retrieve import open_retriever

MINILM = "all-minilm-l6-v2"
TEXTS = [
    "The Monroe Doctrine warned European powers against new colonies in the Americas.",
    "Congress should lower the tariff on imported wool and cotton goods.",
    "The Four Freedoms: freedom of speech, of worship, from want and from fear.",
    "We will put a man on the moon before this decade is out.",
    "The Union must be preserved and slavery ended.",
]


def chunks_table(texts: list[str]) -> pl.DataFrame:
    rows = []
    for i, t in enumerate(texts):
        rows.append((f"c1:d{i}:0", "c1", f"d{i}", 0, 0, len(t), len(t.split()), t))
    return pl.DataFrame(rows, schema=frame_schema("chunks"), orient="row")


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_parquet(chunks_table(TEXTS), "data/chunks/c1.parquet", "chunks")
    return tmp_path


def params_for_test() -> Params:
    return parse_params(
        {
            "chunkings": {"c1": {"size": 64, "overlap": 0}},
            "embedders": {"mini": {"model": MINILM, "batch_size": 2}},
            "qagen": {"reference_chunking": "c1"},
        },
        "<test>",
    )


def test_embed_stage_writes_array_parquet_and_matching_index(workdir: Path) -> None:
    params = params_for_test()
    emb_path, idx_path = embed.run(params, "c1", "mini")
    emb = read_table(emb_path, "embeddings")
    assert emb.schema["embedding"] == pl.Array(pl.Float32, 384)
    assert emb["chunk_id"].to_list() == chunks_table(TEXTS)["chunk_id"].to_list()
    vecs = embed.vectors_of(emb)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    index = faiss.read_index(str(idx_path))
    assert (index.ntotal, index.d) == (len(TEXTS), 384)
    scores, ids = index.search(vecs, 1)  # each vector finds itself: same row order
    assert ids[:, 0].tolist() == list(range(len(TEXTS)))
    assert np.allclose(scores[:, 0], 1.0, atol=1e-5)
    leftovers = [p.name for p in Path("data").rglob(".*")]
    assert leftovers == [], "atomic writes leave no temp files"


def test_dense_and_hybrid_retrieval_over_the_real_index(workdir: Path) -> None:
    params = params_for_test()
    embed.run(params, "c1", "mini")
    queries = pl.DataFrame(
        {"query_id": ["moon", "tariff"], "query": ["landing a man on the moon", "wool tariffs"]}
    )
    dense = open_retriever("dense", "c1", "mini", params).search(queries, 3)
    top = dense.filter(pl.col("rank") == 1).sort("query_id")
    assert top["chunk_id"].to_list() == ["c1:d3:0", "c1:d1:0"]
    # FAISS flat IP equals exact numpy top-k
    vecs = embed.vectors_of(read_table("data/embeddings/c1__mini.parquet", "embeddings"))
    q = encode(MINILM, queries["query"].to_list())
    exact = np.argsort(-(q @ vecs.T), axis=1, kind="stable")[:, :3]
    for qi, qid in enumerate(queries["query_id"]):
        got = dense.filter(pl.col("query_id") == qid).sort("rank")["chunk_id"].to_list()
        assert got == [f"c1:d{j}:0" for j in exact[qi]]
    hybrid = open_retriever("hybrid", "c1", "mini", params).search(queries, 3)
    assert hybrid.filter(pl.col("rank") == 1).sort("query_id")["chunk_id"].to_list() == [
        "c1:d3:0",
        "c1:d1:0",
    ]
    assert set(hybrid["retriever"]) == {"hybrid"}


def test_out_of_sync_index_is_a_clear_error(workdir: Path) -> None:
    params = params_for_test()
    emb_path, _ = embed.run(params, "c1", "mini")
    write_parquet(read_table(emb_path, "embeddings").head(3), emb_path, "embeddings")
    with pytest.raises(RagcourtError, match=r"5 vectors but .*c1__mini.parquet has 3 rows"):
        open_retriever("dense", "c1", "mini", params)
    Path("data/index/c1__mini.faiss").unlink()
    with pytest.raises(RagcourtError, match=r"c1__mini.faiss: input artifact not found"):
        open_retriever("hybrid", "c1", "mini", params)
    with pytest.raises(ConfigError, match=r"chunking 'c9' is not one of chunkings \['c1'\]"):
        open_retriever("bm25", "c9", None, params)


def test_schema_check_names_file_and_column(workdir: Path) -> None:
    bad = chunks_table(TEXTS).drop("char_end")
    bad.write_parquet("data/chunks/c1.parquet")
    with pytest.raises(SchemaError, match=r"data/chunks/c1.parquet: missing column 'char_end'"):
        embed.run(params_for_test(), "c1", "mini")
    wrong = chunks_table(TEXTS).with_columns(pl.col("char_start").cast(pl.Utf8))
    wrong.write_parquet("data/chunks/c1.parquet")
    with pytest.raises(SchemaError, match=r"c1.parquet: column 'char_start' has dtype String"):
        read_table("data/chunks/c1.parquet", "chunks")
    lists = pl.DataFrame({"chunk_id": ["a"], "embedding": [[0.1, 0.2]]})  # List, not Array
    lists.write_parquet("e.parquet")
    with pytest.raises(SchemaError, match=r"e.parquet: column 'embedding' has dtype List"):
        read_table("e.parquet", "embeddings")


def test_open_dense_checks_the_embeddings_schema(workdir: Path) -> None:
    """open_dense reads chunk_ids through the schema-checked reader (no model needed)."""
    Path("data/index").mkdir(parents=True)
    index = faiss.IndexFlatIP(384)
    index.add(np.zeros((1, 384), dtype=np.float32))
    faiss.write_index(index, "data/index/c1__mini.faiss")
    emb = Path("data/embeddings/c1__mini.parquet")
    emb.parent.mkdir(parents=True)
    pl.DataFrame({"chunk_id": ["a"], "embedding": [[0.1] * 384]}).write_parquet(emb)  # List
    with pytest.raises(SchemaError, match=r"c1__mini.parquet: column 'embedding' has dtype List"):
        open_retriever("dense", "c1", "mini", params_for_test())
    pl.DataFrame({"id": ["a"]}).write_parquet(emb)
    with pytest.raises(SchemaError, match=r"c1__mini.parquet: missing column 'chunk_id'"):
        open_retriever("dense", "c1", "mini", params_for_test())


def test_encode_is_normalised_float32() -> None:
    v = encode(MINILM, ["a short sentence", "another one entirely"], batch_size=1)
    assert v.dtype == np.float32 and v.shape == (2, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert encode(MINILM, []).shape == (0, 384)


def test_concat_reader_reads_a_zip_split_in_parts(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("m/config.json", '{"a": 1}')
        zf.writestr("m/weights.bin", bytes(range(256)) * 400)
    data = buf.getvalue()
    cuts = [0, len(data) // 3, 2 * len(data) // 3, len(data)]
    parts = []
    for i in range(3):
        p = tmp_path / f"z.{i:03d}"
        p.write_bytes(data[cuts[i] : cuts[i + 1]])
        parts.append(p)
    with _ConcatReader(parts) as raw, zipfile.ZipFile(io.BufferedReader(raw)) as zf:
        assert zf.read("m/weights.bin") == bytes(range(256)) * 400
        assert zf.testzip() is None
    with _ConcatReader(parts) as raw:
        raw.seek(-5, io.SEEK_END)
        assert raw.read() == data[-5:]


def test_missing_optional_embedder_names_the_install_hint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs/models.yaml").write_text(
        "embedders:\n"
        "  ghost:\n"
        "    source: zip_parts\n"
        "    parts: [ragcourt-no-such-dist-001]\n"
        "    subdir: ghost\n"
        "    dim: 8\n"
        "    optional: true\n"
        "    install_hint: pip install 'ragcourt[ghost]'\n"
    )
    monkeypatch.setenv("RAGCOURT_MODEL_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ConfigError, match=r"optional embedder 'ghost' is not installed .*"
                       r"install it with: pip install 'ragcourt\[ghost\]'"):  # fmt: skip
        resolve_model_dir("ghost")
    with pytest.raises(ConfigError, match="embedder model 'nope' is not in the model registry"):
        resolve_model_dir("nope")


def test_zip_parts_are_extracted_once_atomically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragcourt.core.model_registry import EmbedderEntry
    from ragcourt.retrieval import embedders

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("pack/m/modules.json", "[]")
        zf.writestr("pack/m/sub/weights.bin", b"w" * 5000)
        zf.writestr("pack/other.txt", "not extracted")
    data = buf.getvalue()
    parts = {"d1": tmp_path / "p1", "d2": tmp_path / "p2"}
    parts["d1"].write_bytes(data[:1000])
    parts["d2"].write_bytes(data[1000:])
    monkeypatch.setattr(embedders, "_part_file", lambda name, entry, dist: parts[dist])
    monkeypatch.setenv("RAGCOURT_MODEL_CACHE", str(tmp_path / "cache"))
    entry = EmbedderEntry(source="zip_parts", parts=["d1", "d2"], subdir="pack/m", dim=4)
    out = embedders._extract_zip_parts("toy", entry)
    assert out == tmp_path / "cache/toy"
    assert (out / "sub/weights.bin").read_bytes() == b"w" * 5000
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["toy"]  # no temp left
    assert not (out / "other.txt").exists()
    (out / "sub/weights.bin").write_bytes(b"changed")
    assert embedders._extract_zip_parts("toy", entry) == out  # marker present: not redone
    assert (out / "sub/weights.bin").read_bytes() == b"changed"
    parts["d2"].write_bytes(b"garbage")
    with pytest.raises(ConfigError, match="embedder 'bad': zip parts are corrupt"):
        embedders._extract_zip_parts("bad", entry)
    assert not (tmp_path / "cache/bad").exists()
