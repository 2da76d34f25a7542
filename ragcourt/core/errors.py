"""Error types every stage raises for bad input; the entry wrapper turns them into one line."""

from __future__ import annotations


class RagcourtError(Exception):
    """A user-facing error: printed as one line, exit code 2, nothing written."""


class ParamsError(RagcourtError):
    """params.yaml (or a config file) is missing, malformed, or has a wrong key/type."""


class SchemaError(RagcourtError):
    """A Parquet table lacks a column or has a wrong dtype; names the file and column."""


class ConfigError(RagcourtError):
    """A config (systems, models, prompts) refers to something unknown or is malformed."""


class StageFailed(RagcourtError):
    """A stage finished and wrote its outputs (error rows included), but too many of its model
    calls failed to trust them: the stage exits non-zero with this one-line summary."""
