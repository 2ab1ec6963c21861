"""Startup figures an engine reports itself, and the silent steps of its compile phase.

An engine's package says which of its names mean which eagle-tui phase (:class:`TimingNames`)
and which lines name a step inside compiling (:class:`SubStepRule`); the bounded reading of
names, seconds and progress bars is here, shared. A figure that is not a plain finite number
within :data:`MAX_SECONDS`, a name longer than :data:`MAX_NAME` or more than
:data:`MAX_FIGURES` of them are left unread: a hostile server or a garbled line costs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from eagle_tui.model.events import EngineTimings, SubStep
from eagle_tui.model.numbers import finite, strict_float
from eagle_tui.model.record import Record, record

MAX_SECONDS = 1e7  # past 100 days: not the duration of a startup step
MAX_NAME = 64
MAX_FIGURES = 32
DETAIL_CHARS = 120
_NAME = re.compile(r"[A-Za-z_][\w.]{0,63}", re.ASCII)
# A tqdm bar's count after its bar: `` 45%|████▌     | 100/222 [00:05<00:06]``
_BAR = re.compile(r"(?<!\d)\d{1,3}%\|[^|]{0,512}\| (\d{1,15})/(\d{1,15})(?!\d)")


@record
class TimingNames(Record):
    """How an engine's startup figure names map to eagle-tui's phase keys.

    ``phases``: an exact name → its phase key; ``groups``: a name prefix (``cuda_graph.``)
    whose figures are added up into one phase key. Names in neither are kept as figures only.
    """

    phases: tuple[tuple[str, str], ...] = ()
    groups: tuple[tuple[str, str], ...] = ()

    def phase_of(self, name: str) -> str | None:
        for known, phase in self.phases:
            if name == known:
                return phase
        for prefix, phase in self.groups:
            if name.startswith(prefix):
                return phase
        return None


def seconds(value: object) -> float | None:
    """A duration: a number (or the text of one) that is finite and within 0..MAX_SECONDS."""
    v = strict_float(value) if isinstance(value, str | bytes) else finite(value, MAX_SECONDS)
    return v if v is not None and 0.0 <= v <= MAX_SECONDS else None


def timings(source: str, figures: Iterable[tuple[object, object]], names: TimingNames,
            lineno: int = 0) -> EngineTimings | None:
    """The figures read (bounded, in order, a repeated name once) and the phases they give;
    ``None`` when no figure was a usable duration."""
    kept: dict[str, float] = {}
    for n, (name, value) in enumerate(figures):
        if n >= 4 * MAX_FIGURES or len(kept) >= MAX_FIGURES:
            break
        secs = seconds(value)
        if not isinstance(name, str) or secs is None or name in kept \
                or _NAME.fullmatch(name) is None:
            continue
        kept[name] = secs
    if not kept:
        return None
    phases: dict[str, float] = {}
    for name, secs in kept.items():
        phase = names.phase_of(name)
        if phase is not None:
            phases[phase] = phases.get(phase, 0.0) + secs
    return EngineTimings(source, tuple((k, round(v, 3)) for k, v in phases.items()),
                         tuple(kept.items()), lineno)


@record
class SubStepRule(Record):
    """A line naming a step inside compiling: it holds ``text`` (a literal: the cheap test),
    and is shown as ``what``; ``bar``: it is a progress bar (its count is read); ``finished``:
    the line says the step ended."""

    text: str
    what: str
    bar: bool = False
    finished: bool = False


def substep(msg: str, rules: tuple[SubStepRule, ...], lineno: int,
            time: str | None) -> SubStep | None:
    """The first rule ``msg`` holds, as a :class:`SubStep` (``None``: none)."""
    for rule in rules:
        if rule.text in msg:
            done = total = None
            if rule.bar:
                m = _BAR.search(msg, msg.find(rule.text))
                if m is not None:
                    done, total = int(m.group(1)), int(m.group(2))
            return SubStep(rule.what, lineno, time, msg.strip()[:DETAIL_CHARS], done, total,
                           rule.finished)
    return None


__all__ = ["MAX_FIGURES", "MAX_SECONDS", "SubStepRule", "TimingNames", "seconds", "substep",
           "timings"]
