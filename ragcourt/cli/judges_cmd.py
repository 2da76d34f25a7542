"""``ragcourt judges``: the trained judges' weights (build, verify, show)."""

from __future__ import annotations

import filecmp
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from ragcourt.cli.consoles import cli_console
from ragcourt.cli.errors import print_error, user_errors

if TYPE_CHECKING:
    from ragcourt.retrieval.trained_judges.pair_model import PairModel, Role

app = typer.Typer(
    help="The trained judges (relevance, answerability, correctness).", no_args_is_help=True
)
console = cli_console()

DEFAULT_VALIDATION = Path("../shared/validation")


@app.command()
@user_errors
def train(
    out: Annotated[
        Path | None, typer.Option("--out", help="weights folder (default: the shipped one)")
    ] = None,
    validation_dir: Annotated[
        Path,
        typer.Option("--validation-dir", help="folder with squadv2_train.json and sts_train.json"),
    ] = DEFAULT_VALIDATION,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="retrain into a temp folder; exit 1 unless the bytes match --out"
        ),
    ] = False,
) -> None:
    """Fit the trained judges on the train splits (deterministic; a few minutes on 2 cores)."""
    from ragcourt.core import offline
    from ragcourt.core.errors import ConfigError
    from ragcourt.retrieval.trained_judges.judges import IDF_FILE, WEIGHTS_DIR
    from ragcourt.retrieval.trained_judges.squad_data import squad_train_path
    from ragcourt.retrieval.trained_judges.training import train_judges

    offline.apply()
    for name in ("squadv2_train.json", "sts_train.json"):
        if not (validation_dir / name).is_file():
            raise ConfigError(f"--validation-dir {validation_dir}: no {name} there")
    target = out or WEIGHTS_DIR
    squad = squad_train_path()
    if not check:
        models = train_judges(target, squad, validation_dir)
        _show(models)
        console.print(f"weights written to {target}", markup=False)
        return
    with tempfile.TemporaryDirectory() as tmp:
        models = train_judges(Path(tmp), squad, validation_dir)
        names = [IDF_FILE, *(f"{r}.json" for r in models)]
        differ = [n for n in names if not filecmp.cmp(Path(tmp) / n, target / n, shallow=False)]
    if differ:
        print_error(f"retrained weights differ from {target}: {', '.join(differ)}")
        raise typer.Exit(1)
    console.print(f"retrained weights are identical to {target}", markup=False)


@app.command()
@user_errors
def show(
    weights: Annotated[
        Path | None, typer.Option("--weights", help="weights folder (default: shipped)")
    ] = None,
) -> None:
    """The trained judges' splits and metrics."""
    from ragcourt.retrieval.trained_judges.judges import WEIGHTS_DIR, TrainedJudges
    from ragcourt.retrieval.trained_judges.pair_model import ROLES

    judges = TrainedJudges(weights or WEIGHTS_DIR)
    _show({r: judges.model(r) for r in ROLES})


def _show(models: Mapping[Role, PairModel]) -> None:
    table = Table("judge", "metric", "value")
    for role, model in models.items():
        for name, split in model.splits.items():
            table.add_row(role, f"split {name}", f"{split.items} items: {split.source}")
        for name, value in model.metrics.items():
            table.add_row(role, name, f"{value:g}")
        table.add_row(role, "threshold", f"{model.threshold:g}")
    console.print(table)
