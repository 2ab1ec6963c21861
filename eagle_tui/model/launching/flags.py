"""The values a launch command is read into: an engine's flag table, and the parsed command.

These types are what an engine's package (``eagle_tui/model/engines/<name>/launch.py``) speaks
to describe its parser and read a command, so this module imports no engine and no registry:
the command-line reader (:mod:`.cmdline`), which asks the registry which engine a command
starts, builds on it rather than the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.record import Record, record

MAX_JSON = 64_000


@record
class FlagSpec(Record):
    """One option of the engine's parser, as its argparse defines it."""

    opts: tuple[str, ...]
    dest: str
    nargs: int | str | None  # argparse's: None one value, 0 a switch, "?", "*", "+", or a count
    choices: tuple[str, ...] | None = None


@dataclass(frozen=True)
class FlagTable:
    """The flags of one engine version (``underscores``: the parser accepts ``_`` for ``-``)."""

    engine: str  # the name of the engine's profile
    version: str
    flags: tuple[FlagSpec, ...]
    allow_abbrev: bool = True
    underscores: bool = False
    dotted: bool = False  # ``--a.b v`` sets key ``b`` of the JSON value of ``--a``
    by_opt: dict[str, FlagSpec] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.by_opt:
            self.by_opt.update({opt: spec for spec in self.flags for opt in spec.opts})

    def long_opts(self) -> list[str]:
        return [opt for opt in self.by_opt if opt.startswith("--")]


@record
class Given(Record):
    """A flag as the user typed it: the token(s), and the value argparse would store."""

    spec: FlagSpec
    typed: str  # the option as typed (``--speculative-algo``)
    value: Any  # str, list[str], bool, dict (JSON), or None (an optional value left out)
    index: int  # position of the option token in the engine arguments


@record
class Problem(Record):
    """A token argparse would reject (the engine would not start)."""

    kind: str  # "unknown" | "ambiguous" | "missing-value" | "choice" | "json" | "cut"
    token: str
    message: str
    suggestion: str | None = None


@record
class ParsedCommand(Record):
    """A launch command split into its parts and parsed against the engine's flag table."""

    engine: str  # the name of the engine's profile
    entry: str  # how the engine was started: ``python -m MODULE``, ``SCRIPT serve``, ...
    env: tuple[tuple[str, str], ...]  # leading ``K=V`` words (values kept: redact before storing)
    prefix: tuple[str, ...]  # the words before the engine's own arguments
    args: tuple[str, ...]  # the engine's own arguments
    given: tuple[Given, ...]
    positionals: tuple[str, ...]
    problems: tuple[Problem, ...]
    table_version: str

    def get(self, dest: str, default: Any = None) -> Any:
        """The value argparse would store for ``dest`` (the last one given wins, as there)."""
        for g in reversed(self.given):
            if g.spec.dest == dest:
                return g.value
        return default

    def typed(self, dest: str) -> str | None:
        """The option as the user typed it, for messages in the user's own words."""
        for g in reversed(self.given):
            if g.spec.dest == dest:
                return g.typed
        return None

    def has(self, dest: str) -> bool:
        return any(g.spec.dest == dest for g in self.given)


def json_or_text(text: str) -> Any:
    """A JSON value, or the text itself when it is not one (or too long to parse)."""
    if len(text) > MAX_JSON:
        return text
    try:
        return load_json(text, "a JSON value", max_bytes=MAX_JSON)
    except LoadError:
        return text


def as_json(value: Any) -> dict[str, Any] | None:
    """A JSON-object flag value (``--speculative-config '{...}'``) as a dict, else ``None``."""
    if isinstance(value, dict):
        return value
    if isinstance(value, str) and value.lstrip().startswith("{"):
        obj = json_or_text(value)
        return obj if isinstance(obj, dict) else None
    return None


__all__ = ["MAX_JSON", "FlagSpec", "FlagTable", "Given", "ParsedCommand", "Problem", "as_json",
           "json_or_text"]
