"""DVC stage ``chunk``: token chunks of every document for one ``chunkings`` entry."""

from __future__ import annotations

from ragcourt.core.entry import run_entry, stage_parser


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--chunking", required=True, help="a key of params chunkings")
    args = ap.parse_args()
    from ragcourt.core.params import load_params
    from ragcourt.corpus.chunking import run

    path = run(load_params(args.params), args.chunking)
    print(f"chunk: wrote {path}")


if __name__ == "__main__":
    run_entry(main)
