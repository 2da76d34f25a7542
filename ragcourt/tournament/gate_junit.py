"""The gate's result as JUnit XML, the test-report format CI systems show natively.

One ``<testsuite name="ragcourt gate">`` with one ``<testcase>`` per candidate
(``classname`` = ``gate.<view>``, ``name`` = "<candidate> vs <baseline>"): a ``worse`` candidate
is a ``<failure>``, an ``undecided`` one an ``<error>`` (the data cannot decide: not a pass),
``not worse`` and ``better`` pass; a failed validity check is one more testcase named
``validity`` with a ``<failure>``. Built with :mod:`xml.etree.ElementTree`, so system names
(user text) are escaped as XML data; characters XML 1.0 cannot hold (C0 controls other than
tab, newline and carriage return) are written as ``\\xNN`` first.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from ragcourt.core.io import write_with
from ragcourt.tournament.gate import UNDECIDED, WORSE, GateResult, lines

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_safe(text: str) -> str:
    """``text`` without the characters XML 1.0 forbids (each written as ``\\xNN``)."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _case(suite: ET.Element, classname: str, name: str) -> ET.Element:
    return ET.SubElement(suite, "testcase", classname=xml_safe(classname), name=xml_safe(name))


def junit_xml(result: GateResult) -> str:
    """The JUnit document (UTF-8 XML declaration included) of one gate result."""
    rows = lines(result)
    failures = sum(c.verdict == WORSE for c in result.candidates)
    errors = sum(c.verdict == UNDECIDED for c in result.candidates)
    invalid = result.validity.status == "failed"
    suite = ET.Element(
        "testsuite",
        name="ragcourt gate",
        tests=str(len(result.candidates) + int(invalid)),
        failures=str(failures + int(invalid)),
        errors=str(errors),
        skipped="0",
    )
    props = ET.SubElement(suite, "properties")
    for key, value in (
        ("view", result.view),
        ("baseline", result.baseline),
        ("margin", f"{result.margin:g} {result.unit}"),
        ("exit_code", str(result.exit_code)),
        ("validity", f"{result.validity.status}: {result.validity.detail}"),
        ("method", result.method_note),
    ):
        ET.SubElement(props, "property", name=key, value=xml_safe(value))
    classname = f"gate.{result.view}"
    if invalid:
        case = _case(suite, classname, "validity")
        fail = ET.SubElement(case, "failure", message=xml_safe(result.validity.detail))
        fail.text = xml_safe("\n".join(result.validity.failed_pairs))
    for cand, line in zip(result.candidates, rows, strict=False):
        case = _case(suite, classname, f"{cand.candidate} vs {result.baseline}")
        if cand.verdict == WORSE:
            ET.SubElement(case, "failure", message=xml_safe(line), type="worse").text = xml_safe(
                line
            )
        elif cand.verdict == UNDECIDED:
            ET.SubElement(case, "error", message=xml_safe(line), type="undecided").text = xml_safe(
                line
            )
        else:
            ET.SubElement(case, "system-out").text = xml_safe(line)
    ET.indent(suite)
    body: str = ET.tostring(suite, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def write_junit(result: GateResult, path: Path) -> None:
    """Write :func:`junit_xml` to ``path`` atomically."""
    text = junit_xml(result)

    def put(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8")

    write_with(path, put)
