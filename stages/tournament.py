"""DVC stage ``tournament``: DICE Swiss tournament, Elo and Bradley-Terry with CIs."""

from __future__ import annotations

from ragcourt.core.entry import run_entry, stage_parser


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument(
        "--single", metavar="SYSTEM", help="evaluate one system against reference tiers"
    )
    ap.add_argument(
        "--reference-leaderboard",
        metavar="PATH",
        help="leaderboard.parquet of an earlier tournament (with --single)",
    )
    args = ap.parse_args()
    from ragcourt.core.errors import RagcourtError
    from ragcourt.core.params import load_params
    from ragcourt.tournament.stage import run

    if args.reference_leaderboard and not args.single:
        raise RagcourtError("--reference-leaderboard is only used with --single SYSTEM")
    run(load_params(args.params), args.single, args.reference_leaderboard)


if __name__ == "__main__":
    run_entry(main)
