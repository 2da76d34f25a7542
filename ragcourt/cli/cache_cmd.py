"""``ragcourt cache stats|clear|verify|migrate``: the LLM reply cache (``llm.cache_dir``).

None of them prints a traceback for a damaged cache: ``stats`` reports the damage, ``clear``
moves a damaged file aside and starts empty, ``verify`` exits 1 while damage is left
(``--repair`` fixes it), ``migrate`` imports an old pickled diskcache without running code.
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.text import Text

from ragcourt.cli.consoles import cli_console
from ragcourt.cli.errors import user_errors
from ragcourt.core.catalog import DEFAULT_PARAMS_FILE

app = typer.Typer(help="The LLM reply cache (params llm.cache_dir).", no_args_is_help=True)
console = cli_console()

ParamsOpt = typer.Option(Path(DEFAULT_PARAMS_FILE), "--params", help="params file (llm.cache_dir)")
DirOpt = typer.Option(None, "--cache-dir", help="cache folder; overrides llm.cache_dir")
RepairOpt = typer.Option(False, "--repair", help="move a bad file aside, delete bad entries")
FromOpt = typer.Option(None, "--from", help="old diskcache file (default: <cache dir>/cache.db)")


def _cache_dir(params: Path, cache_dir: Path | None) -> Path:
    """``--cache-dir``, else ``llm.cache_dir`` of the params file (a bad file: RagcourtError)."""
    if cache_dir is not None:
        return cache_dir
    from ragcourt.orchestration.params import load_params

    return Path(load_params(params).llm.cache_dir)


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


@app.command()
@user_errors
def stats(params: Path = ParamsOpt, cache_dir: Path | None = DirOpt) -> None:
    """Print the cache folder, its entry count and its size on disk."""
    from ragcourt.llm.cache import ReplyCache

    cache = ReplyCache(_cache_dir(params, cache_dir))
    s = cache.stats()
    cache.close()
    console.print(f"cache: {s['directory']}")
    console.print(f"entries: {s['entries']}")
    console.print(f"size: {_human(s['size_bytes'])}")
    if s["file_damage"]:
        console.print(
            Text.assemble(
                ("damaged:", "yellow"),
                f" {cache.path}: {s['file_damage']} "
                "(`ragcourt cache verify --repair` moves it aside)",
            )
        )
    if s["legacy_diskcache"]:
        console.print("old pickled diskcache present (not read): run `ragcourt cache migrate`")


@app.command()
@user_errors
def clear(
    params: Path = ParamsOpt,
    cache_dir: Path | None = DirOpt,
    yes: bool = typer.Option(False, "--yes", "-y", help="do not ask for confirmation"),
) -> None:
    """Remove every cached reply (the next run calls the models again)."""
    from ragcourt.llm.cache import ReplyCache

    cache = ReplyCache(_cache_dir(params, cache_dir))
    if not yes and not typer.confirm(f"Remove all cached LLM replies in {cache.directory}?"):
        raise typer.Exit(1)
    removed = cache.clear()
    cache.close()
    for path in cache.moved_aside:
        console.print(f"damaged cache file moved to {path}")
    console.print(f"removed {removed} cached replies from {cache.directory}")


@app.command()
@user_errors
def verify(
    params: Path = ParamsOpt,
    cache_dir: Path | None = DirOpt,
    repair: bool = RepairOpt,
) -> None:
    """Check the cache file and every entry; exit 1 when damage is found and not repaired."""
    from ragcourt.llm.cache import ReplyCache

    cache = ReplyCache(_cache_dir(params, cache_dir))
    report = cache.verify(repair=repair)
    cache.close()
    console.print(f"cache: {report.path}")
    if report.file_damage is not None:
        console.print(f"damaged file: {report.file_damage}")
        if report.moved_to is not None:
            console.print(f"moved to {report.moved_to}")
    else:
        console.print(f"entries ok: {report.entries_ok}")
        console.print(f"entries damaged: {report.entries_damaged}")
        for example in report.examples:
            console.print(f"  {example}")
        if repair:
            console.print(f"entries removed: {report.entries_removed}")
    if report.damage_left:
        console.print("damage left: run `ragcourt cache verify --repair`")
        raise typer.Exit(1)


@app.command()
@user_errors
def migrate(
    params: Path = ParamsOpt,
    cache_dir: Path | None = DirOpt,
    source: Path | None = FromOpt,
) -> None:
    """Import an old pickled diskcache (cache.db) as JSON entries, then move it aside.

    Only plain data is unpickled (no classes, no functions: those rows are refused and
    counted); every value must be a valid reply.
    """
    from ragcourt.llm.cache_migrate import migrate_diskcache

    report = migrate_diskcache(_cache_dir(params, cache_dir), source)
    console.print(f"migrated {report.source}")
    console.print(f"rows: {report.rows}")
    console.print(f"imported: {report.imported}")
    console.print(f"already present: {report.already_present}")
    console.print(f"refused (needs a global): {report.refused_globals}")
    console.print(f"invalid: {report.invalid}")
    for example in report.examples:
        console.print(f"  {example}")
    console.print(f"old file moved to {report.moved_to}")
