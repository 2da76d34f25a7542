"""DVC stage ``answer``: every candidate system answers every question."""

from __future__ import annotations

from ragcourt.core.entry import run_entry, stage_parser


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument(
        "--systems", nargs="+", default=None, help="only (re)compute these systems' partitions"
    )
    args = ap.parse_args()
    from ragcourt.answering.stage import run
    from ragcourt.core.params import load_params

    run(load_params(args.params), args.systems)


if __name__ == "__main__":
    run_entry(main)
