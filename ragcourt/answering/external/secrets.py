"""Header secrets from environment variables, and scrubbing them from everything written.

:func:`resolve_headers` turns the configured header templates into the headers sent
(``${env:NAME}`` replaced by the variable's value; ``headers_env`` maps a header to a variable
whose value is the whole header) and returns the values read from the environment. Only the
templates (variable names) are in the config, its hash and the artifacts.

:class:`Scrubber` replaces every such value in a text by ``[redacted]``: it is applied to each
answer, context and error message of an HTTP system before the row is written, and to every
log line the HTTP code emits, so a server that echoes the key back (in an error body, say)
cannot leak it into an artifact, a log or an error row.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ragcourt.answering.external.specs import ENV_REF_RE
from ragcourt.core.errors import ConfigError

REDACTED = "[redacted]"


@dataclass(frozen=True)
class Scrubber:
    """Replaces each secret (longest first) with :data:`REDACTED`."""

    secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, secrets: Iterable[str]) -> Scrubber:
        return cls(tuple(sorted({s for s in secrets if s}, key=len, reverse=True)))

    def __call__(self, text: str) -> str:
        for s in self.secrets:
            text = text.replace(s, REDACTED)
        return text


def _env(var: str, header: str, where: str, env: Mapping[str, str]) -> str:
    value = env.get(var)
    if not value:
        raise ConfigError(
            f"{where}: header '{header}' needs environment variable {var}, which is not set"
        )
    return value


def resolve_headers(
    headers: Mapping[str, str],
    headers_env: Mapping[str, str],
    where: str,
    env: Mapping[str, str] | None = None,
) -> tuple[dict[str, str], Scrubber]:
    """The headers to send and a scrubber for the secret values read (one-line ConfigError
    naming the header and variable when a variable is unset or empty)."""
    source = os.environ if env is None else env
    out: dict[str, str] = {}
    secrets: list[str] = []
    for header, template in headers.items():

        def sub(m: re.Match[str], header: str = header) -> str:
            value = _env(m.group(1), header, where, source)
            secrets.append(value)
            return value

        out[header] = ENV_REF_RE.sub(sub, template)
    for header, var in headers_env.items():
        value = _env(var, header, where, source)
        secrets.append(value)
        out[header] = value
    return out, Scrubber.of(secrets)
