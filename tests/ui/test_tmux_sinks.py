"""Each terminal sink, end to end in a real terminal (tmux), driven with CSI/OSC/C1 payloads.

A loopback HTTP server plays every outside party at once: an OpenAI server whose ``/v1/models``
id and HTTP error bodies carry the payload (``bench``, text and ``--json``), and a Prometheus whose
instance and model labels and error texts carry it (``fleet``, the screen and ``--headless``).
A file name (``report``'s error echo) and a configured ``output_dir`` (the dashboard's "saved"
notification) carry it too. Each command runs in its own window of one tmux server (private
socket, shared by the module: one start for all), after a ``BEFORE`` line; afterwards the pane
title is the one tmux gave it, ``BEFORE`` is still on screen (nothing cleared it), and the
payload's words are nowhere. A control window prints the payload raw and must be retitled:
the check can fail.
"""

from __future__ import annotations

import http.server
import json
import shlex
import shutil
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = [pytest.mark.tmux, pytest.mark.slow]

# Retitle (OSC 0 and 2, BEL and ST), clear (CSI and 8-bit CSI), bidi override.
PAYLOAD = "\x1b]0;PWNED\x07\x1b[2J\x9b2J\x1b]2;PWNED\x1b\\\u202e"
LABEL = f"h{PAYLOAD}ost:8000"  # shown as "h\ufffdost:8000" (the bidi override visible)
EAGLE = f"env -u COLUMNS -u LINES {sys.executable} -m eagle_tui"  # (the pane sets the size)


def _vector(result: list[dict[str, object]]) -> bytes:
    return json.dumps({"status": "success",
                       "data": {"resultType": "vector", "result": result}}).encode()


class Hostile(http.server.BaseHTTPRequestHandler):
    """OpenAI and Prometheus endpoints whose every outside text carries :data:`PAYLOAD`."""

    def _send(self, code: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlparse(self.path)
        query = parse_qs(url.query).get("query", [""])[0]
        if url.path == "/v1/models":
            self._send(200, json.dumps({"data": [{"id": f"model{PAYLOAD}"}]}).encode())
        elif url.path == "/api/v1/query" and '"fleet_q", "up"' in query:
            self._send(200, _vector([
                {"metric": {"fleet_q": "up", "instance": LABEL}, "value": [1, "1"]},
                {"metric": {"fleet_q": "engine_vllm", "instance": LABEL, "engine": "vllm",
                            "model_name": f"m{PAYLOAD}"}, "value": [1, "1"]}]))
        elif url.path.startswith("/api/v1/"):
            self._send(422, json.dumps({"status": "error", "errorType": f"bad{PAYLOAD}",
                                        "error": f"boom{PAYLOAD}"}).encode())
        else:
            self._send(404, f"not here{PAYLOAD}".encode(), "text/plain")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self._send(500, f"server error{PAYLOAD}".encode(), "text/plain")

    def log_message(self, *args: object) -> None:
        pass


class Tmux:
    """One tmux server on a private socket; one window per command."""

    def __init__(self, tmux: str) -> None:
        self.tmux = tmux
        self.sock = f"eagle-sinks-{uuid.uuid4().hex[:8]}"
        self.run("new-session", "-d", "-s", "s", "-x", "200", "-y", "50", "sleep 600")
        self.title0 = self.title("s:0")

    def run(self, *args: str) -> str:
        return subprocess.run([self.tmux, "-L", self.sock, *args], check=True,
                              capture_output=True, text=True, timeout=10).stdout

    def window(self, name: str, command: str) -> None:
        shell = f"printf 'BEFORE\\n'; {command}; printf '\\nDONE rc=%s\\n' $?; sleep 600"
        self.run("new-window", "-d", "-n", name, shell)

    def title(self, target: str) -> str:
        return self.run("display", "-p", "-t", target, "#{pane_title}").strip()

    def screen(self, name: str) -> str:
        return self.run("capture-pane", "-p", "-t", f"s:{name}")

    def wait(self, name: str, ok: Callable[[str], bool], timeout: float = 40) -> str:
        end = time.monotonic() + timeout
        text = self.screen(name)
        while not ok(text):
            if time.monotonic() > end:
                raise AssertionError(f"{name}: not on screen in {timeout} s:\n{text}")
            time.sleep(0.2)
            text = self.screen(name)
        return text

    def close(self) -> None:
        subprocess.run([self.tmux, "-L", self.sock, "kill-server"], capture_output=True,
                       timeout=10, check=False)


@pytest.fixture(scope="module")
def tmux() -> Iterator[Tmux]:
    path = shutil.which("tmux")
    if path is None:
        pytest.skip("tmux not installed")
    t = Tmux(path)
    try:
        yield t
    finally:
        t.close()


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def _intact(t: Tmux, name: str, text: str) -> None:
    assert t.title(f"s:{name}") == t.title0, (name, t.title(f"s:{name}"))
    assert "BEFORE" in text, (name, text)  # nothing cleared the screen
    if name.endswith("json"):  # the data kept, escaped: JSON decodes to what the server sent
        assert "\\u001b]0;PWNED" in text, (name, text)
    else:
        assert "PWNED" not in text and "\ufffd\ufffd\ufffd" not in text, (name, text)


def _done(text: str) -> bool:
    return "DONE rc=" in text


def test_command_output_carries_no_payload(tmux: Tmux, url: str, tmp_path: Path) -> None:
    """``bench`` (model id, HTTP error body; text and JSON), ``fleet --headless`` (labels,
    Prometheus error text) and ``report``'s echo of a file name, all in parallel windows."""
    name = tmp_path / f"missing{PAYLOAD}.log"
    bench = f"{EAGLE} bench --url {url} --requests 1 --concurrency 1 --no-mark --timeout 20"
    commands = {
        "bench": bench,
        "bench-json": f"{bench} --json",
        "fleet-headless": f"{EAGLE} fleet --prometheus {url} --headless --count 1 --timeout 5",
        "fleet-json": f"{EAGLE} fleet --prometheus {url} --headless --json --count 1",
        "report": f"{EAGLE} report {shlex.quote(str(name))}",
    }
    for window, command in commands.items():
        tmux.window(window, command)
    screens = {w: tmux.wait(w, _done) for w in commands}
    for window, text in screens.items():
        _intact(tmux, window, text)
    assert "model" in screens["bench"] and "server error" in screens["bench"]
    assert "ost:8000" in screens["fleet-headless"]
    assert "cannot read" in screens["report"] and "DONE rc=2" in screens["report"]


def test_fleet_screen_and_a_notification_carry_no_payload(tmux: Tmux, url: str,
                                                          tmp_path: Path) -> None:
    """The fleet's DataTable cells and status line (labels, Prometheus error text), and the
    dashboard's "saved" notification naming a configured ``output_dir``."""
    out_dir = tmp_path / f"out{PAYLOAD}dir"
    out_dir.mkdir()
    config = tmp_path / "config.toml"
    config.write_text(f"[ui]\noutput_dir = {json.dumps(str(out_dir))}\n", encoding="utf-8")
    log = tmp_path / "server.log"
    log.write_text("[2025-11-20 10:14:31 TP0] Load weight begin\n", encoding="utf-8")
    tmux.window("fleet", f"{EAGLE} fleet --prometheus {url} --interval 1")
    tmux.window("notify", f"env EAGLE_TUI_CONFIG={shlex.quote(str(config))} "
                          f"{EAGLE} watch --log {shlex.quote(str(log))} --gpu none")
    fleet = tmux.wait("fleet", lambda t: "ost:8000" in t and "boom" in t)
    tmux.wait("notify", lambda t: "─ Log" in t)
    tmux.run("send-keys", "-t", "s:notify", "C-s")
    notify = tmux.wait("notify", lambda t: "Saved" in t)
    for window, text in (("fleet", fleet), ("notify", notify)):
        assert tmux.title(f"s:{window}") == tmux.title0, window
        assert tmux.run("display", "-p", "-t", f"s:{window}", "#{alternate_on}").strip() == "1"
        assert "PWNED" not in text, (window, text)
    assert "out" in notify and "dir" in notify
    for window in ("fleet", "notify"):
        tmux.run("send-keys", "-t", f"s:{window}", "q")
        _intact(tmux, window, tmux.wait(window, _done))
    assert len(list(out_dir.iterdir())) == 1  # (the notification named a real save)


def test_the_check_fails_on_a_raw_payload(tmux: Tmux) -> None:
    tmux.window("control", f"printf %s {shlex.quote(PAYLOAD)}")
    tmux.wait("control", _done, timeout=10)
    assert tmux.title("s:control") == "PWNED"
