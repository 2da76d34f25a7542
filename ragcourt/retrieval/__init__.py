"""ragcourt.retrieval."""
