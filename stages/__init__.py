"""Thin DVC stage entries: ``python -m stages.<name>`` parses arguments and calls the
library function ``ragcourt`` runs for that stage (the same one the Prefect flow calls).
Not an installed package: run from the project root."""
