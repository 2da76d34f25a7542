"""The reader's graph edit (``ragcourt.retrieval.reader.graph``): the shipped file carries no
NaN guard after its softmaxes, and removing the guards keeps every output bit of real windows,
padded ones included (the guard never fires while a window attends to its ``[CLS]``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ragcourt.retrieval.reader.graph import strip_nan_guards
from ragcourt.retrieval.reader.model import MODEL_FILE, WEIGHTS_DIR, shipped_reader
from ragcourt.retrieval.reader.windows import encode_windows, stack

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

PASSAGE = (
    "The harbour office of Valparaiso was opened in 1832. Its first director, Manuel Ortega, "
    "kept a green ledger in which every tea shipment was recorded with its weight and price."
)


def _with_guards(model: Any) -> int:
    """Puts back the exporter's ``Where(IsNaN(p), 0, p)`` after every Softmax (in place)."""
    from onnx import TensorProto, helper

    graph, added, nodes = model.graph, 0, []
    for node in graph.node:
        nodes.append(node)
        if node.op_type != "Softmax":
            continue
        p, k = node.output[0], added
        zero = helper.make_node(
            "Constant",
            [],
            [f"guard_zero_{k}"],
            value=helper.make_tensor(f"guard_zero_t_{k}", TensorProto.FLOAT, [], [0.0]),
        )
        isnan = helper.make_node("IsNaN", [p], [f"guard_isnan_{k}"])
        where = helper.make_node("Where", [f"guard_isnan_{k}", f"guard_zero_{k}", p], [f"g_{k}"])
        for other in graph.node:
            other.input[:] = [f"g_{k}" if name == p else name for name in other.input]
        nodes += [zero, isnan, where]
        added += 1
    del graph.node[:]
    graph.node.extend(nodes)
    return added


def _session(model: Any) -> Any:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def test_the_shipped_file_has_no_nan_guard_and_keeps_every_output_bit() -> None:
    shipped = onnx.load(str(WEIGHTS_DIR / MODEL_FILE))
    assert strip_nan_guards(shipped) == 0  # already stripped
    guarded = onnx.load(str(WEIGHTS_DIR / MODEL_FILE))
    assert _with_guards(guarded) == 6
    stripped = onnx.load(str(WEIGHTS_DIR / MODEL_FILE))
    _with_guards(stripped)
    assert strip_nan_guards(stripped) == 6
    assert not [
        n for n in stripped.graph.node if n.op_type in ("IsNaN", "Where") and "guard" in n.output[0]
    ]
    reader = shipped_reader()
    questions = ["Who was the first director?", "When was it opened?", "What colour?"]
    passages = [PASSAGE, PASSAGE[:40], PASSAGE * 4]  # short, padded and multi-window rows
    windows = encode_windows(reader.tokenizer, questions, passages, 256, 128)
    feeds = stack(windows)
    assert (feeds["attention_mask"] == 0).any()  # padded keys: the mask holds -inf entries
    want = _session(guarded).run(None, feeds)
    got = _session(stripped).run(None, feeds)
    for w, g in zip(want, got, strict=True):
        assert np.array_equal(w, g)
