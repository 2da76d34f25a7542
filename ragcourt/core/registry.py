"""One registry helper for everything users plug in: answer judges, correctness graders,
pairwise judges, QA filters, retrievers, system kinds and answer routes.

A :class:`Registry` maps a ``kind`` (the string a params key or a systems-file entry names) to
a factory. It is declared once, in the module that defines its family's contract, with the
dotted names of the modules that hold the built-in kinds (``builtins``; a package name stands
for every module in it, so a new kind is one new module there). Those modules register their
kinds with ``@REGISTRY.register("kind")``; the registry imports them on its first lookup, so
its home module never imports its members (no import cycles) and nothing is imported at
package import.

Plug-ins from outside the package are Python entry points of group :data:`PLUGIN_GROUP`
(``[project.entry-points."ragcourt.plugins"] my_kinds = "my_pkg.kinds"``): each names a module
whose ``@register`` decorators add kinds. They are loaded once per process, on the first
lookup of any registry.

A kind may declare its own settings: ``@REGISTRY.register("kind", config=Model)`` with a
pydantic model whose fields (types, defaults, descriptions) are the kind's settings. Params
hold them as a plain mapping beside the kind's name; :meth:`Registry.settings` validates it
against the model (one-line error naming the key and the field), and :meth:`Registry.described`
lists every kind with its settings (``ragcourt kinds`` prints it), so a new kind with a new
setting is one module.

A kind's module may also declare it the family's default: ``register("kind", default=True)``
(or ``default="role"`` for the default of one role, where a family plays several, as the QA
filters do). Params leave the kind ``null`` to mean that default and :meth:`Registry.resolve`
turns ``null`` into it, so a default kind is spelled once, in its own module; no code outside
that module and the registry names it.

Lookup errors are one line naming the params key, the unknown kind and the registered ones.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from operator import attrgetter
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from ragcourt.core.errors import ConfigError

F = TypeVar("F")

PLUGIN_GROUP = "ragcourt.plugins"
_plugins_loaded = False
# held while a registry imports its built-ins or the plug-ins: a second thread's lookup waits
# for them instead of seeing a half-filled registry (re-entrant: an import may look up a kind)
_LOADING = threading.RLock()


def load_entry_point_plugins(group: str = PLUGIN_GROUP) -> None:
    """Import every module named by an entry point of ``group`` (once per process; a plug-in
    that fails to import is a one-line ConfigError naming the entry point)."""
    global _plugins_loaded
    with _LOADING:
        if _plugins_loaded and group == PLUGIN_GROUP:
            return
        if group == PLUGIN_GROUP:
            _plugins_loaded = True
        _load_entry_points(group)


def _load_entry_points(group: str) -> None:
    for ep in sorted(metadata.entry_points(group=group), key=lambda e: e.name):
        try:
            ep.load()
        except Exception as err:  # a plug-in's own bug: report it as the user's config error
            raise ConfigError(
                f"entry point '{ep.name}' ({group}): cannot load '{ep.value}' "
                f"({type(err).__name__}: {err})"
            ) from None


def forget_entry_point_plugins() -> None:
    """Let the next lookup load the entry points again (tests that install a plug-in)."""
    global _plugins_loaded
    _plugins_loaded = False


def _import_all(names: Iterable[str]) -> None:
    """Import each module; for a package, also every module and subpackage in it."""
    for name in names:
        module = importlib.import_module(name)
        path = getattr(module, "__path__", None)
        if path is None:
            continue
        subs = sorted(m.name for m in pkgutil.iter_modules(path) if not m.name.startswith("_"))
        _import_all(f"{name}.{sub}" for sub in subs)


class Registry(Generic[F]):
    """Named factories of one pluggable family (``family`` is used in messages); ``builtins``
    are the modules (or packages) whose imports register the built-in kinds."""

    def __init__(self, family: str, *, builtins: Sequence[str] = ()) -> None:
        self.family = family
        self.builtins = tuple(builtins)
        self._factories: dict[str, F] = {}
        self._configs: dict[str, type[BaseModel]] = {}
        self._defaults: dict[str, str] = {}  # role ("" for the family) -> default kind
        self._loaded = False

    def register(
        self, kind: str, *, config: type[BaseModel] | None = None, default: bool | str = False
    ) -> Callable[[F], F]:
        """Decorator: make ``kind`` resolvable, with ``config`` the model of its own settings
        (:meth:`settings`) and ``default`` True when it is the family's default (a string: the
        default of that role); registering a second factory under a taken kind, or a second
        default of one role, is a ConfigError (re-registering the same object is a no-op)."""
        if not kind or not kind.replace("_", "").replace("-", "").isalnum():
            raise ConfigError(f"{self.family}: kind {kind!r} must be letters, digits, '_', '-'")
        role = "" if default is True else default or None

        def deco(factory: F) -> F:
            known = self._factories.get(kind)
            if known is not None and known is not factory:
                raise ConfigError(f"{self.family} kind '{kind}' is already registered")
            if role is not None and self._defaults.get(role, kind) != kind:
                what = f"role '{role}'" if role else "the family"
                raise ConfigError(
                    f"{self.family}: '{kind}' and '{self._defaults[role]}' both claim to be "
                    f"the default of {what}"
                )
            self._factories[kind] = factory
            if config is not None:
                self._configs[kind] = config
            if role is not None:
                self._defaults[role] = kind
            return factory

        return deco

    def default(self, role: str = "") -> str:
        """The kind registered as the default (of ``role``); ConfigError when none is."""
        self.load()
        if role not in self._defaults:
            what = f" of role '{role}'" if role else ""
            raise ConfigError(f"{self.family}: no kind is registered as the default{what}")
        return self._defaults[role]

    def resolve(self, kind: str | None, key: str, role: str = "") -> str:
        """``kind`` checked (:meth:`check`), or the default (of ``role``) when it is None (a
        params key left null)."""
        return self.default(role) if kind is None else self.check(kind, key)

    def config_model(self, kind: str) -> type[BaseModel] | None:
        """The settings model ``kind`` registered, or None (it takes no settings)."""
        self.load()
        return self._configs.get(kind)

    def settings(self, kind: str, data: Mapping[str, Any] | None, key: str) -> BaseModel | None:
        """``data`` validated as ``kind``'s settings (its model's defaults for what is unset);
        None for a kind without settings. One-line ConfigError naming ``key`` and the field,
        or saying the kind takes no settings."""
        model = self.config_model(self.check(kind, key))
        if model is None:
            if data:
                given = ", ".join(sorted(data))
                raise ConfigError(f"{key}: {self.family} '{kind}' takes no settings ({given})")
            return None
        try:
            return model.model_validate(dict(data or {}))
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"{key}.{where}: {first['msg']} ({self.family} '{kind}')") from None

    def described(self) -> list[KindInfo]:
        """Every kind with its settings (name, type, default, description) and the roles it is
        the default of ("" for the family), sorted by kind."""
        self.load()
        roles: dict[str, list[str]] = {}
        for role, kind in sorted(self._defaults.items()):
            roles.setdefault(kind, []).append(role)
        return [
            KindInfo.of(kind, self._configs.get(kind), tuple(roles.get(kind, ())))
            for kind in self.kinds()
        ]

    def load(self) -> None:
        """Import the built-in modules and the entry-point plug-ins (first call only; a
        concurrent first call waits until they are imported)."""
        with _LOADING:
            if not self._loaded:
                self._loaded = True
                _import_all(self.builtins)
            load_entry_point_plugins()

    def get(self, kind: str, key: str) -> F:
        """The factory of ``kind``; ``key`` is the params key that named it (for the error)."""
        self.check(kind, key)
        return self._factories[kind]

    def check(self, kind: object, key: str) -> str:
        """``kind`` when registered, else a one-line ConfigError naming ``key`` and the kinds."""
        if isinstance(kind, str) and kind in self:
            return kind
        raise ConfigError(
            f"{key}: unknown {self.family} {kind!r} (registered: {', '.join(self.kinds())})"
        )

    def kinds(self) -> list[str]:
        """Every registered kind, sorted."""
        self.load()
        return sorted(self._factories)

    def items(self) -> list[tuple[str, F]]:
        """``(kind, factory)`` pairs, sorted by kind."""
        self.load()
        return sorted(self._factories.items())

    def __contains__(self, kind: object) -> bool:
        self.load()
        return kind in self._factories


@dataclass(frozen=True)
class KindKey(Generic[F]):
    """A params key (dotted path) choosing one kind of ``registry`` (null: its default) and
    the key beside it holding that kind's own settings."""

    registry: Registry[F]
    key: str
    settings_key: str

    def kind(self, params: object) -> str:
        """The chosen kind (null: the registry's default); one-line ConfigError if unknown."""
        return self.registry.resolve(attrgetter(self.key)(params), self.key)

    def settings(self, params: object) -> Any:
        """The chosen kind's settings, validated against its model (None: it has none)."""
        given = attrgetter(self.settings_key)(params)
        return self.registry.settings(self.kind(params), given, self.settings_key)

    def factory(self, params: object) -> F:
        """The chosen kind's factory, its settings checked first."""
        self.settings(params)
        return self.registry.get(self.kind(params), self.key)


@dataclass(frozen=True)
class SettingInfo:
    """One setting of a kind: its name, type, default and description."""

    name: str
    type: str
    default: str
    description: str


@dataclass(frozen=True)
class KindInfo:
    """A registered kind, its settings (empty: it takes none) and the roles it is the
    default of."""

    kind: str
    settings: tuple[SettingInfo, ...]
    default_of: tuple[str, ...] = ()  # roles it is the default of ("": the family's default)

    @classmethod
    def of(
        cls, kind: str, model: type[BaseModel] | None, default_of: tuple[str, ...] = ()
    ) -> KindInfo:
        fields = model.model_fields.items() if model is not None else ()
        return cls(
            kind,
            tuple(
                SettingInfo(
                    name,
                    getattr(f.annotation, "__name__", str(f.annotation)),
                    "required"
                    if f.is_required()
                    else repr(f.get_default(call_default_factory=True)),
                    f.description or "",
                )
                for name, f in fields
            ),
            default_of,
        )
