"""ragcourt.qagen."""
