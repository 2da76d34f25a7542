"""The report's sections, one builder per question the report answers.

Every builder takes :class:`~ragcourt.reporting.artifacts.Artifacts` (and params where needed)
and returns a :class:`Section`. A missing artifact becomes a note naming the file and the
stage that makes it; a builder never raises on missing or partial data.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from ragcourt.core.params import Params
from ragcourt.core.provenance import (
    NO_CONTEXTS_SUPPLIED,
    is_external,
    systems_without_contexts,
)
from ragcourt.judging.retrieval_skips import NO_RETRIEVAL_JUDGING, systems_without_passages
from ragcourt.reporting import plots
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.human_labels import human_labels
from ragcourt.reporting.model import Example, Judgement, Section, Table, fmt, pct

N_EXAMPLES = 4
RETRIEVAL_METRICS = ["R", "RR", "nDCG", "P", "Success"]


def _ci(mid: Any, lo: Any, hi: Any) -> str:
    if mid is None:
        return "–"
    if lo is None or hi is None:
        return fmt(mid)
    return f"{fmt(mid)} [{fmt(lo)}, {fmt(hi)}]"


VALIDITY_INTRO = (
    "Control systems of known quality check whether the judges can rank at all: the oracle "
    "(the chunks holding the answer's span) must beat random passages and closed book, and "
    "every system must beat shuffled answers (another question's answer). A pair is separated "
    "when the 95% bootstrap interval of its Elo gap (tournament) or accuracy difference (DAFE) "
    "excludes 0 in the expected direction. If the controls are not separated, the ranking of "
    "real systems is not evidence of a difference."
)


def _check_facts(name: str, check: dict[str, Any] | None) -> list[tuple[str, str]]:
    if check is None:
        return [(name, "not in summary.json (written before the check existed): re-run it")]
    if check.get("status") != "checked":
        return [(name, str(check.get("status")))]
    n = len(check.get("pairs") or [])
    text = (
        f"{check.get('separated', 0)} of {n} known pairs separated, "
        f"{check.get('reversed', 0)} reversed, {check.get('not_separated', 0)} not separated"
    )
    return [(name, text)]


def _known_pair(p: dict[str, Any]) -> tuple[str, str]:
    def one(system: str, kind: Any) -> str:
        return f"{system} (control: {kind})" if kind else system

    return one(p["better"], p.get("better_control")), one(p["worse"], p.get("worse_control"))


def validity(art: Artifacts) -> Section:
    """The discrimination check of the tournament and of DAFE (issue 13), first in the report."""
    sec = Section("validity", "Validity: do the judges separate known-better systems?")
    sec.intro = VALIDITY_INTRO
    ts, js = art.json("tournament_summary"), art.json("judge_summary")
    if ts is None and js is None:
        sec.notes += art.note("tournament_summary", "judge_summary")
        return sec
    t_check = ts.get("discrimination") if ts is not None else None
    d_check = js.get("discrimination") if js is not None else None
    if ts is not None:
        sec.facts += _check_facts("tournament (Swiss Elo)", t_check)
    if js is not None:
        sec.facts += _check_facts("DAFE accuracy", d_check)
    if t_check and t_check.get("status") == "checked":
        sec.facts.append(("smallest resolvable Elo gap", fmt(t_check.get("resolvable_elo_gap"))))
        rows = [
            [
                *_known_pair(p),
                pct(p.get("win_rate")),
                _ci(p.get("elo_gap"), p.get("elo_gap_lo"), p.get("elo_gap_hi")),
                str(p.get("verdict")),
            ]
            for p in t_check.get("pairs") or []
        ]
        sec.tables.append(
            Table(
                ["better", "worse", "judged win rate", "Elo gap [95% CI]", "verdict"],
                rows,
                "Tournament: pairs of known order (" + str(t_check.get("resolvable_note")) + ")",
            )
        )
    if d_check and d_check.get("status") == "checked":
        rows = [
            [
                *_known_pair(p),
                fmt(p.get("questions")),
                pct(p.get("accuracy_better")),
                pct(p.get("accuracy_worse")),
                _ci(p.get("difference"), p.get("difference_lo"), p.get("difference_hi")),
                str(p.get("verdict")),
            ]
            for p in d_check.get("pairs") or []
        ]
        sec.tables.append(
            Table(
                [
                    "better",
                    "worse",
                    "questions",
                    "accuracy (better)",
                    "accuracy (worse)",
                    "difference [95% CI]",
                    "verdict",
                ],
                rows,
                "DAFE: accuracy on the same questions (" + str(d_check.get("note")) + ")",
            )
        )
    bad = [
        p
        for c in (t_check, d_check)
        if c
        for p in c.get("pairs") or []
        if p.get("verdict") != "separated"
    ]
    if bad:
        sec.notes.append(
            f"{len(bad)} known pair(s) not separated or reversed: treat the ranking of real "
            "systems with gaps below these as noise."
        )
    return sec


def leaderboard(art: Artifacts) -> Section:
    sec = Section(
        "leaderboard",
        "Leaderboard",
        "Systems ranked by the DICE Swiss tournament (Elo after the Swiss rounds) with 95% "
        "bootstrap confidence intervals over questions, next to a Bradley-Terry fit on every "
        "judged pair. Overlapping intervals mean the data do not separate those systems.",
    )
    board = art.table("leaderboard")
    if board is None:
        sec.notes += art.note("leaderboard")
        return sec
    board = board.sort("rank")
    summ = art.table("system_summary")
    acc: dict[str, tuple[Any, Any]] = {}
    if summ is not None:
        acc = {
            r["system"]: (r["accuracy"], r["correctness_mean"]) for r in summ.iter_rows(named=True)
        }
    else:
        sec.notes += art.note("system_summary")
    external, no_contexts = _external_systems(art)
    rows = []
    for r in board.iter_rows(named=True):
        a, c = acc.get(r["system"], (None, None))
        rows.append(
            [
                str(r["rank"]) if r["rank"] is not None else "–",
                r["system"]
                + (" (external)" if r["system"] in external else "")
                + (f" (control: {r['control']})" if r.get("control") else ""),
                _ci(r["elo"], r["elo_lo"], r["elo_hi"]),
                _ci(r["bt"], r["bt_lo"], r["bt_hi"]),
                f"{r['wins']}/{r['ties']}/{r['losses']}",
                fmt(r["matches"]),
                fmt(r.get("elo_rr")),
                pct(a),
                fmt(c),
            ]
        )
    sec.tables.append(
        Table(
            [
                "rank",
                "system",
                "Swiss Elo [95% CI]",
                "Bradley-Terry [95% CI]",
                "W/T/L",
                "matches",
                "round-robin Elo",
                "DAFE accuracy",
                "mean correctness",
            ],
            rows,
        )
    )
    sec.figures.append(plots.leaderboard(board))
    if unranked(board):
        sec.notes.insert(0, NO_VALID_JUDGEMENTS_NOTE)
    not_judged = retrieval_not_judged(art)
    if not_judged:
        named = ", ".join(
            f"{s} ({NO_CONTEXTS_SUPPLIED})" if s in no_contexts else s for s in not_judged
        )
        sec.notes.append(
            f"{named}: {NO_RETRIEVAL_JUDGING} - their passage relevance, UDCG and retrieval "
            "metrics are not available (not zero)."
        )
    summary = art.json("tournament_summary")
    if summary is not None:
        sec.facts += [
            ("pairwise judge", str(summary.get("judge", "–"))),
            ("correctness from", _correctness_source(art)),
            ("questions per match", fmt(summary.get("n_questions"))),
            ("bootstrap replicates", fmt((summary.get("bootstrap") or {}).get("replicates"))),
        ]
    return sec


def swiss_cost(art: Artifacts) -> Section:
    sec = Section(
        "swiss",
        "Swiss vs round-robin cost",
        "The Swiss tournament pairs systems of similar Elo each round instead of playing every "
        "pair. Kendall τ-b compares its ranking with the exhaustive round-robin's on the same "
        "pairwise judge.",
    )
    s = art.json("tournament_summary")
    if s is None:
        sec.notes += art.note("tournament_summary")
        return sec
    sw, rr = s.get("swiss") or {}, s.get("round_robin") or {}
    sec.tables.append(
        Table(
            ["", "Swiss", "round-robin"],
            [
                ["rounds", fmt(sw.get("rounds")), "–"],
                ["matches", fmt(sw.get("matches")), fmt(rr.get("matches"))],
                ["judge calls", fmt(sw.get("judge_calls")), fmt(rr.get("judge_calls"))],
                [
                    "failed judgements",
                    fmt(sw.get("error_judgements")),
                    fmt(rr.get("error_judgements")),
                ],
                [
                    "ranking",
                    " > ".join(sw.get("ranking") or []) or "–",
                    " > ".join(rr.get("ranking") or []) or "–",
                ],
            ],
        )
    )
    sec.facts += [
        ("systems", fmt(s.get("n_systems"))),
        ("matches saved by Swiss", pct(s.get("swiss_saving"))),
        ("Kendall τ-b, Swiss Elo vs round-robin BT", _tau(s.get("kendall_swiss_vs_rr"))),
        ("Kendall τ-b, Swiss Elo vs round-robin Elo", _tau(s.get("kendall_swiss_vs_rr_elo"))),
        (
            "judge calls executed (memoised over both tournaments)",
            fmt(s.get("judge_calls_executed")),
        ),
        ("judge call unit", str(s.get("judge_call_unit", "–"))),
    ]
    if not rr.get("enabled", True):
        sec.notes.append(
            "Round-robin was not run (tournament.round_robin: false); its cost is "
            "the N(N-1)/2 matches it would need."
        )
    sec.figures.append(plots.swiss_vs_round_robin(s))
    return sec


def dafe(art: Artifacts) -> Section:
    sec = Section(
        "dafe",
        "DAFE judging: agreement and arbitration",
        "Two primary judges give a verdict on each (system, question); the arbitrator is called "
        "only when they disagree and the final verdict is the majority of three.",
    )
    js = art.json("judge_summary")
    if js is None:
        sec.notes += art.note("judge_summary")
        return sec
    d = js.get("dafe") or {}
    sec.facts += [
        ("primary judges", ", ".join(d.get("primaries") or []) or "–"),
        ("arbitrator", str(d.get("arbitrator", "–"))),
        ("answers judged", fmt(d.get("items"))),
        ("final verdicts", fmt(d.get("final_verdicts"))),
        ("error rows (no verdict)", fmt(d.get("error_rows"))),
        ("disagreement rate", pct(d.get("disagreement_rate"))),
        ("arbitrator calls", fmt(d.get("arbitrator_calls"))),
        (
            "judge calls (DAFE / always three)",
            f"{fmt(d.get('judge_calls'))} / {fmt(d.get('judge_calls_always_three'))}",
        ),
        (
            "judge calls saved",
            f"{fmt(d.get('judge_calls_saved'))} ({pct(d.get('judge_calls_saved_fraction'))})",
        ),
        (
            "LLM judge calls (DAFE / always three)",
            f"{fmt(d.get('llm_judge_calls'))} / {fmt(d.get('llm_judge_calls_always_three'))}",
        ),
    ]
    per_judge = d.get("per_judge") or {}
    if per_judge:
        sec.tables.append(
            Table(
                ["judge", "verdicts", "agreement with final"],
                [
                    [j, fmt(v.get("n")), pct(v.get("agreement_with_final"))]
                    for j, v in per_judge.items()
                ],
                "Each judge's agreement with the final DAFE verdict",
            )
        )
    acc = js.get("accuracy_per_system") or {}
    if acc:
        sec.tables.append(
            Table(
                ["system", "DAFE accuracy"],
                [[s, pct(v)] for s, v in sorted(acc.items(), key=lambda kv: -(kv[1] or 0))],
            )
        )
    sec.figures.append(plots.dafe(d))
    return sec


def retrieval_intro(params: Params) -> str:
    """The retrieval section's text: the relevance rule, and the bias of span-based recall
    across chunk sizes (a generated question's span is a whole reference chunk)."""
    rule = params.retrieval.relevance
    ref = params.qagen.reference_chunking
    ref_size = params.chunkings[ref].size if ref in params.chunkings else None
    size = f"{ref_size}-token " if ref_size else ""
    return (
        "Mean over the QA questions of each metric at the chosen cutoff, per chunking, "
        "embedder and retriever. A chunk is relevant when it overlaps the question's "
        f"ground-truth document span (it holds >= {rule.min_span_coverage:.0%} of the span, "
        f"or the span covers >= {rule.min_chunk_coverage:.0%} of the chunk; spec §1), so "
        "systems that chunk differently can be scored on the same questions. Caveat: a "
        f"generated question's span is a whole {size}chunk of the reference chunking ({ref}). "
        "Under a smaller chunking that span covers several chunks, each of them relevant "
        "(about 2 at half the size), so Recall@k is capped at min(k, n) / n for n relevant chunks "
        "(Recall@1 near 0.5) and Precision@k is inflated, while a larger chunking has about "
        "one relevant chunk. Compare chunk sizes by MRR@k and Hits@k, which need only one "
        "relevant chunk in the top k; compare Recall and Precision only within a chunk size."
    )


def retrieval(art: Artifacts, params: Params) -> Section:
    sec = Section("retrieval", "Retrieval metrics vs chunk size", retrieval_intro(params))
    s = art.table("retrieval_summary")
    if s is None:
        sec.notes += art.note("retrieval_summary")
        return sec
    ks = sorted(k for k in s["k"].unique().to_list() if k is not None)
    if not ks:
        sec.notes.append("The retrieval summary has no cutoff-based measures.")
        return sec
    k = 5 if 5 in ks else ks[len(ks) // 2]
    metrics = [m for m in RETRIEVAL_METRICS if s.filter(pl.col("metric") == m).height]
    if s["chunk_size"].n_unique() < 2:
        sec.notes.append(
            "Only one chunk size was evaluated: add chunkings to params.yaml or run a sweep "
            "(see the README's Sweeps section) to see a trend."
        )
    if metrics:
        sec.figures.append(plots.retrieval_vs_chunk_size(s, k, metrics))
    wide = (
        s.filter(pl.col("k") == k)
        .with_columns(pl.col("embedder").fill_null("–"))
        .pivot(
            on="metric", index=["chunking", "chunk_size", "embedder", "retriever"], values="value"
        )
        .sort(["chunk_size", "embedder", "retriever"])
    )
    cols = ["chunking", "chunk_size", "embedder", "retriever", *[m for m in metrics if m in wide]]
    wide = wide.select(cols).rename({m: f"{plots.METRIC_TITLES.get(m, m)}@{k}" for m in metrics})
    sec.tables.append(Table.from_frame(wide, f"Means over questions at cutoff {k}"))
    n = s["n_queries"].max()
    sec.facts.append(("questions evaluated", fmt(n)))
    unevaluable = (
        s.group_by("chunking")
        .agg(pl.col("n_unevaluable").max())
        .filter(pl.col("n_unevaluable") > 0)
        .sort("chunking")
    )
    if unevaluable.height:
        sec.facts.append(
            (
                "questions with no relevant chunk (left out of the means)",
                ", ".join(f"{c}: {n}" for c, n in unevaluable.iter_rows()),
            )
        )
    return sec


def udcg_correlation(art: Artifacts) -> Section:
    sec = Section(
        "udcg",
        "Which retrieval metric predicts correct answers?",
        "Spearman and Kendall τ-b correlation, over (system, question) pairs, of each retrieval "
        "metric with the end-to-end answer correctness (the UDCG paper's table, on your data). "
        "SE = sqrt((1 + ρ²/2)/(n − 3)).",
    )
    sec.facts.append(("correctness from", _correctness_source(art)))
    not_judged = retrieval_not_judged(art)
    if not_judged:
        sec.facts.append(("no retrieval judging", ", ".join(not_judged)))
        sec.notes.append(
            f"{', '.join(not_judged)}: {NO_RETRIEVAL_JUDGING}; their (system, question) pairs "
            "are not in these correlations."
        )
    sec.notes += grading_fallback_notes(art.json("judge_summary"))
    corr = art.table("metric_correlation")
    if corr is None:
        sec.notes += art.note("metric_correlation")
        return sec
    target = corr.filter(pl.col("target") == "correctness")
    if target.is_empty():
        target = corr
        sec.notes.append("No correlations against 'correctness'; showing every target.")
    sec.tables.append(
        Table.from_frame(
            target.sort("spearman", descending=True, nulls_last=True).select(
                "label", "target", "n", "spearman", "spearman_se", "kendall_tau_b", "kendall_se"
            )
        )
    )
    if target["spearman"].drop_nulls().len():
        sec.figures.append(plots.metric_correlation(target))
    else:
        sec.notes.append("Every correlation is undefined (constant scores or too few pairs).")
    return sec


def grading_fallback_notes(js: dict[str, Any] | None) -> list[str]:
    """One caveat per judge column graded partly from floors or fallbacks (judge summary's
    ``grading_fallbacks``): count, share and methods of its rows."""
    notes = []
    for col, f in ((js or {}).get("grading_fallbacks") or {}).items():
        if f.get("fallback_rows"):
            methods = ", ".join(f"{m} {n}" for m, n in (f.get("methods") or {}).items())
            notes.append(
                f"{col}: {fmt(f['fallback_rows'])} of {fmt(f.get('rows'))} rows "
                f"({pct(f.get('share'))}) were graded from floors or fallbacks, not exact "
                f"label probabilities ({methods})."
            )
    return notes


def qa_generation(art: Artifacts) -> Section:
    sec = Section(
        "qa",
        "Synthetic QA generation",
        "Candidate questions pass answerability, faithfulness and relevance filters and a "
        "duplicate check; every rejected candidate is kept with the filter that rejected it.",
    )
    s = art.json("qa_summary")
    if s is None:
        sec.notes += art.note("qa_summary")
        return sec
    sec.facts += [
        ("requested items", fmt(s.get("requested"))),
        ("accepted items", fmt(s.get("accepted"))),
        ("candidates generated", fmt(s.get("attempts"))),
        ("acceptance rate", pct(s.get("acceptance_rate"))),
        ("stopped because", str(s.get("stop_reason", "–"))),
    ]
    models = s.get("models") or {}  # qagen.build_summary: {"question", "answer", "filter"}
    for role in ("question", "answer", "filter"):
        model = models.get(role) if isinstance(models, dict) else None
        if model:
            sec.facts.append((f"{role} model", str(model)))
    if s.get("reference_chunking"):
        sec.facts.append(("contexts from chunking", str(s["reference_chunking"])))
    rejections = s.get("rejections") or {}
    if not rejections:
        rej = art.table("qa_rejected")
        if rej is not None and rej.height:
            rejections = dict(rej["failed_filter"].value_counts().iter_rows())
    if rejections:
        counts = {str(k): int(v) for k, v in rejections.items()}
        sec.tables.append(Table(["filter", "rejected"], [[k, fmt(v)] for k, v in counts.items()]))
        sec.figures.append(plots.counts_bar(counts, "Rejected candidates by filter", "candidates"))
    elif s.get("qa_file"):
        sec.notes.append(f"QA items were supplied by the user ({s['qa_file']}); none generated.")
    return sec


def model_usage(art: Artifacts) -> Section:
    sec = Section(
        "calls",
        "Model calls and cost",
        "Per stage and model as the LLM gateway counted them: requests, disk-cache hits, real "
        "model calls (retries included), tokens of real calls, model time and cost (0 for "
        "the local model).",
    )
    metrics = art.llm_metrics()
    if not metrics:
        sec.notes.append(
            f"Not available: no {art.metrics_dir}/llm_*.json (written by every stage "
            "that calls a model)."
        )
        return sec
    rows, bars = [], []
    tot_cost = 0.0
    for m in metrics:
        stage = str(m.get("stage"))
        models = m.get("models") or {}
        for name, c in models.items():
            rows.append(
                [
                    stage,
                    name,
                    fmt(c.get("requests")),
                    fmt(c.get("cache_hits")),
                    fmt(c.get("model_calls")),
                    fmt(c.get("errors")),
                    fmt(c.get("prompt_tokens")),
                    fmt(c.get("completion_tokens")),
                    fmt(c.get("model_time_s"), 1),
                    f"${float(c.get('cost_usd') or 0):.4f}",
                ]
            )
            tot_cost += float(c.get("cost_usd") or 0)
        total = m.get("total") or {}
        bars.append((stage, int(total.get("model_calls") or 0), int(total.get("cache_hits") or 0)))
    sec.tables.append(
        Table(
            [
                "stage",
                "model",
                "requests",
                "cache hits",
                "model calls",
                "errors",
                "prompt tok",
                "completion tok",
                "model s",
                "cost",
            ],
            rows,
        )
    )
    sec.facts.append(("total cost", f"${tot_cost:.4f}"))
    if bars:
        sec.figures.append(plots.model_calls(bars))
    sec.notes.append(
        "A re-run with unchanged inputs is served from the cache: its model calls are 0 and the "
        "counts above describe the latest run of each stage."
    )
    return sec


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


def examples(art: Artifacts) -> Section:
    sec = Section(
        "examples",
        "Example judgements",
        "A few answers with every judge's verdict and reasoning (an arbitrated case first when "
        "there is one), and pairwise tournament judgements with the judge's analysis.",
    )
    v, answers, qa = art.table("verdicts"), art.table("answers"), art.table("qa")
    if v is None or v.is_empty():
        sec.notes += art.note("verdicts") or ["No verdict rows to show."]
    else:
        qa_map = {r["question_id"]: r for r in qa.iter_rows(named=True)} if qa is not None else {}
        ans_map = (
            {(r["system"], r["question_id"]): r for r in answers.iter_rows(named=True)}
            if answers is not None
            else {}
        )
        for r in _pick_verdict_examples(v).iter_rows(named=True):
            q = qa_map.get(r["question_id"], {})
            a = ans_map.get((r["system"], r["question_id"]), {})
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
            sec.examples.append(
                Example(
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
            )
    pw = art.table("pairwise")
    if pw is None:
        sec.notes += art.note("pairwise")
        return sec
    ok = pw.filter(pl.col("error").is_null())
    qa_text = dict(qa.select("question_id", "question").iter_rows()) if qa is not None else {}
    for r in ok.sort("margin", descending=True).head(2).iter_rows(named=True):
        question = qa_text.get(r["question_id"], r["question_id"])
        sec.examples.append(
            Example(
                title=f"{r['system_a']} vs {r['system_b']} · {r['question_id']}",
                fields=[("question", _short(question))],
                judgements=[
                    Judgement(
                        judge=f"{r['judge']} (A={r['system_a']} shown first)",
                        verdict=_pair_label(r["p_ab_a"], r["p_ab_b"], r["p_ab_tie"]),
                        detail=_probs(r["p_ab_a"], r["p_ab_b"], r["p_ab_tie"]),
                        reasoning=_short(r.get("rationale_ab")),
                    ),
                    Judgement(
                        judge=f"{r['judge']} (B={r['system_b']} shown first)",
                        verdict=_pair_label(r["p_ba_a"], r["p_ba_b"], r["p_ba_tie"]),
                        detail=_probs(r["p_ba_a"], r["p_ba_b"], r["p_ba_tie"]),
                        reasoning=_short(r.get("rationale_ba")),
                    ),
                ],
                outcome=(
                    f"combined P(A)={fmt(r['p_a'])}, P(B)={fmt(r['p_b'])}, "
                    f"P(tie)={fmt(r['p_tie'])}; margin {fmt(r['margin'])} → {r['scheme']} "
                    f"score {fmt(r['score_a'])} : {fmt(r['score_b'])}"
                ),
            )
        )
    return sec


def _probs(a: Any, b: Any, t: Any) -> str:
    return f"P(A)={fmt(a)} P(B)={fmt(b)} P(tie)={fmt(t)}"


def _pair_label(a: Any, b: Any, t: Any) -> str:
    vals = {"A better": a, "B better": b, "tie": t}
    vals = {k: v for k, v in vals.items() if v is not None and not math.isnan(v)}
    return max(vals, key=lambda k: vals[k]) if vals else "–"


def overview(art: Artifacts, params: Params) -> Section:
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
        elo = _ci(top["elo"], top["elo_lo"], top["elo_hi"])
        sec.facts.insert(0, ("best system", f"{top['system']} (Swiss Elo {elo})"))
    return sec


NO_VALID_JUDGEMENTS_NOTE = (
    "No valid judgements: every pairwise judgement failed (see the tournament's error rows), "
    "so no system is ranked and none is the best."
)


def unranked(board: pl.DataFrame) -> bool:
    """A leaderboard without ranks: the tournament had no valid judgement."""
    return bool(board["rank"].is_null().all())


def retrieval_not_judged(art: Artifacts) -> list[str]:
    """Systems whose retrieval was not judged (no passages at all): the judge summary's
    ``retrieval_not_judged``, else the same rule on the answers table."""
    listed = (art.json("judge_summary") or {}).get("retrieval_not_judged")
    if listed:
        return list(listed)
    answers = art.table("answers")
    return systems_without_passages(answers) if answers is not None else []


def _external_systems(art: Artifacts) -> tuple[set[str], list[str]]:
    """Systems whose answers came from outside ragcourt (answers file, callable, HTTP), and
    those of them that supplied no contexts."""
    answers = art.table("answers")
    if answers is None:
        return set(), []
    ext = answers.filter(is_external())["system"].unique().to_list()
    return set(ext), systems_without_contexts(answers)


def build_sections(art: Artifacts, params: Params) -> list[Section]:
    return [
        validity(art),
        overview(art, params),
        leaderboard(art),
        human_labels(art),
        swiss_cost(art),
        dafe(art),
        retrieval(art, params),
        udcg_correlation(art),
        qa_generation(art),
        model_usage(art),
        examples(art),
    ]


def _tau(value: Any) -> str:
    """``{"tau_b", "p_value"}`` as "0.667 (p 0.17)"; undefined (a constant ranking, e.g. all
    systems tied) as "undefined (tied ratings)"."""
    if not isinstance(value, dict):
        return fmt(value)
    tau = value.get("tau_b")
    if tau is None:
        return "undefined (tied ratings)"
    p = value.get("p_value")
    return f"{fmt(tau)} (p {fmt(p)})" if p is not None else fmt(tau)


def _correctness_source(art: Artifacts) -> str:
    """How per-answer correctness was scored (judge summary): mode and model or judge."""
    c = (art.json("judge_summary") or {}).get("correctness") or {}
    if not c:
        return "–"
    return f"{c.get('mode', 'rubric')}: {c.get('model', '–')}"
