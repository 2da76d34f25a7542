"""Train the reading model on a bare machine (a GPU box with torch, transformers, tokenizers,
onnxruntime and scikit-learn, and no ragcourt install): the same seeded code as
``ragcourt judges train-reader``, with every input given as a path.

Prepare the inputs on a ragcourt machine (about 55 MB: the base encoder in fp16, SQuAD v1.1
train gzipped, the SQuAD2 validation items)::

    python scripts/train_reader.py prepare --to carry/

and the PyStemmer wheel that machine may lack (``pip download --no-deps -d carry/wheels
PyStemmer``; there: ``pip install --no-index carry/wheels/*.whl``); then, on the training
machine, from the repository root::

    python scripts/train_reader.py train --recipe gpu --carry carry/ --out OUT/reader

and copy ``OUT/reader/{reader.onnx,reader.json,tokenizer.json}`` into
``ragcourt/retrieval/reader/weights/``.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import logging
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BASE_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt")


def prepare(to: Path, squad2: Path) -> None:
    """Write the carry folder: ``base/`` (fp16 safetensors), ``train-v1.1.json.gz``,
    ``squadv2_train.json``."""
    import torch
    from safetensors.torch import load_file, save_file

    from ragcourt.retrieval.reader.build import base_model_folder
    from ragcourt.retrieval.trained_judges.squad_data import squad_train_path

    src = base_model_folder()
    (to / "base").mkdir(parents=True, exist_ok=True)
    for name in BASE_FILES:
        if (src / name).is_file():
            shutil.copyfile(src / name, to / "base" / name)
    weights = load_file(str(src / "model.safetensors"))
    save_file(
        {k: v.to(torch.float16) for k, v in weights.items()}, str(to / "base" / "model.safetensors")
    )
    (to / "train-v1.1.json.gz").write_bytes(gzip.compress(squad_train_path().read_bytes(), 9))
    shutil.copyfile(squad2, to / "squadv2_train.json")
    size = sum(p.stat().st_size for p in to.rglob("*") if p.is_file())
    print(f"carry folder {to}: {size / 2**20:.1f} MiB")


def train(args: argparse.Namespace) -> None:
    from ragcourt.retrieval.reader.build import build_reader
    from ragcourt.retrieval.reader.training import RECIPES

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    recipe = dataclasses.replace(RECIPES[args.recipe], seed=args.seed)
    if args.max_examples is not None:
        recipe = dataclasses.replace(recipe, max_examples=args.max_examples)
    card = build_reader(
        args.out,
        args.carry / "train-v1.1.json.gz",
        args.carry / "squadv2_train.json",
        recipe,
        args.recipe,
        args.checkpoint,
        base=args.carry / "base",
    )
    sq = card["record"]["metrics"]["squad2"]
    print(
        f"reader written to {args.out}: SQuAD2 AUC {sq['auc']:.3f}, "
        f"kappa {sq['kappa_report_half']:.3f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--to", type=Path, required=True)
    p.add_argument("--squad2", type=Path, default=Path("../shared/validation/squadv2_train.json"))
    t = sub.add_parser("train")
    t.add_argument("--recipe", default="gpu", choices=["cpu", "gpu", "tiny"])
    t.add_argument("--carry", type=Path, required=True)
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--checkpoint", type=Path)
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--max-examples", type=int)
    args = ap.parse_args()
    if args.cmd == "prepare":
        prepare(args.to, args.squad2)
    else:
        train(args)


if __name__ == "__main__":
    main()
