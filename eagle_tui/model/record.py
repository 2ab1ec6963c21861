"""``@record``: the model's frozen, slotted dataclasses, cheaper to define.

``@dataclass(frozen=True, slots=True)`` writes the source of ``__init__``, ``__repr__``,
``__eq__``, ``__hash__``, ``__setattr__`` and ``__delattr__`` for each class and compiles it
with ``exec``, a cost per class that every start of the program pays, and the events module
alone has dozens (``eagle-tui report`` must start fast). ``@record`` lets
``dataclass`` generate only what must be per class (``__init__`` and the frozen guards) and
takes ``==``, ``hash`` and ``repr`` from :class:`Record`, written once, with the same meaning:
equal when of the same class with equal fields in order, hashed and shown by those fields.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T")

_NAMES: dict[type, tuple[str, ...]] = {}


def _names(cls: type) -> tuple[str, ...]:
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


class Record:
    """Field-wise ``==``, ``hash`` and ``repr`` for :func:`record` classes."""

    __slots__ = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in _names(type(self))])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Record)
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        args = ", ".join(f"{name}={getattr(self, name)!r}" for name in _names(type(self)))
        return f"{type(self).__qualname__}({args})"


@dataclass_transform(frozen_default=True)
def record(cls: type[T]) -> type[T]:
    """A frozen, slotted dataclass of ``cls``, which must derive from :class:`Record`."""
    if not issubclass(cls, Record):
        raise TypeError(f"@record class {cls.__name__} must derive from Record")
    return dataclass(frozen=True, slots=True, eq=False, repr=False)(cls)


__all__ = ["Record", "record"]
