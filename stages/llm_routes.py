"""DVC stage ``llm_routes``: where each hosted model is served, and the sampling params sent."""

from __future__ import annotations

from ragcourt.core.entry import run_entry, stage_parser


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    from ragcourt.core.params import load_params
    from ragcourt.orchestration.llm_routes import run

    run(load_params(args.params))


if __name__ == "__main__":
    run_entry(main)
