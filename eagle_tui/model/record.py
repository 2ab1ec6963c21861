"""``@record``: the model's frozen, slotted dataclasses, cheaper to define.

``@dataclass(frozen=True, slots=True)`` writes the source of ``__init__``, ``__repr__``,
``__eq__``, ``__hash__``, ``__setattr__`` and ``__delattr__`` for each class and compiles each
with its own ``exec``, a cost per class that every start of the program pays (the model has
over a hundred such classes, and ``eagle-tui report`` must start fast). ``@record`` lets
``dataclass`` find the fields and make the slots, compiles the ``__init__`` alone, and takes
``==``, ``hash``, ``repr``, the frozen guards and pickling from :class:`Record`, written once,
with the same meaning: equal when of the same class with equal fields in order, hashed and shown
by those fields, and no field assigned or deleted after ``__init__``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, FrozenInstanceError, dataclass, fields
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")

_NAMES: dict[type, tuple[str, ...]] = {}
_set = object.__setattr__


def _names(cls: type) -> tuple[str, ...]:
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


class Record:
    """Field-wise ``==``, ``hash`` and ``repr``, frozen fields and pickling for :func:`record`
    classes."""

    __slots__ = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in _names(type(self))])

    # the fields' values in one C call, the tuple or the one value (set by ``record``): ``==``
    # and ``hash`` run often in the fold, and a Python loop over the fields made them several
    # times slower than a dataclass's
    _key: Callable[[Any], Any]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        key = self._key
        return bool(key(self) == key(other))

    def __hash__(self) -> int:
        return hash(self._key(self))

    def __repr__(self) -> str:
        args = ", ".join(f"{name}={getattr(self, name)!r}" for name in _names(type(self)))
        return f"{type(self).__qualname__}({args})"

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __getstate__(self) -> tuple[Any, ...]:
        return self._values()

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        for name, value in zip(_names(type(self)), state, strict=True):
            _set(self, name, value)


class _Factory:
    """The default of a field made by a ``default_factory``: the call is in ``__init__``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _Factory()


def _init(cls: type) -> Any:
    """The class's ``__init__``: each field set through ``object.__setattr__`` (what the frozen
    dataclass's own does), a factory called for a default it makes, ``__post_init__`` last."""
    params: list[str] = []
    body: list[str] = []
    defaults: list[object] = []
    space: dict[str, Any] = {"_set": _set, "_FACTORY": _FACTORY}
    for i, f in enumerate(fields(cls)):
        name = f.name
        if not f.init:  # set by __post_init__, or from its default here
            if f.default_factory is not MISSING:
                space[f"_f{i}"] = f.default_factory
                body.append(f"_set(__self__, {name!r}, _f{i}())")
            elif f.default is not MISSING:
                space[f"_d{i}"] = f.default
                body.append(f"_set(__self__, {name!r}, _d{i})")
            continue
        params.append(name)
        if f.default_factory is not MISSING:
            defaults.append(_FACTORY)
            space[f"_f{i}"] = f.default_factory
            body.append(f"_set(__self__, {name!r}, _f{i}() if {name} is _FACTORY else {name})")
        else:
            if f.default is not MISSING:
                defaults.append(f.default)
            elif defaults:
                raise TypeError(f"non-default field {name!r} follows a default one")
            body.append(f"_set(__self__, {name!r}, {name})")
    if hasattr(cls, "__post_init__"):
        body.append("__self__.__post_init__()")
    source = (f"def __init__(__self__, {', '.join(params)}):\n "
              + "\n ".join(body or ["pass"]) + "\n")
    exec(source, space)
    init = space["__init__"]
    init.__defaults__ = tuple(defaults) or None
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    return init


@dataclass_transform(frozen_default=True)
def record(cls: type[T]) -> type[T]:
    """A frozen, slotted dataclass of ``cls``, which must derive from :class:`Record`."""
    if not issubclass(cls, Record):
        raise TypeError(f"@record class {cls.__name__} must derive from Record")
    made = dataclass(init=False, slots=True, eq=False, repr=False)(cls)
    made.__init__ = _init(made)  # type: ignore[method-assign]
    names = _names(made)
    made._key = attrgetter(*names) if names else staticmethod(_no_values)  # type: ignore[attr-defined]
    return made


def _no_values(_obj: object) -> tuple[()]:
    return ()


def is_frozen(cls: type) -> bool:
    """Whether instances of the dataclass ``cls`` refuse assignment (a record or a frozen
    dataclass)."""
    params = getattr(cls, "__dataclass_params__", None)
    return issubclass(cls, Record) or bool(params is not None and params.frozen)


__all__ = ["Record", "is_frozen", "record"]
