"""ragcourt stage library: one module per pipeline stage, pure functions over polars frames.

Importing this package applies the offline environment defaults (see ``_offline``).
"""

from stages import _offline as _offline

__all__: list[str] = []
