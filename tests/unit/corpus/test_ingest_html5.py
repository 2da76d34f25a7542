"""HTML ingest through a real HTML5 parser: omitted </head>/</body>, entities, nesting."""

from __future__ import annotations

from pathlib import Path

from ragcourt.corpus.ingest import ingest, normalise, parse_html
from ragcourt.corpus.params import CorpusParams

MINIFIED = (
    "<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>Tariffs &amp; Trade</title>"
    "<style>p{margin:0}</style><script>var hidden='script text'</script>"
    "<p>Duties rose by 5&nbsp;% in <b>1890 <i>and</i></b> again&hellip;"
    "<ul><li>cotton<li>wool &lt;raw&gt;</ul>"
    "<div><section><p>Deep <span>nested <em>text</em></span>.</section></div>"
    "<noscript>enable js</noscript><template><p>template text</p></template>"
    "<table><tr><td>a1<td>b1<tr><td>a2<td>b2</table>"
)  # no </head>, no </body>, no </html>, unclosed <p>/<li>/<td>


def test_minified_html_without_head_or_body_end_tags_keeps_the_body() -> None:
    parsed = parse_html(MINIFIED)
    lines = parsed.text.split("\n")
    assert parsed.title == "Tariffs & Trade"
    assert "Duties rose by 5\xa0% in 1890 and again…" in lines
    assert "cotton" in lines and "wool <raw>" in lines
    assert "Deep nested text." in lines
    assert "a1 b1" in lines and "a2 b2" in lines
    for dropped in ("script text", "margin", "enable js", "template text", "Tariffs"):
        assert dropped not in parsed.text


def test_br_is_one_line_break_and_paragraphs_a_blank_line() -> None:
    parsed = parse_html("<p>one<br>two</p><p>three")
    assert normalise(parsed.text) == "one\ntwo\n\nthree"


def test_html_title_falls_back_to_first_h1_with_entities() -> None:
    parsed = parse_html("<h1>Caf&eacute; &#x26; Bar</h1><p>Open daily")
    assert parsed.title == "Café & Bar"
    assert normalise(parsed.text) == "Café & Bar\n\nOpen daily"


def test_minified_and_script_only_pages_through_ingest(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "min.html").write_text(MINIFIED, encoding="utf-8")
    (root / "script_only.htm").write_text(
        "<html><head><script>document.write('x')</script><body><script>run()</script>",
        encoding="utf-8",
    )
    docs, rejected = ingest(CorpusParams(dir=str(root)))
    assert docs["path"].to_list() == [(root / "min.html").as_posix()]
    assert docs["title"].to_list() == ["Tariffs & Trade"]
    assert "Deep nested text." in docs["text"][0]
    assert rejected.rows() == [
        ((root / "script_only.htm").as_posix(), "empty: no text after extraction")
    ]
