"""``eagle-tui fleet``: usage errors, and the headless lines when Prometheus cannot be reached."""

from __future__ import annotations

import socket

import pytest

from eagle_tui.cli import main


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_bad_url_and_bad_window_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet", "--prometheus", "prometheus:9090", "--headless"]) == 2
    assert "http(s) URL" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["fleet", "--prometheus", "http://p:9090", "--window", "1 minute"])
    assert exc.value.code == 2


def test_headless_says_prometheus_is_unreachable(capsys: pytest.CaptureFixture[str]) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    assert main(["fleet", "--prometheus", url, "--headless", "--count", "1",
                 "--timeout", "2"]) == 1
    out = capsys.readouterr().out
    assert "0 instances" in out and "PROMETHEUS STALE" in out and "unreachable" in out


def test_bad_ssh_map_is_a_usage_error(tmp_path: object, capsys: pytest.CaptureFixture[str]
                                      ) -> None:
    from pathlib import Path

    bad = Path(str(tmp_path)) / "map"
    bad.write_text("only-one-field\n")
    assert main(["fleet", "--prometheus", "http://127.0.0.1:1", "--json", "--count", "1",
                 "--ssh-map", str(bad)]) == 2
    assert "line 1" in capsys.readouterr().err
