"""Rendered text of a marked-up file, its headings, and the map from its characters back to the
source file (:mod:`ragcourt.corpus.markup_rst`, :mod:`ragcourt.corpus.markup_md`).

A renderer emits *runs* into a :class:`TextBuilder`: text copied from the source (each with a
hint, the source span it came from: the block's lines) or text the renderer wrote itself
(``generated``: "Changed in version 3.2: ", "Note: "). Blocks are separated by a blank line,
whitespace inside a prose block collapses to one space, code keeps its lines.

The source map is a list of :class:`Segment` s, sorted by ``text_start`` and disjoint in the
text, of three kinds:

* *copied*: ``text[text_start:text_end] == source[source_start:source_end]`` exactly. Found by
  aligning the run's words (runs of letters and digits) in order with the source inside the
  run's hint; a segment grows over the characters around and between aligned words while they
  are the same in both.
* *placed*: a stretch of a copied run whose words were not found verbatim (text a role or a
  transform wrote from the source: ``RFC 793`` from ``:rfc:`793```), mapped to the source
  between the copied segments around it.
* *generated*: text the renderer wrote ("Changed in version 3.2: "), mapped to the whole
  source it renders (the directive's first line; for a substitution, the lines using it).

Characters in no segment (separators, collapsed whitespace) take their place from the
neighbouring segments (:meth:`SourceMap.span`).

Source offsets are character offsets into :func:`source_text` of the file: its UTF-8 text
(BOM dropped), line ends as LF, Unicode NFC; for an LF, NFC file (nearly every file) that is
the file's own characters.
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

SECTION_SEPARATOR = " › "
_WORD = re.compile(r"[^\W_]+")  # letters and digits: "_" is markup in Markdown
_SPACE = re.compile(r"\s+")


def source_text(raw: str) -> str:
    """The text source offsets refer to: NFC, CRLF/CR read as LF (nothing stripped)."""
    return unicodedata.normalize("NFC", raw).replace("\r\n", "\n").replace("\r", "\n")


COPIED, PLACED, GENERATED = "copied", "placed", "generated"


@dataclass(frozen=True)
class Segment:
    """``text[text_start:text_end]`` came from ``source[source_start:source_end]``; ``kind``
    (module docstring): copied, placed or generated."""

    text_start: int
    text_end: int
    source_start: int
    source_end: int
    kind: str


@dataclass(frozen=True)
class Heading:
    """A heading line of the rendered text: its start offset, depth (1 = outermost) and text."""

    start: int
    level: int
    title: str


@dataclass(frozen=True)
class Rendered:
    """A rendered document: text, first heading (its title), headings and the source map."""

    text: str
    headings: tuple[Heading, ...]
    segments: tuple[Segment, ...]

    @property
    def title(self) -> str | None:
        return self.headings[0].title if self.headings else None


@dataclass
class _Run:
    start: int
    end: int
    generated: bool
    hint: tuple[int, int]


@dataclass
class TextBuilder:
    """Collects runs into blocks (module docstring); :meth:`rendered` aligns and returns them."""

    source: str
    parts: list[str] = field(default_factory=list)
    pos: int = 0
    runs: list[_Run] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    _block_has_text: bool = False
    _space: bool = False
    _heading: tuple[int, int] | None = None
    _line_starts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._line_starts = [0, *(m.end() for m in re.finditer("\n", self.source))]

    # -- source lines ---------------------------------------------------------------------

    def line_span(self, first: int, last: int) -> tuple[int, int]:
        """Source offsets from the start of 0-based line ``first`` to the end of ``last``."""
        n = len(self._line_starts)
        lo = self._line_starts[min(max(first, 0), n - 1)]
        hi = self._line_starts[last + 1] if 0 <= last + 1 < n else len(self.source)
        return lo, max(lo, hi)

    # -- emitting -------------------------------------------------------------------------

    def _emit(self, text: str, hint: tuple[int, int] | None, generated: bool) -> None:
        if not text:
            return
        self.parts.append(text)
        if hint is not None:
            self.runs.append(_Run(self.pos, self.pos + len(text), generated, hint))
        self.pos += len(text)

    def block(self) -> None:
        """End the current block: the next text starts a new one, after a blank line."""
        self._block_has_text = False
        self._space = False

    def _open(self) -> None:
        if not self._block_has_text:
            if self.pos:
                self._emit("\n\n", None, False)
            self._block_has_text = True
            self._space = False

    def prose(self, text: str, hint: tuple[int, int] | None, generated: bool = False) -> None:
        """Prose: whitespace runs become one space, none at a block's edges."""
        body = _SPACE.sub(" ", text)
        lead, trail = body.startswith(" "), body.endswith(" ")
        body = body.strip()
        if not body:
            self._space = self._space or (bool(text) and self._block_has_text)
            return
        if self._block_has_text and (lead or self._space):
            self._emit(" ", None, False)
        self._open()
        self._emit(body, hint, generated)
        self._space = trail

    def code(self, text: str, hint: tuple[int, int] | None) -> None:
        """A code block of its own: lines kept (trailing spaces and blank edges dropped)."""
        lines = [ln.rstrip() for ln in text.split("\n")]
        while lines and not lines[0]:
            lines.pop(0)
        while lines and not lines[-1]:
            lines.pop()
        if not lines:
            return
        self.block()
        self._open()
        for i, ln in enumerate(lines):
            if i:
                self._emit("\n", None, False)
            self._emit(ln, hint, False)
        self.block()

    def heading(self, level: int) -> None:
        """Start a heading block: its text follows as prose runs, then :meth:`end_heading`."""
        self.block()
        self._heading = (len(self.parts), level)

    def end_heading(self) -> None:
        """Record the heading started by :meth:`heading` (none when it has no text)."""
        if self._heading is None:
            return
        first, level = self._heading
        self._heading = None
        shown = "".join(self.parts[first:]).strip()
        if shown:
            self.headings.append(Heading(self.pos - len(shown), level, shown))
        self.block()

    # -- result ---------------------------------------------------------------------------

    def rendered(self) -> Rendered:
        text = "".join(self.parts)
        return Rendered(text, tuple(self.headings), tuple(align(text, self.source, self.runs)))


def _find_word(source: str, word: str, pos: int, hi: int) -> int:
    """Start of the first occurrence of ``word`` in ``source[pos:hi]`` not inside a longer
    run of letters and digits; -1 if none."""
    n = len(word)
    while True:
        i = source.find(word, pos, hi)
        if i < 0:
            return -1
        if not (i > 0 and source[i - 1].isalnum()) and not (
            i + n < len(source) and source[i + n].isalnum()
        ):
            return i
        pos = i + 1


def _grow(text: str, source: str, seg: list[int], lo: int, hi: int, s_lo: int) -> None:
    """Extends the copied segment ``[ts, te, ss, se]`` over equal characters on both sides,
    inside the text span ``[lo, hi)`` and not below source offset ``s_lo``."""
    while seg[0] > lo and seg[2] > s_lo and text[seg[0] - 1] == source[seg[2] - 1]:
        seg[0] -= 1
        seg[2] -= 1
    while seg[1] < hi and seg[3] < len(source) and text[seg[1]] == source[seg[3]]:
        seg[1] += 1
        seg[3] += 1


def _align_run(text: str, source: str, run: _Run, start: int) -> tuple[list[Segment], int]:
    """Copied segments of one run (module docstring), searching from ``start`` up to the end
    of its hint; and where the search reached."""
    hi = run.hint[1]
    pos = start
    seg: list[int] | None = None
    out: list[Segment] = []
    floor, t_floor = start, run.start  # where the next segment may grow back to

    def close() -> None:
        if seg is not None:
            _grow(text, source, seg, t_floor, run.end, floor)
            out.append(Segment(seg[0], seg[1], seg[2], seg[3], COPIED))

    for m in _WORD.finditer(text, run.start, run.end):
        a = _find_word(source, m.group(), pos, hi)
        if a < 0:
            continue
        b = a + len(m.group())
        if seg is not None and text[seg[1] : m.start()] == source[seg[3] : a]:
            seg[1], seg[3] = m.end(), b
        else:
            close()
            if out:
                floor, t_floor = max(start, out[-1].source_end), out[-1].text_end
            seg = [m.start(), m.end(), a, b]
        pos = b
    close()
    return out, pos


def _placed(text: str, run: _Run, copied: Sequence[Segment]) -> list[Segment]:
    """Placed segments of one run: each stretch with a word that no copied segment covers,
    mapped to the source between the copied segments around it (the run's hint at its
    edges, or where those are out of order)."""
    out: list[Segment] = []
    edges = [(run.start, run.start, run.hint[0]), *((s.text_start, s.text_end, s.source_end)
             for s in copied), (run.end, run.end, run.hint[1])]  # fmt: skip
    for (_, gap_start, s_lo), (gap_end, _, _) in itertools.pairwise(edges):
        if gap_end <= gap_start or _WORD.search(text, gap_start, gap_end) is None:
            continue
        nxt = next((s for s in copied if s.text_start >= gap_end), None)
        s_hi = nxt.source_start if nxt is not None else run.hint[1]
        if s_lo > s_hi:
            s_lo, s_hi = run.hint
        out.append(Segment(gap_start, gap_end, s_lo, s_hi, PLACED))
    return out


def align(text: str, source: str, runs: Iterable[_Run]) -> list[Segment]:
    """The source map of ``text`` (module docstring): runs in text order; a run's words are
    searched from the furthest point reached so far when that lies inside its hint, else
    from the hint's start."""
    out: list[Segment] = []
    reached = 0
    for run in runs:
        lo, hi = run.hint
        if run.generated:
            out.append(Segment(run.start, run.end, lo, hi, GENERATED))
            continue
        copied, end = _align_run(text, source, run, reached if lo <= reached < hi else lo)
        reached = max(reached, end)
        out += copied
        out += _placed(text, run, copied)
    out.sort(key=lambda s: s.text_start)
    return out


# ---------------------------------------------------------------------------------------------
# Using the map


@dataclass(frozen=True)
class SourceMap:
    """A document's segments, searchable by text offset."""

    segments: tuple[Segment, ...]
    starts: tuple[int, ...]

    @classmethod
    def of(cls, segments: Sequence[Segment]) -> SourceMap:
        ordered = tuple(sorted(segments, key=lambda s: s.text_start))
        return cls(ordered, tuple(s.text_start for s in ordered))

    def span(self, start: int, end: int) -> tuple[int, int] | None:
        """Source offsets of ``text[start:end]``: from the first to the last source character
        of the segments it overlaps (a copied segment exactly, a rendered one whole); with
        none, the source between the neighbouring segments. None for an empty map."""
        segs = self.segments
        if not segs:
            return None
        i = max(bisect.bisect_right(self.starts, start) - 1, 0)
        if segs[i].text_end <= start:
            i += 1
        j = bisect.bisect_left(self.starts, end)
        inside = [s for s in segs[i:j] if s.text_end > start and s.text_start < end]
        if not inside:
            before = segs[i - 1].source_end if i > 0 else 0
            after = segs[i].source_start if i < len(segs) else before
            return min(before, after), max(before, after)
        los, his = [], []
        for s in inside:
            if s.kind == COPIED:
                los.append(s.source_start + max(0, start - s.text_start))
                his.append(s.source_start + min(end, s.text_end) - s.text_start)
            else:
                los.append(s.source_start)
                his.append(s.source_end)
        return min(los), max(his)


@dataclass(frozen=True)
class Sections:
    """The section path at any text offset: the headings enclosing it, outermost first, joined
    by :data:`SECTION_SEPARATOR`. A deeper heading nests; one of the same or a shallower level
    closes the sections it ends; a heading's own line is inside its section."""

    starts: tuple[int, ...]
    paths: tuple[str, ...]

    @classmethod
    def of(cls, headings: Sequence[Heading] | None) -> Sections:
        stack: list[Heading] = []
        starts: list[int] = []
        paths: list[str] = []
        for h in headings or ():
            while stack and stack[-1].level >= h.level:
                stack.pop()
            stack.append(h)
            starts.append(h.start)
            paths.append(SECTION_SEPARATOR.join(x.title for x in stack))
        return cls(tuple(starts), tuple(paths))

    def at(self, pos: int) -> str | None:
        """The path in effect at ``pos``; None before the first heading."""
        i = bisect.bisect_right(self.starts, pos) - 1
        return self.paths[i] if i >= 0 else None


def segments_of(cells: Iterable[dict[str, object]] | None) -> tuple[Segment, ...] | None:
    """A ``source_map`` cell of the documents table as segments (None stays None)."""
    if cells is None:
        return None
    return tuple(Segment(**c) for c in cells)  # type: ignore[arg-type]


def headings_of(cells: Iterable[dict[str, object]] | None) -> tuple[Heading, ...] | None:
    """A ``headings`` cell of the documents table as headings (None stays None)."""
    if cells is None:
        return None
    return tuple(Heading(**c) for c in cells)  # type: ignore[arg-type]


def words(text: str) -> list[str]:
    """The words (runs of letters and digits) of ``text``, case-folded."""
    return [w.casefold() for w in _WORD.findall(text)]


def roundtrip_misses(text: str, source: str, smap: SourceMap, start: int, end: int) -> list[str]:
    """What breaks the round trip of ``text[start:end]`` (a chunk, an answer span); empty when
    it holds. With ``[s, e)`` = ``smap.span(start, end)``: ``0 <= s <= e <= len(source)``;
    every copied segment's overlap with the span is the same characters in the source; and
    every word of the span outside generated segments occurs in ``source[s:e]`` modulo markup:
    in the slice's letters and digits run together, case-folded (``Babel`_\\s`` holds
    "Babels", ``:meth:`~Handler.setFormatter``` holds "setFormatter")."""
    span = smap.span(start, end)
    if span is None:
        return ["no source map"]
    s, e = span
    if not 0 <= s <= e <= len(source):
        return [f"source span [{s}:{e}] outside the source ({len(source)} chars)"]
    misses: list[str] = []
    kept: list[str] = []
    pos = start
    i = max(bisect.bisect_right(smap.starts, start) - 1, 0)
    for seg in smap.segments[i:]:
        if seg.text_start >= end:
            break
        if seg.text_end <= start:
            continue
        a, b = max(seg.text_start, start), min(seg.text_end, end)
        if seg.kind == COPIED:
            sa = seg.source_start + a - seg.text_start
            if text[a:b] != source[sa : sa + b - a]:
                misses.append(f"copied text [{a}:{b}] differs from the source at {sa}")
        elif seg.kind == GENERATED:
            kept.append(text[pos:a])
            pos = b
    kept.append(text[pos:end])
    have = "".join(words(source[s:e]))  # letters and digits only: markup inside a word goes
    misses += [w for w in words(" ".join(kept)) if w not in have]
    return misses
