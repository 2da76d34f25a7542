"""Error types every stage raises for bad input, and the one-line form every error is printed
in (:func:`one_line`: control characters made visible, so a user value cannot split it)."""

from __future__ import annotations

# C0 controls, DEL, C1 controls and the Unicode line/paragraph separators -> visible escapes
_VISIBLE = {
    **{c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))},
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def one_line(text: str) -> str:
    """``text`` with every control character written as an escape (newline -> ``\\n``, other
    C0/C1 controls -> ``\\xNN``): printed, it is exactly one line, whatever a user value held."""
    return text.translate(_VISIBLE)


def error_line(prefix: str, err: BaseException | str) -> str:
    """``"<prefix> <message>"`` on one line (:func:`one_line`), URL secrets redacted
    (:func:`~ragcourt.core.redact.redact_urls_in`), without a trailing newline."""
    from ragcourt.core.redact import redact_urls_in

    return f"{prefix} {one_line(redact_urls_in(str(err)))}"


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
