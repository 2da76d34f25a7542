"""reStructuredText rendered to plain text through docutils, with headings and a source map
(:mod:`ragcourt.corpus.markup_map`).

What becomes of the markup:

* Roles become their text. Sphinx's rules: ``title <target>`` shows ``title``; a leading ``!``
  or ``.`` is dropped; ``~a.b.c`` shows the last component ``c`` (``:meth:`~Handler.format```
  -> ``format``). No ``()`` is added to functions. ``{x}`` in ``:samp:``/``:file:`` shows
  ``x``, ``&`` in ``:guilabel:``/``:menuselection:`` is dropped, ``-->`` in a menu selection
  is ``‣``. docutils' own roles (``:pep:`8``` -> ``PEP 8``, ``:emphasis:``, ``:code:``,
  ``:math:``...) render as docutils renders them; every other role name found in the file is
  registered with the rule above (no unknown role reaches docutils).
* Directives: ``versionadded``/``versionchanged``/``deprecated``/``versionremoved``
  (and CPython's ``deprecated-removed``) become a sentence ("Changed in version 3.2: ...");
  admonitions (``note``, ``warning``...) and ``seealso`` start with their label ("Note:
  ..."); code (``code``, ``code-block``, ``sourcecode``, ``doctest``, ``testcode``,
  ``testoutput``, ``::`` blocks, ``>>>`` blocks) keeps its lines. Object descriptions
  (``function``, ``class``, ``py:method``, any unknown directive) show their arguments as a
  line and their content. Directives with no prose (``toctree``, ``index``, ``module``,
  ``literalinclude``, ``contents``, ``auto*``, ``graphviz``...) are dropped.
* Dropped: comments, link targets, substitution definitions (their uses are replaced, as
  rendered text mapped to the paragraph that uses them),
  footnote and citation markers (the notes' text stays), images, raw output, docutils'
  messages. Tables become one line per row, cells joined by `` | ``.

Safety: ``file_insertion_enabled`` and ``raw_enabled`` are off (``.. include::``, ``:file:``
options and ``.. raw::`` never read a file or a URL, and a raw node is never rendered); no
docutils configuration file is read; messages are neither shown nor fatal
(``report_level``/``halt_level`` 5); a docutils exception propagates (``traceback``) so the
file is a rejected row, never an exit of the parser process.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from docutils import nodes, utils
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, directives, roles
from docutils.parsers.rst.languages import en
from docutils.readers.standalone import Reader
from docutils.transforms import Transform

from ragcourt.corpus.markup_map import Rendered, TextBuilder, source_text

SETTINGS: dict[str, Any] = {
    "report_level": 5,
    "halt_level": 5,
    "warning_stream": False,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "_disable_config": True,
    "traceback": True,
    "doctitle_xform": False,
    "docinfo_xform": False,
    "sectsubtitle_xform": False,
    "smart_quotes": False,
    "syntax_highlight": "none",
    "pep_references": False,
    "rfc_references": False,
    "language_code": "en",
    "line_length_limit": 10_000_000,
}

# docutils roles kept as docutils renders them; any other role name is registered below
DOCUTILS_ROLES = frozenset(
    {"abbreviation", "ab", "acronym", "ac", "code", "emphasis", "literal", "math",
     "pep-reference", "pep", "rfc-reference", "rfc", "strong", "subscript", "sub",
     "superscript", "sup", "title-reference", "title", "t", "raw"}
)  # fmt: skip

VERSION_LABELS = {
    "versionadded": "Added in version {0}",
    "versionchanged": "Changed in version {0}",
    "deprecated": "Deprecated since version {0}",
    "versionremoved": "Removed in version {0}",
    "deprecated-removed": "Deprecated since version {0}, will be removed in version {1}",
}
LABELS = {
    "attention": "Attention", "caution": "Caution", "danger": "Danger", "error": "Error",
    "hint": "Hint", "important": "Important", "note": "Note", "tip": "Tip",
    "warning": "Warning", "seealso": "See also", "impl-detail": "CPython implementation detail",
    "availability": "Availability",
}  # fmt: skip
CODE_DIRECTIVES = frozenset(
    {"code", "code-block", "sourcecode", "doctest", "testcode", "testoutput", "productionlist",
     "code-cell", "ipython", "jupyter-execute"}
)  # fmt: skip
DROPPED_DIRECTIVES = frozenset(
    {"toctree", "index", "highlight", "currentmodule", "module", "py:module",
     "py:currentmodule", "c:namespace", "moduleauthor", "sectionauthor", "codeauthor",
     "literalinclude", "tabularcolumns", "default-domain", "testsetup", "testcleanup", "todo",
     "todolist", "autosummary", "automodule", "autoclass", "autofunction", "automethod",
     "autoattribute", "autodata", "autoexception", "autodecorator", "autoproperty",
     "graphviz", "digraph", "graph", "inheritance-diagram", "plot", "mermaid", "contents",
     "program", "audit-event", "audit-event-table", "limited-api-list", "miscnews",
     "include", "raw", "only-if-html"}
)  # fmt: skip
# directives docutils implements and keeps (the rest of its names are ours or dropped)
_DOCUTILS_KEEP = frozenset(
    {"attention", "caution", "danger", "error", "hint", "important", "note", "tip", "warning",
     "admonition", "sidebar", "topic", "line-block", "parsed-literal", "math", "rubric",
     "epigraph", "highlights", "pull-quote", "compound", "container", "table", "csv-table",
     "list-table", "image", "figure", "sectnum", "header", "footer", "target-notes", "meta",
     "replace", "unicode", "class", "role", "default-role", "title", "date"}
)  # fmt: skip

_ROLE_NAME = r"[A-Za-z0-9](?:[\w.+:-]*\w)?"
_ROLE_USE = re.compile(rf"(?<![\w`]):({_ROLE_NAME}):(?=`)|(?<=`):({_ROLE_NAME}):")
_DIRECTIVE_USE = re.compile(rf"^[ \t]*\.\.[ \t]+({_ROLE_NAME})[ \t]*::", re.MULTILINE)
_EXPLICIT_TITLE = re.compile(r"^(.+?)\s*(?<!\x00)<(.*?)>$", re.DOTALL)
_RAW_ROLE = re.compile(rf":{_ROLE_NAME}:`((?:[^`\\]|\\.)*)`|`((?:[^`\\]|\\.)*)`:{_ROLE_NAME}:")


# ---------------------------------------------------------------------------------------------
# Roles


def role_text(name: str, text: str) -> str:
    """What a role shows (module docstring: Sphinx's title, ``!``, ``.`` and ``~`` rules)."""
    text = utils.unescape(text)
    m = _EXPLICIT_TITLE.match(text)
    if m is not None:
        return m.group(1)
    if text.startswith("!"):
        text = text[1:]
    if text.startswith("~"):
        text = text[1:].lstrip(".").rsplit(".", 1)[-1]
    elif text.startswith(".") and len(text) > 1:
        text = text[1:]
    base = name.rsplit(":", 1)[-1]
    if base in ("samp", "file"):
        text = re.sub(r"(?<!\\)[{}]", "", text)
    elif base in ("guilabel", "menuselection"):
        text = text.replace("&&", "\x00").replace("&", "").replace("\x00", "&")
        if base == "menuselection":
            text = text.replace("-->", "‣")
    return text


def sphinx_role(
    name: str,
    rawtext: str,
    text: str,
    lineno: int,
    inliner: Any,
    options: dict[str, Any] | None = None,
    content: Sequence[str] | None = None,
) -> tuple[list[nodes.Node], list[nodes.system_message]]:
    """Any role docutils does not know: its text by :func:`role_text`, as inline literal
    (docutils' role protocol; its stubs declare reference nodes)."""
    return [nodes.literal(rawtext, role_text(name, text))], []


def strip_problematic(raw: str) -> str:
    """Text of markup docutils could not interpret (an undefined substitution, an unclosed
    literal): role calls as :func:`role_text`, then backquotes, ``|`` and ``*`` dropped."""
    raw = _RAW_ROLE.sub(lambda m: role_text("", m.group(1) or m.group(2) or ""), raw)
    return raw.strip("`|*_").replace("``", "")


# ---------------------------------------------------------------------------------------------
# Directives


class _AnyOptions(dict[str, Callable[[str | None], Any]]):
    """An option spec accepting every option (its value kept as text); true even when empty,
    so docutils parses a directive's options instead of taking them for its content."""

    def __bool__(self) -> bool:
        return True

    def __missing__(self, key: str) -> Callable[[str | None], Any]:
        return directives.unchanged


def _located(node: nodes.Element, directive: Directive) -> nodes.Element:
    node.source, node.line = directive.state_machine.get_source_and_line(directive.lineno)
    return node


def _labelled(directive: Directive, label: str, rest: str | None = None) -> list[nodes.Node]:
    """``label: <rest> <content>``: the label (generated text) leads the first paragraph."""
    box = _located(nodes.container(), directive)
    if rest:
        inline, _ = directive.state.inline_text(rest, directive.lineno)
        box += _located(nodes.paragraph(rest, "", *inline), directive)
    directive.state.nested_parse(directive.content, directive.content_offset, box)
    lead = _located(nodes.generated("", label), directive)
    if box.children and isinstance(box[0], nodes.paragraph):
        box[0].insert(0, lead)
        lead += nodes.Text(": ")
    else:
        lead += nodes.Text(".")
        box.insert(0, _located(nodes.paragraph("", "", lead), directive))
    return [box]


class _LenientDirective(Directive):
    """A directive that takes any options, one argument and content (Sphinx documents use
    many a plain docutils parser does not know)."""

    optional_arguments = 1
    final_argument_whitespace = True
    has_content = True
    option_spec: ClassVar[dict[str, Any]] = _AnyOptions()


class VersionDirective(_LenientDirective):
    """``versionchanged:: 3.2 [text]`` and its kin: "Changed in version 3.2: text"."""

    required_arguments = 1
    optional_arguments = 2

    def run(self) -> list[nodes.Node]:
        args = list(self.arguments)
        versions = 2 if self.name == "deprecated-removed" and len(args) > 1 else 1
        label = VERSION_LABELS[self.name].format(*args[:versions], "?")
        return _labelled(self, label, " ".join(args[versions:]) or None)


class LabelledDirective(_LenientDirective):
    """``seealso``, ``impl-detail``, ``availability``: "Label: [arguments] content"."""

    def run(self) -> list[nodes.Node]:
        return _labelled(self, LABELS[self.name], self.arguments[0] if self.arguments else None)


class CodeDirective(_LenientDirective):
    """Code: its content's lines as a literal block (any options accepted, none used)."""

    def run(self) -> list[nodes.Node]:
        lines = list(self.content)
        if self.name == "productionlist" and self.arguments:
            lines = [*self.arguments[0].split("\n"), *lines]
        text = "\n".join(lines)
        node = nodes.literal_block(text, text)
        node.source, node.line = self.state_machine.get_source_and_line(self.content_offset + 1)
        return [node]


class DroppedDirective(_LenientDirective):
    """A directive with no prose of its own: nothing."""

    def run(self) -> list[nodes.Node]:
        return []


class DescribeDirective(_LenientDirective):
    """Any other directive (object descriptions, unknown extensions): each argument line
    (``\\``-continued lines joined) as a literal line, then the content."""

    def run(self) -> list[nodes.Node]:
        box = _located(nodes.container(), self)
        if self.arguments:
            joined = re.sub(r"\\\n\s*", " ", self.arguments[0])
            for line in joined.split("\n"):
                if line.strip():
                    box += _located(nodes.paragraph("", "", nodes.literal(line, line)), self)
        self.state.nested_parse(self.content, self.content_offset, box)
        return [box]


def _directive_for(name: str) -> type[Directive]:
    if name in VERSION_LABELS:
        return VersionDirective
    if name in LABELS:
        return LabelledDirective
    if name in CODE_DIRECTIVES:
        return CodeDirective
    if name in DROPPED_DIRECTIVES:
        return DroppedDirective
    return DescribeDirective


def _register_sphinx_names() -> None:
    """Our directives under Sphinx's names and docutils' ``code``/``contents``."""
    for name in (*VERSION_LABELS, "seealso", "impl-detail", "availability",
                 *CODE_DIRECTIVES, *DROPPED_DIRECTIVES):  # fmt: skip
        directives.register_directive(name, _directive_for(name))


_registered = False


def register_names(source: str) -> None:
    """Registers a handler for every role and directive name ``source`` uses that docutils
    does not keep (module docstring), so none is unknown when docutils parses it."""
    global _registered
    if not _registered:
        _register_sphinx_names()
        _registered = True
    for m in _ROLE_USE.finditer(source):
        name = (m.group(1) or m.group(2)).lower()
        if name not in DOCUTILS_ROLES:
            roles.register_local_role(name, sphinx_role)  # type: ignore[arg-type]
    for m in _DIRECTIVE_USE.finditer(source):
        name = m.group(1).lower()
        kept = name in _DOCUTILS_KEEP or en.directives.get(name) in _DOCUTILS_KEEP
        if not kept and name not in VERSION_LABELS and name not in LABELS:
            directives.register_directive(name, _directive_for(name))


# ---------------------------------------------------------------------------------------------
# The doctree as text

SKIPPED = (
    nodes.comment, nodes.target, nodes.substitution_definition, nodes.system_message,
    nodes.pending, nodes.raw, nodes.image, nodes.meta, nodes.decoration,
    nodes.footnote_reference, nodes.citation_reference, nodes.label, nodes.problematic,
)  # fmt: skip
CODE = (nodes.literal_block, nodes.doctest_block, nodes.math_block)
ADMONITIONS: dict[type[nodes.Element], str] = {cls: LABELS[cls.__name__] for cls in (
    nodes.attention, nodes.caution, nodes.danger, nodes.error, nodes.hint, nodes.important,
    nodes.note, nodes.tip, nodes.warning)}  # fmt: skip


class _Walker:
    """Renders a doctree into a :class:`TextBuilder` (module docstring), in document order."""

    def __init__(self, builder: TextBuilder) -> None:
        self.b = builder
        self.flat = 0  # > 0 inside a table cell: blocks become spaces
        self.join = False  # the next paragraph continues the current block (after a label)
        self._hints: dict[int, tuple[int, int]] = {}

    def _located(self, node: nodes.Node | None) -> tuple[nodes.Node, int] | None:
        """The nearest ancestor-or-self with a line number, and that 0-based line; None when
        it is a section or the document (too coarse to search in)."""
        while node is not None and getattr(node, "line", None) is None:
            node = node.parent
        if node is None or isinstance(node, nodes.section | nodes.document):
            return None
        return node, int(getattr(node, "line", 1) or 1) - 1

    def hint(self, node: nodes.Node | None) -> tuple[int, int]:
        """Source span to search a node's text in: the lines of its nearest located ancestor
        (docutils gives a block's first line, a title's underline), with two lines of slack
        before and one after."""
        found = self._located(node)
        if found is None:
            return (0, len(self.b.source))
        where, line = found
        key = id(where)
        if key not in self._hints:
            n_lines = where.astext().count("\n") + 1 if isinstance(where, nodes.TextElement) else 1
            self._hints[key] = self.b.line_span(line - 2, line + n_lines)
        return self._hints[key]

    def marker(self, node: nodes.Node | None) -> tuple[int, int]:
        """Source span of the directive that generated ``node``'s text: the nearest line
        starting with ``..`` at or up to three lines above its located line (else its hint)."""
        found = self._located(node)
        if found is None:
            return (0, len(self.b.source))
        line = found[1]
        for at in range(line, max(line - 4, -1), -1):
            lo, hi = self.b.line_span(at, at)
            if self.b.source[lo:hi].lstrip().startswith(".. "):
                return lo, hi
        return self.hint(node)

    def block(self) -> None:
        """A block boundary (a space inside a table cell)."""
        if self.flat:
            self.b.prose(" ", None)
        else:
            self.b.block()

    def inline(self, node: nodes.Node) -> None:
        for child in node.children:
            if isinstance(child, nodes.Text):
                self.b.prose(child.astext(), self.hint(child))
            elif isinstance(child, nodes.problematic):
                self.b.prose(strip_problematic(child.astext()), self.hint(child))
            elif isinstance(child, nodes.generated):
                self.b.prose(child.astext(), self.marker(child), generated=True)
            elif isinstance(child, substituted):
                self.b.prose(child.astext(), self.hint(child), generated=True)
            elif isinstance(child, SKIPPED):
                continue
            elif isinstance(child, nodes.Element):
                self.inline(child)

    def para(self, node: nodes.Element) -> None:
        """One prose block (a paragraph, a term, a caption...)."""
        if not self.join:
            self.block()
        self.join = False
        self.inline(node)
        self.block()

    def walk(self, node: nodes.Node, depth: int = 0) -> None:
        if isinstance(node, SKIPPED):
            return
        if isinstance(node, nodes.Text):
            self.b.prose(node.astext(), self.hint(node))
        elif isinstance(node, nodes.section):
            self.section(node, depth + 1)
        elif isinstance(node, CODE):
            if self.flat:
                self.b.prose(node.astext(), self.hint(node))
            else:
                self.b.code(node.astext(), self.hint(node))
        elif isinstance(node, nodes.Element) and type(node) in ADMONITIONS:
            self.lead(node, depth, label=ADMONITIONS[type(node)])
        elif isinstance(node, nodes.admonition | nodes.field | nodes.option_list_item) and len(
            node
        ):
            self.lead(node, depth, head=node[0])
        elif isinstance(node, nodes.table):
            self.table(node, depth)
        elif isinstance(node, nodes.definition_list_item):
            self.block()
            for child in node.children:
                if isinstance(child, nodes.term | nodes.classifier):
                    self.b.prose(" ", None)
                    self.inline(child)
                else:
                    self.walk(child, depth)
        elif isinstance(node, nodes.TextElement):
            self.para(node)
        else:
            for child in node.children:
                self.walk(child, depth)

    def lead(
        self, node: nodes.Element, depth: int, label: str = "", head: nodes.Node | None = None
    ) -> None:
        """``label: `` (generated) or ``head: `` (an admonition's title, a field's name)
        leading the first paragraph of the rest."""
        self.block()
        if head is None:
            self.b.prose(f"{label}: ", self.marker(node), generated=True)
        else:
            self.inline(head)
            self.b.prose(": ", None)
        self.join = True
        for child in node.children[0 if head is None else 1 :]:
            self.walk(child, depth)
        self.join = False

    def section(self, node: nodes.section, level: int) -> None:
        first = 0
        if node.children and isinstance(node[0], nodes.title) and not self.flat:
            self.b.heading(level)
            self.inline(node[0])
            self.b.end_heading()
            first = 1
        for child in node.children[first:]:
            self.walk(child, level)

    def table(self, node: nodes.table, depth: int) -> None:
        """One block per row, cells joined by `` | `` (a title first)."""
        for child in node.children:
            if isinstance(child, nodes.title):
                self.para(child)
        for row in node.findall(nodes.row):
            self.block()
            self.flat += 1
            for i, entry in enumerate(row.children):
                if i:
                    self.b.prose(" | ", None)
                for child in entry.children:
                    self.walk(child, depth)
            self.flat -= 1
            self.block()


class substituted(nodes.Inline, nodes.TextElement):  # docutils names node classes in lower case
    """A substitution definition's text where it is used: rendered text (it is not in the
    source where it stands), mapped to the paragraph that uses it."""


class MarkSubstitutions(Transform):
    """Wraps each substitution definition's content in :class:`substituted` before docutils
    copies it to the references (its Substitutions transform has priority 220)."""

    default_priority = 210

    def apply(self, **kwargs: Any) -> None:
        for definition in self.document.findall(nodes.substitution_definition):
            kids = list(definition.children)
            definition.clear()
            definition += substituted("", "", *kids)


class _Reader(Reader):  # type: ignore[type-arg]
    def get_transforms(self) -> list[type[Transform]]:
        return [*super().get_transforms(), MarkSubstitutions]


def render_rst(raw: str) -> Rendered:
    """Text, headings and source map of reStructuredText ``raw`` (module docstring); the map
    refers to :func:`~ragcourt.corpus.markup_map.source_text` of ``raw``."""
    source = source_text(raw)
    register_names(source)
    doctree = publish_doctree(source, reader=_Reader(), settings_overrides=SETTINGS)
    builder = TextBuilder(source)
    _Walker(builder).walk(doctree)
    return builder.rendered()
