"""ragcourt.core."""
