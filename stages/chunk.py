"""DVC stage ``chunk``: token chunks of every document for one ``chunkings`` entry."""

from __future__ import annotations

from ragcourt.core.entry import dvc_partition, run_entry, stage_parser


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--chunking", help="a key of params chunkings (default: from $DVC_STAGE)")
    args = ap.parse_args()
    from ragcourt.core.params import load_params
    from ragcourt.corpus.chunking import run

    params = load_params(args.params)
    chunking = args.chunking or dvc_partition("chunk", {"chunking": params.chunkings})["chunking"]
    path = run(params, chunking)
    print(f"chunk: wrote {path}")


if __name__ == "__main__":
    run_entry(main)
