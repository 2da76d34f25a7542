"""The systems the meta-evaluation ranks (the known-order ladder and the gold run's eight real
systems with their controls) and the judge configurations it compares."""

from __future__ import annotations

from typing import Any

from ragcourt.tournament.swiss import Pair

ORACLE, DENSE, RANDOM, SHUFFLED, NONE = (
    "oracle-k3",
    "dense-k3",
    "random-k3",
    "shuffled-dense-k3",
    "none",
)
LADDER = (ORACLE, DENSE, RANDOM, SHUFFLED)  # best first
SYSTEMS_YAML: dict[str, Any] = {
    "defaults": {
        "chunking": "c256",
        "embedder": "minilm",
        "prompt_version": "v1",
        "max_tokens": 64,
    },
    "systems": [
        {"name": DENSE, "retriever": "dense", "top_k": 3},
        {"name": ORACLE, "retriever": "oracle", "top_k": 3},
        {"name": RANDOM, "retriever": "random", "top_k": 3},
        {"name": NONE, "retriever": "none", "top_k": 3},
        {"name": SHUFFLED, "answers": "shuffled", "base": DENSE},
    ],
}
KNOWN_PAIRS: tuple[Pair, ...] = (
    (ORACLE, DENSE),
    (DENSE, RANDOM),
    (RANDOM, SHUFFLED),
    (ORACLE, RANDOM),
    (ORACLE, SHUFFLED),
    (DENSE, SHUFFLED),
    (ORACLE, NONE),
)
CURVE_PAIRS: tuple[Pair, ...] = ((ORACLE, RANDOM), (DENSE, RANDOM))
# name -> (tournament.judge, judge.correctness_mode or None when the judge reads no correctness)
CONFIGS: dict[str, tuple[str, str | None]] = {
    "margin-trained": ("correctness_margin", "trained"),  # the shipped default (params.yaml)
    "margin-similarity": ("correctness_margin", "similarity"),
    # the same judges with the span's sentence (qa.long_reference) as the reference answer
    "margin-trained-sentence": ("correctness_margin", "trained"),
    "margin-similarity-sentence": ("correctness_margin", "similarity"),
    "margin-rubric": ("correctness_margin", "rubric"),
    "margin-expected": ("correctness_margin", "expected"),
    "llm": ("llm", None),  # the params' tournament prompts (default: v2, two-stage)
    "llm-direct": ("llm", None),  # tournament prompts --direct-version, no analysis stage
}
SENTENCE_REFERENCE = frozenset({"margin-trained-sentence", "margin-similarity-sentence"})
DIRECT_VERSION = "v3"  # tournament.yaml version of llm-direct (override: --direct-version)


QWEN_15B = "local/qwen2.5-coder-1.5b"
SMOLLM_135M = "local/smollm2-135m"
GOLD_QAGEN_ANSWERABILITY = 0.4517  # the 1.5B's P(yes) threshold (configs/profiles/offline-quality)


def gold_systems(strong_model: str, weak_model: str) -> dict[str, Any]:
    """Eight systems that differ for real around the base ``dense-k3`` (c256, dense, top-3;
    each other system changes one factor): top-1, BM25, c512 top-1, a deliberately weak
    retriever (one 64-token chunk), a weaker (``weak_model``) and a stronger (``strong_model``)
    generator, closed book; plus the known-quality controls oracle, random passages and
    shuffled answers. Generators: null -> ``llm.model`` (``--model``); short answers (the
    demo's ``v2-short`` prompt, 32 tokens)."""
    return {
        "defaults": {"chunking": "c256", "embedder": "minilm", "prompt_version": "v2-short",
                     "max_tokens": 32},
        "systems": [
            {"name": DENSE, "retriever": "dense", "top_k": 3},
            {"name": "dense-k1", "retriever": "dense", "top_k": 1},
            {"name": "bm25-k3", "retriever": "bm25", "top_k": 3},
            {"name": "dense-c512-k1", "chunking": "c512", "retriever": "dense", "top_k": 1},
            {"name": WEAK_RETRIEVER, "chunking": WEAK_CHUNKING, "retriever": "dense",
             "top_k": 1},
            {"name": "dense-k3-weak-generator", "retriever": "dense", "top_k": 3,
             "generator": weak_model},
            {"name": "dense-k3-strong-generator", "retriever": "dense", "top_k": 3,
             "generator": strong_model},
            {"name": NONE, "retriever": "none", "top_k": 3},
            {"name": ORACLE, "retriever": "oracle", "top_k": 3},
            {"name": RANDOM, "retriever": "random", "top_k": 3},
            {"name": SHUFFLED, "answers": "shuffled", "base": DENSE},
        ],
    }  # fmt: skip


WEAK_RETRIEVER, WEAK_CHUNKING = "dense-c64-k1", "c64"
# known-quality controls: left out of the "real systems" agreement (closed book stays in: it is
# a configuration a team could ship, and the ranking must place it)
GOLD_CONTROLS = frozenset({ORACLE, RANDOM, SHUFFLED})


def best_real_vs_closed_book(elo: dict[str, float]) -> list[Pair]:
    """The gap pairs of the gold run: oracle − random, and the label-free best real system −
    closed book."""
    real = [s for s in elo if s not in GOLD_CONTROLS and s != NONE]
    best = max(real, key=lambda s: elo[s])
    return [(ORACLE, RANDOM), (best, NONE)]
