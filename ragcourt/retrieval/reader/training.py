"""Training the reader from installed weights on SQuAD v1.1 train (``ragcourt judges
train-reader``), one seeded script for CPU and GPU.

Splits (articles by a hash of the title, so no article is in two splits):

- every SQuAD v1.1 train paragraph that is the context of a SQuAD2 validation item is left out
  with its questions (those items share paragraphs with SQuAD v1.1 train and measure the
  reader);
- ``dev``: ``article_dev_percent`` of the other articles (early checks, span F1, echo test);
- ``fit``: the rest, of which ``fit_articles`` are used (0: all).

Recipe: the base encoder (all-MiniLM-L6-v2) with its lowest ``frozen_layers`` layers and its
embeddings frozen, AdamW with linear warm-up and decay, one window of ``max_len`` tokens per
example (the one holding the answer), loss = BCE(answerable) + CE(start) + CE(end) (a
no-answer window points both at ``[CLS]``). The trained network is exported to ONNX and its
linear layers quantised to int8 (dynamic), and every metric is measured on that exported file.
"""

from __future__ import annotations

import json
import logging
import math
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ragcourt.retrieval.reader.examples import ReaderExample
from ragcourt.retrieval.reader.windows import Window, encode_windows
from ragcourt.retrieval.trained_judges.squad_data import (
    SquadArticle,
    load_squad2_items,
    stable_split,
)

log = logging.getLogger("ragcourt.reader")


@dataclass(frozen=True)
class ReaderRecipe:
    """What a training run uses (the model card records it)."""

    seed: int = 0
    fit_articles: int = 0  # 0: every fitting article
    questions_per_paragraph: int = 2
    max_examples: int = 0  # 0: no cap
    article_dev_percent: int = 5
    dev_articles: int = 12
    max_len: int = 192
    stride: int = 96
    batch_size: int = 32
    epochs: float = 1.0
    lr: float = 8e-5
    head_lr: float = 1e-3
    warmup: float = 0.06
    frozen_layers: int = 0
    threads: int = 0  # 0: torch's default
    device: str = "auto"  # auto: cuda when available
    echo_vary_share: float = 0.0  # echoes given a random surface (examples.vary_echo)


RECIPES: dict[str, ReaderRecipe] = {
    # the shipped file's recipe on 2 CPU cores (about an hour): a sample of the fitting
    # articles, one epoch, 192-token windows, the lowest two layers and the embeddings frozen
    "cpu": ReaderRecipe(
        fit_articles=0, questions_per_paragraph=3, max_examples=44_000, max_len=192,
        stride=96, batch_size=16, epochs=1.0, lr=1e-4, frozen_layers=2,
    ),
    # the full recipe for a GPU: every fitting article, three questions a paragraph, two epochs
    "gpu": ReaderRecipe(
        questions_per_paragraph=3, max_len=256, stride=128, batch_size=64, epochs=2.0,
        lr=8e-5, frozen_layers=0,
    ),
    # a smoke run (tests and a first look): minutes on a CPU, not a usable model
    "tiny": ReaderRecipe(
        fit_articles=4, max_examples=256, dev_articles=2, max_len=128, stride=64,
        batch_size=16, frozen_layers=4,
    ),
}  # fmt: skip


def held_out_paragraphs(squad2_path: Path) -> set[str]:
    """The contexts of the SQuAD2 validation items (whitespace-normalised)."""
    return {" ".join(p.right.split()) for p in load_squad2_items(squad2_path)}


def split_articles(
    articles: Sequence[SquadArticle], held: set[str], recipe: ReaderRecipe
) -> tuple[list[SquadArticle], list[SquadArticle], int]:
    """(fit, dev, number of paragraphs left out because they are a held-out item's context).

    Articles split by a hash of the title (``article_dev_percent`` to dev); a paragraph that
    is the context of a SQuAD2 validation item is dropped from either split with its
    questions, the rest of its article stays."""
    fit: list[SquadArticle] = []
    dev: list[SquadArticle] = []
    left_out = 0
    for art in articles:
        keep = [i for i, p in enumerate(art.paragraphs) if " ".join(p.split()) not in held]
        left_out += len(art.paragraphs) - len(keep)
        if not keep:
            continue
        if len(keep) < len(art.paragraphs):
            art = SquadArticle(
                art.title,
                tuple(art.paragraphs[i] for i in keep),
                tuple(art.questions[i] for i in keep),
            )
        (dev if stable_split(art.title, recipe.article_dev_percent) == "dev" else fit).append(art)
    if recipe.fit_articles:
        fit = fit[: recipe.fit_articles]
    return fit, dev[: recipe.dev_articles], left_out


def training_windows(
    tok: object, examples: Sequence[ReaderExample], recipe: ReaderRecipe
) -> tuple[list[Window], np.ndarray, np.ndarray, np.ndarray]:
    """One window per example (the one holding the answer; for a no-answer example a seeded
    random one), with (start token, end token, answerable) targets; a positive whose answer
    falls in no window is dropped."""
    from tokenizers import Tokenizer

    assert isinstance(tok, Tokenizer)
    rng = random.Random(recipe.seed)
    windows = encode_windows(
        tok, [e.question for e in examples], [e.passage for e in examples],
        recipe.max_len, recipe.stride,
    )  # fmt: skip
    by_pair: dict[int, list[Window]] = {}
    for w in windows:
        by_pair.setdefault(w.pair, []).append(w)
    kept: list[Window] = []
    starts, ends, labels = [], [], []
    for i, ex in enumerate(examples):
        ws = by_pair[i]
        if not ex.answerable:
            kept.append(rng.choice(ws))
            starts.append(0)
            ends.append(0)
            labels.append(0.0)
            continue
        for w in ws:
            s_tok = np.nonzero(
                (w.offsets[:, 0] <= ex.answer_start) & (w.offsets[:, 1] > ex.answer_start)
            )[0]
            e_tok = np.nonzero(
                (w.offsets[:, 0] < ex.answer_end) & (w.offsets[:, 1] >= ex.answer_end)
            )[0]
            if len(s_tok) and len(e_tok) and s_tok[0] <= e_tok[-1]:
                kept.append(w)
                starts.append(int(s_tok[0]))
                ends.append(int(e_tok[-1]))
                labels.append(1.0)
                break
    return kept, np.asarray(starts), np.asarray(ends), np.asarray(labels, dtype=np.float32)


def length_batches(windows: Sequence[Window], size: int, rng: random.Random) -> list[list[int]]:
    """Batches of similar unpadded length (less padding), in a seeded random order."""
    order = list(range(len(windows)))
    rng.shuffle(order)
    chunk = size * 50
    batches: list[list[int]] = []
    for k in range(0, len(order), chunk):
        part = sorted(order[k : k + chunk], key=lambda i: int(windows[i].mask.sum()))
        batches += [part[j : j + size] for j in range(0, len(part), size)]
    rng.shuffle(batches)
    return batches


def train_network(
    base: Path, tok: object, examples: Sequence[ReaderExample], recipe: ReaderRecipe
) -> object:
    """The trained :class:`~.network.ReaderNet` (module doc's recipe)."""
    import torch
    from torch.nn import functional as F

    from ragcourt.retrieval.reader.network import load_base

    torch.manual_seed(recipe.seed)
    if recipe.threads:
        torch.set_num_threads(recipe.threads)
    device = (
        ("cuda" if torch.cuda.is_available() else "cpu")
        if recipe.device == "auto"
        else recipe.device
    )
    net = load_base(base).to(device)
    enc = net.encoder
    for p in enc.embeddings.parameters():
        p.requires_grad = False
    for layer in enc.encoder.layer[: recipe.frozen_layers]:
        for p in layer.parameters():
            p.requires_grad = False
    windows, starts, ends, labels = training_windows(tok, examples, recipe)
    rng = random.Random(recipe.seed)
    n_steps = max(1, int(math.ceil(len(windows) / recipe.batch_size) * recipe.epochs))
    head_params = [*net.span.parameters(), *net.answerable.parameters()]
    enc_params = [p for p in enc.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(
        [{"params": enc_params, "lr": recipe.lr}, {"params": head_params, "lr": recipe.head_lr}],
        weight_decay=0.01,
    )
    warm = max(1, int(n_steps * recipe.warmup))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (n_steps - s) / max(1, n_steps - warm)))
    )
    net.train()
    step, t0 = 0, time.perf_counter()
    while step < n_steps:
        for batch in length_batches(windows, recipe.batch_size, rng):
            if step >= n_steps:
                break
            width = max(int(windows[i].mask.sum()) for i in batch)
            ids = torch.tensor(np.stack([windows[i].ids[:width] for i in batch]), device=device)
            types = torch.tensor(
                np.stack([windows[i].type_ids[:width] for i in batch]), device=device
            )
            mask = torch.tensor(np.stack([windows[i].mask[:width] for i in batch]), device=device)
            passage = torch.tensor(
                np.stack([windows[i].offsets[:width, 0] >= 0 for i in batch]), device=device
            )
            passage[:, 0] = True  # [CLS]: the no-answer target
            s_t = torch.tensor(starts[batch], device=device)
            e_t = torch.tensor(ends[batch], device=device)
            y = torch.tensor(labels[batch], device=device)
            s_logit, e_logit, a_logit = net(ids, types, mask)
            s_logit = s_logit.masked_fill(~passage, -1e4)
            e_logit = e_logit.masked_fill(~passage, -1e4)
            loss = F.binary_cross_entropy_with_logits(a_logit, y) + 0.5 * (
                F.cross_entropy(s_logit, s_t) + F.cross_entropy(e_logit, e_t)
            )
            opt.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call]
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            if step % 50 == 0 or step == n_steps:
                rate = step * recipe.batch_size / (time.perf_counter() - t0)
                log.info("step %d/%d loss %.4f (%.1f windows/s)", step, n_steps, loss.item(), rate)
    net.eval()
    return net.cpu()


def export_onnx(net: object, out: Path, quantise: bool = True) -> None:
    """``net`` as one ONNX file at ``out`` (dynamic batch and length), its MatMul/Gather weights
    quantised to int8 when ``quantise``, without the exporter's never-firing NaN guards
    (:mod:`.graph`: the same output bits, faster)."""
    import torch

    assert isinstance(net, torch.nn.Module)
    dummy = {
        "input_ids": torch.ones(2, 16, dtype=torch.long),
        "token_type_ids": torch.zeros(2, 16, dtype=torch.long),
        "attention_mask": torch.ones(2, 16, dtype=torch.long),
    }
    axes = {k: {0: "batch", 1: "length"} for k in dummy}
    raw = out.with_suffix(".fp32.onnx")
    torch.onnx.export(
        net,
        (dummy["input_ids"], dummy["token_type_ids"], dummy["attention_mask"]),
        str(raw),
        input_names=list(dummy),
        output_names=["start_logits", "end_logits", "answerable_logit"],
        dynamic_axes={
            **axes,
            "start_logits": {0: "batch", 1: "length"},
            "end_logits": {0: "batch", 1: "length"},
            "answerable_logit": {0: "batch"},
        },
        opset_version=17,
        dynamo=False,
    )
    if quantise:
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(str(raw), str(out), weight_type=QuantType.QInt8)
        raw.unlink()
    else:
        raw.replace(out)
    from ragcourt.retrieval.reader.graph import strip_nan_guards_file

    strip_nan_guards_file(out, out)


def recipe_json(recipe: ReaderRecipe) -> str:
    return json.dumps(asdict(recipe), sort_keys=True)
