"""DVC stage ``calibrate``: judge-human agreement and PPI system scores from the label files."""

from __future__ import annotations

from ragcourt.core.entry import run_entry, stage_parser


def main() -> None:
    args = stage_parser(__doc__).parse_args()
    from ragcourt.calibration.stage import run_stage
    from ragcourt.core.params import load_params

    run_stage(load_params(args.params))


if __name__ == "__main__":
    run_entry(main)
