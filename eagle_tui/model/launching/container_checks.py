"""The engine's command inside a container's run, and the container's flags checked against it.

What the container runs is its entrypoint and then the words after the image: ``--entrypoint``
when given (``""`` clears it), else the image's own when an engine's profile knows the image
(``vllm/vllm-openai`` runs ``vllm serve`` with the words as flags), else the words alone. Those
words are read by the engine's command reader as any launch command; the container's part is
kept as typed, so a fix edits only the engine's words (:func:`rebuild`).

The checks (``container-*`` codes) are those a container breaks and a plain command does not:
the GPUs given against the GPUs the engine's parallelism needs, ``/dev/shm`` for NCCL, the
published port against the server's port and listen address, model paths under bind mounts.

Pure: no I/O (the host's facts come from ``eagle_tui.probe.container_facts``).
"""

from __future__ import annotations

import dataclasses
import posixpath
import re

from eagle_tui.model.boundary import shellwords
from eagle_tui.model.engines import EngineProfile, profiles
from eagle_tui.model.launching.checks import Finding, GpuFact, LintFacts, as_int
from eagle_tui.model.launching.cmdline import (
    CommandError,
    find_engine,
    launch_profile,
    parse_command,
)
from eagle_tui.model.launching.container import (
    ContainerRun,
    Mount,
    image_repository,
    is_container_command,
    parse_run,
)
from eagle_tui.model.launching.flags import FlagTable, ParsedCommand
from eagle_tui.model.launching.lint import LintResult, lint, spec_plan
from eagle_tui.model.launching.remedy import set_flag
from eagle_tui.model.record import Record, record

NCCL_SHM = 1 << 30  # below this, a multi-GPU server's shared-memory segments do not fit
HF_HOME = "/root/.cache/huggingface"  # the cache of the engines' images (they run as root)
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_PYTHON = re.compile(r"(?:^|/)python(?:\d+(?:\.\d+)*)?$")
_SHELLS = ("sh", "bash", "dash", "zsh", "ash")
_SHELL_OPS = frozenset({"&&", "||", ";", "|", "&", "2>&1"})
_REDIRECTS = (">", "<", "1>", "2>", "&>")
#: How each kind of run spells the options the messages name.
_SPELLING = {
    "compose": {"gpus": "deploy.resources.reservations.devices", "all": "devices: [{driver: "
                "nvidia, count: all, capabilities: [gpu]}]", "shm": "shm_size",
                "ipc": "ipc: host", "publish": "ports", "mount": "volumes"},
    "podman": {"gpus": "--device nvidia.com/gpu=…", "all": "--device nvidia.com/gpu=all",
               "shm": "--shm-size", "ipc": "--ipc=host", "publish": "-p", "mount": "-v"},
}
_DOCKER = {"gpus": "--gpus", "all": "--gpus all", "shm": "--shm-size", "ipc": "--ipc=host",
           "publish": "-p", "mount": "-v"}


@record
class Script(Record):
    """A ``sh -c 'SCRIPT'`` whose one step (``words[start:end]``) is the engine command."""

    at: int  # the script's word in ``lead`` + the command
    words: tuple[str, ...]  # the script's shell words
    start: int
    end: int


@record
class ContainerCommand(Record):
    """A container's run and the engine command it runs."""

    run: ContainerRun
    cmd: ParsedCommand  # the engine's words: ``lead`` then the command after the image
    lead: tuple[str, ...]  # the words the image's entrypoint (or --entrypoint) puts first
    via: str  # where ``lead`` comes from, for messages
    doubled: bool = False  # the command repeats the image's entrypoint (``vllm serve`` twice)
    script: Script | None = None  # the engine command is a step of a shell script


@record
class ContainerFacts(Record):
    """What the probe found on the host for the container: the host port that reaches the
    server and whether something listens there already (``None``: not checked)."""

    host_port: int | None = None
    host_port_in_use: bool | None = None


def image_entry(image: str) -> tuple[EngineProfile, tuple[str, ...]] | None:
    """The engine whose image this is, and the words its entrypoint runs first."""
    repo = image_repository(image)
    for p in profiles():
        for name, entry in p.launch.images:
            if repo == name:
                return p, entry
    return None


def engine_command(run: ContainerRun, tables: dict[str, FlagTable]) -> ContainerCommand:
    """The engine command the run starts (raises :class:`CommandError` when it starts none)."""
    known = image_entry(run.image)
    doubled = False
    if run.entrypoint is not None:
        lead, via = run.entrypoint, "--entrypoint"
    elif known is not None and known[1]:
        lead, via = known[1], f"the entrypoint of {image_repository(run.image)}"
        first = run.command[0].rsplit("/", 1)[-1] if run.command else ""
        doubled = first == lead[0] or bool(_PYTHON.search(first))
    else:
        lead, via = (), "the command after the image"
    words = [*lead, *run.command]
    if not words:
        raise CommandError(f"{run.source}: {run.image} is given no command, and its entrypoint "
                           "is not known to start a server")
    script = _script(words)
    try:
        cmd = parse_command(list(script.words[script.start:script.end]) if script else words,
                            tables)
    except CommandError as exc:
        raise CommandError(f"{run.source} {run.image}: {exc}") from None
    if script is not None:
        via = f"a step of its `{words[0].rsplit('/', 1)[-1]} {words[1]}` script"
    cmd = dataclasses.replace(cmd, env=(*run.env, *cmd.env))
    return ContainerCommand(run, cmd, tuple(lead), via, doubled, script)


def read_command(words: list[str], tables: dict[str, FlagTable]
                 ) -> tuple[ParsedCommand, ContainerCommand | None]:
    """A launch command's words read: the engine's command, and its container's run when the
    words are a container CLI's (raises :class:`CommandError`); ``lint`` and ``launch`` both
    read what they are given this way."""
    if is_container_command(words):
        cc = engine_command(parse_run(words), tables)
        return cc.cmd, cc
    return parse_command(words, tables), None



def _is_op(word: str) -> bool:
    return word in _SHELL_OPS or word.startswith(_REDIRECTS)


def _script(words: list[str]) -> Script | None:
    """``sh -c 'pip install x && python3 -m …'``: the first step of the script that starts an
    engine (its words up to the next operator or redirection)."""
    if len(words) < 3 or words[0].rsplit("/", 1)[-1] not in _SHELLS or \
            not re.fullmatch(r"-[a-z]*c[a-z]*", words[1]):
        return None
    try:
        split = shellwords.split(words[2][:64_000])
    except ValueError:
        return None
    sw: list[str] = []
    for w in split:  # ``--port 8000; sleep``: the ``;`` ends the step, it is no value's
        sw.extend([w[:-1], ";"] if len(w) > 1 and w.endswith(";") else [w])
    start = 0
    for k in range(len(sw) + 1):
        if k < len(sw) and not _is_op(sw[k]):
            continue
        try:
            if k > start:
                find_engine(sw[start:k])
                return Script(2, tuple(sw), start, k)
        except CommandError:
            pass
        start = k + 1
    return None


def rebuild(cc: ContainerCommand, words: list[str]) -> list[str]:
    """The whole run with ``words`` (the engine's, ``lead`` first; a script's step) as its
    command: the container's part word for word as it was."""
    sc = cc.script
    if sc is None:
        return [*cc.run.head, *words[len(cc.lead):]]
    steps = [*sc.words[:sc.start], *words, *sc.words[sc.end:]]
    full = [*cc.lead, *cc.run.command]
    full[sc.at] = " ".join(w if _is_op(w) else shellwords.quote(w) for w in steps)
    return [*cc.run.head, *full[len(cc.lead):]]


def spelled(run: ContainerRun, what: str) -> str:
    return _SPELLING.get(run.cli, _DOCKER)[what]


def host_path(run: ContainerRun, path: str) -> tuple[str | None, Mount | None]:
    """The host path a container path is bind-mounted from (and the mount), ``(None, mount)``
    under a volume, ``(None, None)`` inside the image."""
    norm = posixpath.normpath(path)
    best: Mount | None = None
    for m in run.mounts:
        target = posixpath.normpath(m.target) if m.target else ""
        if target and (norm == target or norm.startswith(target.rstrip("/") + "/")) and \
                (best is None or len(target) > len(posixpath.normpath(best.target))):
            best = m
    if best is None or best.kind != "bind" or best.source.startswith("~"):
        return None, best
    rest = posixpath.relpath(norm, posixpath.normpath(best.target))
    return (best.source if rest == "." else posixpath.join(best.source, rest)), best


def hf_home(run: ContainerRun) -> str:
    return dict(run.env).get("HF_HOME", HF_HOME)


def model_of(cmd: ParsedCommand) -> str | None:
    """The target model as the engine reads it (a flag, or the first positional)."""
    launch = launch_profile(cmd.engine).launch
    if launch.model_positional and cmd.positionals:
        return cmd.positionals[0]
    value = cmd.get(launch.model_dest)
    return value if isinstance(value, str) else None


def container_gpus(run: ContainerRun, gpus: tuple[GpuFact, ...]) -> tuple[GpuFact, ...]:
    """The host's GPUs as the container sees them: those it is given, numbered from 0."""
    seen = _nvidia_env(run)
    if seen is not None and not run.gpus:
        picked = list(gpus) if seen == ("all",) else [g for g in gpus if str(g.index) in seen]
    elif any(r.count is None for r in run.gpus):
        picked = list(gpus)
    else:
        ids = {d for r in run.gpus for d in r.devices}
        counted = sum(r.count or 0 for r in run.gpus if not r.devices)
        picked = [g for g in gpus if str(g.index) in ids]
        picked += [g for g in gpus if g not in picked][:counted]
    return tuple(dataclasses.replace(g, index=i) for i, g in enumerate(picked))


def _nvidia_env(run: ContainerRun) -> tuple[str, ...] | None:
    """``--runtime nvidia`` with ``NVIDIA_VISIBLE_DEVICES``: the legacy way of giving GPUs."""
    if run.runtime != "nvidia":
        return None
    value = dict(run.env).get("NVIDIA_VISIBLE_DEVICES", "all")
    if value in ("none", "void", ""):
        return ()
    return ("all",) if value == "all" else tuple(x.strip() for x in value.split(","))


def _given(run: ContainerRun) -> int | None:
    """How many GPUs the run gives (``None``: all the host has, or not known: ROCm's
    ``--device /dev/kfd``/``/dev/dri`` give the host's AMD GPUs)."""
    if any(o.name == "device" and o.value.startswith(("/dev/kfd", "/dev/dri"))
           for o in run.options):
        return None
    env = _nvidia_env(run)
    if env is not None and not run.gpus:
        return None if env == ("all",) else len(env)
    if any(r.count is None for r in run.gpus):
        return None
    return sum(r.count or 0 for r in run.gpus)


def findings(cc: ContainerCommand, facts: LintFacts, cf: ContainerFacts) -> list[Finding]:
    """The container's checks of what the engine meets (after the engine's own: the GPUs,
    shared memory, ports and paths); :func:`grammar` has those of the run itself."""
    out: list[Finding] = []
    launch = launch_profile(cc.cmd.engine).launch
    if not (facts.cpu_build or str(cc.cmd.get(launch.device_dest) or "") == "cpu"):
        out += _gpus(cc, facts)
    out += _shm(cc)
    out += _ports(cc, facts, cf)
    return out if cc.doubled else out + _paths(cc)  # (doubled: the "model" is a stray word)


def lint_container(cc: ContainerCommand, facts: LintFacts, more: ContainerFacts) -> LintResult:
    """The engine's lint of the words in the run, with the container's findings: what the run
    gets wrong first, what the engine meets in the container last (``lint`` and ``launch``)."""
    res = lint(cc.cmd, facts)
    return dataclasses.replace(res, findings=(*grammar(cc), *res.findings,
                                              *findings(cc, facts, more)))


def grammar(cc: ContainerCommand) -> list[Finding]:
    """What the container CLI would refuse or misread (before the engine's checks)."""
    run = cc.run
    out = [Finding("warning" if p.kind == "unknown" else "error", f"container-option-{p.kind}",
                   f"{run.source}: {p.message}", p.token) for p in run.problems]
    if cc.doubled:
        out.append(Finding("error", "container-entrypoint-doubled", f"{run.image} already runs "
                           f"`{' '.join(cc.lead)}` ({cc.via}): the words after the image are "
                           f"its arguments, so `{' '.join(run.command[:3])} …` is read as a "
                           "model and stray arguments ('unrecognized arguments')", None,
                           f"drop `{' '.join(cc.lead)}` after the image: give the model and "
                           "flags only"))
    return out


def _gpus(cc: ContainerCommand, facts: LintFacts) -> list[Finding]:
    run, cmd = cc.run, cc.cmd
    need = launch_profile(cmd.engine).launch.gpus_needed(cmd)
    out: list[Finding] = []
    for r in run.gpus:
        if r.problem:
            quoted = "'\"" + r.typed.split(" ", 1)[-1] + "\"'" if "device=" in r.typed else ""
            out.append(Finding("error", "container-gpus-invalid", f"{r.typed}: {r.problem} "
                               f"({run.cli} refuses it)", r.typed.split(" ", 1)[0],
                               f"quote the list: --gpus {quoted}" if quoted else None))
    given = _given(run)
    if given == 0 and not run.privileged:
        out.append(Finding("error", "container-no-gpus", f"no GPU is given to the container "
                           f"({run.source} without {spelled(run, 'gpus')}): the engine finds "
                           "none and fails at startup", spelled(run, "gpus"),
                           f"add {spelled(run, 'all')}"))
    elif given is not None and given < need and not out:
        out.append(Finding("error", "container-gpus-too-few", f"the container is given {given} "
                           f"GPU{'s' * (given != 1)} but the command needs {need} (tensor × "
                           "pipeline × data parallel)", spelled(run, "gpus"),
                           f"give it {need} GPUs, or lower the parallel sizes"))
    if facts.gpus is not None:
        have = {str(g.index) for g in facts.gpus}
        missing = sorted({d for r in run.gpus for d in r.devices if d.isdigit()} - have)
        if missing:
            out.append(Finding("error", "container-gpu-missing", f"GPU {', '.join(missing)} "
                               f"given to the container is not on the host ({len(have)} "
                               "GPUs)", spelled(run, "gpus")))
    return out


def _shm(cc: ContainerCommand) -> list[Finding]:
    run, cmd = cc.run, cc.cmd
    need = launch_profile(cmd.engine).launch.gpus_needed(cmd)
    size = run.shm_bytes
    if need < 2 or run.ipc == "host" or size is None or size >= NCCL_SHM:
        return []
    said = "the default 64 MB" if run.shm_size is None else f"{run.shm_size}"
    return [Finding("warning", "container-shm-small", f"/dev/shm is {said} and the server runs "
                    f"{need} GPU processes: NCCL and the engine's worker queues share memory "
                    "through it and fail ('Error while creating shared memory segment', 'Bus "
                    "error')", spelled(run, "shm"),
                    f"add {spelled(run, 'ipc')}, or {spelled(run, 'shm')} 16g")]


def _ports(cc: ContainerCommand, facts: LintFacts, cf: ContainerFacts) -> list[Finding]:
    run, cmd = cc.run, cc.cmd
    profile = launch_profile(cmd.engine)
    launch = profile.launch
    port = as_int(cmd.get(launch.port_dest)) or profile.default_port
    flag = spelled(run, "publish")
    out: list[Finding] = []
    if run.network == "host":
        if run.publish:
            out.append(Finding("info", "container-publish-ignored", f"{flag} is ignored with "
                               f"the host's network: the server's port {port} is the host's",
                               flag))
    elif run.publish_all:
        out.append(Finding("info", "container-port-unchecked", "-P publishes the image's "
                           "exposed ports on random host ports: the server's port is not "
                           "checked", "-P"))
    elif not run.publish:
        out.append(Finding("warning", "container-port-unpublished", f"the server listens on "
                           f"{port} in the container, but no port is published: only the "
                           "container's network reaches it", flag, f"add {flag} {port}:{port}"))
    elif not any(p.host_port_of(port) is not False for p in run.publish):
        single = [p for p in run.publish if p.proto == "tcp" and "-" not in p.container]
        shown = ", ".join(p.typed for p in run.publish[:4])
        out.append(Finding(
            "error", "container-port-mismatch", f"{flag} {shown} publishes container port"
            f"{'s' * (len(run.publish) != 1)} {', '.join(p.container for p in run.publish[:4])}"
            f", but the server listens on {port}"
            f"{'' if cmd.has(launch.port_dest) else ' (its default)'}", launch.port_flag,
            f"{launch.port_flag} {single[0].container}" if len(single) == 1 else None,
            set_flag(launch.port_flag, single[0].container, "listen on the published port")
            if len(single) == 1 else None))
    listen = cmd.get(launch.host_dest) or launch.host_default
    if run.network != "host" and (run.publish or run.publish_all) and listen in _LOOPBACK:
        said = "" if cmd.has(launch.host_dest) else " (its default)"
        out.append(Finding("error", "container-host-loopback", f"the server listens on "
                           f"{listen}{said} inside the container: a published port reaches "
                           "nothing there", launch.host_flag, f"{launch.host_flag} 0.0.0.0",
                           set_flag(launch.host_flag, "0.0.0.0", "listen on every interface "
                                    "of the container")))
    if cf.host_port_in_use and cf.host_port is not None:
        where = f" on {facts.host}" if facts.host else ""
        out.append(Finding("error", "container-port-in-use", f"host port {cf.host_port} "
                           f"(the server's {port}) is already in use{where}", flag,
                           f"publish another host port ({flag} FREE:{port}), or stop what "
                           "uses it"))
    return out


def host_port(cc: ContainerCommand) -> int | None:
    """The host port that reaches the server (``None``: none, or one chosen at random)."""
    profile = launch_profile(cc.cmd.engine)
    port = as_int(cc.cmd.get(profile.launch.port_dest)) or profile.default_port
    if cc.run.network == "host":
        return port
    for p in cc.run.publish:
        hp = p.host_port_of(port)
        if isinstance(hp, int) and not isinstance(hp, bool):
            return hp
    return None


def container_paths(cc: ContainerCommand) -> list[tuple[str, str]]:
    """``(what, path)`` of the model and the draft as the command names them."""
    out = []
    model = model_of(cc.cmd)
    if model:
        out.append(("model", model))
    draft = spec_plan(cc.cmd).draft
    if draft:
        out.append(("draft", draft))
    return out


def _paths(cc: ContainerCommand) -> list[Finding]:
    """Paths the host cannot show: inside the image, in a volume, or a hub id with the
    container's Hugging Face cache not bind-mounted."""
    out: list[Finding] = []
    for what, path in container_paths(cc):
        if path.startswith("/"):
            found, mount = host_path(cc.run, path)
            if found is not None:
                continue
            where = "inside the image (no bind mount holds it)" if mount is None else \
                f"under {mount.typed!r}, a ~ path not expanded here" if mount.kind == "bind" \
                else f"in the volume {mount.source or mount.target!r}"
        elif _HUB_ID.match(path):
            found, mount = host_path(cc.run, hf_home(cc.run))
            if found is not None:
                continue
            where = f"a hub id, and the container's cache {hf_home(cc.run)} is " + (
                "not bind-mounted" if mount is None or mount.kind != "bind" else
                f"under {mount.typed!r}, a ~ path not expanded here")
        else:
            where = "relative to the container's working folder"
        out.append(Finding("info", f"container-{what}-unchecked", f"{what} {path!r}: {where}: "
                           "not checked on the host", spelled(cc.run, "mount")))
    return out


__all__ = ["NCCL_SHM", "ContainerCommand", "ContainerFacts", "Script", "container_gpus",
           "container_paths", "engine_command", "findings", "grammar", "hf_home", "host_path",
           "host_port", "image_entry", "lint_container", "model_of", "read_command", "rebuild",
           "spelled"]
