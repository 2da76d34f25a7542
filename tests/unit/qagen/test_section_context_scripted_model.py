"""The answer-first writer sees rendered documentation: no markup in its prompt, the page's
heading as the title and the chunk's section path after it (fenced as data like the title);
plain text documents give the same title as before; accepted questions and answer spans map
back to the source file."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from _llm_testing import Messages, scripted_model

from ragcourt.core.prompts import prompt
from ragcourt.corpus.chunking import chunk_documents
from ragcourt.corpus.ingest import ingest
from ragcourt.corpus.markup_map import SourceMap, roundtrip_misses, segments_of, source_text
from ragcourt.corpus.params import ChunkSpec, CorpusParams
from ragcourt.llm import Gateway
from ragcourt.orchestration.params import Params, parse_params
from ragcourt.qagen.answer_first import (
    AnswerFirstGenerator,
    DocumentInfo,
    display_title,
    span_contexts,
    writer_title,
)
from ragcourt.qagen.contexts import sample_contexts
from ragcourt.qagen.stage import generate_qa

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ROOT / "configs" / "prompts"
DATA = ROOT / "tests" / "data" / "markup"
ROLE = re.compile(r":[a-z]+:")
DIRECTIVE = re.compile(r"(?:^|\s)\.\. ")
TOP = "logging.handlers --- Logging handlers"


def test_writer_title_adds_the_section_below_the_title() -> None:
    assert writer_title("json", None) == "json"
    assert writer_title("json", "json") == "json"
    assert writer_title("json", "json › Basic Usage") == "json › Basic Usage"
    assert writer_title("1790 speech", "Other › Part") == "1790 speech › Other › Part"
    assert writer_title(None, "A › B") == "(untitled) › A › B"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pl.DataFrame, pl.DataFrame]:
    root = tmp_path_factory.mktemp("docs")
    shutil.copy(DATA / "library.rst", root / "library.rst")
    (root / "1790_first_speech.txt").write_text(
        "Fellow-Citizens of the Senate: among the vicissitudes incident to life, no event "
        "could have filled me with greater anxieties than that of which the notification "
        "was transmitted by your order, and received on the fourteenth day of the present "
        "month.\n",
        "utf-8",
    )
    docs, _ = ingest(CorpusParams(dir=str(root)))
    chunks = chunk_documents(docs, "c64", ChunkSpec(size=64, overlap=8), "cl100k_base")
    return root, docs, chunks


def test_document_info_keeps_heading_titles_and_chunk_sections(
    corpus: tuple[Path, pl.DataFrame, pl.DataFrame],
) -> None:
    _, docs, chunks = corpus
    info = DocumentInfo.of(chunks, docs)
    by_path = dict(zip(docs["path"].to_list(), docs["doc_id"].to_list(), strict=True))
    rst = next(d for p, d in by_path.items() if p.endswith(".rst"))
    txt = next(d for p, d in by_path.items() if p.endswith(".txt"))
    assert info.titles[rst] == TOP  # a heading: shown as written (no "---" or "." mangled)
    txt_title = docs.filter(pl.col("doc_id") == txt)["title"].item()
    assert info.titles[txt] == display_title(txt_title)  # plain text: as before
    assert not any(cid.split(":")[1] == txt for cid in info.sections)
    assert f"{TOP} › StreamHandler › Rotating files" in set(info.sections.values())


def _params(tmp: Path, model: str) -> Params:
    data = {
        "llm": {"model": model, "cache_dir": str(tmp / "cache"), "max_retries": 0,
                "metrics_dir": str(tmp / "metrics")},
        "chunkings": {"c64": {"size": 64, "overlap": 8}},
        "qagen": {"reference_chunking": "c64", "method": "answer_first", "n_items": 40,
                  "max_attempts": 40, "question_model": None, "answer_model": None,
                  "prompt_version": "v4-titled", "filter_prompt_version": "v1",
                  "filter_kinds": {"answerability": "answerability"},
                  "answer_first": {"extractor": "rules", "spans_per_chunk": 2,
                                   "fill_lower_tiers": True, "round_trip": "llm",
                                   "writer_tries": 1}},
    }  # fmt: skip
    return parse_params(data)


def test_rendered_docs_reach_the_writer_without_markup_and_spans_round_trip_scripted_model(
    corpus: tuple[Path, pl.DataFrame, pl.DataFrame], tmp_path: Path
) -> None:
    root, docs, chunks = corpus
    writer = prompt("qagen", "answer_first_question_system", "v4-titled", PROMPTS)
    asked: dict[str, str] = {}  # question -> span
    prompts: list[str] = []

    def reply(msgs: Messages) -> str:
        user = msgs[-1]["content"]
        if msgs[0]["content"] == writer:
            prompts.append(user)
            span = re.search(r"^Answer: (.+)$", user, re.M).group(1)  # type: ignore[union-attr]
            title = re.search(r"^Title: (.+)$", user, re.M).group(1)  # type: ignore[union-attr]
            question = f"What does {title.split(' › ')[-1]} name as item {len(asked)}?"
            asked[question] = span
            return question
        question = re.search(r"^Question: (.+)$", user, re.M).group(1)  # type: ignore[union-attr]
        return f"Answer: {asked.get(question, 'I do not know')}"

    with scripted_model("af-sections", reply) as m:
        params = _params(tmp_path, m.model)
        contexts = sample_contexts(chunks, docs, n=40, seed=0, stratify=True, min_tokens=1)
        spans = span_contexts(contexts, params.qagen, DocumentInfo.of(chunks, docs))
        gen = AnswerFirstGenerator(Gateway(params.llm, stage="qagen"), params, prompts_dir=PROMPTS)
        res = generate_qa(spans.frame, gen, lambda t: np.eye(max(len(t), 1), 64)[: len(t)])

    assert prompts and res.qa.height > 5
    titles = {re.search(r"^Title: (.+)$", u, re.M).group(1) for u in prompts}  # type: ignore[union-attr]
    assert f"{TOP} › StreamHandler" in titles  # the chunk's section after the page title
    for user in prompts:
        assert not ROLE.search(user) and not DIRECTIVE.search(user), user
    for q in res.qa["question"].to_list():
        assert not ROLE.search(q) and not DIRECTIVE.search(q)
    texts = dict(zip(docs["doc_id"].to_list(), docs.iter_rows(named=True), strict=True))
    for item in res.qa.iter_rows(named=True):
        doc = texts[item["doc_id"]]
        source = source_text((root / Path(doc["path"]).name).read_text("utf-8"))
        smap = SourceMap.of(segments_of(doc["source_map"]) or ())
        for a, b in ((item["char_start"], item["char_end"]),
                     (item["answer_start"], item["answer_end"])):  # fmt: skip
            assert roundtrip_misses(doc["text"], source, smap, a, b) == []
