"""Lenient JSON reply parsing for ``Gateway.structured``.

A reply parses when it contains a JSON object (the first ``{...}`` that decodes, code fences
and surrounding prose ignored) that validates against the pydantic model. Otherwise
:class:`ReplyParseError` carries a short reason that is fed back to the model on retry.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)


class ReplyParseError(ValueError):
    """The reply holds no JSON object, or the object does not fit the schema."""


def first_json_object(text: str) -> dict[str, Any]:
    """The first substring of ``text`` starting at ``{`` that decodes to a JSON object."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(obj, dict):
            return obj
        start = text.find("{", start + 1)
    raise ReplyParseError("the reply contains no JSON object")


def parse_reply(text: str, model: type[M]) -> M:
    """Extract the first JSON object of ``text`` and validate it as ``model``."""
    obj = first_json_object(text)
    try:
        return model.model_validate(obj)
    except ValidationError as err:
        parts = []
        for e in err.errors()[:3]:
            loc = ".".join(str(x) for x in e["loc"]) or "<object>"
            parts.append(f"{loc}: {e['msg']}")
        raise ReplyParseError("JSON does not match the schema (" + "; ".join(parts) + ")") from None


def schema_text(model: type[BaseModel]) -> str:
    """Compact JSON schema of ``model`` for prompts."""
    return json.dumps(model.model_json_schema(), separators=(",", ":"))


def repair_message(error: str, model: type[BaseModel]) -> str:
    """The user turn appended after an unparsable reply."""
    return (
        f"Your previous reply could not be used: {error}. Reply again with only one JSON "
        f"object that matches this JSON schema, and nothing else: {schema_text(model)}"
    )
