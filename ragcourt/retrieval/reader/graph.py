"""Edits of the exported reader graph that keep every output bit of every window the reader
builds.

``torch.onnx.export`` of the BERT encoder writes, after each attention softmax,
``Where(IsNaN(p), 0, p)``: a guard that zeroes the row of a query whose keys are all masked
(softmax of all ``-inf`` is NaN). A reader window always attends to its ``[CLS]`` token, so no
row is ever all masked, the guard never fires, and ``Where(False, 0, p) = p`` bit for bit; yet
the guard reads and writes the whole (batch, heads, length, length) tensor twice per layer,
about a quarter of the model's time on 256-token windows. :func:`strip_nan_guards` removes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def strip_nan_guards(model: Any) -> int:
    """Rewires every ``Where(IsNaN(x), c, x)`` of the ONNX ``model`` (a ``ModelProto``, edited in
    place) to ``x`` and drops the guard's two nodes; returns how many guards it removed."""
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    graph_outputs = {o.name for o in graph.output}
    rename: dict[str, str] = {}
    dropped: set[int] = set()
    for node in graph.node:
        if node.op_type != "Where" or node.output[0] in graph_outputs:
            continue
        cond = producer.get(node.input[0])
        if cond is None or cond.op_type != "IsNaN" or cond.input[0] != node.input[2]:
            continue
        rename[node.output[0]] = node.input[2]
        dropped.add(id(node))
    for node in graph.node:
        for k, name in enumerate(node.input):
            if name in rename:
                node.input[k] = rename[name]
    users = {name for node in graph.node if id(node) not in dropped for name in node.input}
    for node in graph.node:  # the guard's IsNaN and constant go too, once nothing reads them
        if node.op_type in ("IsNaN", "Constant") and node.output[0] not in users | graph_outputs:
            dropped.add(id(node))
    kept = [node for node in graph.node if id(node) not in dropped]
    del graph.node[:]
    graph.node.extend(kept)
    return len(rename)


def strip_nan_guards_file(path: Path, out: Path) -> int:
    """:func:`strip_nan_guards` of the ONNX file ``path``, written (checked) to ``out``."""
    import onnx

    model = onnx.load(str(path))
    removed = strip_nan_guards(model)
    onnx.checker.check_model(model)
    onnx.save(model, str(out))
    return removed
