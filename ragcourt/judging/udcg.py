"""UDCG (spec §5, seed 002): utility- and distraction-aware cumulative gain.

Per passage p of question q: u(q,p) = R(q,p)·(1 − P(NO-RESPONSE | q, p)), where R = +1 if
the passage is relevant (RAGElo grade >= ``relevance_threshold``, default 1 = somewhat or
very relevant) and −1 otherwise, and P is the full-vocabulary probability of the first
token of "NO-RESPONSE" at the first answer position when the model sees only that passage
(``Gateway.next_token_probs(..., candidates=["NO-RESPONSE"]).raw``). The prompt
(``udcg_system``/``udcg_user`` in configs/prompts/judge.yaml) repeats the generators'
instruction: answer only from the document, else reply NO-RESPONSE (from v2 the question
and passage are fenced data, question first so the passage varies last). One reader model
(``judge.udcg.model``, default ``llm.model``) scores every system, so UDCG compares the
retrieval of systems on the same scale even when their generators differ. ``p_method`` names
how each P was read (:mod:`ragcourt.llm.grading_methods`): a hosted model whose top logprobs
miss "NO" is asked "Would your answer be "NO-RESPONSE"?" (``label_probe``, P(yes)) instead
of taking the smallest listed probability.

Per context of n passages (the system's top ``k``, n <= k):
UDCG = σ((1/n)·Σ u⁺ + (γ/n)·Σ u⁻), u⁺ = max(u, 0), u⁻ = min(u, 0), γ = 1/3 (the authors'
script: the same 1/n in both terms). A missing relevance or probability makes that
context's UDCG null with the reason; an empty context is null too.

UDCGθ = σ(Σ α_i u_i⁺ + Σ β_i u_i⁻) learns 2k position weights with a linear ranking SVM
(Joachims' pairwise transform within each question + sklearn ``LinearSVC``), predicting
the end-to-end correctness order of contexts; scores are out-of-fold (GroupKFold over
questions) so the reported correlation is not fitted on the rows it scores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from ragcourt.judging.llm_judges import prompt_requests
from ragcourt.judging.relevance import with_questions
from ragcourt.llm import grading_methods

if TYPE_CHECKING:
    from ragcourt.llm import ChatRequest, Gateway
    from ragcourt.llm.types import TokenDistribution

NO_RESPONSE = "NO-RESPONSE"


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def passage_utility(relevant: bool, p_no_response: float) -> float:
    """u = R·(1 − P(NO-RESPONSE)), R = +1 relevant / −1 not."""
    return (1.0 if relevant else -1.0) * (1.0 - p_no_response)


def udcg(utilities: Sequence[float], gamma: float = 1.0 / 3.0) -> float:
    """Training-free UDCG of one context: σ(mean(u⁺) + γ·mean(u⁻)) over its n passages."""
    n = len(utilities)
    if n == 0:
        raise ValueError("UDCG of an empty context is undefined")
    pos = sum(max(u, 0.0) for u in utilities)
    neg = sum(min(u, 0.0) for u in utilities)
    return sigmoid(pos / n + gamma * neg / n)


def udcg_requests(
    questions: Sequence[str], passages: Sequence[str], model: str, version: str
) -> list[ChatRequest]:
    """The answering prompt with one passage each (greedy, one token: only P is read)."""
    fields = ({"question": q, "passage": p} for q, p in zip(questions, passages, strict=True))
    return prompt_requests(
        "udcg", version, model, fields, max_tokens=1, temperature=0.0, tag="judge.udcg"
    )


def passage_udcg_requests(
    passages: pl.DataFrame, questions: pl.DataFrame, model: str, version: str
) -> list[ChatRequest]:
    """The requests :func:`abstention_probabilities` sends, one per passage (``text``)."""
    joined = with_questions(passages, questions)
    return udcg_requests(joined["question"].to_list(), joined["text"].to_list(), model, version)


def abstention_probabilities(
    passages: pl.DataFrame,
    questions: pl.DataFrame,
    gateway: Gateway,
    model: str,
    version: str = "v1",
    dists: Sequence[TokenDistribution] | None = None,
) -> pl.DataFrame:
    """P(NO-RESPONSE | q, p) per unique (question_id, chunk_id) passage (``text`` column).
    Returns question_id, chunk_id, p_no_response (null on failure), p_method, p_error.
    ``dists``: the distributions of :func:`passage_udcg_requests` already asked for."""
    joined = with_questions(passages, questions)
    if dists is None:
        reqs = udcg_requests(joined["question"].to_list(), joined["text"].to_list(), model, version)
        dists = (
            gateway.next_token_probs(reqs, candidates=[NO_RESPONSE], desc="udcg") if reqs else []
        )
    elif len(dists) != joined.height:
        raise ValueError(f"{len(dists)} distributions for {joined.height} passages")
    probs: list[float | None] = []
    methods: list[str] = []
    errors: list[str | None] = []
    for d in dists:
        p = d.raw.get(NO_RESPONSE) if d.ok else None
        if p is None or not math.isfinite(p) or not 0.0 <= p <= 1.0:
            probs.append(None)
            errors.append(d.error or f"no probability for {NO_RESPONSE} ({p!r})")
        else:
            probs.append(float(p))
            errors.append(None)
        methods.append(grading_methods.of_distribution(d))
    return joined.select("question_id", "chunk_id").with_columns(
        pl.Series("p_no_response", probs, dtype=pl.Float64),
        pl.Series("p_method", methods, dtype=pl.String),
        pl.Series("p_error", errors, dtype=pl.String),
    )


def utility_table(
    relevance: pl.DataFrame, probabilities: pl.DataFrame, relevance_threshold: int = 1
) -> pl.DataFrame:
    """Per (question_id, chunk_id) of ``probabilities`` (the passages in some top k):
    relevance, relevant, p_no_response, utility (null when either input is missing), error."""
    t = probabilities.join(
        relevance.select(
            "question_id", "chunk_id", "relevance", pl.col("error").alias("relevance_error")
        ),
        on=["question_id", "chunk_id"],
        how="left",
    )
    relevant = pl.col("relevance") >= relevance_threshold
    sign = (
        pl.when(pl.col("relevance").is_null()).then(None).when(relevant).then(1.0).otherwise(-1.0)
    )
    return t.with_columns(
        relevant.alias("relevant"),
        (sign * (1.0 - pl.col("p_no_response"))).alias("utility"),
        pl.when(pl.col("relevance").is_null())
        .then(pl.concat_str(pl.lit("relevance: "), pl.col("relevance_error").fill_null("missing")))
        .when(pl.col("p_no_response").is_null())
        .then(pl.concat_str(pl.lit("P(NO-RESPONSE): "), pl.col("p_error").fill_null("missing")))
        .alias("error"),
    ).select(
        "question_id",
        "chunk_id",
        "relevance",
        "relevant",
        "p_no_response",
        "p_method",
        "utility",
        "error",
    )


def udcg_per_question(
    passages: pl.DataFrame, utilities: pl.DataFrame, gamma: float = 1.0 / 3.0
) -> pl.DataFrame:
    """Per (system, question_id) over its passages (already cut to the top k): udcg,
    n_passages, and rank-ordered lists chunk_ids, relevant, p_no_response, p_methods,
    utilities."""
    ctx = (
        passages.join(
            utilities.select(
                "question_id",
                "chunk_id",
                "relevant",
                "p_no_response",
                "p_method",
                "utility",
                "error",
            ),
            on=["question_id", "chunk_id"],
            how="left",
        )
        .sort("system", "question_id", "rank")
        .group_by("system", "question_id", maintain_order=True)
        .agg(
            pl.col("chunk_id").alias("chunk_ids"),
            pl.col("relevant"),
            pl.col("p_no_response"),
            pl.col("p_method").alias("p_methods"),
            pl.col("utility").alias("utilities"),
            pl.col("error").filter(pl.col("utility").is_null()).first().alias("first_error"),
            pl.col("chunk_id").filter(pl.col("utility").is_null()).first().alias("bad_chunk"),
        )
    )
    scores: list[float | None] = []
    errors: list[str | None] = []
    for us, bad, why in zip(
        ctx["utilities"].to_list(),
        ctx["bad_chunk"].to_list(),
        ctx["first_error"].to_list(),
        strict=True,
    ):
        if bad is not None:
            scores.append(None)
            errors.append(f"passage {bad}: {why or 'no utility'}")
        else:
            scores.append(udcg(us, gamma))
            errors.append(None)
    return ctx.select(
        "system",
        "question_id",
        pl.col("chunk_ids").list.len().cast(pl.Int32).alias("n_passages"),
        "chunk_ids",
        "relevant",
        "p_no_response",
        "p_methods",
        "utilities",
    ).with_columns(
        pl.Series("udcg", scores, dtype=pl.Float64),
        pl.Series("error", errors, dtype=pl.String),
    )


# ---------------------------------------------------------------- UDCGθ (optional)


def theta_features(utilities: Sequence[Sequence[float] | None], k: int) -> np.ndarray:
    """Rows [u_1⁺..u_k⁺, u_1⁻..u_k⁻]; positions beyond a context's length are 0."""
    x = np.zeros((len(utilities), 2 * k))
    for i, us in enumerate(utilities):
        for j, u in enumerate((us or [])[:k]):
            x[i, j] = max(u, 0.0)
            x[i, k + j] = min(u, 0.0)
    return x


def pairwise_transform(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Joachims' ranking-SVM pairs within each group: x_i − x_j labelled sign(y_i − y_j),
    for every pair with different targets (each pair once in each orientation)."""
    diffs: list[np.ndarray] = []
    labels: list[int] = []
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        for a in range(len(idx)):
            for b in range(a + 1, len(idx)):
                i, j = idx[a], idx[b]
                if y[i] == y[j]:
                    continue
                s = 1 if y[i] > y[j] else -1
                diffs += [x[i] - x[j], x[j] - x[i]]
                labels += [s, -s]
    if not diffs:
        return np.zeros((0, x.shape[1])), np.zeros(0, dtype=int)
    return np.vstack(diffs), np.asarray(labels)


@dataclass(frozen=True)
class ThetaFit:
    """UDCGθ: position weights fitted on all rows, out-of-fold scores, and the pair count.
    ``scores`` is None (and ``reason`` says why) when there is not enough data."""

    k: int
    n_pairs: int
    alpha: list[float] | None
    beta: list[float] | None
    scores: list[float | None] | None
    reason: str | None = None


def _fit_weights(x: np.ndarray, y: np.ndarray, groups: np.ndarray, seed: int) -> np.ndarray | None:
    from sklearn.svm import LinearSVC

    xp, yp = pairwise_transform(x, y, groups)
    if len(yp) == 0:
        return None
    model = LinearSVC(fit_intercept=False, random_state=seed)
    model.fit(xp, yp)
    return np.asarray(model.coef_[0], dtype=float)


def fit_udcg_theta(
    utilities: Sequence[Sequence[float] | None],
    target: Sequence[float | None],
    groups: Sequence[str],
    k: int,
    min_pairs: int = 50,
    n_splits: int = 5,
    seed: int = 0,
) -> ThetaFit:
    """Fit UDCGθ on contexts with a known utility list and target; out-of-fold σ(w·x)."""
    keep = [
        i
        for i, (u, t) in enumerate(zip(utilities, target, strict=True))
        if u is not None and t is not None and all(v is not None for v in u)
    ]
    x_all = theta_features(utilities, k)
    y = np.asarray([target[i] for i in keep], dtype=float)
    g = np.asarray([groups[i] for i in keep])
    x = x_all[keep]
    _, labels = pairwise_transform(x, y, g)
    n_pairs = len(labels) // 2
    n_groups = len(np.unique(g))
    if n_pairs < max(min_pairs, 1) or n_groups < 2:
        return ThetaFit(
            k,
            n_pairs,
            None,
            None,
            None,
            f"not enough data: {n_pairs} ranked pairs in {n_groups} questions "
            f"(need >= {min_pairs} pairs and >= 2 questions)",
        )
    from sklearn.model_selection import GroupKFold

    oof: list[float | None] = [None] * len(target)
    folds = GroupKFold(n_splits=min(n_splits, n_groups))
    for train, test in folds.split(x, y, g):
        w = _fit_weights(x[train], y[train], g[train], seed)
        if w is None:
            continue
        for row, score in zip(test, x[test] @ w, strict=True):
            oof[keep[row]] = sigmoid(float(score))
    w_all = _fit_weights(x, y, g, seed)
    if w_all is None:  # unreachable: n_pairs >= 1 was checked above
        raise RuntimeError("UDCGθ fit found no ranked pairs")
    return ThetaFit(k, n_pairs, w_all[:k].tolist(), w_all[k:].tolist(), oof)
