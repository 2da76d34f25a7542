"""The reader's input: ``[CLS] question [SEP] passage-window [SEP]``, one row per window.

A passage longer than one window is read as overlapping windows (``stride`` tokens apart);
training and inference build windows with the same function, so the model sees at run time
exactly the shape it was trained on. Offsets map every passage token back to characters of the
passage, so a predicted token span is a character span of the caller's text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

MAX_QUESTION_TOKENS = 64


@dataclass(frozen=True)
class Window:
    """One encoded window of one (question, passage) pair.

    ``ids``/``type_ids``/``mask`` have length ``max_len`` (padded); ``offsets[i]`` is the
    (start, end) character span in the passage of token ``i``, or (-1, -1) for the question,
    specials and padding.
    """

    pair: int
    ids: np.ndarray
    type_ids: np.ndarray
    mask: np.ndarray
    offsets: np.ndarray  # (max_len, 2)


def load_tokenizer(path: Path) -> Tokenizer:
    """The WordPiece tokenizer in ``path`` (a ``tokenizer.json``), without its own truncation or
    padding (windows are cut here)."""
    tok = Tokenizer.from_file(str(path))
    tok.no_truncation()
    tok.no_padding()
    return tok


def encode_windows(
    tok: Tokenizer,
    questions: Sequence[str],
    passages: Sequence[str],
    max_len: int = 256,
    stride: int = 128,
) -> list[Window]:
    """Windows of every pair, in pair order. Each window holds the (at most
    :data:`MAX_QUESTION_TOKENS`) question tokens and ``max_len - len(question) - 3`` passage
    tokens; consecutive windows start ``stride`` passage tokens apart, the last one ending at
    the passage's end. An empty passage still gives one window."""
    if len(questions) != len(passages):
        raise ValueError(f"{len(questions)} questions for {len(passages)} passages")
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    pad_id = tok.token_to_id("[PAD]") or 0
    q_enc = tok.encode_batch(list(questions), add_special_tokens=False)
    p_enc = tok.encode_batch(list(passages), add_special_tokens=False)
    out: list[Window] = []
    for i, (qe, pe) in enumerate(zip(q_enc, p_enc, strict=True)):
        q_ids = qe.ids[:MAX_QUESTION_TOKENS]
        room = max_len - len(q_ids) - 3
        p_ids, p_off = pe.ids, pe.offsets
        starts = list(range(0, max(len(p_ids) - room, 0) + 1, max(stride, 1)))
        if starts[-1] + room < len(p_ids):
            starts.append(len(p_ids) - room)
        for s in starts:
            seg = p_ids[s : s + room]
            ids = [cls_id, *q_ids, sep_id, *seg, sep_id]
            types = [0] * (len(q_ids) + 2) + [1] * (len(seg) + 1)
            offsets = np.full((max_len, 2), -1, dtype=np.int64)
            first = len(q_ids) + 2
            if seg:
                offsets[first : first + len(seg)] = np.asarray(p_off[s : s + len(seg)])
            n = len(ids)
            pad = max_len - n
            out.append(
                Window(
                    pair=i,
                    ids=np.asarray(ids + [pad_id] * pad, dtype=np.int64),
                    type_ids=np.asarray(types + [0] * pad, dtype=np.int64),
                    mask=np.asarray([1] * n + [0] * pad, dtype=np.int64),
                    offsets=offsets,
                )
            )
    return out


def stack(windows: Sequence[Window]) -> dict[str, np.ndarray]:
    """The model inputs of ``windows`` as (n, max_len) int64 arrays, trimmed to the longest
    unpadded window (a batch of short pairs costs what its pairs cost)."""
    width = max(int(w.mask.sum()) for w in windows)
    return {
        "input_ids": np.stack([w.ids[:width] for w in windows]),
        "token_type_ids": np.stack([w.type_ids[:width] for w in windows]),
        "attention_mask": np.stack([w.mask[:width] for w in windows]),
    }
