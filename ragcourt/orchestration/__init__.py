"""ragcourt.orchestration."""
