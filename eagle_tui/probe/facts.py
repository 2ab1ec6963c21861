"""Gather what the lint checks against, on the host the server will run on.

Everything goes through the :class:`~eagle_tui.transport.base.Transport`, so ``--ssh gpu-box``
reads the remote ``config.json`` files, the remote listening ports and the remote GPUs over the
one SSH connection, with nothing installed there. Each fact has a deadline and a size cap; a
fact that cannot be had is ``None`` (reported as "not checked"), never a guess.
"""

from __future__ import annotations

import asyncio
import os
import posixpath
import re
import shlex
from typing import Any

from eagle_tui.model.boundary.loaders import LoadError, load_json
from eagle_tui.model.engines import profiles
from eagle_tui.model.launching.cmdline import ParsedCommand, launch_profile
from eagle_tui.model.launching.lint import ConfigFact, GpuFact, LintFacts, spec_plan
from eagle_tui.transport.base import CommandNotFound, Transport, TransportError

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
CONFIG_MAX = 4 << 20
TIMEOUT_S = 5.0


def model_path(cmd: ParsedCommand) -> str | None:
    """The target model as the engine reads it (SGLang ``--model-path``, vLLM's positional)."""
    launch = launch_profile(cmd.engine).launch
    if launch.model_positional and cmd.positionals:
        return cmd.positionals[0]
    value = cmd.get(launch.model_dest)
    return value if isinstance(value, str) else None


async def read_config(transport: Transport, given: str, cwd: str | None = None,
                      hf_home: str | None = None) -> ConfigFact:
    """``config.json`` of a checkpoint folder, a ``.json`` file, or a hub id in the HF cache
    (``hf_home``: that cache's folder, else the host user's)."""
    path = given if posixpath.isabs(given) or not cwd else posixpath.join(cwd, given)
    cands = [path] if path.endswith(".json") else [posixpath.join(path, "config.json")]
    hub = bool(_HUB_ID.match(given)) and not given.startswith((".", "/"))
    if hub:
        org, repo = given.split("/", 1)
        home = shlex.quote(hf_home) if hf_home else '"${HF_HOME:-$HOME/.cache/huggingface}"'
        pattern = (f"{home}/hub/"
                   f"models--{shlex.quote(org)}--{shlex.quote(repo)}/snapshots/*/config.json")
        try:
            res = await transport.run(["sh", "-c", f"ls -1 {pattern} 2>/dev/null"], TIMEOUT_S)
            cands += [ln for ln in res.stdout.decode("utf-8", "replace").splitlines() if ln][:4]
        except TransportError:
            pass
    errors: list[str] = []
    for cand in cands:
        try:
            raw = await asyncio.wait_for(transport.read_file(cand, CONFIG_MAX), TIMEOUT_S)
        except (TransportError, TimeoutError) as exc:
            errors.append(str(exc) or f"{cand}: timed out")
            continue
        try:
            data: Any = load_json(raw, f"config.json at {cand}")  # the model's or the draft's
        except LoadError as exc:
            return ConfigFact(given, "unreadable", None, cand, str(exc))
        if not isinstance(data, dict):
            return ConfigFact(given, "unreadable", None, cand, f"{cand}: not a JSON object")
        return ConfigFact(given, "ok", data, cand)
    if hub:
        return ConfigFact(given, "not-local", None, cands[0], "; ".join(errors))
    return ConfigFact(given, "missing", None, cands[0], "; ".join(errors) or "not found")


def _listening(table: str, port: int) -> bool:
    """A ``/proc/net/tcp{,6}`` table has a socket in LISTEN (state 0A) on ``port``."""
    for line in table.splitlines()[1:]:
        parts = line.split()
        if len(parts) > 3 and parts[3] == "0A":
            _, _, hex_port = parts[1].rpartition(":")
            try:
                if int(hex_port, 16) == port:
                    return True
            except ValueError:
                continue
    return False


async def port_in_use(transport: Transport, port: int) -> bool | None:
    """Whether something already listens on ``port`` on the host (``None``: cannot tell)."""
    seen = False
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            raw = await asyncio.wait_for(transport.read_file(name, 8 << 20), TIMEOUT_S)
        except (TransportError, TimeoutError):
            continue
        seen = True
        if _listening(raw.decode("ascii", "replace"), port):
            return True
    return False if seen else None


async def free_port(transport: Transport, port: int, tries: int = 100) -> int | None:
    """The first port above ``port`` nothing listens on (``None``: cannot tell, or none)."""
    tables: list[str] = []
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            raw = await asyncio.wait_for(transport.read_file(name, 8 << 20), TIMEOUT_S)
        except (TransportError, TimeoutError):
            continue
        tables.append(raw.decode("ascii", "replace"))
    if not tables:
        return None
    for cand in range(port + 1, min(port + 1 + tries, 65536)):
        if not any(_listening(t, cand) for t in tables):
            return cand
    return None


async def gpus(transport: Transport) -> tuple[tuple[GpuFact, ...] | None, str]:
    """The host's GPUs from one ``nvidia-smi --query-gpu`` (no NVML needed remotely)."""
    argv = ["nvidia-smi", "--query-gpu=index,name,memory.total,memory.free",
            "--format=csv,noheader,nounits"]
    try:
        res = await transport.run(argv, TIMEOUT_S)
    except CommandNotFound:
        return None, "no nvidia-smi on the host (no NVIDIA driver)"
    except TransportError as exc:
        return None, f"nvidia-smi failed: {exc}"
    if res.exit_code != 0:
        text = res.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"nvidia-smi failed: {text[0] if text else res.exit_code}"
    out: list[GpuFact] = []
    for line in res.stdout.decode("utf-8", "replace").splitlines()[:64]:
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 4:
            continue
        try:
            out.append(GpuFact(int(parts[0]), parts[1], float(parts[2]), float(parts[3])))
        except ValueError:
            continue
    return tuple(out), ""


def cpu_build(cmd: ParsedCommand, environ: dict[str, str] | None = None) -> bool:
    """A CPU build of the engine: its GPU checks do not apply (the CPU-build variable of any
    registered engine counts)."""
    env = {**(environ if environ is not None else os.environ), **dict(cmd.env)}
    return any(env.get(k, "").lower() == v for p in profiles() for k, v in p.launch.cpu_env)


async def gather(cmd: ParsedCommand, transport: Transport, *, cwd: str | None = None,
                 environ: dict[str, str] | None = None) -> LintFacts:
    """Every fact the checks use, gathered concurrently, each with its own deadline."""
    plan = spec_plan(cmd)
    model = model_path(cmd)
    profile = launch_profile(cmd.engine)
    port_value = cmd.get(profile.launch.port_dest)
    port = int(port_value) if isinstance(port_value, str) and port_value.isdigit() and \
        len(port_value) < 6 else profile.default_port
    is_cpu = cpu_build(cmd, environ) or str(cmd.get(profile.launch.device_dest) or "") == "cpu"

    async def none() -> None:
        return None

    model_fact, draft_fact, in_use, gpu_info = await asyncio.gather(
        read_config(transport, model, cwd) if model else none(),
        read_config(transport, plan.draft, cwd) if plan.draft else none(),
        port_in_use(transport, port),
        none() if is_cpu else gpus(transport))
    gpu_list, note = gpu_info if gpu_info is not None else (None, "CPU build")
    free = await free_port(transport, port) if in_use else None
    return LintFacts(host=transport.host, model=model_fact, draft=draft_fact,
                     port_in_use=in_use, free_port=free, gpus=gpu_list, gpu_note=note,
                     cpu_build=is_cpu)


__all__ = ["cpu_build", "free_port", "gather", "gpus", "model_path", "port_in_use", "read_config"]
