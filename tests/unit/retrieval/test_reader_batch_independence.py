"""The shipped reader scores a (question, passage) pair the same, to the last bit, whatever else
is read in the same call: alone, beside other pairs, in another order, beside long passages read
as several windows, and by a reader that reads its windows one by one or several at once."""

from __future__ import annotations

import pytest

from ragcourt.retrieval.reader.model import WEIGHTS_DIR, Reader, Reading, shipped_reader

PASSAGE = (
    "The harbour office of Valparaiso was opened in 1832. Its first director, Manuel Ortega, "
    "kept a green ledger in which every tea shipment was recorded with its weight and price. "
    "The office moved to a larger building near the customs house in 1874."
)
SHORT = "The railway reached the port in 1852."
FILLER = "The weather in the valley was mild that year and the harvest was ordinary. "
PAIRS = [
    ("Who was the first director of the harbour office of Valparaiso?", PASSAGE),
    ("In what year did the railway reach the port?", SHORT),
    ("What colour was the ledger?", FILLER * 3 + PASSAGE),
    ("How many ships sank near the customs house?", PASSAGE),
    ("When did the office move?", FILLER * 30 + PASSAGE + " " + FILLER * 10),  # several windows
]
# other pairs that share a call with PAIRS: long windows, whose length and activations differ
COMPANIONS = [
    ("What was the harvest like?", FILLER * 12),
    ("Where was iron bought?", "The station was rebuilt with iron from Belgium. " * 20),
]


@pytest.fixture(scope="module")
def reader() -> Reader:
    return shipped_reader()


def _alone(reader: Reader) -> list[Reading]:
    return [reader.read([q], [p])[0] for q, p in PAIRS]


def test_a_pair_scores_the_same_alone_or_in_any_batch(reader: Reader) -> None:
    alone = _alone(reader)
    qs, ps = [q for q, _ in PAIRS], [p for _, p in PAIRS]
    assert reader.read(qs, ps) == alone
    assert reader.read(qs[::-1], ps[::-1])[::-1] == alone
    cq, cp = [q for q, _ in COMPANIONS], [p for _, p in COMPANIONS]
    mixed = reader.read(cq + qs + cq, cp + ps + cp)
    assert mixed[len(cq) : len(cq) + len(qs)] == alone
    assert reader.read(qs[2:] + qs[:2], ps[2:] + ps[:2]) == alone[2:] + alone[:2]


@pytest.mark.parametrize("threads", [1, 3])
def test_windows_read_in_parallel_or_one_by_one_give_the_same_bits(
    reader: Reader, threads: int
) -> None:
    alone = _alone(reader)
    other = Reader(WEIGHTS_DIR, threads=threads)
    qs, ps = [q for q, _ in PAIRS + COMPANIONS], [p for _, p in PAIRS + COMPANIONS]
    assert other.read(qs, ps)[: len(PAIRS)] == alone
