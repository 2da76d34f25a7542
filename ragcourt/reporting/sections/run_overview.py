"""Report section: the run at a glance (best system, documents, QA items, systems, answers,
models, chunkings, embedders and the languages served)."""

from __future__ import annotations

from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Section, fmt
from ragcourt.reporting.params import ReportingView
from ragcourt.reporting.sections.common import ci_text, unranked


def overview(art: Artifacts, params: ReportingView) -> Section:
    """Counts of the run's inputs and outputs, its settings and the best system."""
    sec = Section("overview", "Run overview")
    docs, qa, answers = art.table("documents"), art.table("qa"), art.table("answers")
    sec.facts += [
        ("documents", fmt(docs.height) if docs is not None else "–"),
        ("QA items", fmt(qa.height) if qa is not None else "–"),
        ("systems", fmt(answers["system"].n_unique()) if answers is not None else "–"),
        ("answers", fmt(answers.height) if answers is not None else "–"),
        ("default LLM", params.llm.model),
        (
            "chunkings",
            ", ".join(f"{k} ({c.size}/{c.overlap})" for k, c in params.chunkings.items()),
        ),
        ("embedders", ", ".join(f"{k} ({e.model})" for k, e in params.embedders.items())),
    ]
    if docs is not None and "language" in docs.columns:
        from ragcourt.retrieval.language_serving import language_serving

        for row in language_serving(docs["language"].to_list(), params):
            sec.facts.append(
                (
                    f"language {row.label}",
                    f"{row.documents} documents; BM25 {row.bm25_tokenizer}; {row.embedders}",
                )
            )
    board = art.table("leaderboard")
    if board is not None and board.height and unranked(board):
        sec.facts.insert(0, ("best system", "none: no valid judgements"))
    elif board is not None and board.height:
        top = board.sort("rank").row(0, named=True)
        elo = ci_text(top["elo"], top["elo_lo"], top["elo_hi"])
        sec.facts.insert(0, ("best system", f"{top['system']} (Swiss Elo {elo})"))
    return sec
