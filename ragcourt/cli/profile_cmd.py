"""``ragcourt profile list|show|apply``: named params overlays (``configs/profiles/*.yaml``).

``apply NAME`` writes the profile's values into ``params.yaml`` (comments kept, merged params
validated first) so DVC tracks them: ``dvc repro`` later reproduces the run from params.yaml
alone, and ``git diff params.yaml`` shows what the profile changed. ``ragcourt run --profile
NAME`` is ``apply`` then the run. An unknown profile or an overlay key that is not a params
key is a one-line error naming the file and the key (exit 2).
"""

from __future__ import annotations

from pathlib import Path

import typer
import yaml

from ragcourt.cli.consoles import cli_console
from ragcourt.cli.errors import user_errors
from ragcourt.core.catalog import DEFAULT_PARAMS_FILE

app = typer.Typer(help="Named params overlays (configs/profiles/NAME.yaml).", no_args_is_help=True)
console = cli_console()

ParamsOpt = typer.Option(Path(DEFAULT_PARAMS_FILE), "--params", help="params file")


@app.command("list")
@user_errors
def list_profiles(params: Path = ParamsOpt) -> None:
    """Every profile, marked active when params already hold all its values."""
    from ragcourt.orchestration.profiles import is_active, profile_names

    names = profile_names()
    if not names:
        console.print("no profiles (configs/profiles/*.yaml)")
    for name in names:
        mark = " (active)" if is_active(name, params) else ""
        console.print(f"{name}{mark}")


@app.command()
@user_errors
def show(name: str) -> None:
    """Print the profile's overlay (validated keys)."""
    from ragcourt.orchestration.profiles import load_overlay

    console.print(yaml.safe_dump(load_overlay(name), sort_keys=False).rstrip())


def apply_and_report(name: str, params: Path) -> list[str]:
    """Apply profile ``name`` to ``params`` and print what changed."""
    from ragcourt.orchestration.profiles import apply_profile

    changed = apply_profile(name, params)
    if changed:
        console.print(f"profile {name}: {len(changed)} keys set in {params}: {', '.join(changed)}")
    else:
        console.print(f"profile {name}: {params} already holds every value (nothing changed)")
    return changed


@app.command()
@user_errors
def apply(name: str, params: Path = ParamsOpt) -> None:
    """Write the profile's values into params.yaml (DVC then tracks them)."""
    apply_and_report(name, params)
