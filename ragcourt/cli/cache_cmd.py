"""``ragcourt cache stats|clear``: inspect or empty the LLM reply cache (``llm.cache_dir``)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from ragcourt.core.catalog import DEFAULT_PARAMS_FILE

app = typer.Typer(help="The LLM reply cache (params llm.cache_dir).", no_args_is_help=True)
console = Console()

ParamsOpt = typer.Option(Path(DEFAULT_PARAMS_FILE), "--params", help="params file (llm.cache_dir)")
DirOpt = typer.Option(None, "--cache-dir", help="cache folder; overrides llm.cache_dir")


def _cache_dir(params: Path, cache_dir: Path | None) -> Path:
    if cache_dir is not None:
        return cache_dir
    from ragcourt.core.errors import RagcourtError
    from ragcourt.core.params import load_params

    try:
        return Path(load_params(params).llm.cache_dir)
    except RagcourtError as err:
        console.print(f"[red]error:[/red] {err}")
        raise typer.Exit(2) from None


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


@app.command()
def stats(params: Path = ParamsOpt, cache_dir: Path | None = DirOpt) -> None:
    """Print the cache folder, its entry count and its size on disk."""
    from ragcourt.llm.cache import ReplyCache

    cache = ReplyCache(_cache_dir(params, cache_dir))
    s = cache.stats()
    cache.close()
    console.print(f"cache: {s['directory']}")
    console.print(f"entries: {s['entries']}")
    console.print(f"size: {_human(s['size_bytes'])}")


@app.command()
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
    console.print(f"removed {removed} cached replies from {cache.directory}")
