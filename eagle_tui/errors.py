"""The one exception tree of eagle-tui.

Every error that eagle-tui raises on purpose derives from :class:`EagleError`, so the command
boundary (``cli.main``) can tell "eagle-tui refused or failed" (a one-line message and exit 2)
from a bug (a traceback) without a list of unrelated classes. The branches name *where* the
error comes from; the leaves live beside the code that raises them::

    EagleError
    ├── UsageError          a bad command line or argument value (exit 2)
    │   ├── SmiUsageError               the fake nvidia-smi's bad arguments (sim/smi.py)
    │   ├── CommandError                not an SGLang/vLLM launch command (model/cmdline.py)
    │   └── PatternRefused              a typed pattern RE2 cannot run (userpattern.py)
    ├── ConfigError         a bad config or theme file
    │   ├── ui.config.ConfigError       the config file (ui/config.py)
    │   └── ui.theme.ThemeError         a theme file (ui/theme.py)
    ├── InputError          a file or stream that cannot be read as asked
    │   ├── LoadError                   a JSON/TOML document over its size or depth bound, or
    │   │                               not its format (model/loaders.py)
    │   ├── AnswerError                 a Prometheus answer of another shape (model/prom_answer.py)
    │   ├── CodecError                  a JSON value that is not an event (model/codec.py)
    │   ├── ReplayError                 a record line that cannot be replayed (sources/replay.py)
    │   ├── NotRegularFileError         a FIFO, device, socket or directory as a file (files.py)
    │   └── GrammarError                an outside value not of its shape: host, port, container,
    │                                   path (model/grammar.py)
    ├── TransportError      the host, the connection, a remote command (transport/base.py)
    │   ├── ConnectionLost, HostKeyError, CommandNotFound            (transport/base.py)
    │   ├── NotRegularFile              a FIFO, device, socket or directory as a file (base.py)
    │   ├── DestinationError            a bad ``user@host:port`` (transport/ssh/config.py)
    │   ├── AuthError                   SSH authentication refused (transport/ssh/link.py)
    │   ├── MetricsError                ``/metrics`` unreadable (sources/metrics.py)
    │   ├── PrometheusError             no usable Prometheus answer (sources/prometheus.py)
    │   ├── HttpBudgetError             an HTTP answer over its budget (sources/http_budget.py)
    │   │   ├── DeadlineExceeded        not complete within its total deadline
    │   │   └── BodyTooLarge            a body over its byte cap
    │   ├── DraftConfigError            the draft model's config (sources/draftconfig.py)
    │   ├── DiscoveryError              the host's processes unreadable (probe/discover.py)
    │   ├── ScanError                   a run's process scan cut or failed (launch/members.py)
    │   └── FrameError                  the remote shell did not run the framed command
    │                                   (transport/ssh/frame.py)
    ├── LaunchError         a server not started, or a run not stopped (launch/process.py)
    ├── HistoryError        the run history unusable, or no such run (history/store.py)
    ├── BenchError          ``bench`` could not start its load (commands/bench.py, exit 1)
    └── ApiError            the simulator refuses an OpenAI request (sim/openai_api.py)

Anything else that reaches ``cli.main`` is a bug: one line and exit :data:`EXIT_INTERNAL` (70),
never 1, the "crashed" of ``wait`` and the "errors found" of ``lint``.

UsageError, ConfigError and InputError are also ValueErrors: callers that caught the ValueError
of a bad argument, file or record line before this tree existed keep working. TransportError is
not: a lost connection is not a bad value. ``tests/unit/structure/test_errors.py`` checks that every
exception class defined in eagle_tui is in this tree.

This module is a leaf: it imports nothing, so every layer (the pure model included) may use it.
"""

from __future__ import annotations

EXIT_INTERNAL = 70  # a bug of eagle-tui itself (sysexits' EX_SOFTWARE): never 1, "crashed"


class EagleError(Exception):
    """Root of every error eagle-tui raises on purpose (never a bug)."""


class UsageError(EagleError, ValueError):
    """A bad command line or argument value; the command prints it and exits 2."""


class ConfigError(EagleError, ValueError):
    """A config, theme or settings file that cannot be used as written."""


class InputError(EagleError, ValueError):
    """A file or stream that cannot be read as asked (a malformed record line, say)."""


def describe_error(exc: BaseException) -> str:
    """A one-line, user-facing description: the message, else the exception's class name."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


__all__ = [
    "EXIT_INTERNAL",
    "ConfigError",
    "EagleError",
    "InputError",
    "UsageError",
    "describe_error",
]
