"""The grammar gate (``model/boundary/grammar.py``) and where outside values pass it: fleet
labels that become SSH destinations, discovered log paths, ports and hosts, and the ssh config
lookup that must never run ``Match exec`` for a destination that did not come from the user."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.assembly.fleet import FleetSpec, drill_spec
from eagle_tui.assembly.spec import check_ssh
from eagle_tui.errors import UsageError
from eagle_tui.model.boundary import grammar
from eagle_tui.model.boundary.grammar import GrammarError
from eagle_tui.model.fleet.hosts import ssh_destination
from eagle_tui.model.fleet.snapshot import FleetRow
from eagle_tui.model.launching.discovery import find_servers, log_target, parse_scan, scan_record
from eagle_tui.probe.fleet_prober import FleetProber
from eagle_tui.probe.tables import load_tables
from eagle_tui.transport.base import Transport
from eagle_tui.transport.ssh.config import DestinationError, resolve

HOSTILE_LABELS = [
    "x;touch${IFS}/tmp/F;y:8000",        # the label
    "$(touch /tmp/F):8000",
    "`id`:8000",
    "a b:8000",
    "host\nProxyCommand sh:8000",
    "-oProxyCommand=sh:8000",
    "gpu|sh:8000",
    "gpu&sh:8000",
    "gpu%h:8000",
    "gpu\x1b]0;x\x07:8000",
    "'quoted':8000",
    "[::1;id]:8000",
    "..:8000",
    "a..b:8000",
    "-gpu:8000",
    "gpu-:8000",
    ("a" * 64) + ":8000",
    "gpu-1:99999",
    "gpu-1:0",
    "gpu-1:+80",
    "gpu-1:8000:1",
]
SHELL_META = set(";|&$`'\"\\ \t\n\r()<>*?[]{}!#~%=,\x00\x1b")


@pytest.mark.parametrize("label", HOSTILE_LABELS)
def test_hostile_labels_never_become_destinations(label: str) -> None:
    with pytest.raises(GrammarError) as exc:
        ssh_destination(label, [("*", "{instance}")])
    assert "refused" in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("dest", ["gpu-1", "ops@gpu-1.lan", "10.0.0.5:2222", "[fe80::1]:22",
                                  "a_b@[::1]", "GPU3.example.com.", "x" * 63])
def test_ordinary_destinations_pass(dest: str) -> None:
    assert grammar.checked_destination(dest) == dest


@settings(max_examples=2000, deadline=None)
@given(st.text(max_size=40))
def test_anything_the_gate_passes_holds_no_shell_or_option_syntax(text: str) -> None:
    """Generated labels: what passes is made only of name characters, never starts an option."""
    try:
        grammar.destination(text)
    except GrammarError as exc:
        assert "\n" not in str(exc)
        return
    assert not set(text) & (SHELL_META - {"[", "]"})
    assert not text.startswith("-") and text.isascii()


@settings(max_examples=500, deadline=None)
@given(st.lists(st.from_regex(r"[a-z][a-z0-9-]{0,8}[a-z0-9]|[a-z]", fullmatch=True),
                min_size=1, max_size=4),
       st.integers(min_value=1, max_value=65535))
def test_generated_host_names_and_ports_pass(labels: list[str], number: int) -> None:
    host = ".".join(labels)
    assert grammar.destination(f"u@{host}:{number}") == grammar.Destination(host, "u", number)


@pytest.mark.parametrize(("fn", "bad"), [
    (grammar.port, "65536"), (grammar.port, "0"), (grammar.port, "-1"), (grammar.port, "８０"),
    (grammar.port, " 80"), (grammar.port, True), (grammar.user_name, "-oops"),
    (grammar.user_name, "a b"), (grammar.user_name, ""), (grammar.container, "-rm"),
    (grammar.container, "a/b"), (grammar.container, ".x"), (grammar.host_name, "[zz]"),
    (grammar.host_name, "300.1.1.1"), (grammar.host_name, "a_b"),
])
def test_validators_refuse(fn: object, bad: object) -> None:
    with pytest.raises(GrammarError):
        fn(bad)  # type: ignore[operator]


def test_containers_and_paths() -> None:
    assert grammar.container("sglang_1.a-b") == "sglang_1.a-b"
    assert grammar.container("3f2a9c0e1b7d") == "3f2a9c0e1b7d"
    assert grammar.remote_path("/data/run log (1).txt") == "/data/run log (1).txt"
    assert grammar.remote_path("-x.log") == "-x.log"  # after "--" it is an operand
    for bad in ("", "/a\nb", "/a\x00b", "/a\x1b[2Jb", "/a\x9bb", "/a\x7f"):
        with pytest.raises(GrammarError):
            grammar.remote_path(bad)
    with pytest.raises(GrammarError, match="option"):
        grammar.remote_path("-x.log", operand=True)


def test_discovery_gates_paths_ports_and_hosts() -> None:
    assert log_target("/data/a\x1b]0;x\x07.log", "/") == ("unknown", None)
    assert log_target("/data/run.log", "/") == ("file", "/data/run.log")
    argv = ("python", "-m", "sglang.launch_server", "--model-path", "m", "--port", "99999",
            "--host", "h;id")
    rows = parse_scan(scan_record(10, 1, 10, "5", "/data/x.log", "/data/x.log", "/", argv))
    (found,) = find_servers(rows, load_tables())
    assert found.port == 30000 and found.url == "http://127.0.0.1:30000"
    argv6 = tuple({"99999": "31000", "h;id": "::1"}.get(a, a) for a in argv)
    (found6,) = find_servers(parse_scan(scan_record(10, 1, 10, "5", "/x", "/x", "/", argv6)),
                             load_tables())
    assert found6.url == "http://[::1]:31000"


# ---------------------------------------------------------------- ssh config: no Match exec


def _exec_config(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "MARKER"
    config = tmp_path / "ssh_config"
    config.write_text(f'Match exec "touch {marker}"\n    User fromexec\n'
                      f'Match !exec "touch {marker}-neg"\n    Port 2200\n'
                      "Host gpu-1\n    HostName 10.0.0.9\n    User alice\n")
    return config, marker


def test_outside_destination_never_runs_match_exec(tmp_path: Path) -> None:
    config, marker = _exec_config(tmp_path)
    target = resolve("gpu-1", config, outside=True)
    assert (target.hostname, target.user, target.port) == ("10.0.0.9", "alice", 22)
    with pytest.raises(DestinationError, match="refused"):
        resolve("x;touch${IFS}" + str(tmp_path / "F") + ";y", config, outside=True)
    assert list(tmp_path.iterdir()) == [config]
    # the same lookup for a destination the user typed runs it (OpenSSH's rule): the test
    # above would see the marker if the gate let the lookup evaluate it
    with contextlib.suppress(DestinationError):  # (invoke cannot read pytest's stdin)
        resolve("gpu-1", config)
    assert marker.exists()


def test_fleet_drill_down_and_prober_refuse_hostile_labels(tmp_path: Path) -> None:
    config, marker = _exec_config(tmp_path)
    spec = FleetSpec(prometheus="http://127.0.0.1:1", ssh_config=config)
    rules = [("*", "{host}")]
    hostile = FleetRow("x;touch${IFS}" + str(tmp_path / "F") + ";y:8000")
    with pytest.raises(UsageError, match="refused"):
        drill_spec(spec, hostile, rules, set())
    good = drill_spec(spec, FleetRow("gpu-1:8000"), rules, set())
    assert good.ssh.dests == ("gpu-1",) and good.ssh.outside
    check_ssh(good.ssh)  # what opening the drill-down does first: resolves, runs nothing
    made: list[str] = []

    def connect(dest: str) -> Transport:
        made.append(dest)
        raise AssertionError("a refused label must not connect")

    async def probe() -> None:
        prober = FleetProber(rules, set(), connect)
        prober.start([hostile.instance])
        await asyncio.sleep(0)
        assert hostile.instance in prober.errors and not made

    asyncio.run(probe())
    assert list(tmp_path.iterdir()) == [config] and not marker.exists()



def test_ssh_files_that_are_not_regular_are_named_so(tmp_path: Path) -> None:
    """A FIFO or a device given as ``--identity``/``--ssh-config`` was "no such file"."""
    from eagle_tui.assembly.spec import SshSpec

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for spec in (SshSpec(("h",), identity_files=("/dev/zero",)),
                 SshSpec(("h",), config_path=fifo)):
        with pytest.raises(UsageError, match="not a regular file"):
            check_ssh(spec)
    with pytest.raises(UsageError, match="no such file"):
        check_ssh(SshSpec(("h",), identity_files=(str(tmp_path / "none"),)))
