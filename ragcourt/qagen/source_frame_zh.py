"""The source a Chinese question asked in place cites: its document's title and dateline.

A question asked in place keeps its sentence's words (:mod:`.in_place_zh`), and a news
sentence seldom names the talks, visit or report it belongs to, nor when:
``英国支持中国成为哪个机构正式成员？`` (which talks?). The document's title names them and a
news dateline (``新华社北京１月１９日电``) dates them, so the question opens by citing both,
as Chinese cites a source: ``据《中英外长会谈》（１月１９日）报道，英国支持中国成为哪个机构正式
成员？``; a document with no dateline: ``据《title》，……？``. This is decontextualisation by
the document's own words (Choi et al., 2021, bring the title and context a sentence leans on
into it), with no model call.

A title that is no title frames nothing: a byline (``本报记者卢新宁``), a dateline or a note
in brackets, a list heading (``四、……``), fewer than :data:`MIN_TITLE_CHARS` Chinese
characters (a name: ``李霞``), more than :data:`MAX_TITLE_CHARS` characters, or a title that
itself leans on a context (``该公司``, ``今年``:
:func:`~ragcourt.qagen.questions_zh.leans_on_context`). A question that already cites its
source (``据……``) is left as it is.
"""

from __future__ import annotations

import re

from ragcourt.corpus.answer_match import fold_width
from ragcourt.corpus.language import HAN_CHAR
from ragcourt.qagen.in_place_zh import ASIDE
from ragcourt.qagen.questions_zh import leans_on_context

#: the fewest Chinese characters of a title that frames a question (a name has 2 to 4)
MIN_TITLE_CHARS = 6
#: the most characters of a title that frames a question
MAX_TITLE_CHARS = 40
_NOT_A_TITLE = re.compile(
    r"^(?:本报|新华社|中新社|据|[0-9０-９]|[一二三四五六七八九十]+、|第[^\s]{1,4}[章节])|记者|[《》]"
)
_NUM = "[0-9０-９一二三四五六七八九十]"
# a news dateline: who filed it (新华社, 本报, 中新社), where, and the date (a year optional)
_DATELINE_DATE = re.compile(
    rf"(?:新华社|中新社|本报)[^，。：（\s]{{0,12}}?((?:{_NUM}{{4}}年)?{_NUM}{{1,3}}月{_NUM}{{1,3}}日)电"
)


def frame_title(title: str | None) -> str | None:
    """``title`` as a question cites it (asides dropped, white space removed), or None when it
    is no title (module docstring)."""
    if not title:
        return None
    shown = re.sub(r"\s+", "", ASIDE.sub("", title))
    if (
        len(HAN_CHAR.findall(shown)) < MIN_TITLE_CHARS
        or len(shown) > MAX_TITLE_CHARS
        or _NOT_A_TITLE.search(shown)
        or leans_on_context(shown) is not None
    ):
        return None
    return shown


def dateline_date(text: str) -> str | None:
    """The date of the first news dateline of ``text`` as written (``１月１９日``), or None."""
    m = _DATELINE_DATE.search(fold_width(text))
    return text[m.start(1) : m.end(1)] if m else None


def source_frame(title: str | None, first_chunk: str | None) -> str | None:
    """The citation a question of this document opens with (``据《title》（date）报道，`` with
    the dateline of the document's ``first_chunk``, else ``据《title》，``), or None when the
    document's ``title`` is no title."""
    shown = frame_title(title)
    if shown is None:
        return None
    date = dateline_date(first_chunk or "")
    return f"据《{shown}》（{date}）报道，" if date else f"据《{shown}》，"


def framed(question: str, frame: str | None) -> str:
    """``question`` opened by its source ``frame``; a question citing its source already
    (``据……``), or no frame, as it is."""
    if frame is None or question.startswith("据"):
        return question
    return frame + question
