"""Report section: example judgements (a few answers with every DAFE judge's verdict and
reasoning, an arbitrated case first, and the pairwise judgements with the largest margins),
from ``verdicts``, ``answers``, ``qa`` and ``pairwise``."""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Example, Judgement, Section, fmt
from ragcourt.reporting.sections.common import note_missing

N_EXAMPLES = 4


def _short(text: Any, limit: int = 600) -> str:
    s = "" if text is None else str(text).strip()
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _verdict(v: Any) -> str:
    return "–" if v is None else ("correct" if v else "incorrect")


def _pick_verdict_examples(v: pl.DataFrame) -> pl.DataFrame:
    """Up to N_EXAMPLES rows covering: arbitrated, agreed correct, agreed incorrect, error."""
    picks: list[pl.DataFrame] = []
    for cond in (
        pl.col("arbitrator_called").fill_null(False),
        (pl.col("agree").fill_null(False)) & pl.col("final_verdict").fill_null(False),
        (pl.col("agree").fill_null(False)) & ~pl.col("final_verdict").fill_null(True),
        pl.col("error").is_not_null(),
    ):
        hit = v.filter(cond).head(1)
        if hit.height:
            picks.append(hit)
    out = pl.concat(picks).unique(["system", "question_id"], maintain_order=True) if picks else v
    return out.head(N_EXAMPLES)


def _verdict_example(r: dict[str, Any], q: dict[str, Any], a: dict[str, Any]) -> Example:
    """One verdicts row ``r`` with its question ``q`` and answer ``a``: every judge that ran."""
    judgements = []
    for role in ("primary1", "primary2", "arbitrator"):
        if r.get(f"{role}_judge") is None:
            continue
        err = r.get(f"{role}_error")
        judgements.append(
            Judgement(
                judge=f"{r[f'{role}_judge']} ({role})",
                verdict="error" if err else _verdict(r.get(f"{role}_verdict")),
                detail=f"score {fmt(r.get(f'{role}_score'))}",
                reasoning=_short(err or r.get(f"{role}_justification")),
            )
        )
    return Example(
        title=f"{r['system']} · {r['question_id']}",
        fields=[
            ("question", _short(q.get("question"))),
            ("reference", _short(" | ".join(q.get("reference_answers") or []))),
            ("answer", _short(a.get("answer"))),
        ],
        judgements=judgements,
        outcome=(
            f"final: {_verdict(r['final_verdict'])} ({r.get('resolution') or '–'})"
            + (f"; error: {r['error']}" if r.get("error") else "")
        ),
    )


def _verdict_examples(art: Artifacts, v: pl.DataFrame) -> list[Example]:
    answers, qa = art.table("answers"), art.table("qa")
    qa_map = {r["question_id"]: r for r in qa.iter_rows(named=True)} if qa is not None else {}
    ans_map = (
        {(r["system"], r["question_id"]): r for r in answers.iter_rows(named=True)}
        if answers is not None
        else {}
    )
    return [
        _verdict_example(
            r,
            qa_map.get(r["question_id"], {}),
            ans_map.get((r["system"], r["question_id"]), {}),
        )
        for r in _pick_verdict_examples(v).iter_rows(named=True)
    ]


def _order_judgement(r: dict[str, Any], order: str) -> Judgement:
    """The judgement of presentation order ``order`` ("ab": A shown first, "ba": B first)."""
    first = f"A={r['system_a']}" if order == "ab" else f"B={r['system_b']}"
    a, b, tie = r[f"p_{order}_a"], r[f"p_{order}_b"], r[f"p_{order}_tie"]
    return Judgement(
        judge=f"{r['judge']} ({first} shown first)",
        verdict=_pair_label(a, b, tie),
        detail=_probs(a, b, tie),
        reasoning=_short(r.get(f"rationale_{order}")),
    )


def _pairwise_example(r: dict[str, Any], question: str) -> Example:
    return Example(
        title=f"{r['system_a']} vs {r['system_b']} · {r['question_id']}",
        fields=[("question", _short(question))],
        judgements=[_order_judgement(r, "ab"), _order_judgement(r, "ba")],
        outcome=(
            f"combined P(A)={fmt(r['p_a'])}, P(B)={fmt(r['p_b'])}, "
            f"P(tie)={fmt(r['p_tie'])}; margin {fmt(r['margin'])} → {r['scheme']} "
            f"score {fmt(r['score_a'])} : {fmt(r['score_b'])}"
        ),
    )


def examples(art: Artifacts) -> Section:
    """Up to :data:`N_EXAMPLES` verdict examples and the two clearest pairwise judgements."""
    sec = Section(
        "examples",
        "Example judgements",
        "A few answers with every judge's verdict and reasoning (an arbitrated case first when "
        "there is one), and pairwise tournament judgements with the judge's analysis.",
    )
    v = art.table("verdicts")
    if v is None or v.is_empty():
        sec.notes += art.note("verdicts") or ["No verdict rows to show."]
    else:
        sec.examples += _verdict_examples(art, v)
    pw = art.table("pairwise")
    if pw is None:
        return note_missing(sec, art, "pairwise")
    ok = pw.filter(pl.col("error").is_null())
    qa = art.table("qa")
    qa_text = dict(qa.select("question_id", "question").iter_rows()) if qa is not None else {}
    for r in ok.sort("margin", descending=True).head(2).iter_rows(named=True):
        sec.examples.append(_pairwise_example(r, qa_text.get(r["question_id"], r["question_id"])))
    return sec


def _probs(a: Any, b: Any, t: Any) -> str:
    return f"P(A)={fmt(a)} P(B)={fmt(b)} P(tie)={fmt(t)}"


def _pair_label(a: Any, b: Any, t: Any) -> str:
    vals = {"A better": a, "B better": b, "tie": t}
    vals = {k: v for k, v in vals.items() if v is not None and not math.isnan(v)}
    return max(vals, key=lambda k: vals[k]) if vals else "–"
