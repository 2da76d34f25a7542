"""The markdown tables the meta-evaluation prints."""

from __future__ import annotations

from benchmarks.meta_eval.results import GapPoint, GoldMetaEval, MetaEval
from benchmarks.meta_eval.systems import CURVE_PAIRS, LADDER, NONE
from ragcourt.calibration import gold_squad as gs


def _fmt_point(pt: GapPoint) -> str:
    ci = "n/a" if pt.lo is None else f"[{pt.lo:.0f}, {pt.hi:.0f}]"
    return f"{'yes' if pt.separated else 'no'} {pt.elo_gap:+.0f} {ci}"


def markdown(res: MetaEval) -> str:
    """Two tables: the order measures and the question curve per configuration."""
    origin = (
        f"hand-written ({res.qa_source})"
        if res.qa_source
        else f"synthetic, from {res.qagen_attempts} attempts"
    )
    lines = [
        f"corpus {res.corpus} ({res.documents} docs), {res.qa_items} QA items {origin}, "
        f"answers by {res.generation_model}",
        "",
        "| configuration | judge model | Q | pairwise acc. | τ-b ladder | Elo oracle / dense / "
        "random / shuffled / none | judge calls (executed) | wall s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in res.configs:
        elos = " / ".join(f"{c.elo.get(s, float('nan')):.0f}" for s in (*LADDER, NONE))
        tau = "n/a" if c.kendall_tau_b is None else f"{c.kendall_tau_b:.2f}"
        lines.append(
            f"| {c.name} | {c.judge_model} | {c.questions} | {c.pairwise_accuracy:.2f} "
            f"({sum(c.pairs.values())}/{len(c.pairs)}) | {tau} | {elos} | "
            f"{c.calls.requests} ({c.calls.model_calls}) | {c.wall_s:.0f} |"
        )
    ns = sorted({pt.questions for c in res.configs for pt in c.curve})
    lines += [
        "",
        "Separated? Elo gap [95% bootstrap CI] on n questions:",
        "",
        "| configuration | pair | " + " | ".join(f"n={n}" for n in ns) + " |",
        "|---|---|" + "---|" * len(ns),
    ]
    for c in res.configs:
        for good, bad in CURVE_PAIRS:
            by_n = {pt.questions: pt for pt in c.curve if (pt.better, pt.worse) == (good, bad)}
            cells = [_fmt_point(by_n[n]) if n in by_n else "–" for n in ns]
            lines.append(f"| {c.name} | {good} > {bad} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _f(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def _scores_table(res: GoldMetaEval) -> list[str]:
    """The run's one-line summary, then the true scores with each configuration's Elo."""
    g = res.qagen
    lines = [
        f"SQuAD v1.1 train ({res.squad_sha256[:12]}), seed {res.seed}: {len(res.articles)} "
        f"articles ({', '.join(res.articles)}), {res.paragraphs} paragraphs, one document per "
        f"article; {res.human_questions} human questions; generated: {g.accepted} accepted of "
        f"{g.attempts} attempts ({g.stop_reason}) by {g.model}; answers by "
        f"{res.generation_model} (strong generator: {res.strong_model})",
        "",
        "| system | kind | EM | F1 | contains | abstained | errors | "
        + " | ".join(f"Elo {c.name}" for c in res.configs)
        + " |",
        "|---|---|---|---|---|---|---|" + "---|" * len(res.configs),
    ]
    for s in sorted(res.true_scores, key=lambda s: -s.f1):
        elos = " | ".join(f"{c.elo[s.system]:.0f}" if s.system in c.elo else "–"
                          for c in res.configs)  # fmt: skip
        lines.append(
            f"| {s.system} | {s.control or 'real'} | {s.em:.3f} | {s.f1:.3f} | {s.contains:.3f} "
            f"| {s.abstained}/{s.questions} | {s.errors} | {elos}{' |' if res.configs else ''}"
        )
    return lines


def _agreement_table(res: GoldMetaEval) -> list[str]:
    """τ-b and pairwise agreement of Elo with the truth, with and without the controls."""
    sig = [t for t in res.truth_pairs if t.significant]
    lines = [
        "",
        f"Human-F1 order significant (paired bootstrap over the {res.human_questions} human "
        f"questions, 95%) for {len(sig)} of {len(res.truth_pairs)} pairs.",
        "",
        "| configuration | Q gen | truth | τ-b all | pairs all | τ-b no controls | "
        "pairs no controls | τ-b significant (all) | τ-b significant (no controls) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for a_all in [a for a in res.agreement if a.controls]:
        a_real = next(a for a in res.agreement if not a.controls and a.config == a_all.config
                      and a.questions == a_all.questions and a.truth == a_all.truth)  # fmt: skip
        sig_cells = [
            "–" if a.significant_pairs is None
            else f"{_f(a.significant_tau_b)} ({a.significant_agree}/{a.significant_pairs})"
            for a in (a_all, a_real)
        ]  # fmt: skip
        lines.append(
            f"| {a_all.config} | {a_all.questions} | {a_all.truth} | {_f(a_all.kendall_tau_b)} | "
            f"{_f(a_all.pairwise_agreement)} ({a_all.pairs_agree}/{a_all.pairs}) | "
            f"{_f(a_real.kendall_tau_b)} | {_f(a_real.pairwise_agreement)} "
            f"({a_real.pairs_agree}/{a_real.pairs}) | {sig_cells[0]} | {sig_cells[1]} |"
        )
    return lines


def _gap_table(res: GoldMetaEval) -> list[str]:
    """The Elo gaps of each configuration's curve with their intervals."""
    lines = ["", "| configuration | Q gen | better | worse | Elo gap [95% CI] | separated |",
              "|---|---|---|---|---|---|"]  # fmt: skip
    for c in res.configs:
        for pt in c.curve:
            ci = "n/a" if pt.lo is None else f"[{pt.lo:.0f}, {pt.hi:.0f}]"
            lines.append(
                f"| {c.name} | {pt.questions} | {pt.better} | {pt.worse} | "
                f"{pt.elo_gap:+.0f} {ci} | {'yes' if pt.separated else 'no'} |"
            )
    return lines


def _questions_table(res: GoldMetaEval) -> list[str]:
    """How the human and the generated questions read, against their sources."""
    h, gq = res.question_stats["human"], res.question_stats["generated"]
    lines = [
        "",
        "| questions | n | tokens (median) | answer tokens (median) | overlap with source | "
        + " / ".join((*gs.QUESTION_WORDS, "other"))
        + " |",
        "|---|---|---|---|---|---|",
    ]
    named = [
        ("human (SQuAD)", h),
        *((k, v) for k, v in res.question_stats.items() if k.startswith("human vs ")),
        ("generated", gq),
    ]
    for name, st in named:
        shares = " / ".join(f"{st.question_words.get(w, 0):.2f}"
                            for w in (*gs.QUESTION_WORDS, "other"))  # fmt: skip
        lines.append(
            f"| {name} | {st.questions} | {_f(st.mean_question_tokens, 1)} "
            f"({_f(st.median_question_tokens, 1)}) | {_f(st.mean_answer_tokens, 1)} "
            f"({_f(st.median_answer_tokens, 1)}) | {_f(st.mean_source_overlap)} | {shares} |"
        )
    lines += [
        "",
        "(tokens: \\w+ words; overlap: share of a question's content words found in its source: "
        + "; ".join(f"{name}: {st.source}" for name, st in named)
        + ")",
    ]
    return lines


def gold_markdown(res: GoldMetaEval) -> str:
    """True scores with each configuration's Elo, the agreement table, the question table."""
    tables = (_scores_table, _agreement_table, _gap_table, _questions_table)
    return "\n".join(line for table in tables for line in table(res))
