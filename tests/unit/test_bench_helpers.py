"""The arithmetic and the set-up of the soak, SSH-follow, fleet and viewers benchmarks.

Their runs take minutes to hours in tmux, against sshd and Prometheus; what they conclude from
the samples (slopes, ranges, the lines counted) and how they find their peers is checked here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.bench import bench_module


def _row(t: float, rss: float, cpu: float = 5.0, written: float = 0, shown: float = 0) -> dict[
        str, float]:
    return {"elapsed_s": t, "rss_mb": rss, "cpu_pct": cpu, "lines_written": written,
            "lines_shown": shown}


def test_soak_summary_compares_start_and_end_and_fits_the_slope_after_warm_up() -> None:
    soak: Any = bench_module("bench_soak")
    # 2 hours, a sample a minute: 100 MB flat for 10 minutes, then +3 MB an hour
    rows = [_row(60.0 * m, 100.0 if m <= 10 else 100.0 + 3.0 * (m - 10) / 60,
                 cpu=4.0 if m <= 60 else 6.0, written=200 * 60 * m, shown=200 * 60 * m - 100)
            for m in range(1, 121)]
    out = "\n".join(soak.summary(rows, 600.0))
    assert "samples: 120 over 2.00 h" in out
    assert "RSS first 10 min: median 100.0 MB" in out
    assert "last 10 min: median 105.3 MB" in out  # minutes 111-120: 105.05-105.5
    assert "after the first 10 min: +3.00 MB/hour" in out
    assert "over the second half: +3.00 MB/hour" in out
    assert "CPU hour 1: median 4.00 % of a core (range 4.00-4.00, 60 samples)" in out
    assert "CPU hour 2: median 6.00 % of a core (range 6.00-6.00, 60 samples)" in out
    assert "hour 3" not in out
    assert "median 0.50 s" in out  # 100 lines behind at 200 lines/s


def test_soak_summary_of_a_short_run_halves_the_window() -> None:
    soak: Any = bench_module("bench_soak")
    rows = [_row(15.0 * i, 50.0 + i) for i in range(1, 21)]  # 5 minutes
    out = soak.summary(rows, 600.0)
    assert out[1].startswith("RSS first 2 min: median 55.5 MB") and "last 2 min" in out[1]
    assert soak.summary([], 600.0) == ["no samples"]


def test_the_line_counter_counts_only_what_was_added_since(tmp_path: Path) -> None:
    soak: Any = bench_module("bench_soak")
    log = tmp_path / "a.log"
    log.write_bytes(b"one\ntwo\nthr")
    counter = soak.LineCounter(log)
    assert counter.count() == 2
    with log.open("ab") as fh:
        fh.write(b"ee\nfour\n")
    assert counter.count() == 4
    assert counter.count() == 4


def test_fleet_figures_are_median_and_range_per_refresh() -> None:
    fleet: Any = bench_module("bench_fleet")
    got = fleet._stats("latency_ms", [0.3, 0.1, 0.2], 1000)
    assert got == {"latency_ms": 200.0, "latency_min_ms": 100.0, "latency_max_ms": 300.0}
    row = {"instances": 1000, "run": 2, "rows": 1000, "requests_per_refresh": 4.0,
           "latency_p95_ms": 290.0, **got, **fleet._stats("client_cpu_ms", [0.05], 1000),
           **fleet._stats("prometheus_cpu_ms", [0.9, 1.1], 1000),
           **fleet._stats("answer_kib", [1600.0, 1700.0], 1)}
    line = fleet.table([row]).splitlines()[2]
    assert line == ("| 1,000 | 2 | 1,000 | 4 | 200.0 ms (100.0–300.0) | 290.0 ms | 50.0 ms "
                    "(50.0–50.0) | 1,000.0 ms (900.0–1,100.0) | 1,650.0 KiB (1,600.0–1,700.0) |")


def test_ssh_follow_table_gives_each_contender_against_the_floor() -> None:
    ssh: Any = bench_module("bench_ssh_follow")
    runs = {"eagle ssh": [{"local": 10.0, "host": 4.0, "total": 14.0},
                          {"local": 12.0, "host": 2.0, "total": 14.0}],
            "ssh tail -F": [{"local": 1.0, "host": 1.0, "total": 2.0}]}
    lines = ssh.table(runs).splitlines()
    assert lines[2] == ("| eagle ssh | 11.00 (10.00–12.00) | 3.00 (2.00–4.00) "
                        "| 14.00 (14.00–14.00) | 7.0× |")
    assert lines[3].endswith("| 1.0× |")


def test_viewers_find_lnav_where_told_and_never_install_when_told_not_to(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    viewers: Any = bench_module("bench_viewers")
    wrapper = tmp_path / "lnav"
    wrapper.write_text("#!/bin/sh\n")
    assert viewers.find_lnav(str(wrapper), True) == (str(wrapper), "")
    assert viewers.find_lnav(str(tmp_path / "none"), True) == (None, f"no {tmp_path / 'none'}")
    # no lnav on PATH, apt-get there, root: installing is off, then on
    monkeypatch.setattr(viewers.shutil, "which",
                        lambda name: "/usr/bin/apt-get" if name == "apt-get" else None)
    monkeypatch.setattr(viewers.os, "geteuid", lambda: 0)
    ran: list[list[str]] = []
    monkeypatch.setattr(viewers.subprocess, "run", lambda cmd, **k: ran.append(cmd))
    assert viewers.find_lnav(None, False) == (None, "not installed here (--no-install)")
    assert ran == []
    assert viewers.find_lnav(None, True) == (None, "apt-get installed no lnav")
    assert ran[0][0] == "/usr/bin/apt-get" and ran[0][-3:] == ["-y", "--no-install-recommends",
                                                               "lnav"]
