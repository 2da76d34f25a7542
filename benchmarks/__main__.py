"""``python -m benchmarks NAME [ARGS...]``: import :mod:`benchmarks.NAME` and call its
``main(ARGS)``; with no ``NAME`` (or ``-h``), list the benchmarks, one line each: the first
sentence of the module's docstring (read from the source, nothing imported)."""

from __future__ import annotations

import ast
import importlib
import re
import sys
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent


def benchmarks() -> dict[str, Path]:
    """Name -> source holding the docstring: every module ``NAME.py`` and subpackage
    ``NAME/__init__.py`` of this package whose name does not start with ``_``."""
    found = {p.stem: p for p in HERE.glob("*.py")}
    found |= {p.parent.name: p for p in HERE.glob("*/__init__.py")}
    return {name: found[name] for name in sorted(found) if not name.startswith("_")}


def summary(source: Path) -> str:
    """The first sentence of the module docstring, on one line."""
    doc = ast.get_docstring(ast.parse(source.read_text(encoding="utf-8"))) or ""
    para = " ".join(doc.split("\n\n")[0].split())
    return re.split(r"(?<=[.?!])\s", para, maxsplit=1)[0]


def listing() -> str:
    found = benchmarks()
    width = max(map(len, found))
    lines = ["usage: python -m benchmarks NAME [ARGS...]  (NAME --help: its options)", ""]
    return "\n".join(lines + [f"{n:<{width}}  {summary(p)}" for n, p in found.items()])


def main(argv: Sequence[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(listing())
        return
    name, rest = args[0], args[1:]
    if name not in benchmarks():
        print(f"python -m benchmarks: unknown benchmark {name!r}\n\n{listing()}", file=sys.stderr)
        raise SystemExit(2)
    sys.argv = [f"python -m benchmarks {name}", *rest]  # argparse's usage line names the entry
    importlib.import_module(f"benchmarks.{name}").main(rest)


if __name__ == "__main__":
    main()
