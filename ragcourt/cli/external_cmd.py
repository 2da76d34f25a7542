"""``ragcourt questions export`` and ``ragcourt answers import``: the offline route for a team
whose RAG system runs elsewhere.

1. ``ragcourt questions export [--format jsonl|csv] [--out FILE]`` writes the QA set's
   ``question_id`` and ``question`` (never the reference answers) to FILE, or to stdout.
2. The team answers each question with its own system and writes an answers file
   (``question_id``, ``answer``, optional ``contexts``, ``latency_s``, ``cost_usd``; see
   :mod:`ragcourt.answering.external.answers_file`).
3. ``ragcourt answers import FILE --system NAME`` checks it against the QA set (any bad row is a
   one-line error naming the row; questions without an answer are listed and will be error
   rows), copies it to ``data/external/NAME.<ext>`` and appends
   ``{name: NAME, kind: answers_file, path: data/external/NAME.<ext>}`` to the systems file
   (``--print-only``: copy, then print the entry instead of editing the file).

The next ``ragcourt run`` answers with it like any other system. A system removed from the
systems file keeps its partition (``data/answers/systems/NAME.parquet``) but is left out of
every table; ``ragcourt answers prune [--dry-run]`` deletes such partitions. Wired into the
main app as
``app.add_typer(questions_app, name="questions")`` and ``app.add_typer(answers_app,
name="answers")``.
"""

from __future__ import annotations

import csv
import io
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ragcourt.cli.consoles import cli_console
from ragcourt.cli.errors import err_console, print_warning, user_errors
from ragcourt.core.catalog import DEFAULT_PARAMS_FILE
from ragcourt.core.spreadsheet import to_row

questions_app = typer.Typer(
    help="The QA set, for a team that answers it with its own system.", no_args_is_help=True
)
answers_app = typer.Typer(
    help="Answers produced outside ragcourt (systems of kind answers_file).", no_args_is_help=True
)
console = cli_console()

ParamsOpt = typer.Option(Path(DEFAULT_PARAMS_FILE), "--params", help="params file")


class ExportFormat(StrEnum):
    jsonl = "jsonl"
    csv = "csv"


def questions_text(rows: list[tuple[str, str]], fmt: ExportFormat) -> str:
    """``(question_id, question)`` rows as JSONL (one object per line) or CSV with a header
    (cells through :func:`~ragcourt.core.spreadsheet.to_cell`: no cell is a formula)."""
    if fmt is ExportFormat.jsonl:
        return "".join(
            json.dumps({"question_id": q, "question": t}, ensure_ascii=False) + "\n"
            for q, t in rows
        )
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["question_id", "question"])
    writer.writerows(to_row(r) for r in rows)
    return buf.getvalue()


def _qa() -> tuple[Path, list[tuple[str, str]]]:
    from ragcourt.answering.stage import QA_PATH, check_questions
    from ragcourt.core.io import read_table

    qa = check_questions(read_table(QA_PATH, "qa"), QA_PATH)
    return QA_PATH, list(qa.select("question_id", "question").iter_rows())


@questions_app.command("export")
@user_errors
def export_questions(
    fmt: Annotated[ExportFormat, typer.Option("--format", help="file format")] = (
        ExportFormat.jsonl
    ),
    out: Annotated[
        Path | None, typer.Option("--out", help="file to write ('-' or none: stdout)")
    ] = (None),
) -> None:
    """Write the QA set's question ids and questions (no reference answers)."""
    from ragcourt.core.io import write_text
    from ragcourt.core.user_files import output_target

    target = None if out is None else output_target(out)  # checked before any work
    source, rows = _qa()
    text = questions_text(rows, fmt)
    if target is None:
        sys.stdout.write(text)
        return
    write_text(text, target)
    err_console.print(f"wrote {len(rows)} questions from {source} to {out}")


@answers_app.command("import")
@user_errors
def import_answers(
    file: Annotated[Path, typer.Argument(help="answers file (.jsonl, .csv or .parquet)")],
    system: Annotated[str, typer.Option("--system", help="name of the new system")],
    params: Path = ParamsOpt,
    print_only: Annotated[
        bool, typer.Option("--print-only", help="copy the file, print the entry, edit nothing")
    ] = False,
    encoding: Annotated[
        str | None,
        typer.Option(
            "--encoding",
            help="text encoding of a .jsonl/.csv file (default: by its byte-order mark, else "
            "UTF-8); the project's copy is written as UTF-8",
        ),
    ] = None,
) -> None:
    """Check an answers file against the QA set and register it as a system."""
    import tempfile

    from ragcourt.answering.external.answers_file import read_answers_file, read_text_file
    from ragcourt.answering.external.registration import imported_path, register_answers_file
    from ragcourt.answering.stage import QA_PATH, check_questions
    from ragcourt.core.io import read_table
    from ragcourt.orchestration.params import load_params

    p = load_params(params)
    imported_path(system, file)  # name and suffix first: one-line errors before reading
    qa = check_questions(read_table(QA_PATH, "qa"), QA_PATH)
    checked = read_answers_file(file, qa, encoding)

    with_contexts = sum(1 for r in checked.replies.values() if r.contexts)
    console.print(
        f"{file}: {len(checked.replies)} answers for {qa.height} questions "
        f"({with_contexts} with contexts)"
    )
    if checked.unanswered:
        shown = ", ".join(checked.unanswered[:10]) + (
            ", ..." if len(checked.unanswered) > 10 else ""
        )
        print_warning(
            f"{len(checked.unanswered)} questions have no answer and will be error "
            f"rows of '{system}': {shown}"
        )
    with tempfile.TemporaryDirectory(prefix="ragcourt-import-") as tmp:
        source = file
        if file.suffix.lower() in (".jsonl", ".csv"):  # the project keeps its copy as UTF-8
            source = Path(tmp) / file.name
            source.write_text(read_text_file(file, encoding), encoding="utf-8")
        reg = register_answers_file(source, system, p, edit_systems_file=not print_only)
    dest = imported_path(system, file)
    if reg.state == "added":
        console.print(f"copied to {dest}; added system '{system}' to {reg.systems_file}")
    elif reg.state == "present":
        console.print(f"copied to {dest}; '{system}' is already in {reg.systems_file}")
    else:
        console.print(f"copied to {dest}; add this item to 'systems' in {reg.systems_file}:")
        console.print(f"  - {reg.entry}")


@answers_app.command("prune")
@user_errors
def prune_answers(
    params: Path = ParamsOpt,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="list the partitions, delete nothing")
    ] = False,
) -> None:
    """Delete the answer partitions of systems the systems file no longer lists."""
    from ragcourt.answering.stage import prune_partitions, unlisted_partitions
    from ragcourt.answering.systems import load_systems
    from ragcourt.orchestration.params import load_params

    p = load_params(params)
    systems = load_systems(p)
    listed = unlisted_partitions(systems)  # what will go is shown before anything goes
    for path in listed:
        console.print(f"will delete {path}", markup=False, highlight=False)
    if dry_run:
        console.print(
            f"would delete {len(listed)} partition file(s) of systems not in {p.systems_file}"
        )
        return
    removed = prune_partitions(systems)
    console.print(f"deleted {len(removed)} partition file(s) of systems not in {p.systems_file}")
