"""An attribute of a widget that belongs to one of the parts it holds (composition's plumbing).

A widget built from plain parts (the log view: its scroller, renderer, file part) keeps its
public attributes where they always were, ``view.follow``, ``view.file_rows``: each is a
:class:`Forward` to the part that owns the state, so there is one copy of it and no property
boilerplate per name.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, cast, overload

T = TypeVar("T")


class Forward(Generic[T]):
    """``name = Forward[T]("_part", "attr")``: ``obj.name`` is ``obj._part.attr``.

    ``attr`` defaults to the name it is assigned to; ``readonly`` refuses assignment (a method
    forwarded is read this way too: ``obj.name(...)`` calls the part's bound method).
    """

    def __init__(self, part: str, attr: str | None = None, *, readonly: bool = False,
                 doc: str | None = None) -> None:
        self.part = part
        self.attr = attr or ""
        self.readonly = readonly
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        if not self.attr:
            self.attr = name
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Forward[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> Forward[T] | T:
        if obj is None:
            return self
        return cast(T, getattr(getattr(obj, self.part), self.attr))

    def __set__(self, obj: object, value: T) -> None:
        if self.readonly:
            raise AttributeError(f"{type(obj).__name__}.{self.name} is read-only")
        setattr(getattr(obj, self.part), self.attr, value)


def forwarded(cls: type[Any]) -> dict[str, Forward[Any]]:
    """The :class:`Forward` attributes of ``cls`` (its own and its bases'), by name."""
    return {name: value for klass in reversed(cls.__mro__)
            for name, value in vars(klass).items() if isinstance(value, Forward)}


__all__ = ["Forward", "forwarded"]
