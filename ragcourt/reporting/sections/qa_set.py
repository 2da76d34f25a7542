"""Report section: synthetic QA generation (budget, acceptance, the models of the three
roles, rejections by filter), from the QA summary; a bring-your-own QA file says so. A few
accepted questions are shown with their reference answer, chunk and section, so the question
set can be judged at a glance (text from documents and models: escaped by the templates)."""

from __future__ import annotations

from typing import Any

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import read_table
from ragcourt.qagen.summaries import ByoQASummary, QASummary
from ragcourt.reporting import plots
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Example, Section, Table, fmt, pct
from ragcourt.reporting.sections.common import note_missing

QA_EXAMPLES = 3
CHUNK_CHARS = 400


def _model_facts(s: QASummary | ByoQASummary) -> list[tuple[str, str]]:
    """The question / answer / filter models and the contexts' chunking of a generated set."""
    if not isinstance(s, QASummary):
        return []
    m = s.models
    roles = (("question", m.question), ("answer", m.answer), ("filter", m.filter))
    facts = [(f"{role} model", model) for role, model in roles if model]
    if s.reference_chunking:
        facts.append(("contexts from chunking", s.reference_chunking))
    return facts


def _one_line(text: Any, limit: int) -> str:
    """``text`` on one line (whitespace runs as one space), cut to ``limit`` characters."""
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _sections(art: Artifacts, chunking: str | None) -> dict[str, str]:
    """chunk_id -> section path of the reference chunking's chunks (empty when the table is
    absent, unreadable or written before chunks recorded sections)."""
    if not chunking:
        return {}
    path = art.root / catalog.path("chunks", chunking=chunking)
    try:
        if "section" not in pl.read_parquet_schema(path):
            return {}
        chunks = read_table(path, "chunks", columns=["chunk_id", "section"])
    except (OSError, RagcourtError, pl.exceptions.PolarsError):
        return {}
    return {c: s for c, s in chunks.iter_rows() if s is not None}


def accepted_examples(art: Artifacts, chunking: str | None) -> list[Example]:
    """The first :data:`QA_EXAMPLES` accepted questions by question id (a hash: an arbitrary,
    stable pick), each with its reference answer, section (``–`` without one) and chunk."""
    qa = art.table("qa")
    if qa is None or qa.is_empty():
        return []
    sections = _sections(art, chunking)
    picked = qa.sort("question_id").head(QA_EXAMPLES)
    out: list[Example] = []
    for r in picked.iter_rows(named=True):
        section = sections.get(r.get("source_chunk_id") or "", "–")
        how = [f"answer type {r['answer_type']}"] if r.get("answer_type") else []
        if r.get("roundtrip_f1") is not None:
            how.append(f"round-trip F1 {fmt(r['roundtrip_f1'])}")
        out.append(
            Example(
                title=str(r["question_id"]),
                fields=[
                    ("question", _one_line(r["question"], 300)),
                    ("reference", _one_line(" | ".join(r["reference_answers"] or []), 300)),
                    ("section", _one_line(section, 300)),
                    ("chunk", _one_line(r["context"], CHUNK_CHARS)),
                ],
                judgements=[],
                outcome="accepted" + (f" ({'; '.join(how)})" if how else ""),
            )
        )
    return out


def qa_generation(art: Artifacts) -> Section:
    """Generation figures and rejections (from the summary, else the ``qa_rejected`` table)."""
    sec = Section(
        "qa",
        "Synthetic QA generation",
        "Candidate questions pass answerability, faithfulness and relevance filters and a "
        "duplicate check; every rejected candidate is kept with the filter that rejected it.",
    )
    s = art.qa_summary()
    if s is None:
        return note_missing(sec, art, "qa_summary")
    sec.facts += [
        ("requested items", fmt(s.requested)),
        ("accepted items", fmt(s.accepted)),
        ("candidates generated", fmt(s.attempts)),
        ("acceptance rate", pct(s.acceptance_rate)),
        ("stopped because", s.stop_reason),
    ]
    sec.facts += _model_facts(s)
    sec.examples += accepted_examples(
        art, s.reference_chunking if isinstance(s, QASummary) else None
    )
    rejections = dict(s.rejections)
    if not rejections:
        rej = art.table("qa_rejected")
        if rej is not None and rej.height:
            rejections = dict(rej["failed_filter"].value_counts().iter_rows())
    if rejections:
        counts = {str(k): int(v) for k, v in rejections.items()}
        sec.tables.append(Table(["filter", "rejected"], [[k, fmt(v)] for k, v in counts.items()]))
        sec.figures.append(plots.counts_bar(counts, "Rejected candidates by filter", "candidates"))
    elif isinstance(s, ByoQASummary) and s.qa_file:
        sec.notes.append(f"QA items were supplied by the user ({s.qa_file}); none generated.")
    return sec
