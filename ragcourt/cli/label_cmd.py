"""``ragcourt label serve|export|import``: human labels for calibrating the judges.

``serve`` opens a local labelling page (127.0.0.1 only) over a stratified, seeded sample of
answer items and passage items of the judged pipeline outputs; ``export`` writes the same
sample as a CSV for spreadsheet labelling and ``import`` appends the filled-in labels. Labels
go to ``<labels-dir>/<labeler>.jsonl`` (append-only); the ``calibrate`` stage reads them.
The sample depends only on the data, ``--answers``, ``--passages`` and ``--seed``: use the same
values to resume. A user error is one line on stderr and exit code 2.
"""

from __future__ import annotations

import webbrowser
from pathlib import Path
from typing import Annotated, Any

import typer

from ragcourt.cli.consoles import cli_console
from ragcourt.cli.errors import user_errors
from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError

app = typer.Typer(
    help="Human labels for calibrating the judges (labelling page, CSV export/import).",
    no_args_is_help=True,
)
console = cli_console()


LabelsDirOpt = typer.Option(
    Path(catalog.DEFAULT_LABELS_DIR), "--labels-dir", help="folder of label files"
)
LabelerOpt = typer.Option(
    "labels", "--labeler", help="your name; labels go to <labels-dir>/<labeler>.jsonl"
)
AnswersOpt = typer.Option(
    120, "--answers", min=1, help="answer items to sample (whole questions x all systems)"
)
PassagesOpt = typer.Option(60, "--passages", min=0, help="passage items to sample")
SeedOpt = typer.Option(0, "--seed", help="sampling seed (same seed = same sample)")


def _sample(answers: int | None, passages: int | None, seed: int, labels_dir: Path) -> Any:
    from ragcourt.calibration.sampling import SampleParams
    from ragcourt.calibration.stage import CalibrationInputs, sample_from_artifacts

    params = SampleParams(n_answer_items=answers, n_passage_items=passages, seed=seed)
    sample = sample_from_artifacts(params, CalibrationInputs.default(labels_dir=labels_dir))
    if sample.height == 0:
        raise RagcourtError("no labellable items: the answers table has no answered question")
    return sample


@app.command()
@user_errors
def serve(
    port: int = typer.Option(8765, "--port", min=0, max=65535, help="port on 127.0.0.1"),
    open_: bool = typer.Option(False, "--open", help="open the page in a browser"),
    labels_dir: Path = LabelsDirOpt,
    labeler: str = LabelerOpt,
    answers: int = AnswersOpt,
    passages: int = PassagesOpt,
    seed: int = SeedOpt,
) -> None:
    """Serve the labelling page on 127.0.0.1 until Ctrl-C."""
    from ragcourt.calibration.labels import LabelStore
    from ragcourt.calibration.server import LabelServer, make_app

    store = LabelStore(labels_dir, labeler)
    sample = _sample(answers, passages, seed, labels_dir)
    server = LabelServer(make_app(sample, store), port)
    done = sum(1 for i in sample["item_id"].to_list() if i in store.current())
    console.print(
        f"labelling {sample.height} items ({done} done) at {server.url}\n"
        f"labels are saved to {store.path} as you go; Ctrl-C to stop"
    )
    if open_:
        webbrowser.open(server.url)
    server.serve_forever()


@app.command()
@user_errors
def export(
    out: Annotated[Path, typer.Argument(help="CSV file to write")],
    labels_dir: Path = LabelsDirOpt,
    labeler: str = LabelerOpt,
    answers: int = AnswersOpt,
    passages: int = PassagesOpt,
    seed: int = SeedOpt,
) -> None:
    """Write the sample as a CSV (the labeller's current labels pre-filled)."""
    from ragcourt.calibration.labels import LabelStore, export_csv

    store = LabelStore(labels_dir, labeler)
    sample = _sample(answers, passages, seed, labels_dir)
    export_csv(sample, out, store.current())
    console.print(f"wrote {sample.height} items to {out}; fill the 'label' column, then import")


@app.command("import")
@user_errors
def import_(
    csv_file: Annotated[Path, typer.Argument(help="CSV written by `ragcourt label export`")],
    labels_dir: Path = LabelsDirOpt,
    labeler: str = LabelerOpt,
) -> None:
    """Append the labels of a filled-in CSV (all rows are checked before any is saved)."""
    from ragcourt.calibration.labels import LabelStore, import_csv

    store = LabelStore(labels_dir, labeler)
    population = _sample(None, None, 0, labels_dir)  # every item: rows match by id + content
    res = import_csv(csv_file, population, store)
    console.print(
        f"appended {res.appended} labels to {store.path} "
        f"({res.unchanged} unchanged, {res.blank} blank rows)"
    )
