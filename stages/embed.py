"""DVC stage ``embed``: vectors and a FAISS index for one (chunking, embedder)."""

from __future__ import annotations

from collections.abc import Collection

from ragcourt.core.entry import dvc_partition, run_entry, stage_parser


def main() -> None:
    ap = stage_parser(__doc__)
    ap.add_argument("--chunking", help="a key of params chunkings (default: from $DVC_STAGE)")
    ap.add_argument("--embedder", help="a key of params embedders (default: from $DVC_STAGE)")
    args = ap.parse_args()
    from ragcourt.core.params import load_params
    from ragcourt.retrieval.indexing import run

    params = load_params(args.params)
    if args.chunking and args.embedder:
        chunking, embedder = args.chunking, args.embedder
    else:
        axes: dict[str, Collection[str]] = {
            "chunking": params.chunkings,
            "embedder": params.embedders,
        }
        part = dvc_partition("embed", axes)
        chunking, embedder = part["chunking"], part["embedder"]
    run(params, chunking, embedder)


if __name__ == "__main__":
    run_entry(main)
