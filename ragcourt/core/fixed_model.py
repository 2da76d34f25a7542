"""The one pydantic base for records with a fixed set of keys (summaries, label rows, registry
entries).

:class:`FixedModel`: an unknown key is a validation error, values are not coerced (an int stays
an int), instances are frozen, and inf/NaN are written as the JSON constants. A model that
reads hand-written input relaxes only what it must in its own ``model_config`` (pydantic merges
it with this one), e.g. ``ConfigDict(strict=False)``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class FixedModel(BaseModel):
    """A record with fixed keys, strict values, frozen (module doc)."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, ser_json_inf_nan="constants"
    )


class HandWrittenModel(FixedModel):
    """A :class:`FixedModel` for files people write by hand (``systems.yaml``): fixed keys and
    frozen, with values coerced the way a YAML author expects (``"5"`` for a count is read)."""

    model_config = ConfigDict(strict=False)
