"""The ``ragcourt`` command line (typer).

``ragcourt run`` runs the pipeline (``dvc repro`` by default, ``--engine prefect`` for the
Prefect flow), ``report`` writes the HTML/Markdown report, ``systems list`` shows the candidate
systems, ``doctor`` checks the environment offline, ``cache`` manages the LLM reply cache,
``serve`` registers and serves scheduled Prefect deployments, ``sweep`` runs a parameter grid,
``profile`` lists and applies params overlays (``run --profile NAME``), ``gate`` turns a
finished run into a CI exit code, ``race --replay`` races a finished run's judgements.
A user error is one line on stderr and exit code 2.
"""

from __future__ import annotations

import webbrowser
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ragcourt.cli.cache_cmd import app as cache_app
from ragcourt.cli.consoles import cli_console
from ragcourt.cli.errors import err_console, user_errors
from ragcourt.cli.external_cmd import answers_app, questions_app
from ragcourt.cli.gate_cmd import gate as gate_command
from ragcourt.cli.judges_cmd import app as judges_app
from ragcourt.cli.kinds_cmd import kinds as kinds_command
from ragcourt.cli.label_cmd import app as label_app
from ragcourt.cli.profile_cmd import app as profile_app
from ragcourt.cli.race_cmd import race as race_command
from ragcourt.core.allocator import bound_heap
from ragcourt.core.catalog import DEFAULT_PARAMS_FILE
from ragcourt.core.errors import ConfigError, RagcourtError
from ragcourt.core.offline import apply as apply_offline
from ragcourt.core.redact import install_log_redaction

app = typer.Typer(
    help="Rank candidate RAG systems on your own documents without human labels.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # usage errors as click prints them: "Error: ..." on one line
)
app.add_typer(cache_app, name="cache")
systems_app = typer.Typer(help="The candidate RAG systems (params systems_file).")
app.add_typer(systems_app, name="systems")
dvc_app = typer.Typer(help="dvc.yaml, generated from the stage graph and the artifact catalog.")
app.add_typer(dvc_app, name="dvc")
app.add_typer(judges_app, name="judges")
app.command("kinds")(kinds_command)
app.command("gate")(gate_command)
app.command("race")(race_command)
app.add_typer(label_app, name="label")
app.add_typer(profile_app, name="profile")
app.add_typer(questions_app, name="questions")
app.add_typer(answers_app, name="answers")

console = cli_console()


@app.callback()
def _setup() -> None:
    """Offline environment defaults and malloc settings before any command imports anything
    heavy; URLs redacted in every log record."""
    apply_offline()
    bound_heap()
    install_log_redaction()


ParamsOpt = typer.Option(Path(DEFAULT_PARAMS_FILE), "--params", help="params file")


class Engine(StrEnum):
    dvc = "dvc"
    prefect = "prefect"


class Runner(StrEnum):
    thread = "thread"
    dask = "dask"


def _stage_progress() -> Progress:
    return Progress(
        TextColumn("{task.description}", style="bold", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
    )


@contextmanager
def flow_progress(description: str) -> Iterator[None]:
    """A progress bar fed by the flow's in-process events (:mod:`ragcourt.orchestration.progress`):
    ``plan`` shows it with the total (so an error before the flow starts stays a single line),
    each ``done`` (a stage call or a sweep point ended) advances it by one."""
    from ragcourt.orchestration import progress

    bar = _stage_progress()
    task = bar.add_task(description, total=None)

    def on_event(ev: progress.StageEvent) -> None:
        if ev.kind == "plan":
            bar.update(task, total=ev.total)
            bar.start()
        elif ev.kind == "done":
            bar.update(task, description=f"{ev.call} ({ev.state.lower()})")
            bar.advance(task)

    try:
        with progress.listening(on_event):
            yield
    finally:
        bar.stop()


def run_prefect(
    params: Path,
    workdir: Path,
    until: str | None,
    task_runner: str,
    workers: int,
    dask_address: str | None,
) -> list[dict[str, Any]]:
    """The pipeline flow in this process with a progress bar fed by its stage events."""
    from ragcourt.orchestration.project_code import import_flows

    pipeline = import_flows("pipeline").pipeline
    with flow_progress("prefect pipeline"):
        calls: list[dict[str, Any]] = pipeline(
            params_path=str(params),
            workdir=str(workdir),
            task_runner=task_runner,
            workers=workers,
            dask_address=dask_address,
            until=until,
        )
    return calls


@app.command()
@user_errors
def run(
    engine: Annotated[Engine, typer.Option(help="dvc: `dvc repro`; prefect: the flow")] = (
        Engine.dvc
    ),
    params: Path = ParamsOpt,
    until: str | None = typer.Option(None, help="stop after this stage (e.g. retrieval_eval)"),
    force: bool = typer.Option(False, help="dvc engine: re-run stages even if unchanged"),
    task_runner: Annotated[Runner, typer.Option(help="prefect engine: task runner")] = (
        Runner.thread
    ),
    workers: int = typer.Option(2, help="prefect engine: threads or Dask worker processes"),
    dask_address: str | None = typer.Option(None, help="prefect engine: existing Dask cluster"),
    profile: str | None = typer.Option(
        None, help="first write this profile (configs/profiles/NAME.yaml) into the params file"
    ),
) -> None:
    """Run the pipeline in the current folder."""
    from ragcourt.orchestration.stage_graph import selected_stages

    root = Path.cwd()
    if profile is not None:
        from ragcourt.cli.profile_cmd import apply_and_report

        apply_and_report(profile, params)
    if engine is Engine.prefect:
        results = run_prefect(params, root, until, task_runner.value, workers, dask_address)
        cached = sum(1 for r in results if r["state"] == "Cached")
        console.print(f"{len(results)} stage calls: {len(results) - cached} ran, {cached} cached")
        return
    if params != Path(DEFAULT_PARAMS_FILE):
        raise RagcourtError("--params applies to the prefect engine; DVC reads params.yaml")
    from ragcourt.cli.dvc_runner import repro
    from ragcourt.orchestration.params import load_params

    # DVC interpolates chunkings/embedders keys into stage commands: validate params.yaml (safe
    # names, one-line error naming the key) before DVC runs any stage.
    checked = load_params(params)
    from ragcourt.orchestration.llm_routes import refresh

    if refresh(checked):  # the environment changed a hosted route: DVC re-runs what it feeds
        err_console.print("hosted model routes changed in the environment: llm_routes re-runs")
    targets = [until] if until else []
    if until:
        selected_stages(until=until)  # validates the stage name
    from ragcourt.orchestration.code_deps import refresh_code_digests

    refresh_code_digests(root)  # a library outside the project: DVC's code step cannot see it
    code = repro(root, targets, force=force, console=err_console)
    if code != 0:
        raise typer.Exit(code)


@app.command()
@user_errors
def report(
    params: Path = ParamsOpt,
    open_: bool = typer.Option(False, "--open", help="open the HTML page in a browser"),
) -> None:
    """Write data/report/report.html (self-contained) and data/report/report.md."""
    from ragcourt.orchestration.params import load_params
    from ragcourt.reporting.stage import run as run_report

    with console.status("building the report"):
        html, md = run_report(load_params(params))
    console.print(f"wrote {html} and {md}")
    if open_:
        webbrowser.open(html.resolve().as_uri())


@systems_app.command("list")
@user_errors
def systems_list(params: Path = ParamsOpt) -> None:
    """Every configured system with its resolved settings."""
    from ragcourt.answering.systems import LIST_COLUMNS, list_row, load_systems
    from ragcourt.orchestration.params import load_params

    p = load_params(params)
    systems = load_systems(p)
    table = Table(title=f"{len(systems)} systems ({p.systems_file})")
    for col in LIST_COLUMNS:
        table.add_column(col, overflow="fold")
    for s in systems:
        table.add_row(*list_row(s).values())
    console.print(table)


@app.command()
def doctor(
    params: Path = ParamsOpt,
    call: bool = typer.Option(
        False, "--call", help="also make one real 1-token call per hosted model (may cost money)"
    ),
) -> None:
    """Check the environment: models (each local one loaded in a child process), hosted routes,
    llama-cpp, DVC, Prefect. Exit 1 on a failure."""
    from ragcourt.cli.doctor import run_checks

    with console.status("checking"):
        checks = run_checks(params, call=call)
    marks = {
        "ok": Text("ok", style="green"),
        "warn": Text("warn", style="yellow"),
        "fail": Text("FAIL", style="red"),
    }
    table = Table(title="ragcourt doctor")
    table.add_column("check")
    table.add_column("status")
    table.add_column("detail", overflow="fold")
    for c in checks:
        table.add_row(c.name, marks[c.status], c.detail)
    console.print(table)
    if any(c.status == "fail" for c in checks):
        raise typer.Exit(1)


@app.command()
@user_errors
def serve(
    cron: str = typer.Option("0 3 * * *", help="cron schedule of the pipeline deployment"),
    params: Path = ParamsOpt,
    task_runner: Annotated[Runner, typer.Option(help="task runner of the flow")] = Runner.thread,
    workers: int = typer.Option(2),
    until: str | None = typer.Option(None, help="scheduled runs stop after this stage"),
    sweep_cron: str | None = typer.Option(None, help="also schedule the default sweep flow"),
) -> None:
    """Register scheduled Prefect deployments and serve them (needs `prefect server start`)."""
    from ragcourt.orchestration.project_code import import_flows

    import_flows("deployments").serve_deployments(
        workdir=Path.cwd(),
        params_path=str(params),
        cron=cron,
        task_runner=task_runner.value,
        workers=workers,
        until=until,
        sweep_cron=sweep_cron,
    )


@app.command()
@user_errors
def sweep(
    grid: Annotated[
        list[str],
        typer.Option(
            "--grid",
            "-g",
            help="KEY=V1,V2,... over params.yaml keys, e.g. chunkings.c256.size=128,256,512",
        ),
    ],
    engine: Annotated[Engine, typer.Option(help="prefect: sweep flow; dvc: exp queue")] = (
        Engine.prefect
    ),
    until: str = typer.Option("retrieval_eval", help="last stage each grid point runs"),
    params: Path = ParamsOpt,
    max_parallel: int = typer.Option(1, help="prefect engine: grid points run at once"),
) -> None:
    """Run every point of a params grid (Prefect sweep flow, or DVC experiments)."""
    from ragcourt.orchestration.project_code import import_flows
    from ragcourt.orchestration.sweeps import parse_grid, queue_dvc_experiments

    run_sweep = import_flows("sweep").run_sweep

    parsed = parse_grid(grid)
    if engine is Engine.dvc:
        names = queue_dvc_experiments(Path.cwd(), parsed, until=until, run=True)
        console.print(f"ran {len(names)} DVC experiments; compare them with `dvc exp show`")
        return
    with flow_progress("sweep points"):  # advances as each point's pipeline run ends
        summary = run_sweep(
            grid=parsed,
            params_path=str(params),
            workdir=str(Path.cwd()),
            until=until,
            max_parallel=max_parallel,
        )
    table = Table(title="sweep summary")
    for col in summary["columns"]:
        table.add_column(col)
    for row in summary["rows"]:
        table.add_row(*row)
    console.print(table)
    console.print(f"summary written to {summary['path']}")


@app.command()
@user_errors
def init(
    directory: Annotated[Path, typer.Argument(help="a new (empty or absent) project folder")],
    vcs: Annotated[
        bool, typer.Option("--vcs/--no-vcs", help="make it a git + DVC repository")
    ] = True,
) -> None:
    """Make a new project: params, configs, stages/, flows/, the demo inputs and dvc.yaml."""
    from ragcourt.orchestration.project_init import init_project

    written = init_project(directory, vcs=vcs)
    console.print(f"wrote {len(written)} entries to {directory}")
    console.print(f"next: cd {directory} && dvc repro")


@dvc_app.command("generate")
@user_errors
def dvc_generate(
    check: Annotated[
        bool, typer.Option("--check", help="exit 1 when dvc.yaml differs; write nothing")
    ] = False,
) -> None:
    """Write ./dvc.yaml from the stage graph (or, with --check, compare it)."""
    from ragcourt.orchestration import dvc_yaml

    root = Path.cwd()
    if not (root / DEFAULT_PARAMS_FILE).is_file():
        raise ConfigError(f"{root}: no {DEFAULT_PARAMS_FILE} here; run from the project root")
    text = dvc_yaml.render(root)
    target = root / "dvc.yaml"
    if check:
        current = target.read_text(encoding="utf-8") if target.is_file() else ""
        if current != text:
            err_console.print("dvc.yaml is stale: run `ragcourt dvc generate`")
            raise typer.Exit(1)
        console.print("dvc.yaml is up to date")
        return
    dvc_yaml.write(root)
    console.print(f"wrote {target}")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
