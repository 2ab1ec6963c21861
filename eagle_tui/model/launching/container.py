"""Read a container CLI's ``run`` command line: its options, the image, and the command after it.

``docker run``, ``podman run`` (``docker container run``, ``nerdctl run``) take options up to the
first word that is not one, the IMAGE; every word after it is the container's command, never
theirs. Which options take a value is their own (cobra/pflag: ``--opt value``, ``--opt=value``,
``-p8000:8000``, ``-itp 8000:8000``, ``--`` before the image); the lists below are the union of
docker's and podman's ``run`` options. An option neither has is a problem, read as taking a value
unless the next word is an option. Kept are the options that matter to an engine inside it: GPUs,
shared memory, the IPC and network modes, published ports, mounts, the entrypoint and env.

Pure: no I/O; bounded by the command reader's word limit (:data:`~.cmdline.MAX_TOKENS`).
"""

from __future__ import annotations

import csv
import re

from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.launching.cmdline import CommandError, split_command
from eagle_tui.model.launching.flags import Problem
from eagle_tui.model.record import Record, record

CLIS = ("docker", "podman", "nerdctl")
_ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SUDO_VALUE = frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"})
_GLOBAL_BOOL = frozenset({"-D", "--debug", "--tls", "--tlsverify", "-r", "--remote", "--noout",
                          "--syslog", "--transient-store", "--experimental",
                          "--insecure-registry", "--debug-full"})
#: The run options that take no value (pflag bools: a value only as ``--opt=false``).
BOOL_OPTIONS = frozenset({
    "detach", "interactive", "tty", "rm", "privileged", "publish-all", "read-only",
    "read-only-tmpfs", "init", "no-healthcheck", "oom-kill-disable", "sig-proxy", "quiet",
    "disable-content-trust", "use-api-socket", "help", "rmi", "replace", "rootfs", "env-host",
    "http-proxy", "tls-verify", "unsetenv-all", "no-hosts", "passwd"})
#: The run options that take a value (docker's and podman's).
VALUE_OPTIONS = frozenset({
    "add-host", "annotation", "arch", "attach", "authfile", "blkio-weight", "blkio-weight-device",
    "cap-add", "cap-drop", "cert-dir", "cgroup-conf", "cgroup-parent", "cgroupns", "cgroups",
    "chrootdirs", "cidfile", "conmon-pidfile", "cpu-count", "cpu-percent", "cpu-period",
    "cpu-quota", "cpu-rt-period", "cpu-rt-runtime", "cpu-shares", "cpus", "cpuset-cpus",
    "cpuset-mems", "creds", "decryption-key", "detach-keys", "device", "device-cgroup-rule",
    "device-read-bps", "device-read-iops", "device-write-bps", "device-write-iops", "dns",
    "dns-opt", "dns-option", "dns-search", "domainname", "entrypoint", "env", "env-file",
    "env-merge", "expose", "gidmap", "gpus", "group-add", "group-entry", "health-cmd",
    "health-interval", "health-log-destination", "health-max-log-count", "health-max-log-size",
    "health-on-failure", "health-retries", "health-start-interval", "health-start-period",
    "health-startup-cmd", "health-startup-interval", "health-startup-retries",
    "health-startup-success", "health-startup-timeout", "health-timeout", "hostname",
    "hostuser", "image-volume", "init-path", "io-maxbandwidth", "io-maxiops", "ip", "ip6", "ipc",
    "isolation", "kernel-memory", "label", "label-file", "link", "link-local-ip", "log-driver",
    "log-opt", "mac-address", "memory", "memory-reservation", "memory-swap",
    "memory-swappiness", "mount", "name", "net", "net-alias", "network", "network-alias",
    "oom-score-adj", "os", "passwd-entry", "personality", "pid", "pidfile", "pids-limit",
    "platform", "pod", "pod-id-file", "preserve-fd", "preserve-fds", "publish", "pull",
    "rdt-class", "requires", "restart", "retry", "retry-delay", "runtime", "sdnotify",
    "seccomp-policy", "secret", "security-opt", "shm-size", "shm-size-systemd",
    "signature-policy", "stop-signal", "stop-timeout", "storage-opt", "subgidname",
    "subuidname", "sysctl", "systemd", "timeout", "tmpfs", "tz", "uidmap", "ulimit", "umask",
    "unsetenv", "user", "userns", "uts", "variant", "volume", "volume-driver", "volumes-from",
    "workdir"})
SHORT = {"d": "detach", "i": "interactive", "t": "tty", "P": "publish-all", "q": "quiet",
         "a": "attach", "c": "cpu-shares", "e": "env", "h": "hostname", "l": "label",
         "m": "memory", "p": "publish", "u": "user", "v": "volume", "w": "workdir"}
_ALIAS = {"net": "network", "dns-opt": "dns-option", "net-alias": "network-alias"}
_FALSE = frozenset({"0", "f", "F", "false", "FALSE", "False"})
_SIZE = re.compile(r"^(\d+(?:\.\d+)?) ?([kKmMgGtTpP])?[iI]?[bB]?$")
DEFAULT_SHM = 64 << 20  # docker's and podman's /dev/shm when --shm-size is not given


@record
class Option(Record):
    """One run option as given: its long name, its value (``"true"`` for a switch), where."""

    name: str
    value: str
    typed: str  # as written (``-p``, ``--publish``)
    index: int  # the word it starts at


@record
class Publish(Record):
    """``-p [IP:][HOST:]CONTAINER[/PROTO]`` (a port or a ``A-B`` range on each side)."""

    typed: str
    host_ip: str
    host: str  # "" when the host port is chosen by the engine
    container: str
    proto: str = "tcp"

    def host_port_of(self, port: int) -> int | bool | None:
        """The host port publishing container ``port``: a number, ``None`` (a random one), or
        ``False`` (this mapping does not publish it)."""
        lo, hi = _range(self.container)
        if lo is None or hi is None or not lo <= port <= hi or self.proto != "tcp":
            return False
        hlo, _hhi = _range(self.host)
        return None if hlo is None else hlo + (port - lo)


@record
class Mount(Record):
    """A bind mount or a volume: ``kind`` ``bind`` (a host path), ``volume`` or ``tmpfs``."""

    typed: str
    kind: str
    source: str
    target: str
    readonly: bool = False


@record
class GpuRequest(Record):
    """The GPUs one option gives: ``count`` (``None``: all of them) or ``devices`` by id."""

    typed: str
    count: int | None
    devices: tuple[str, ...] = ()
    problem: str = ""  # what the CLI or its engine would refuse


@record
class ContainerRun(Record):
    """A container's run: the container part's words, the image, the command after it."""

    cli: str  # ``docker``, ``podman``, ``nerdctl`` or ``compose``
    source: str  # for messages: ``docker run``, ``compose service vllm``
    head: tuple[str, ...]  # the words up to and including the image (kept as they are)
    image: str
    command: tuple[str, ...]
    options: tuple[Option, ...] = ()
    entrypoint: tuple[str, ...] | None = None  # the image's entrypoint replaced by these words
    env: tuple[tuple[str, str], ...] = ()
    gpus: tuple[GpuRequest, ...] = ()
    shm_size: str | None = None
    ipc: str = ""
    network: str = ""
    publish: tuple[Publish, ...] = ()
    publish_all: bool = False
    mounts: tuple[Mount, ...] = ()
    runtime: str = ""
    privileged: bool = False
    problems: tuple[Problem, ...] = ()

    @property
    def shm_bytes(self) -> int | None:
        """``/dev/shm``'s size (the engines' default when not given; ``None``: unreadable)."""
        return DEFAULT_SHM if self.shm_size is None else size_bytes(self.shm_size)


def is_container_command(words: list[str]) -> bool:
    """The words start a container CLI (after env words and ``sudo``)."""
    i = _skip_prefix(words)
    return i < len(words) and words[i].rsplit("/", 1)[-1] in CLIS


def _skip_prefix(words: list[str]) -> int:
    i = 0
    while i < len(words) and _ENV_WORD.match(words[i]):
        i += 1
    if i < len(words) and words[i].rsplit("/", 1)[-1] == "sudo":
        i += 1
        while i < len(words) and words[i].startswith("-"):
            i += 2 if words[i] in _SUDO_VALUE else 1
        while i < len(words) and _ENV_WORD.match(words[i]):  # sudo's ``VAR=value`` words
            i += 1
    return i


def parse_run(argv: list[str] | str) -> ContainerRun:
    """``[sudo] docker|podman|nerdctl [GLOBAL...] [container] run OPTIONS IMAGE [CMD...]``."""
    words = split_command(argv)
    i = _skip_prefix(words)
    if i >= len(words) or words[i].rsplit("/", 1)[-1] not in CLIS:
        raise CommandError("not a container command (docker, podman or nerdctl)")
    cli = words[i].rsplit("/", 1)[-1]
    i += 1
    while i < len(words) and words[i].startswith("-"):  # the CLI's global options
        w = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else ""
        i += 1 if "=" in w or w in _GLOBAL_BOOL or nxt in ("run", "container") else 2
    if i < len(words) and words[i] == "container":
        i += 1
    if i >= len(words) or words[i] != "run":
        raise CommandError(f"not a `{cli} run` command (only run starts a server)")
    options, image_at, problems = _options(words, i + 1)
    if image_at >= len(words):
        raise CommandError(f"`{cli} run` without an image")
    return from_options(cli, f"{cli} run", tuple(words[:image_at + 1]), words[image_at],
                        tuple(words[image_at + 1:]), options, problems)


def _options(words: list[str], i: int) -> tuple[list[Option], int, list[Problem]]:
    """pflag's reading of the options up to the image: (options, the image's index, problems)."""
    out: list[Option] = []
    problems: list[Problem] = []
    n = len(words)
    while i < n:
        w = words[i]
        if w == "--":
            return out, i + 1, problems
        if not w.startswith("-") or w == "-":
            return out, i, problems
        if w.startswith("--"):
            name, eq, value = w[2:].partition("=")
            name = _ALIAS.get(name, name)
            takes = name not in BOOL_OPTIONS
            if name not in BOOL_OPTIONS and name not in VALUE_OPTIONS:
                takes = not eq and i + 1 < n and not words[i + 1].startswith("-")
                problems.append(Problem("unknown", w.partition("=")[0],
                                        f"unknown option {w.partition('=')[0]}: read as "
                                        + ("taking the next word" if takes else "a switch")))
                takes = takes or bool(eq)
            if eq:
                out.append(Option(name, value, w, i))
            elif not takes:
                out.append(Option(name, "true", w, i))
            elif i + 1 < n:
                out.append(Option(name, words[i + 1], w, i))
                i += 1
            else:
                problems.append(Problem("missing-value", w, f"option {w} needs a value"))
            i += 1
            continue
        i = _shorts(words, i, out, problems)
    return out, i, problems


def _shorts(words: list[str], i: int, out: list[Option], problems: list[Problem]) -> int:
    """A group of one-letter options (``-it``, ``-p8000:8000``, ``-dp 80:80``, ``-e=K=V``)."""
    w = words[i]
    j = 1
    while j < len(w):
        c = w[j]
        name = SHORT.get(c)
        if name is None:
            problems.append(Problem("unknown", f"-{c}", f"unknown option -{c} in {w}"))
            return i + 1
        rest = w[j + 1:]
        if name in BOOL_OPTIONS:
            if rest.startswith("="):
                out.append(Option(name, rest[1:], f"-{c}", i))
                return i + 1
            out.append(Option(name, "true", f"-{c}", i))
            j += 1
            continue
        if rest:
            out.append(Option(name, rest.removeprefix("="), f"-{c}", i))
            return i + 1
        if i + 1 < len(words):
            out.append(Option(name, words[i + 1], f"-{c}", i))
            return i + 2
        problems.append(Problem("missing-value", f"-{c}", f"option -{c} needs a value"))
        return i + 1
    return i + 1


def from_options(cli: str, source: str, head: tuple[str, ...], image: str,
                 command: tuple[str, ...], options: list[Option],
                 problems: list[Problem]) -> ContainerRun:
    """The run the options describe (the last of a single-valued option wins, as in pflag)."""
    env: list[tuple[str, str]] = []
    gpus: list[GpuRequest] = []
    publish: list[Publish] = []
    mounts: list[Mount] = []
    single: dict[str, str] = {}
    flags: dict[str, bool] = {}
    for o in options:
        if o.name == "env":
            key, eq, value = o.value.partition("=")
            if eq and key:
                env.append((key, value))
        elif o.name == "gpus":
            gpus.append(parse_gpus(o.value, f"{o.typed} {o.value}"))
        elif o.name == "device":
            req = cdi_gpus(o.value, f"{o.typed} {o.value}")
            if req is not None:
                gpus.append(req)
        elif o.name == "publish":
            pub = parse_publish(o.value)
            if pub is None:
                problems.append(Problem("value", o.typed, f"{o.typed} {o.value}: not a port"))
            else:
                publish.append(pub)
        elif o.name == "volume":
            mounts.append(parse_volume(o.value))
        elif o.name == "mount":
            mounts.append(parse_mount(o.value))
        elif o.name in BOOL_OPTIONS:
            flags[o.name] = o.value not in _FALSE
        else:
            single[o.name] = o.value
    entry = single.get("entrypoint")
    return ContainerRun(
        cli, source, head, image, command, tuple(options),
        None if entry is None else entrypoint_words(entry), tuple(env), tuple(gpus),
        single.get("shm-size"), single.get("ipc", ""), single.get("network", ""),
        tuple(publish), flags.get("publish-all", False), tuple(mounts),
        single.get("runtime", ""), flags.get("privileged", False), tuple(problems))


def entrypoint_words(value: str) -> tuple[str, ...]:
    """``--entrypoint``'s words: one program, or (podman) a JSON array; ``""`` clears it."""
    if value.startswith("["):
        try:
            parsed = load_json(value, "--entrypoint", max_bytes=64_000)
        except LoadError:
            parsed = None
        if isinstance(parsed, list) and all(isinstance(x, str) for x in parsed):
            return tuple(parsed)
    return (value,) if value else ()


def parse_gpus(value: str, typed: str) -> GpuRequest:
    """docker's ``--gpus``: CSV fields ``all``, ``N``, ``count=N``, ``device=A,B`` (quoted:
    ``'"device=0,1"'``), ``driver=``, ``capabilities=``; neither count nor device: one GPU."""
    try:
        fields = next(csv.reader([value[:4096]]), [])
    except csv.Error as exc:
        return GpuRequest(typed, 0, (), f"not CSV: {exc}")
    count: int | None = 1
    devices: tuple[str, ...] = ()
    seen: set[str] = set()
    problem = ""
    for field in fields:
        key, eq, val = field.partition("=")
        if key in seen:
            problem = problem or f"gpu request key '{key}' can be specified only once"
        seen.add(key)
        if not eq or key == "count":
            seen.add("count")
            text = val if eq else key
            number = -1 if text == "all" else int(text) if text.isdigit() and len(text) < 6 \
                else None
            if number is None:
                problem = problem or f"invalid count {text!r}"
                count = 0
            else:
                count = None if number < 0 else number
        elif key == "device":
            devices = tuple(x for x in val.split(",") if x)
        elif key not in ("driver", "capabilities", "options"):
            problem = problem or f"unexpected key '{key}' in '{field}'"
    if devices and "count" in seen:
        problem = problem or "cannot set both Count and DeviceIDs on device request"
    return GpuRequest(typed, len(devices) if devices else count, devices, problem)


def cdi_gpus(value: str, typed: str) -> GpuRequest | None:
    """A GPU given as a device: a CDI name (``nvidia.com/gpu=all``, ``=0``) or ``/dev/nvidiaN``;
    ``None`` for any other device."""
    name, eq, which = value.partition("=")
    if eq and name.endswith("/gpu") and "." in name.split("/", 1)[0]:
        return GpuRequest(typed, None) if which == "all" else GpuRequest(typed, 1, (which,))
    host = value.split(":", 1)[0]
    if re.fullmatch(r"/dev/nvidia\d{1,3}", host):
        return GpuRequest(typed, 1, (host.removeprefix("/dev/nvidia"),))
    return None


def parse_publish(value: str) -> Publish | None:
    """``[IP:][HOST:]CONTAINER[/PROTO]``, IPv6 host IPs in brackets."""
    spec, _, proto = value.partition("/")
    ip = ""
    if spec.startswith("["):
        ip, sep, spec = spec[1:].partition("]")
        if not sep:
            return None
        spec = spec.removeprefix(":")
        if ":" not in spec:
            spec = ":" + spec
    parts = spec.split(":")
    if len(parts) == 3:
        ip, host, container = parts
    elif len(parts) == 2:
        host, container = parts
    elif len(parts) == 1:
        host, container = "", parts[0]
    else:
        return None
    if _range(container)[0] is None or (host and _range(host)[0] is None):
        return None
    return Publish(value, ip, host, container, (proto or "tcp").lower())


def _range(text: str) -> tuple[int | None, int | None]:
    lo, dash, hi = text.partition("-")
    if not lo.isdigit() or len(lo) > 5 or (dash and (not hi.isdigit() or len(hi) > 5)):
        return None, None
    return int(lo), int(hi) if dash else int(lo)


def parse_volume(value: str) -> Mount:
    """``-v [SOURCE:]TARGET[:OPTIONS]``: a source that is a path binds it, a name is a volume."""
    parts = value.split(":")
    if len(parts) == 1:
        return Mount(value, "volume", "", parts[0])
    source, target = parts[0], parts[1]
    opts = set(",".join(parts[2:]).split(","))
    kind = "bind" if source.startswith(("/", ".", "~")) else "volume"
    return Mount(value, kind, source, target, "ro" in opts)


def parse_mount(value: str) -> Mount:
    """``--mount type=bind,source=S,target=T[,readonly]`` (docker's default type: volume)."""
    fields: dict[str, str] = {}
    try:
        cells = next(csv.reader([value[:4096]]), [])
    except csv.Error:
        cells = []
    for cell in cells:
        key, eq, val = cell.partition("=")
        fields[key.strip().lower()] = val if eq else "true"
    source = fields.get("source", fields.get("src", ""))
    target = fields.get("target", fields.get("destination", fields.get("dst", "")))
    ro = fields.get("readonly", fields.get("ro", "false")) not in _FALSE
    return Mount(value, fields.get("type", "volume"), source, target, ro)


def size_bytes(text: str) -> int | None:
    """docker's and podman's sizes (``64m``, ``16g``, ``1GiB``, ``2gb``, bytes), in bytes."""
    m = _SIZE.match(text.strip()[:32])
    if m is None:
        return None
    unit = (m.group(2) or "").lower()
    return int(float(m.group(1)) * (1 << (10 * ("bkmgtp".index(unit) if unit else 0))))


def image_repository(ref: str) -> str:
    """``docker.io/vllm/vllm-openai:v0.9@sha256:…`` → ``vllm/vllm-openai``."""
    name = ref.split("@", 1)[0]
    last = name.rsplit("/", 1)
    if ":" in last[-1]:
        name = name[: len(name) - len(last[-1])] + last[-1].split(":", 1)[0]
    first, sep, rest = name.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        name = rest
    return name.removeprefix("library/").lower()


__all__ = ["BOOL_OPTIONS", "CLIS", "DEFAULT_SHM", "VALUE_OPTIONS", "ContainerRun", "GpuRequest",
           "Mount", "Option", "Publish", "cdi_gpus", "entrypoint_words", "from_options",
           "image_repository", "is_container_command", "parse_gpus", "parse_mount",
           "parse_publish", "parse_run", "parse_volume", "size_bytes"]
