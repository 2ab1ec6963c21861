"""Panes bound to the dashboard state's records, with Textual's reactives and ``data_bind``.

The state is a record of immutable records, each replaced when it changes (``model/state``): a
record that is still the same object draws the same thing. The app holds one reactive per record
(:class:`RecordSource`) and replaces only the records whose identity changed (:func:`publish`);
each pane declares reactives for the records it renders (:func:`record`), bound to the app's with
``data_bind`` (:func:`bind`). A record's reactive is named ``state_<record>``: ``log``, ``config``
and ``clock`` are taken on Textual's nodes or on the app. A pane draws from its own records
only (:meth:`RecordView.records`): one it does not declare stays at its default there, which the
pane's tests see, instead of a key that silently misses a field.

One publish replaces several records, and hands them to the bound panes directly, not through
Textual's watchers (a ``data_bind`` setter, a watcher check and a watcher call per record and
pane, a second a while a log streams): a pane's record watchers only mark it stale, and each
stale pane repaints once, after its records, then passes them on to the panes bound to it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, TypeVar

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
from eagle_tui.ui.textual_private import composing_node

T = TypeVar("T")
W = TypeVar("W", bound="RecordView")
EMPTY = DashboardState()
PREFIX = "state_"  # a record's reactive: ``state_startup`` holds ``startup``


def record(default: Callable[[], T]) -> var[T]:
    """A reactive for one record. It notifies on every assignment (an equal record that is a new
    object still counts as replaced); :func:`publish` assigns only records that are new objects."""
    return var(default, always_update=True, init=False)


def publish(target: RecordSource | RecordView, state: DashboardState,
            names: Iterable[str] = RECORDS) -> None:
    """Replace ``target``'s records that ``state`` holds as other objects and hand them to the
    panes bound to it: each pane bound to a replaced record repaints once. With none replaced,
    nothing is signalled."""
    if isinstance(target, RecordView):
        target.take(state, names)
        return
    replaced = [name for name, _old in _replace(target, state, names)]
    if replaced:
        for view in getattr(target, "bound_views", ()):
            view.take(state, replaced)


def _replace(node: Any, state: DashboardState, names: Iterable[str]) -> list[tuple[str, Any]]:
    """Set ``node``'s records that ``state`` holds as other objects, without Textual's
    watchers; the names replaced, with the records they replaced."""
    replaced = []
    cls = type(node)
    for name in names:
        attr = PREFIX + name
        new, old = getattr(state, name), getattr(node, attr)
        if old is not new:
            node.set_reactive(getattr(cls, attr), new)
            replaced.append((name, old))
    return replaced


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
    bound_views: list[RecordView]  # (set by :func:`bind`)


class RecordView(Widget):
    """A widget drawn from the records it declares; subclasses implement :meth:`repaint`.

    Its ``RECORDS`` are found from its reactives named like a record; a replaced one marks the
    widget stale (unless the widget defines its own ``_watch_state_<record>(old, new)``, which
    calls :meth:`_mark_stale` when what it draws of the record moved), and :meth:`take`
    repaints it once.
    """

    RECORDS: ClassVar[tuple[str, ...]] = ()
    WATCHERS: ClassVar[dict[str, Callable[[Any, Any, Any], None]]] = {}  # (own ones only)
    bound_views: list[RecordView]  # the panes bound to this one (set by :func:`bind`)
    _stale = False
    _records: DashboardState | None = None  # :meth:`records`, until a record is replaced

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        declared = {name for klass in cls.__mro__ for name, value in vars(klass).items()
                    if isinstance(value, Reactive)}  # (Textual's own table is private)
        cls.RECORDS = tuple(n for n in RECORDS if PREFIX + n in declared)
        cls.WATCHERS = {n: w for n in cls.RECORDS
                        if (w := getattr(cls, f"_watch_{PREFIX}{n}", None)) is not None}

    def _mark_stale(self) -> None:
        self._stale = True
        self._records = None

    def take(self, state: DashboardState, names: Iterable[str] | None = None) -> None:
        """Take ``state``'s records among ``names`` (all) that differ from this pane's: each
        replaced one marks it stale (or its own ``_watch_state_<record>(old, new)`` decides),
        a stale pane repaints, then the panes bound to it take them too."""
        wanted = list(RECORDS if names is None else names)  # (the module's: all records)
        mine = [n for n in wanted if n in self.RECORDS]
        for name, old in _replace(self, state, mine):
            self._records = None
            if (watcher := self.WATCHERS.get(name)) is not None:
                watcher(self, old, getattr(state, name))
            else:
                self._stale = True
        if self._stale:
            self._stale = False
            self.repaint()
        for view in getattr(self, "bound_views", ()):
            view.take(state, wanted)

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
    """Bind ``view``'s records to those of ``source``, the node composing it (called in its
    ``compose``): each :func:`publish` to that node hands the view the records it replaced, and
    the view takes the node's records as they are once it is mounted."""
    parent = composing_node()
    if not isinstance(parent, source) or not isinstance(parent, RecordSource | RecordView):
        raise TypeError(f"bind: {type(view).__name__} is composed by "
                        f"{type(parent).__name__}, not by a {source.__name__} with records")
    if "bound_views" not in vars(parent):
        parent.bound_views = []
    parent.bound_views.append(view)

    def sync() -> None:
        view.take(dataclasses.replace(
            EMPTY, **{n: getattr(parent, PREFIX + n) for n in RECORDS
                      if hasattr(type(parent), PREFIX + n)}))

    view.call_later(sync)
    return view


__all__ = ["EMPTY", "RecordSource", "RecordView", "bind", "publish", "record"]
