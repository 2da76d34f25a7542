"""``dvc repro`` with a rich progress bar: DVC's own output lines drive the bar.

DVC prints ``Running stage 'x':`` before a stage runs and ``Stage 'x' didn't change, skipping``
for an up-to-date one; each advances the bar by one stage. The full output is kept and shown
when DVC fails.

DVC exits 255 whatever a failing stage's code was; :func:`repro` returns the stage's own code
(:func:`stage_exit_code`): the one the stage wrote to ``$RAGCOURT_EXIT_CODE_FILE``
(:func:`ragcourt.core.entry.record_exit_code`), else the one DVC names (``exited with N``;
a stage killed by signal N, which DVC shows as ``-N``, is 128+N).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from ragcourt.cli.consoles import cli_console
from ragcourt.core.entry import EXIT_CODE_FILE

RUNNING = re.compile(r"^Running stage '([^']+)'")
SKIPPED = re.compile(r"^Stage '([^']+)' didn't change, skipping")
EXITED = re.compile(r"failed to run: .*, exited with (-?\d+)")


def stage_exit_code(dvc_code: int, output: Iterable[str], recorded: str) -> int:
    """The exit code ``ragcourt run`` reports for a ``dvc repro`` that exited ``dvc_code``:
    0 stays 0; else the last code a stage recorded (``recorded``: the exit-code file's text),
    else the last ``exited with N`` in DVC's ``output`` (-N -> 128+N), else ``dvc_code``."""
    if dvc_code == 0:
        return 0
    codes = [int(c) for c in recorded.split() if c.lstrip("-").isdigit()]
    if codes and codes[-1] > 0:
        return codes[-1]
    for line in reversed(list(output)):
        if m := EXITED.search(line):
            n = int(m.group(1))
            return 128 - n if n < 0 else n or dvc_code
    return dvc_code


def stage_count(root: Path, targets: list[str]) -> int | None:
    """How many stages ``dvc repro targets`` considers (None when DVC cannot tell)."""
    try:
        from dvc.repo import Repo

        with Repo(str(root)) as repo:
            if not targets:
                return len(repo.index.stages)
            graph = repo.index.graph
            chosen = {s for t in targets for s in repo.stage.collect(t)}
            import networkx as nx

            upstream = set(chosen)
            for s in chosen:
                upstream |= nx.descendants(graph, s)  # DVC edges point from a stage to its deps
            return len(upstream)
    except Exception:
        return None


def repro(
    root: Path, targets: list[str], force: bool = False, console: Console | None = None
) -> int:
    """Run ``dvc repro`` in ``root``; return the failing stage's exit code
    (:func:`stage_exit_code`), 0 when it succeeds."""
    console = console or cli_console(stderr=True)
    cmd = [sys.executable, "-m", "dvc", "repro", *(["--force"] if force else []), *targets]
    total = stage_count(root, targets)
    tail: deque[str] = deque(maxlen=60)
    columns = [
        TextColumn("dvc repro {task.description}", style="bold", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ]
    fd, exit_file = tempfile.mkstemp(prefix="ragcourt-exit-", suffix=".txt")
    os.close(fd)
    env = {**os.environ, EXIT_CODE_FILE: exit_file}
    with Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("starting", total=total)
        proc = subprocess.Popen(
            cmd,
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        assert proc.stdout is not None
        running: str | None = None  # a stage counts as done when the next one starts
        for line in proc.stdout:
            line = line.rstrip()
            tail.append(line)
            if m := RUNNING.match(line):
                if running is not None:
                    bar.advance(task)
                running = m.group(1)
                bar.update(task, description=running)
                bar.console.print(Text.assemble(("running", "cyan"), f" {running}"))
            elif m := SKIPPED.match(line):
                bar.update(task, description=f"{m.group(1)} (unchanged)")
                bar.advance(task)
        code = proc.wait()
        if running is not None and code == 0:
            bar.advance(task)
        bar.update(task, description="done" if code == 0 else f"failed in {running}")
    recorded = Path(exit_file).read_text(encoding="utf-8")
    Path(exit_file).unlink(missing_ok=True)
    if code != 0:
        console.print("\n".join(tail), markup=False, highlight=False, soft_wrap=True)
    return stage_exit_code(code, tail, recorded)
