"""The command-line entry of every pipeline stage, behind ``python -m stages <name>``.

dvc.yaml runs it for each stage. It parses ``--params`` and the stage's own options, then calls
the function the stage's declaration names (``stages/<name>/``, loaded by
:func:`~ragcourt.orchestration.stage_graph.load_stage_graph`), the one the Prefect flow calls
too; ``python -m stages code`` writes every stage's code digest instead (dvc.yaml's first
step). A stage partitioned by chunking (and embedder) takes ``--chunking`` (``--embedder``)
or reads its partition from ``$DVC_STAGE`` (:func:`ragcourt.core.entry.dvc_partition`). It
runs under :func:`ragcourt.core.entry.run_entry`: offline environment, the outputs as one set,
a user error is one line and exit 2, a failed stage (too many failed model calls) exit 3.
Before the stage runs, temp files a killed earlier run left beside this call's own outputs
are removed.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragcourt.core import catalog
from ragcourt.core.entry import dvc_partition
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import sweep_stale_temps
from ragcourt.orchestration.declared_params import declared_view
from ragcourt.orchestration.params import DEFAULT_PARAMS_PATH, Params
from ragcourt.orchestration.stage_def import StageDef
from ragcourt.orchestration.stage_graph import CODE_STEP, load_stage_graph
from ragcourt.orchestration.stage_graph import stages_dir as default_stages_dir

log = logging.getLogger("ragcourt.stage_entry")

_CODE_HELP = f"write every stage's code digest ({catalog.CODE_DIGESTS}), DVC's code dependency"

#: partition fields a stage takes as options, and the params dict holding their keys
PARTITION_KEYS = {"chunking": "chunkings", "embedder": "embedders"}


def parser(stages: dict[str, StageDef]) -> argparse.ArgumentParser:
    """``<stage> [--params FILE] [--<partition field> KEY ...] [stage options]``."""
    ap = argparse.ArgumentParser(
        prog="python -m stages", description="Run one stage of the ragcourt pipeline."
    )
    sub = ap.add_subparsers(dest="stage", required=True, metavar="STAGE")
    sub.add_parser(CODE_STEP, help=_CODE_HELP, description=_CODE_HELP)
    for sd in stages.values():
        one = sub.add_parser(sd.name, help=sd.summary, description=sd.summary)
        one.add_argument("--params", default=str(DEFAULT_PARAMS_PATH), help="params file")
        for field in _partition_fields(sd):
            one.add_argument(
                f"--{field}",
                help=f"a key of params {PARTITION_KEYS[field]} (default: from $DVC_STAGE)",
            )
        for opt in sd.options:
            one.add_argument(
                opt.flag, dest=opt.name, help=opt.help, metavar=opt.metavar, nargs=opt.nargs
            )
    return ap


def _partition_fields(sd: StageDef) -> list[str]:
    return [f for f in sd.partition if f in PARTITION_KEYS]


def option_kwargs(sd: StageDef, args: argparse.Namespace) -> dict[str, Any]:
    """The stage options given on the command line, by keyword (one-line error when an
    option is given without the one it requires)."""
    by_name = {opt.name: opt for opt in sd.options}
    kwargs: dict[str, Any] = {}
    for opt in sd.options:
        value = getattr(args, opt.name)
        if value is None:
            continue
        if opt.requires is not None and getattr(args, opt.requires) is None:
            needed = by_name[opt.requires]
            raise RagcourtError(
                f"{opt.flag} is only used with {needed.flag} {needed.metavar or ''}".rstrip()
            )
        kwargs[opt.name] = value
    return kwargs


def partition_kwargs(sd: StageDef, args: argparse.Namespace, params: Params) -> dict[str, str]:
    """The stage's partition: from ``--chunking``/``--embedder`` when all are given, else
    from ``$DVC_STAGE``."""
    fields = _partition_fields(sd)
    given: dict[str, str] = {f: getattr(args, f) for f in fields}
    if all(given.values()):
        return given
    return dvc_partition(sd.name, {f: list(getattr(params, PARTITION_KEYS[f])) for f in fields})


def own_outputs(sd: StageDef, partition: dict[str, str], params: Params) -> list[str]:
    """The paths (globs where a partition field is not this call's, e.g. every system's answer
    partition) of what this call of ``sd`` writes, its LLM metrics file included."""
    outs = []
    for name in sd.writes:
        spec = catalog.spec(name)
        outs.append(spec.path_str(**{f: partition.get(f, "*") for f in spec.fields}))
    if sd.llm_metrics:
        outs.append(str(catalog.llm_metrics(params.llm.metrics_dir, sd.name)))
    return outs


def main(argv: Sequence[str] | None = None, stages_dir: Path | None = None) -> None:
    """Parse the command line, remove the temp files a killed earlier run of the same call
    left beside its outputs (:func:`~ragcourt.core.io.sweep_stale_temps`), and run the stage
    declared in ``stages_dir`` (default: the project's ``stages/``)."""
    from ragcourt.orchestration.params import load_params

    stages = load_stage_graph((stages_dir or default_stages_dir()).resolve())
    args = parser(stages).parse_args(sys.argv[1:] if argv is None else list(argv))
    if args.stage == CODE_STEP:
        from ragcourt.orchestration.code_deps import write_code_digests

        write_code_digests()
        return
    sd = stages[args.stage]
    options = option_kwargs(sd, args)
    params = load_params(args.params)
    partition = partition_kwargs(sd, args, params)
    for tmp in sweep_stale_temps(own_outputs(sd, partition, params)):
        log.info("removed a temp file a killed run left: %s", tmp)
    sd.load()(declared_view(params, sd, partition), **partition, **options)
