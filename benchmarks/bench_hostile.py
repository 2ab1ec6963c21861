"""The dashboard in tmux while the worst inputs are appended: key latency, CPU per MB, safety.

Each scenario starts ``eagle-tui watch --log FILE --gpu none`` in its own tmux server (160x48,
the harness of ``bench_tui.py``), lets a writer append one kind of hostile input for a few
seconds, and meanwhile sends the filter key probe (``/`` then ``Esc``), 0.2 s after the last one
showed, and polls
``tmux capture-pane`` until the toggle is on screen: key -> screen latency. CPU seconds of the
app (and its children) per MB written, its peak RSS, and what the terminal shows afterwards
(pane title, alternate screen, the dashboard still drawn) are recorded.

Inputs:

* ``digits``: ``Capturing batches`` lines of 40,000 digits (once quadratic in the digits);

* ``mb-lines``: lines of 1 MB of words;
* ``nul``: NUL bytes without a newline (a sparse file, ``/dev/zero``);
* ``escapes``: the 24 hostile terminal sequences of :data:`HOSTILE` (retitle, clear, leave the
  alternate screen, OSC 52 clipboard, hyperlinks, DCS, 8-bit CSI, bidi overrides, ...);
* ``markup``: Rich markup (``[bold]``, ``[/]``, ``[link=…]``, ``[@click=…]``);
* ``utf8``: invalid UTF-8.

    python benchmarks/bench_hostile.py            # every scenario, a markdown table
    python benchmarks/bench_hostile.py --seconds 4 --only digits nul
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import isolate  # noqa: F401  (eagle-tui runs with temporary folders)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_tui import CONTENDERS, pane, pct, wait_screen

DASH = CONTENDERS["dashboard"]
STAMP = b"[2025-11-20 10:14:31 TP0] "
# 24 sequences a hostile log line may carry to drive the terminal
HOSTILE: tuple[bytes, ...] = (
    b"\x1b]0;pwned-title\x07", b"\x1b]2;pwned-title\x1b\\", b"\x1b[2J", b"\x1b[H", b"\x1bc",
    b"\x1b[?1049l", b"\x1b[?25l", b"\x1b[?1000h", b"\x1b]52;c;cHduZWQ=\x07",
    b"\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\", b"\x1bP+q544e\x1b\\", b"\x1b[6n",
    b"\x1b[21t", b"\x9b2J", b"\xc2\x9b2J", b"\x1b[31;1;4;5m", b"\x1b(0lqk\x1b(B", b"\x1b#8",
    b"\x1b[3;1r", b"\x07\x07", b"\x08\x08\x08", b"\r\x1b[K", b"\xe2\x80\xae", b"\x1b_apc\x1b\\",
)
assert len(HOSTILE) == 24
MARKUP = b"[bold]b[/bold] [/] [link=http://evil.example/]x[/link] [@click=app.quit]q[/] [red"
INVALID = b"\xff\xfe \xc3 \xe2\x82 \xed\xa0\x80 \xf0\x9f\x98 \x80 ok"


def _lines(body: Callable[[int], bytes], per_s: float) -> Callable[[int], tuple[bytes, float]]:
    return lambda i: (body(i), 1.0 / per_s)


SCENARIOS: dict[str, Callable[[int], tuple[bytes, float]]] = {
    "digits": _lines(lambda i: STAMP + b"Capturing batches (bs=1 avail_mem=7 GB): "
                     + b"1" * 40_000 + b"\n", 10),
    "mb-lines": _lines(lambda i: STAMP + b"x " * (1 << 19) + b"\n", 2),
    "nul": _lines(lambda i: bytes(1 << 20), 2),
    "escapes": _lines(lambda i: STAMP + b"hostile " + HOSTILE[i % 24] + b" end\n", 200),
    "markup": _lines(lambda i: STAMP + MARKUP + b"\n", 200),
    "utf8": _lines(lambda i: STAMP + INVALID + b"\n", 200),
}


def writer(log: Path, make: Callable[[int], tuple[bytes, float]], seconds: float,
           written: list[int]) -> None:
    end = time.monotonic() + seconds
    i = 0
    with log.open("ab", buffering=0) as fh:
        while time.monotonic() < end:
            data, pause = make(i)
            fh.write(data)
            written[0] += len(data)
            i += 1
            time.sleep(pause)


def scenario(name: str, work: Path, seconds: float) -> dict[str, str]:
    log = work / f"{name}.log"
    log.write_bytes(STAMP + b"Load weight begin\n")
    with pane(DASH.command(log)) as p:
        _, ready = wait_screen(p, lambda t: DASH.first_frame in t, 20)
        if ready is None:
            raise SystemExit(f"{name}: the dashboard never drew")
        title0 = p._run("display", "-p", "-t", "b", "#{pane_title}").strip()
        cpu0 = p.cpu_seconds()
        written = [0]
        w = threading.Thread(target=writer, args=(log, SCENARIOS[name], seconds, written))
        w.start()
        lat: list[float] = []
        missed = 0
        rss = 0.0
        while w.is_alive():
            for key, on in ((DASH.keys[0], True), (DASH.keys[1], False)):
                t0 = time.monotonic()
                p.send(key)
                _, took = wait_screen(p, lambda t, on=on: DASH.toggled(t) == on, 5)
                if took is None:
                    missed += 1
                else:
                    lat.append(time.monotonic() - t0)
            rss = max(rss, p.rss_mb())
            time.sleep(0.2)
        w.join()
        cpu = p.cpu_seconds() - cpu0
        text = p.capture()
        title = p._run("display", "-p", "-t", "b", "#{pane_title}").strip()
        alt = p._run("display", "-p", "-t", "b", "#{alternate_on}").strip()
    mb = written[0] / 2**20
    safe = title == title0 and "pwned" not in title and alt == "1" and DASH.first_frame in text
    return {"input": name, "MB": f"{mb:.1f}", "keys": str(len(lat)), "missed": str(missed),
            "p50 ms": f"{pct(lat, 0.5) * 1000:.0f}", "p99 ms": f"{pct(lat, 0.99) * 1000:.0f}",
            "CPU s/MB": f"{cpu / mb:.3f}" if mb >= 0.5 else "-",
            "CPU % of a core": f"{100 * cpu / seconds:.0f}", "peak RSS MB": f"{rss:.0f}",
            "terminal intact": "yes" if safe else f"NO (title={title!r} alt={alt})"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=6.0, help="writing time per scenario")
    ap.add_argument("--only", nargs="*", choices=sorted(SCENARIOS), help="these scenarios")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only or list(SCENARIOS):
            rows.append(scenario(name, Path(tmp), args.seconds))
            print(rows[-1], file=sys.stderr, flush=True)
    cols = list(rows[0])
    print("| " + " | ".join(cols) + " |")
    print("| " + " | ".join("---" for _ in cols) + " |")
    for r in rows:
        print("| " + " | ".join(r[c] for c in cols) + " |")


if __name__ == "__main__":
    main()
