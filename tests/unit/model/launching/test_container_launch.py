"""A container's run as ``launch`` starts it: the framing words (``-d``, the run's label, a name,
``-e NAME``) go right after ``run`` and leave the user's options, image and command as typed; the
id read back is bounded hex; the recorded options mask secrets; a fix edits the engine's words
only."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eagle_tui.model.launching.cmdline import CommandError
from eagle_tui.model.launching.container import parse_run
from eagle_tui.model.launching.container_launch import (
    TOKEN_LABEL,
    container_id,
    fixed_words,
    framed,
    options_of,
    record_of,
    run_index,
)
from eagle_tui.model.launching.remedy import set_flag
from eagle_tui.probe.tables import load_tables

ENGINE = ["python3", "-m", "sglang.launch_server", "--model-path", "/models/m", "--port", "30000"]
HEADS = [["docker", "run"], ["podman", "run"], ["docker", "container", "run"], ["nerdctl", "run"],
         ["sudo", "docker", "run"], ["HF_HOME=/x", "docker", "--context", "gpu", "run"],
         ["/usr/bin/podman", "--log-level", "info", "run"]]
OPTIONS = [["--gpus", "all"], ["-p", "30000:30000"], ["--shm-size", "16g"], ["-it"], ["--rm"],
           ["-v", "/srv/models:/models:ro"], ["--ipc=host"],
           ["-e", "HF_TOKEN=hf_abcdefghijklmnopqrstuv"], ["--network", "host"],
           ["--memory", "64g"], ["--restart", "on-failure:3"], ["-dp", "8000:8000"],
           ["--mount", "type=bind,source=/a,target=/b"], ["-d"], ["--name", "mine"]]


@settings(max_examples=150, deadline=None)
@given(head=st.sampled_from(HEADS), opts=st.lists(st.sampled_from(OPTIONS), max_size=6),
       dashdash=st.booleans(), names=st.lists(st.sampled_from(["HF_TOKEN", "A_B", "X"]),
                                              max_size=2, unique=True))
def test_framing_keeps_the_run_as_typed(head: list[str], opts: list[list[str]], dashdash: bool,
                                        names: list[str]) -> None:
    words = [*head, *[w for o in opts for w in o], *(["--"] if dashdash else []), "img:1", *ENGINE]
    run = parse_run(words)
    if run.cli == "nerdctl":  # (linted, not launched: its watch is docker's and podman's)
        with pytest.raises(CommandError, match="not a nerdctl run"):
            framed(run, token="abc123", name="eagle-tui-run-7", env_names=names)
        return
    out = framed(run, token="abc123", name="eagle-tui-run-7", env_names=names)
    again = parse_run(out)
    assert again.image == "img:1" and again.command == tuple(ENGINE)
    assert again.cli == run.cli
    at = run_index(run) + 1
    assert out[:at] == list(run.head[:at]) and out[-len(ENGINE):] == ENGINE
    given_opts = [(o.name, o.value) for o in run.options]
    framed_opts = [(o.name, o.value) for o in again.options]
    assert all(o in framed_opts for o in given_opts)  # the user's options, all of them
    assert ("label", f"{TOKEN_LABEL}=abc123") in framed_opts
    assert any(n == "detach" and v == "true" for n, v in framed_opts)
    named = [v for n, v in framed_opts if n == "name"]
    assert named == (["mine"] * opts.count(["--name", "mine"]) or ["eagle-tui-run-7"])
    assert [v for n, v in framed_opts if n == "env" and v in names] == names
    assert out.count("-d") + sum(w.startswith("-dp") for w in out) == \
        max(1, sum(o in (["-d"], ["-dp", "8000:8000"]) for o in opts))


def test_framing_refuses_a_run_kept_attached() -> None:
    with pytest.raises(CommandError, match="detached"):
        framed(parse_run(["docker", "run", "--detach=false", "img", *ENGINE]), token="t",
               name="n")


@pytest.mark.parametrize(("text", "want"), [
    ("f4e15ff1ccaf0123456789abcdef0123456789abcdef0123456789abcdef0123\n",
     "f4e15ff1ccaf0123456789abcdef0123456789abcdef0123456789abcdef0123"),
    ("Trying to pull…\nf4e15ff1ccaf\n", "f4e15ff1ccaf"),
    ("", None), ("--rm\n", None), ("F4E15FF1CCAF\n", None), ("abc\n", None),
    ("f" * 65 + "\n", None), ("f4e15ff1ccaf; rm -rf /\n", None),
])
def test_the_container_id_is_bounded_hex(text: str, want: str | None) -> None:
    assert container_id(text) == want


def test_recorded_options_mask_secrets_and_drop_the_framing() -> None:
    run = parse_run(framed(parse_run(
        ["docker", "run", "--gpus", "all", "--shm-size", "16g", "-p", "30000:30000",
         "-e", "HF_TOKEN=hf_abcdefghijklmnopqrstuv", "-e", "PLAIN=1", "--secret", "api",
         "-v", "/srv/models:/models:ro", "--memory", "64g", "--restart", "always",
         "--label", "team=ml", "img", *ENGINE]), token="tok", name="n", env_names=["X"]))
    opts = options_of(run)
    assert opts["gpus"] == ["all"] and opts["shm-size"] == "16g"
    assert opts["publish"] == ["30000:30000"] and opts["volume"] == ["/srv/models:/models:ro"]
    assert opts["env"] == ["X", "HF_TOKEN", "PLAIN"]  # names only: a value may be a token
    assert opts["secret"] == ["***"] and opts["label"] == ["team=ml"]
    assert opts["memory"] == "64g" and opts["restart"] == "always"
    assert "detach" not in opts and "name" not in opts and "hf_" not in str(opts)
    rec = record_of(run, cli_id="ab" * 32, name="n")
    assert rec["cli"] == "docker" and rec["image"] == "img" and rec["options"] == opts


def test_a_fix_edits_the_engine_words_only() -> None:
    words = ["podman", "run", "--shm-size", "1g", "--network=host", "img",
             "python3", "-m", "sglang.launch_server", "--model-path", "/m",
             "--speculative-algorithm", "EAGLE"]
    fixed = fixed_words(words, [set_flag("--speculative-algorithm", "EAGLE3")], load_tables())
    assert fixed == [*words[:-1], "EAGLE3"]
    plain = words[6:]
    assert fixed_words(plain, [set_flag("--speculative-algorithm", "EAGLE3")],
                       load_tables()) == [*plain[:-1], "EAGLE3"]
    # a remedy for a flag the engine lacks changes nothing
    assert fixed_words(words, [set_flag("--no-such-flag", "1")], load_tables()) == words
