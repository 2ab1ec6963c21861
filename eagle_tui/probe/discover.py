"""Scan a host's processes for the engines' servers, through the transport (nothing installed).

One ``sh`` script reads ``/proc`` on the host: for every process its parent, group, start
time, where its stdout/stderr point, its folder and its argv; :func:`find_servers` (pure) does
the rest. Only processes whose argv mentions an engine (a registered profile's scripts, module
packages and worker titles) or python are printed, so a busy host costs one short command.
Linux only (``/proc``), like the rest of the remote side.
"""

from __future__ import annotations

import re

from eagle_tui.model.engines import profiles
from eagle_tui.model.launching.discovery import Found, find_servers, parse_scan
from eagle_tui.probe.tables import load_tables
from eagle_tui.transport.base import Transport, TransportError

# a word goes into the script's ``case`` pattern as is: only characters no shell gives a meaning
_PLAIN = re.compile(r"[A-Za-z0-9_.:+-]+")
# Each record: a head of numbers (the four text fields' byte lengths last, ``LC_ALL=C``: ``${#x}``
# counts bytes), then the fields end to end: an argv's tab or newline cannot start a row.
_SCAN = r"""
export LC_ALL=C
for d in /proc/[0-9]*; do
  c=$(tr '\0' '\037' 2>/dev/null < "$d/cmdline") || continue
  case $c in {pattern}) ;; *) continue ;; esac
  s=$(cat 2>/dev/null < "$d/stat") || continue
  set -- ${s##*) }
  case $1 in Z|X|x) continue ;; esac
  o=$(readlink "$d/fd/1" 2>/dev/null); e=$(readlink "$d/fd/2" 2>/dev/null)
  w=$(readlink "$d/cwd" 2>/dev/null)
  printf '%s %s %s %s %s %s %s %s\n%s%s%s%s\n' "${d#/proc/}" "$2" "$3" "${20}" \
    "${#o}" "${#e}" "${#w}" "${#c}" "$o" "$e" "$w" "$c"
done
"""


class DiscoveryError(TransportError):
    """The host's processes could not be read."""


def scan_words() -> list[str]:
    """What a process's argv must mention to be printed: each engine's console scripts, the
    packages of its modules and its workers' titles, then python."""
    words: list[str] = []
    for p in profiles():
        launch = p.launch
        modules = (*launch.modules, *launch.module_prefixes, *launch.serve_modules)
        for word in (*launch.scripts, *(m.split(".")[0] for m in modules),
                     *launch.process_titles):
            if _PLAIN.fullmatch(word) and word not in words:
                words.append(word)
    return [*words, "python"]


def scan_script() -> str:
    return _SCAN.replace("{pattern}", "|".join(f"*{w}*" for w in scan_words()))


async def discover(transport: Transport, timeout: float = 15.0) -> list[Found]:
    """The servers running on the transport's host (outermost launcher of each tree)."""
    res = await transport.run(["sh", "-c", scan_script(), "eagle-tui-scan"], timeout)
    if res.exit_code != 0 and not res.stdout:
        err = res.stderr.decode("utf-8", "replace").strip()
        raise DiscoveryError(f"cannot list processes on {transport.host or 'this machine'}: "
                             f"{err or res.exit_code}")
    rows = parse_scan(res.stdout)
    return find_servers(rows, load_tables())


__all__ = ["DiscoveryError", "discover", "scan_script", "scan_words"]
