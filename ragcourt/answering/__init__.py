"""ragcourt.answering."""
