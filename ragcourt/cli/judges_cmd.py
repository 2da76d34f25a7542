"""``ragcourt judges``: the trained judges' weights (build, verify, show), the reading model
(``train-reader``), and scoring your own pairs with any of them (``score``)."""

from __future__ import annotations

import filecmp
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from ragcourt.cli.consoles import cli_console
from ragcourt.cli.errors import err_console, print_error, user_errors

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


def _remeasure_reader(target: Path, squad2: Path) -> None:
    """Measure the card of the reader in ``target`` again and say whether its metrics held."""
    from ragcourt.retrieval.reader.build import remeasure_card
    from ragcourt.retrieval.trained_judges.squad_data import squad_train_path

    cards = remeasure_card(target, squad_train_path(), squad2)
    same = cards["before"]["record"]["metrics"] == cards["after"]["record"]["metrics"]
    console.print(
        f"card of {target} measured again: SHA-256 {cards['after']['sha256']}, "
        f"metrics {'unchanged' if same else 'changed'}",
        markup=False,
    )


@app.command("train-reader")
@user_errors
def train_reader(
    out: Annotated[
        Path | None, typer.Option("--out", help="model folder (default: the shipped one)")
    ] = None,
    validation_dir: Annotated[
        Path,
        typer.Option("--validation-dir", help="folder with squadv2_train.json (measured on)"),
    ] = DEFAULT_VALIDATION,
    recipe: Annotated[
        str,
        typer.Option(
            "--recipe",
            help="cpu (the shipped, smaller recipe), gpu, or tiny (a smoke run: minutes)",
        ),
    ] = "cpu",
    fit_articles: Annotated[
        int | None, typer.Option("--fit-articles", help="override: articles to fit on (0: all)")
    ] = None,
    max_examples: Annotated[
        int | None, typer.Option("--max-examples", help="override: cap on fitting examples")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="the one seed of the run")] = 0,
    checkpoint: Annotated[
        Path | None,
        typer.Option("--checkpoint", help="also save the fp16 torch weights here (not shipped)"),
    ] = None,
    echo_vary_share: Annotated[
        float | None,
        typer.Option(
            "--echo-vary-share",
            min=0.0,
            max=1.0,
            help="override: share of training echoes given a random surface (case, mark, lead-in)",
        ),
    ] = None,
    measure_only: Annotated[
        bool,
        typer.Option(
            "--measure-only", help="no training: measure again the card of the reader in --out"
        ),
    ] = False,
) -> None:
    """Train, export (int8 ONNX) and measure the reading model from installed weights."""
    import dataclasses
    import logging

    from ragcourt.core import offline
    from ragcourt.core.errors import ConfigError
    from ragcourt.retrieval.reader.build import build_reader
    from ragcourt.retrieval.reader.model import WEIGHTS_DIR
    from ragcourt.retrieval.reader.training import RECIPES
    from ragcourt.retrieval.trained_judges.squad_data import squad_train_path

    offline.apply()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    squad2 = validation_dir / "squadv2_train.json"
    if not squad2.is_file():
        raise ConfigError(f"--validation-dir {validation_dir}: no squadv2_train.json there")
    if measure_only:
        _remeasure_reader(out or WEIGHTS_DIR, squad2)
        return
    if recipe not in RECIPES:
        raise ConfigError(f"--recipe {recipe!r}: one of {', '.join(RECIPES)}")
    overrides: dict[str, Any] = {"fit_articles": fit_articles, "max_examples": max_examples,
                                 "echo_vary_share": echo_vary_share}  # fmt: skip
    given = {k: v for k, v in overrides.items() if v is not None}
    chosen = dataclasses.replace(RECIPES[recipe], seed=seed, **given)
    target = out or WEIGHTS_DIR
    card = build_reader(target, squad_train_path(), squad2, chosen, recipe, checkpoint)
    sq = card["record"]["metrics"]["squad2"]
    console.print(
        f"reader written to {target}: SQuAD2 items AUC {sq['auc']:.3f}, kappa (report half) "
        f"{sq['kappa_report_half']:.3f}, threshold {card['threshold']:g}",
        markup=False,
    )


@app.command()
@user_errors
def score(
    role: Annotated[str, typer.Argument(help="reader, answerability, relevance or correctness")],
    in_path: Annotated[Path, typer.Option("--in", help="JSON Lines of pairs ('-': stdin)")],
    out_path: Annotated[Path, typer.Option("--out", help="JSON Lines of scores ('-': stdout)")],
    encoding: Annotated[
        str | None,
        typer.Option("--encoding", help="the input's text encoding (default: by BOM, else UTF-8)"),
    ] = None,
) -> None:
    """Score your own labelled pairs with a trained judge: each row gains ``score``, ``label``
    (at the judge's shipped threshold) and, for the reader, ``span``; bad rows become error
    rows naming their line."""
    import sys

    from ragcourt.core.errors import ConfigError
    from ragcourt.core.io import write_text
    from ragcourt.core.user_files import decode_user_text, output_target
    from ragcourt.retrieval.pair_scoring import (
        SCORED_ROLES,
        dumps_rows,
        parse_lines,
        scored_rows,
    )

    if role not in SCORED_ROLES:
        raise ConfigError(f"role {role!r}: one of {', '.join(SCORED_ROLES)}")
    target = output_target(out_path)  # checked before any work
    try:
        raw = sys.stdin.buffer.read() if str(in_path) == "-" else in_path.read_bytes()
    except OSError as err:
        raise ConfigError(f"--in {in_path}: cannot be read ({err.strerror or err})") from None
    text = decode_user_text(raw, f"--in {in_path}", encoding)
    parsed = parse_lines(role, text.split("\n"))  # type: ignore[arg-type]
    body = dumps_rows(scored_rows(role, parsed))  # type: ignore[arg-type]
    errors = sum(1 for p in parsed if p.row is None)
    if target is None:
        sys.stdout.write(body)
    else:
        write_text(body, target)
    err_console.print(
        f"{len(parsed) - errors} rows scored, {errors} error rows", markup=False, highlight=False
    )
