"""Panes bound to the dashboard state's records, with Textual's reactives and ``data_bind``.

The state is a record of immutable records, each replaced when it changes (``model/state``): a
record that is still the same object draws the same thing. The app holds one reactive per record
(:class:`RecordSource`) and replaces only the records whose identity changed (:func:`publish`);
each pane declares reactives for the records it renders (:func:`record`), bound to the app's with
``data_bind`` (:func:`bind`). A record's reactive is named ``state_<record>``: ``log``, ``config``
and ``clock`` are taken on Textual's nodes or on the app. A pane draws from its own records
only (:meth:`RecordView.records`): one it does not declare stays at its default there, which the
pane's tests see, instead of a key that silently misses a field.

One publish replaces several records: a pane's record watchers only mark it stale, and the
``published`` count, bumped after the records, repaints each stale pane once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Protocol, TypeVar

from textual.dom import DOMNode
from textual.reactive import Reactive, var
from textual.widget import Widget

from eagle_tui.model.state import RECORDS, DashboardState
from eagle_tui.model.state.activity import ActivityTrack
from eagle_tui.model.state.alert import Alert
from eagle_tui.model.state.hold import Holds
from eagle_tui.model.state.live import Gpus, LiveSources, LiveTimes
from eagle_tui.model.state.log import LogCounters, LogStats
from eagle_tui.model.state.run import Clock, Startup
from eagle_tui.model.state.server import ServedConfig, ServerMetrics

T = TypeVar("T")
W = TypeVar("W", bound="RecordView")
EMPTY = DashboardState()
PREFIX = "state_"  # a record's reactive: ``state_startup`` holds ``startup``


def record(default: Callable[[], T]) -> var[T]:
    """A reactive for one record. It notifies on every assignment (an equal record that is a new
    object still counts as replaced); :func:`publish` assigns only records that are new objects."""
    return var(default, always_update=True, init=False)


class Publisher(Protocol):
    published: int


def publish(target: Publisher, state: DashboardState, names: Iterable[str] = RECORDS) -> None:
    """Replace ``target``'s records that ``state`` holds as other objects, then bump its
    ``published`` count: each pane bound to a replaced record repaints once. With none
    replaced, nothing is signalled."""
    replaced = False
    for name in names:
        new = getattr(state, name)
        attr = PREFIX + name
        if getattr(target, attr) is not new:
            setattr(target, attr, new)
            replaced = True
    if replaced:
        target.published += 1


class RecordSource:
    """The app's side: one reactive per record of :class:`DashboardState`, and the count of
    publishes (a mixin for the ``App``, whose reactives Textual collects along its bases)."""

    state_startup: var[Startup] = record(Startup)
    state_config: var[ServedConfig] = record(ServedConfig)
    state_log: var[LogCounters] = record(LogCounters)
    state_stats: var[LogStats] = record(LogStats)
    state_metrics: var[ServerMetrics] = record(ServerMetrics)
    state_live: var[LiveSources] = record(LiveSources)
    state_liveness: var[LiveTimes] = record(LiveTimes)
    state_gpu: var[Gpus] = record(Gpus)
    state_activity: var[ActivityTrack] = record(ActivityTrack)
    state_alerts: var[tuple[Alert, ...]] = record(tuple)
    state_clock: var[Clock] = record(Clock)
    state_holds: var[Holds] = record(Holds)
    published: var[int] = var(0, always_update=True, init=False)


class RecordView(Widget):
    """A widget drawn from the records it declares; subclasses implement :meth:`repaint`.

    Its ``RECORDS`` are found from its reactives named like a record; a watcher for each marks
    the widget stale (unless the widget defines its own ``_watch_state_<record>``, which calls
    :meth:`_mark_stale` when what it draws of the record moved), and the next ``published``
    repaints it.
    """

    RECORDS: ClassVar[tuple[str, ...]] = ()
    published: var[int] = var(0, always_update=True, init=False)
    _stale = False
    _records: DashboardState | None = None  # :meth:`records`, until a record is replaced

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = {name for klass in cls.__mro__ for name, value in vars(klass).items()
                    if isinstance(value, Reactive)}  # (Textual's own table is private)
        cls.RECORDS = tuple(n for n in RECORDS if PREFIX + n in declared)
        for name in cls.RECORDS:  # a watcher the widget defines itself is kept
            watcher = f"_watch_{PREFIX}{name}"
            if getattr(cls, watcher, None) in (None, RecordView._mark_stale):
                setattr(cls, watcher, RecordView._mark_stale)

    def _mark_stale(self) -> None:
        self._stale = True
        self._records = None

    def _watch_published(self) -> None:
        if self._stale:
            self._stale = False
            self.repaint()

    def repaint(self) -> None:
        """Draw the records as they are now (one or more of them was replaced): by default a
        refresh, for a widget whose ``render`` reads :meth:`records`."""
        self.refresh()

    def records(self) -> DashboardState:
        """A state of this widget's records; the others at their defaults."""
        if self._records is None:
            self._records = dataclasses.replace(
                EMPTY, **{n: getattr(self, PREFIX + n) for n in self.RECORDS})
        return self._records

    def show(self, state: DashboardState) -> None:
        """Take ``state``'s records as a binding would (a widget used without a source)."""
        publish(self, state, self.RECORDS)


def bind(view: W, source: type[DOMNode]) -> W:
    """Bind ``view``'s records and ``published`` to those of ``source``, the node composing it."""
    # the count last: the records are in place when it fires
    names = (*(PREFIX + n for n in view.RECORDS), "published")
    return view.data_bind(**{n: getattr(source, n) for n in names})


__all__ = ["EMPTY", "RecordSource", "RecordView", "bind", "publish", "record"]
