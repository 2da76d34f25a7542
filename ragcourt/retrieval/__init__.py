"""ragcourt.retrieval: chunk indexing, retrievers and retrieval metrics.

Importing it quiets faiss's loader (its INFO lines "Loading faiss with AVX512 support" etc.
in every stage's output): faiss is imported only inside this package, always after this.
"""

import logging

logging.getLogger("faiss.loader").setLevel(logging.WARNING)
