"""Files users hand ragcourt or ask it to write: text decoding and output paths.

:func:`decode_user_text`: bytes -> text in the declared encoding, or, with none declared, by
the byte-order mark (UTF-8, UTF-16, UTF-32), else UTF-8. Undecodable input is one line
naming the file, the line and what to pass (``--encoding``).

:func:`output_target`: ``-`` means standard output; any other path must be a regular file or
not exist yet (a directory, FIFO, device or a link to one is refused with one line), so an
export never replaces a special file with a regular one.
"""

from __future__ import annotations

import codecs
import os
import stat
from pathlib import Path

from ragcourt.core.errors import ConfigError

STDOUT = "-"
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def sniff_encoding(raw: bytes) -> str:
    """The encoding a byte-order mark declares, else ``utf-8``."""
    return next((enc for bom, enc in _BOMS if raw.startswith(bom)), "utf-8")


def decode_user_text(raw: bytes, where: str, encoding: str | None = None) -> str:
    """``raw`` as text (module doc); ``where`` names the file in errors."""
    enc = encoding or sniff_encoding(raw)
    if encoding is not None and enc.lower().replace("_", "-") in ("utf-8", "utf8"):
        enc = "utf-8-sig"  # a BOM is dropped either way
    try:
        return raw.decode(enc)
    except LookupError:
        raise ConfigError(f"--encoding {encoding!r}: not a known text encoding") from None
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        hint = "" if encoding else "; pass --encoding (e.g. latin-1, cp1252, utf-16)"
        raise ConfigError(
            f"{where}: line {line} is not {enc} text (byte {err.start}){hint}"
        ) from None


def output_target(path: Path | str) -> Path | None:
    """None for standard output (``-``), else ``path`` once it is checked (module doc)."""
    if str(path) == STDOUT:
        return None
    p = Path(path)
    try:
        st = os.stat(p)  # follows links: what a write would reach
    except FileNotFoundError:
        if p.is_symlink():
            raise ConfigError(f"--out {p}: a dangling link; give a file path or '-'") from None
        return p
    except OSError as err:
        raise ConfigError(f"--out {p}: {err.strerror or err}") from None
    if stat.S_ISDIR(st.st_mode):
        raise ConfigError(f"--out {p}: a directory; give a file path or '-' for stdout")
    if not stat.S_ISREG(st.st_mode) or p.is_symlink():
        kind = "a link" if p.is_symlink() else "not a regular file"
        raise ConfigError(
            f"--out {p}: {kind} (a FIFO, device or stream is not replaced); give a file path "
            "or '-' for stdout"
        )
    return p
