"""Resuming a container's log after a dropped connection or a killed CLI: generated logs with
repeated and whole-second stamps, two streams interleaved differently on each read, and the
CLIs' two ``--since`` behaviours (podman leaves out the given stamp's lines, the docker CLI
through podman's API cuts to whole seconds and gives lines before it too). Whatever the cut,
every line comes out once and each stream keeps its order."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from eagle_tui.model.ingest.normalize import split_stamp, stamp_text
from eagle_tui.model.ingest.resume import ResumeWindow, StampOrder

SEC = 1_000_000_000


def _log(rng: random.Random, n: int, whole: bool) -> list[tuple[int, str, bytes]]:
    """(stamp, stream, text): bursts share a stamp, texts repeat (health checks, blank lines)."""
    t = 1_796_000_000 * SEC
    out: list[tuple[int, str, bytes]] = []
    while len(out) < n:
        t += rng.choice([0, 0, 1, 1_000, 250_000_000, SEC, 3 * SEC])
        stamp = t - t % SEC if whole else t
        for _ in range(rng.choice([1, 1, 2, 5])):
            text = rng.choice([b"GET /health 200", b"", b"Decode batch",
                               f"line {len(out)}".encode()])
            out.append((stamp, rng.choice(["out", "err"]), text))
    return out[:n]


def _interleave(rng: random.Random, lines: list[tuple[int, str, bytes]]
                ) -> list[tuple[int, str, bytes]]:
    """The two streams merged in some order, each keeping its own; one runs ahead of the
    other by less than a second (what the CLI's two pipes do, well inside the margin)."""
    queues = {s: [ln for ln in lines if ln[1] == s] for s in ("out", "err")}
    merged: list[tuple[int, str, bytes]] = []
    while queues["out"] or queues["err"]:
        heads = [q[0][0] for q in queues.values() if q]
        s = rng.choice([k for k, q in queues.items() if q and q[0][0] < min(heads) + SEC])
        merged.append(queues[s].pop(0))
    return merged


def _since(lines: list[tuple[int, str, bytes]], since: int | None, cli: str,
           rng: random.Random) -> list[tuple[int, str, bytes]]:
    if since is None:
        return lines
    if cli == "podman":  # the given stamp's own lines are left out
        return [ln for ln in lines if ln[0] > since]
    start = since - since % SEC - rng.choice([0, 0, SEC])  # whole seconds, and a line earlier
    return [ln for ln in lines if ln[0] >= start]


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("cli", ["podman", "docker"])
def test_every_line_once_whatever_the_cuts(seed: int, cli: str) -> None:
    rng = random.Random(seed)
    whole = cli == "docker"
    full = _log(rng, rng.choice([5, 40, 300]), whole)
    window = ResumeWindow(margin=2 * SEC, max_kept=10_000)
    got: list[tuple[int, str, bytes]] = []
    written = 0
    for _ in range(rng.choice([1, 2, 5, 12])):
        written = min(len(full), written + rng.randint(0, len(full) // 3 + 1))
        window.reread()
        read = _interleave(rng, _since(full[:written], window.since(), cli, rng))
        cut = rng.randint(0, len(read))  # the connection drops after this many lines
        got += [ln for ln in read[:cut] if window.accept(ln[0], ln[2])]
    window.reread()
    got += [ln for ln in _interleave(rng, _since(full, window.since(), cli, rng))
            if window.accept(ln[0], ln[2])]
    # equal lines of one stamp are one line to the reader, whichever stream printed them
    assert Counter(ln[::2] for ln in got) == Counter(ln[::2] for ln in full)
    for s in ("out", "err"):  # the numbered lines are unique: each stream keeps its order
        assert [ln for ln in got if ln[1] == s and ln[2].startswith(b"line")] == [
            ln for ln in full if ln[1] == s and ln[2].startswith(b"line")]


def test_the_window_stays_bounded_and_the_floor_follows() -> None:
    window = ResumeWindow(margin=2 * SEC, max_kept=1000)
    for i in range(100_000):
        assert window.accept(i * SEC // 100, b"same line")
    assert window.kept <= 1000 + 1
    assert window.since() is not None and window.high is not None
    assert window.high - window.since() <= 10 * SEC
    window.reread()
    assert not window.accept(window.high, b"same line")  # seen: skipped
    assert window.accept(window.high, b"same line")  # one more than seen: new
    assert not window.accept(window.since() - 1, b"older")  # before the floor: handed out


def test_stamps_round_trip_and_cli_chatter_has_none() -> None:
    assert split_stamp(b"2026-12-02T08:26:25.411417916Z out0") == (
        1_796_199_985 * SEC + 411_417_916, b"out0")
    assert split_stamp(b"2026-12-02T09:26:25+01:00 x") == (1_796_199_985 * SEC, b"x")
    assert split_stamp(b"2026-12-02T08:26:25Z ") == (1_796_199_985 * SEC, b"")
    assert split_stamp(b"Error response from daemon: no such container") is None
    assert split_stamp(b"2026-13-02T08:26:25Z x") is None
    assert stamp_text(1_796_199_985 * SEC + 5) == "2026-12-02T08:26:25.000000005Z"


@pytest.mark.parametrize("seed", range(20))
def test_two_streams_are_put_back_in_stamp_order(seed: int) -> None:
    rng = random.Random(seed)
    full = _log(rng, 300, whole=seed % 2 == 0)
    order = StampOrder(margin=2 * SEC)
    out: list[bytes] = []
    held = 0
    for stamp, stream, text in _interleave(rng, full):
        out += order.push(stamp, f"{stream} {text.decode()}".encode())
        held = max(held, len(order._heap))
    out += order.flush()
    assert sorted(out) == sorted(f"{s} {t.decode()}".encode() for _, s, t in full)
    stamps = {f"{s} {t.decode()}".encode(): k for k, s, t in full if t.startswith(b"line")}
    numbered = [stamps[x] for x in out if x in stamps]
    assert numbered == sorted(numbered)  # in stamp order, whichever stream came first
    assert held < len(full)  # only the margin's lines are held
