"""ragcourt.corpus."""
