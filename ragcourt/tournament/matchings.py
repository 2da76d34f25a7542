"""Perfect matchings of the graph of unplayed pairs, and whether more rounds still fit (spec §6).

A round of a repeat-free tournament is a perfect matching (1-factor) of the graph whose edges
are the pairs that have not met yet; with odd N a dummy bye node :data:`BYE` joins the graph,
adjacent to every system that has not sat out yet. ``r`` more rounds can be played iff that
graph holds ``r`` edge-disjoint perfect matchings. :class:`ScheduleSearch` decides this
exactly by depth-first search over perfect matchings (most constrained node first), pruned by
"every node has >= r unplayed partners" and "a perfect matching exists" (networkx maximum
cardinality matching), with a memo of failed (edge set, r) states. Exponential in the worst
case; Swiss uses it for N <= ``LOOKAHEAD_MAX_SYSTEMS`` only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import networkx as nx

Pair = tuple[str, str]
Edge = frozenset[str]

BYE = "\x00bye"  # dummy node; system names are safe names (core/names.py), never this
LOOKAHEAD_MAX_SYSTEMS = 16  # the look-ahead search is exact and fast up to here (benchmarks/)


def matchings_in_order(
    order: Sequence[str], partners: Callable[[str, list[str]], list[str]]
) -> Iterator[list[Pair]]:
    """Every perfect matching of ``order``, each once: the first unpaired node of ``order`` is
    paired with each node of ``partners(node, unpaired rest)`` in turn, recursively.

    ``partners`` both filters (unplayed pairs only) and orders (preferred first), so the first
    matching yielded is the greedy top-down choice and later ones are its backtracking order.
    """
    dead: set[frozenset[str]] = set()  # node sets with no perfect matching

    def rest_of(nodes: list[str]) -> Iterator[list[Pair]]:
        if not nodes:
            yield []
            return
        key = frozenset(nodes)
        if key in dead:
            return
        found = False
        top, rest = nodes[0], nodes[1:]
        for opp in partners(top, rest):
            for sub in rest_of([s for s in rest if s != opp]):
                found = True
                yield [(top, opp), *sub]
        if not found:
            dead.add(key)

    yield from rest_of(list(order))


def _adjacency(nodes: Sequence[str], edges: frozenset[Edge]) -> dict[str, set[str]]:
    adj: dict[str, set[str]] = {v: set() for v in nodes}
    for e in edges:
        a, b = tuple(e)
        adj[a].add(b)
        adj[b].add(a)
    return adj


def has_perfect_matching(nodes: Sequence[str], edges: frozenset[Edge]) -> bool:
    """True iff the graph (``nodes``, ``edges``) has a perfect matching (networkx blossom)."""
    if len(nodes) % 2:
        return False
    graph: nx.Graph[str] = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(tuple(e) for e in edges)
    return 2 * len(nx.max_weight_matching(graph, maxcardinality=True)) == len(nodes)


def _perfect_matchings(adj: dict[str, set[str]]) -> Iterator[frozenset[Edge]]:
    """Every perfect matching of the graph ``adj``, pairing the node with fewest options first."""

    def rec(free: frozenset[str]) -> Iterator[list[Edge]]:
        if not free:
            yield []
            return
        node = min(free, key=lambda v: (len(adj[v] & free), v))
        for opp in sorted(adj[node] & free):
            for sub in rec(free - {node, opp}):
                yield [frozenset((node, opp)), *sub]

    for m in rec(frozenset(adj)):
        yield frozenset(m)


class ScheduleSearch:
    """``can_schedule(nodes, edges, r)``: do ``r`` edge-disjoint perfect matchings fit in the
    graph? Failed states are remembered for the object's lifetime (a property of the graph)."""

    def __init__(self) -> None:
        self.dead: set[tuple[frozenset[Edge], int]] = set()
        self.steps = 0  # search nodes visited (for benchmarks)

    def can_schedule(self, nodes: Sequence[str], edges: frozenset[Edge], rounds: int) -> bool:
        self.steps += 1
        if rounds <= 0:
            return True
        key = (edges, rounds)
        if key in self.dead:
            return False
        adj = _adjacency(nodes, edges)
        ok = all(len(adj[v]) >= rounds for v in nodes) and has_perfect_matching(nodes, edges)
        if ok and rounds > 1:
            ok = any(
                self.can_schedule(nodes, edges - m, rounds - 1) for m in _perfect_matchings(adj)
            )
        if not ok:
            self.dead.add(key)
        return ok
