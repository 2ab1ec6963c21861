"""The opener of a spec's session: its transports connected, its session built on the thread
(:mod:`.open` and the launch control both open sessions with it)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from eagle_tui.assembly.spec import DashboardSpec
from eagle_tui.assembly.threaded import Closer, Opener

if TYPE_CHECKING:
    from eagle_tui.session import Session
    from eagle_tui.sources.linestore import Scrollback


def spec_opener(spec: DashboardSpec, hosts: list[str] | None = None,
                err: TextIO | None = None, scrollback: Scrollback | None = None,
                *, screen: bool = False) -> Opener:
    """The opener that connects the spec's transports and builds its session on the thread.

    SSH refusals are raised by ``ThreadedSession.start()``, before Textual starts; the session
    itself is built after the first frame (its sources' imports need not delay it). The first
    transport's host is appended to ``hosts`` for the status line. ``scrollback`` (the log's
    file-backed scrollback) is attached to the transports, on the session thread. ``screen``:
    for the dashboard, whose local log is read on its repaint grid; headless lines come as the
    log's lines do (:func:`~eagle_tui.assembly.remote.make_transports`).
    """

    async def open_() -> tuple[Session | Callable[[], Session], Closer]:
        from eagle_tui.assembly.build import build_session
        from eagle_tui.assembly.remote import close_transports, open_transports

        if spec.replay is not None:
            return build_session(spec), _no_close
        transports = await open_transports(spec.ssh, err or sys.stderr, screen=screen)
        if hosts is not None:
            hosts.append(transports[0].host)

        if scrollback is not None:
            scrollback.attach(transports)

        async def close() -> None:
            if scrollback is not None:
                await scrollback.close()
            await close_transports(transports)

        return (lambda: build_session(spec, transports)), close

    return open_


async def _no_close() -> None:
    return None
