"""The BM25 index numbers its vocabulary in sorted order, so the same chunks give the same
saved bytes whatever the interpreter's hash seed (bm25s numbers a set's iteration order)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import bm25s

from ragcourt.retrieval.params import BM25Params
from ragcourt.retrieval.retrieve import BM25Retriever

TEXTS = [
    "The tariff on imported iron was raised by the Congress in 1828.",
    "Treaties with the western nations opened the ports to American ships.",
    "The navy asked for twelve new frigates and a dock at Pensacola.",
    "Public lands in the west were sold to settlers at a low price per acre.",
]

SAVE = """
import sys
from ragcourt.retrieval.params import BM25Params
from ragcourt.retrieval.retrieve import BM25Retriever
texts = sys.argv[2:]
r = BM25Retriever([f"c{i}" for i in range(len(texts))], texts, BM25Params())
r.model.save(sys.argv[1], show_progress=False)
"""


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.iterdir()):
        h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()


def test_saved_index_bytes_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    digests = []
    for seed in ("1", "2", "3"):
        out = tmp_path / seed
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-c", SAVE, str(out), *TEXTS], check=True, env=env)
        digests.append(_digest(out))
    assert len(set(digests)) == 1


def test_sorted_vocabulary_scores_like_bm25s_own_numbering() -> None:
    """Every chunk scores as in an index bm25s numbers itself, from the same tokens."""
    ours = BM25Retriever([f"c{i}" for i in range(len(TEXTS))], TEXTS, BM25Params())
    vocab = ours.model.vocab_dict
    assert [t for t in vocab if t] == sorted(t for t in vocab if t)
    theirs = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    theirs.index(ours._tokenizers.tokenize(TEXTS, ["en"] * len(TEXTS)), show_progress=False)
    for query in ("tariff on iron", "frigates for the navy", "land price per acre"):
        toks = [t for t in ours.query_tokens([query])[0] if t]
        mine = ours.model.get_scores_from_ids(ours.model.get_tokens_ids(toks))
        other = theirs.get_scores_from_ids(theirs.get_tokens_ids(toks))
        assert list(mine) == list(other)
        assert max(mine) > 0
