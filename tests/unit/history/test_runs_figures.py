"""A run nobody watched after ready still gets its figures: ``runs show/compare`` complete
them from a live local server's counters (one bounded scrape) or from its log, say why when
they cannot (a run on an SSH host), and name the source of the acceptance."""

from __future__ import annotations

import http.server
import json
import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from eagle_tui.cli import main
from eagle_tui.history.store import RunStore
from tests.support.paths import REPO

FIX = REPO / "tests" / "fixtures"
SG_METRICS = (FIX / "sglang-cpu" / "eagle3-metrics.txt").read_text()
VL_LOG = FIX / "vllm-cpu" / "server-eagle3.log"


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunStore:
    monkeypatch.setenv("EAGLE_TUI_DATA_DIR", str(tmp_path / "data"))
    return RunStore()


@pytest.fixture
def metrics_url() -> Iterator[str]:
    """A server whose ``/metrics`` is the real SGLang 0.5.23 page (648 tokens, 177 verify)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = SG_METRICS.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _json(capsys: pytest.CaptureFixture[str], *words: str) -> object:
    assert main(["runs", *words, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_stopped_run_without_figures_gets_them_from_its_log(
        store: RunStore, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "server.log"
    shutil.copy(VL_LOG, log)
    run = store.add(engine="vllm", name="quiet", state="stopped", ended=2e9, log_path=str(log))
    got = _json(capsys, "compare", "quiet", "quiet")
    first = got["runs"][0]  # type: ignore[index]
    assert first["accept_len"] == pytest.approx(1 + 3872 / 1531, abs=1e-3)
    assert first["accept_source"] == "log" and first["tok_s"] == 46.3
    assert (store.get(str(run.id)).metrics or {})["accept_len"] == first["accept_len"]
    assert main(["runs", "show", "quiet"]) == 0
    text = capsys.readouterr().out
    assert "accept: 3.53 (log)" in text and "1531 drafts" in text
    assert "  timeline:" in text and text.count("stopped") >= 2


def test_a_live_run_reads_its_servers_counters(
        store: RunStore, metrics_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    store.add(engine="sglang", name="live", state="ready", url=metrics_url,
              metrics={"tok_s_median": 100.0, "accept_len": 3.6, "accept_source": "log"})
    shown = _json(capsys, "show", "live")
    assert shown["accept_len"] == pytest.approx(648 / 177, abs=1e-3)  # type: ignore[index]
    assert shown["accept_source"] == "server counters"  # type: ignore[index]
    assert main(["runs", "compare", "live", "live"]) == 0
    assert "3.66 (server counters)" in capsys.readouterr().out


def test_a_run_on_an_ssh_host_says_why_it_has_no_figures(
        store: RunStore, capsys: pytest.CaptureFixture[str]) -> None:
    store.add(engine="sglang", name="far", state="ready", host="gpu-box", url="http://x:1",
              log_path="/srv/log")
    shown = _json(capsys, "show", "far")
    assert shown["accept_len"] is None  # type: ignore[index]
    assert shown["figures_note"] == "no figures yet — its log is on gpu-box"  # type: ignore[index]
    assert main(["runs", "compare", "far", "--baseline-run", "far"]) == 2
    assert "no tok/s figure" in capsys.readouterr().err


def test_a_run_with_bench_windows_but_nothing_else_takes_the_windows_figures(
        store: RunStore, capsys: pytest.CaptureFixture[str]) -> None:
    windows = [{"id": "a", "figures": [{"source": "log", "accept_len": 3.0, "weight": 100.0},
                                       {"source": "client", "accept_len": 9.0, "weight": 1.0}]},
               {"id": "b", "figures": [{"source": "log", "accept_len": 2.0, "weight": 300.0},
                                       "junk"]}]
    store.add(engine="vllm", name="benched", state="stopped", ended=2e9, host="gpu-box",
              windows=windows)
    shown = _json(capsys, "show", "benched")
    assert shown["accept_len"] == 2.25 and shown["accept_source"] == "bench log"  # type: ignore[index]
    assert "its log" not in str(shown["accept_source"])  # type: ignore[index]


def test_a_dead_local_server_and_a_missing_log_are_one_line(
        store: RunStore, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store.add(engine="vllm", name="gone", state="ready", url=f"http://127.0.0.1:{port}",
              log_path=str(tmp_path / "nope.log"))
    shown = _json(capsys, "show", "gone")
    note = shown["figures_note"]  # type: ignore[index]
    assert note.startswith("no figures yet — no /metrics answer") and "cannot be read" in note
    assert "\n" not in note


def test_baseline_run_of_watch_and_wait_completes_the_run_first(
        store: RunStore, tmp_path: Path) -> None:
    import argparse

    from eagle_tui.assembly.spec import _baseline
    from eagle_tui.commands.runfigures import refresh_baseline

    log = tmp_path / "nospec.log"
    shutil.copy(VL_LOG, log)
    store.add(engine="vllm", name="base", state="stopped", ended=2e9, log_path=str(log))
    args = argparse.Namespace(baseline_run="base", baseline=None)
    refresh_baseline(args)
    assert _baseline(args) == 46.3
    refresh_baseline(argparse.Namespace(baseline_run="nope"))  # left to the spec's error
