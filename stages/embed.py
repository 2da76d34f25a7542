"""DVC stage ``embed``: vectors and a FAISS index for one (chunking, embedder)."""

from __future__ import annotations

from ragcourt.core.entry import run_entry, stage_parser


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--chunking", required=True, help="a key of params chunkings")
    ap.add_argument("--embedder", required=True, help="a key of params embedders")
    args = ap.parse_args()
    from ragcourt.core.params import load_params
    from ragcourt.retrieval.indexing import run

    run(load_params(args.params), args.chunking, args.embedder)


if __name__ == "__main__":
    run_entry(main)
