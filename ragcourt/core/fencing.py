"""Fences for untrusted text in judge prompts: data the enclosed text cannot close.

``fence(text, label)`` = ``<<<LABEL h>>>`` newline ``neutralise(text)`` newline
``<<<END LABEL h>>>`` with ``h`` = the first 8 hex digits of sha256(label, neutralised text):
deterministic (the reply cache and reruns see the same prompt) and different per content.
The text cannot close its fence: :func:`neutralise` breaks every run of three or more
angle brackets (ASCII, full-width and lookalikes, zero-width characters between them), so
no marker of any boundary survives inside, and it breaks chat-template control sequences
(``<|im_start|>``, ``</s>``, ``[INST]``, ``<start_of_turn>``) that a local model's tokenizer
might read as special tokens. The judge's system prompt says text between markers is data.

``tag(text, label)`` is the same guarantee in a form small models read more easily:
``<label id="h">`` newline text newline ``</label>`` with ``label`` the field name in lower
case (``answer_a``). Besides :func:`neutralise`, every tag-like ``<`` of the text (followed by
an optional ``/`` or ``!`` and a letter) becomes ``‹``, so the text can neither close its own
element nor open another one.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

# Characters that render as or tokenize like an angle bracket (NFKC folds most to < or >).
_ANGLES = "<>\uff1c\uff1e\ufe64\ufe65\u2039\u203a\u00ab\u00bb\u3008\u3009\u27e8\u27e9\u2329\u232a"
_INVISIBLE = "\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad"
# three or more angle-like characters, possibly with invisible characters or spaces between
_ANGLE_RUN = re.compile(f"[{_ANGLES}](?:[{_INVISIBLE} ]*[{_ANGLES}]){{2,}}")
# chat-template control sequences: <|...|>, </s> <s>, [INST] [/INST], <start_of_turn> etc.
_CONTROL = re.compile(
    r"<\s*\|"  # <| ... (ChatML, Llama 3, Phi)
    r"|\|\s*>"  # ... |>
    r"|<\s*/?\s*s\s*>"  # <s> </s>
    r"|\[\s*/?\s*INST\s*\]"  # [INST] [/INST]
    r"|\[\s*/?\s*SYS\s*\]|<<\s*/?\s*SYS\s*>>"  # Llama 2 system markers
    r"|<\s*/?\s*(?:start_of_turn|end_of_turn|bos|eos)\s*>",
    re.IGNORECASE,
)
_LABEL = re.compile(r"[A-Z][A-Z0-9 _]{0,30}")
HASH_CHARS = 8


def _spaced(m: re.Match[str]) -> str:
    """A matched marker-like run with each visible character separated by a space."""
    visible = [c for c in m.group(0) if c not in _INVISIBLE and c != " "]
    return " ".join(visible)


def _broken_control(m: re.Match[str]) -> str:
    return "\u2039" + m.group(0)[1:] if m.group(0)[0] in "<[" else m.group(0)[:-1] + "\u203a"


def neutralise(text: str) -> str:
    """``text`` with marker-like angle runs spaced out (``<<<`` -> ``< < <``) and chat control
    sequences broken (their first ``<``/``[`` -> ``‹``, a trailing ``|>`` -> ``|›``); checked
    on the NFKC form too, so full-width lookalikes are caught. Other text is unchanged."""
    folded = unicodedata.normalize("NFKC", text)
    if folded != text and (_ANGLE_RUN.search(folded) or _CONTROL.search(folded)):
        text = folded  # a lookalike hides a marker: judge the folded text instead
    text = _ANGLE_RUN.sub(_spaced, text)
    return _CONTROL.sub(_broken_control, text)


def boundary(text: str, label: str) -> str:
    """The fence's hash code: sha256 of label and neutralised text, ``HASH_CHARS`` hex digits."""
    digest = hashlib.sha256(f"{label}\x00{text}".encode()).hexdigest()
    return digest[:HASH_CHARS]


def fence(text: str, label: str = "DATA") -> str:
    """``text`` neutralised and enclosed in ``<<<LABEL h>>>`` ... ``<<<END LABEL h>>>``."""
    if not _LABEL.fullmatch(label):
        raise ValueError(f"fence label {label!r} must be upper-case letters, digits, spaces")
    body = neutralise(text)
    h = boundary(body, label)
    return f"<<<{label} {h}>>>\n{body}\n<<<END {label} {h}>>>"


# "<" that starts a tag, a closing tag, a comment or a declaration: "<a", "</a", "<!", "< /a"
_TAG_START = re.compile(r"[<\uff1c\ufe64](?=\s*[/!]?\s*[A-Za-z!])")
_TAG_NAME = re.compile(r"[a-z][a-z0-9_]{0,30}")


def neutralise_tags(text: str) -> str:
    """:func:`neutralise`, then every tag-starting ``<`` (or a full-width lookalike) -> ``‹``."""
    return _TAG_START.sub("\u2039", neutralise(text))


def tag(text: str, name: str = "data") -> str:
    """``text`` neutralised (:func:`neutralise_tags`) inside ``<name id="h">`` ... ``</name>``;
    ``h`` as in :func:`fence`, over the neutralised text."""
    if not _TAG_NAME.fullmatch(name):
        raise ValueError(f"tag name {name!r} must be lower-case letters, digits, underscores")
    body = neutralise_tags(text)
    h = boundary(body, name)
    return f'<{name} id="{h}">\n{body}\n</{name}>'


def is_fenced_once(prompt: str, text: str, label: str) -> bool:
    """True when ``prompt`` holds ``fence(text, label)`` and its closing marker only once."""
    fenced = fence(text, label)
    closing = fenced.rsplit("\n", 1)[1]
    return fenced in prompt and prompt.count(closing) == 1
