"""One registry helper for everything users plug in: answer judges, pairwise judges,
correctness graders, QA filters.

A :class:`Registry` maps a ``kind`` (the string a params key names) to a factory. Built-in
kinds register themselves with ``@REGISTRY.register("kind")`` in their own module; the module
that *builds* instances imports the built-in modules, so the registry's home module never
imports its members (no import cycles). A user plugs in a kind the same way, from a module
named in params (``plugins``), imported by :meth:`Registry.load_plugins` before lookup.

Lookup errors are one line naming the params key, the unknown kind and the registered ones.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from ragcourt.core.errors import ConfigError

F = TypeVar("F", bound=Callable[..., object])


class Registry(Generic[F]):
    """Named factories of one pluggable family (``family`` is used in messages)."""

    def __init__(self, family: str) -> None:
        self.family = family
        self._factories: dict[str, F] = {}

    def register(self, kind: str) -> Callable[[F], F]:
        """Decorator: make ``kind`` resolvable; registering a second factory under a taken
        kind is a ConfigError (re-registering the same object is a no-op)."""
        if not kind or not kind.replace("_", "").replace("-", "").isalnum():
            raise ConfigError(f"{self.family}: kind {kind!r} must be letters, digits, '_', '-'")

        def deco(factory: F) -> F:
            known = self._factories.get(kind)
            if known is not None and known is not factory:
                raise ConfigError(f"{self.family} kind '{kind}' is already registered")
            self._factories[kind] = factory
            return factory

        return deco

    def get(self, kind: str, key: str) -> F:
        """The factory of ``kind``; ``key`` is the params key that named it (for the error)."""
        try:
            return self._factories[kind]
        except KeyError:
            raise ConfigError(
                f"{key}: unknown {self.family} '{kind}' (registered: {', '.join(self.kinds())})"
            ) from None

    def kinds(self) -> list[str]:
        return sorted(self._factories)

    def __contains__(self, kind: object) -> bool:
        return kind in self._factories

    @staticmethod
    def load_plugins(modules: Iterable[str], key: str = "plugins") -> None:
        """Import user modules whose ``@register`` decorators add kinds (one-line error)."""
        for name in modules:
            try:
                importlib.import_module(name)
            except ImportError as err:
                raise ConfigError(f"{key}: cannot import plugin module '{name}' ({err})") from None
