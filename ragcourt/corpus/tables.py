"""The tables the ingest and chunk stages write (:data:`ragcourt.core.schemas.TABLES`)."""

import polars as pl

from ragcourt.core.schemas import Columns, PolarsDtype

HEADINGS = pl.List(pl.Struct({"start": pl.Int64, "level": pl.Int32, "title": pl.String}))


SOURCE_MAP = pl.List(
    pl.Struct(
        {
            "text_start": pl.Int64,
            "text_end": pl.Int64,
            "source_start": pl.Int64,
            "source_end": pl.Int64,
            "kind": pl.String,  # copied | placed | generated
        }
    )
)


TABLES: dict[str, Columns] = {
    "documents": {
        "doc_id": pl.String,
        "path": pl.String,
        "title": pl.String,
        "format": pl.String,
        "text": pl.String,
        "n_chars": pl.Int64,
        "duplicate_of": pl.String,  # null unless an exact duplicate of another doc_id
        "language": pl.String,  # ISO 639-1 code detected at ingest ("und": no letters)
        "language_confidence": pl.Float64,  # the detector's probability of that language
    },
    "rejected_documents": {
        "path": pl.String,
        "reason": pl.String,
    },
    "chunks": {
        "chunk_id": pl.String,
        "chunking": pl.String,
        "doc_id": pl.String,
        "chunk_index": pl.Int32,
        "char_start": pl.Int64,
        "char_end": pl.Int64,
        "n_tokens": pl.Int32,
        "text": pl.String,
    },
}

#: columns a table may have: dtype-checked when present, absent from tables written before
#: they existed or built by hand (tests, plug-ins); the ingest and chunk stages always write
#: them (null where a format has none). See ragcourt.corpus.markup_map.
OPTIONAL_COLUMNS: dict[str, dict[str, PolarsDtype]] = {
    "documents": {
        "headings": HEADINGS,  # rendered reST/Markdown: heading lines (text offset, depth, text)
        "source_map": SOURCE_MAP,  # text spans -> source file spans (null: HTML, PDF)
    },
    "chunks": {
        "section": pl.String,  # headings enclosing the chunk's start, "json › Basic Usage"
        "source_start": pl.Int64,  # the chunk's span in the source file (null: no map)
        "source_end": pl.Int64,
    },
}
