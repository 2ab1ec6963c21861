"""Watch the Hugging Face cache for a model being downloaded (``blobs/*.incomplete`` files).

A server given a model id it does not have yet downloads it before its first weight-loading
line, often for many minutes, while the log says nothing or shows a progress bar that a
redirected log does not refresh. ``huggingface_hub`` writes each file to
``<cache>/models--ORG--NAME/blobs/<hash>.incomplete`` and renames it when complete, so the size
of those files, sampled every few seconds, says whether (and how fast) a download is running;
the reducer turns it into the Startup pane's ``downloading`` verdict (``model/activity.py``).

The cache is the one the environment of the transport's shell names: ``$HF_HUB_CACHE``, else
``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``. A server started with a different
``HF_HOME`` is not seen (nothing says so; the verdict then simply has no download signal).
One ``find`` per poll through the transport, locally as over SSH; a ``find`` without GNU
``-printf`` (busybox) ends the source after saying why once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable

from eagle_tui.model.events import DownloadSample, Event
from eagle_tui.transport.base import Transport

log = logging.getLogger(__name__)

DEFAULT_INTERVAL_S = 2.0
SCRIPT = r"""
d="${HF_HUB_CACHE:-${HF_HOME:-$HOME/.cache/huggingface}/hub}"
echo "root $d"
[ -d "$d" ] || exit 0
find "$d" -mindepth 3 -maxdepth 3 -path '*/blobs/*.incomplete' -printf '%s %P\n'
"""


def parse_find(text: str) -> tuple[str, int, int, tuple[str, ...]]:
    """:data:`SCRIPT`'s output → (cache root, files, bytes, repos as ``org/name``)."""
    root = ""
    files = 0
    total = 0
    repos: list[str] = []
    for line in text.splitlines():
        if line.startswith("root "):
            root = line[5:]
            continue
        size, _, rel = line.partition(" ")
        if not size.isdigit():
            continue
        files += 1
        total += int(size)
        top = rel.split("/", 1)[0]  # models--ORG--NAME
        kind, _, name = top.partition("--")
        repo = name.replace("--", "/") if kind in ("models", "datasets") else top
        if repo not in repos:
            repos.append(repo)
    return root, files, total, tuple(repos)


class DownloadWatcher:
    """Source of ``DownloadSample`` events while the cache holds incomplete files (and one
    with ``files=0`` when they are gone)."""

    def __init__(self, transport: Transport, *, interval: float = DEFAULT_INTERVAL_S,
                 name: str = "download", clock: Callable[[], float] = time.time,
                 until: Callable[[], bool] | None = None) -> None:
        self.transport = transport
        self.until = until  # polling ends once this says so (the server is ready: no download)
        self.interval = interval
        self.name = name
        self._clock = clock

    async def events(self) -> AsyncIterator[Event]:
        had = False
        while not (self.until is not None and self.until()):
            res = await self.transport.run(["sh", "-c", SCRIPT], timeout=10.0)
            if res.exit_code != 0:
                why = res.stderr.decode("utf-8", "replace").strip()[:200]
                log.info("download watcher stops on %s: find failed (%s)",
                         self.transport.host or "localhost", why or f"exit {res.exit_code}")
                return
            root, files, total, repos = parse_find(res.stdout.decode("utf-8", "replace"))
            if files or had:
                yield DownloadSample(self._clock(), files, total, repos, root,
                                     self.transport.host)
            had = files > 0
            await asyncio.sleep(self.interval)


__all__ = ["SCRIPT", "DownloadWatcher", "parse_find"]
