"""ragcourt."""
