"""Pre-launch checks of an engine's launch command: catch the bug before the server starts.

The costly mistakes of speculative decoding do not fail: an EAGLE-3 draft launched with
``--speculative-algorithm EAGLE`` (vLLM: ``"method": "eagle"``) runs, answers correctly, and
collapses acceptance length to ~1.0. Only comparing the command with the checkpoints'
``config.json`` shows it, and minutes of loading are saved by doing it first.

Pure: :func:`lint` takes the parsed command (:mod:`.cmdline`) and the facts gathered about the
host (``eagle_tui.probe.facts``: configs, port, GPUs) and returns findings. Each finding has a
level (``error``: the server will fail or run wrong; ``warning``: likely not what was meant;
``info``: what was checked or could not be), a stable ``code`` for scripts, and a fix in the
engine's own terms where there is one. The checks run in the order a user should fix them: the
command's own problems and paths, the engine's rules (its profile's ``launch.rules``), then the
host (port, GPUs, memory).
"""

from __future__ import annotations

from dataclasses import field
from typing import Any

from eagle_tui.model.launching.checks import (
    LEVELS,
    ConfigFact,
    Finding,
    GpuFact,
    Level,
    LintFacts,
    LintInput,
    LintRule,
    SpecPlan,
    as_float,
    as_int,
    expected_hidden,
    is_eagle3_config,
)
from eagle_tui.model.launching.cmdline import ParsedCommand, launch_profile, parse_command
from eagle_tui.model.launching.flags import FlagTable
from eagle_tui.model.launching.remedy import Remedy, apply, set_flag
from eagle_tui.model.record import Record, record


@record
class LintResult(Record):
    """The findings, and what the lint learnt (for ``--json`` and later run checks)."""

    engine: str
    entry: str
    table_version: str
    plan: SpecPlan
    findings: tuple[Finding, ...]
    expected_hidden: int | None = None
    facts: dict[str, Any] = field(default_factory=dict)

    def count(self, level: Level) -> int:
        return sum(1 for f in self.findings if f.level == level)

    @property
    def ok(self) -> bool:
        return self.count("error") == 0


def spec_plan(cmd: ParsedCommand) -> SpecPlan:
    """The algorithm, draft and draft shape the engine would use for this command."""
    return launch_profile(cmd.engine).launch.read_plan(cmd)


def lint(cmd: ParsedCommand, facts: LintFacts) -> LintResult:
    """All checks, in the order a user should fix them (the command, the spec, the host)."""
    launch = launch_profile(cmd.engine).launch
    plan = launch.read_plan(cmd)
    model_cfg = facts.model.config if facts.model and facts.model.status == "ok" else None
    draft_cfg = facts.draft.config if facts.draft and facts.draft.status == "ok" else None
    c = LintInput(cmd, plan, facts, model_cfg, draft_cfg)
    out: list[Finding] = []
    for rule in (*BEFORE, *launch.rules, *AFTER):
        out += rule(c)
    return LintResult(cmd.engine, cmd.entry, cmd.table_version, plan, tuple(out),
                      expected_hidden(c))


def problems(c: LintInput) -> list[Finding]:
    """What the engine's argparse would refuse (or the reader cut)."""
    out: list[Finding] = []
    for p in c.cmd.problems:
        fix = f"did you mean {p.suggestion}?" if p.suggestion else None
        level: Level = "warning" if p.kind == "cut" else "error"
        out.append(Finding(level, f"args-{p.kind}", f"{p.message} (the engine refuses to "
                           "start)" if level == "error" else p.message, p.token, fix))
    return out


def paths(c: LintInput) -> list[Finding]:
    out: list[Finding] = []
    model_flag = launch_profile(c.cmd.engine).launch.model_flag
    for what, fact, flag in (("model", c.facts.model, model_flag),
                             ("draft", c.facts.draft, "draft")):
        if fact is None:
            continue
        if fact.status == "missing":
            out.append(Finding("error", f"{what}-missing", f"{what} {fact.given!r}: not found "
                               f"({fact.detail or fact.where})", flag))
        elif fact.status == "not-local":
            out.append(Finding("info", f"{what}-not-local", f"{what} {fact.given!r}: not "
                               "local: not checked (not in the Hugging Face cache)", flag))
        elif fact.status == "unreadable":
            out.append(Finding("warning", f"{what}-unreadable",
                               f"{what} {fact.given!r}: {fact.detail}", flag))
    return out


def host(c: LintInput) -> list[Finding]:
    """The port, and the GPUs' count and free memory against tensor parallelism."""
    cmd, facts = c.cmd, c.facts
    profile = launch_profile(cmd.engine)
    launch = profile.launch
    out: list[Finding] = []
    port = as_int(cmd.get(launch.port_dest)) or profile.default_port
    where = f" on {facts.host}" if facts.host else ""
    if facts.port_in_use:
        out.append(Finding("error", "port-in-use", f"port {port} is already in use{where} (the "
                           "server fails at the HTTP server with 'address already in use')",
                           launch.port_flag, "choose a free --port, or stop the server using it",
                           set_flag(launch.port_flag, str(facts.free_port),
                                    f"use the free port {facts.free_port}")
                           if facts.free_port else None))
    device = str(cmd.get(launch.device_dest) or "")
    if facts.cpu_build or device == "cpu":
        out.append(Finding("info", "gpu-not-applicable", "GPU checks: not applicable (a CPU "
                           "build or --device cpu)"))
        return out
    tp = as_int(cmd.get(launch.tp_dest)) or 1
    if facts.gpus is None:
        note = facts.gpu_note or "no GPU information"
        out.append(Finding("info", "gpu-unknown", f"GPU checks skipped: {note}"))
        return out
    visible = _visible(cmd, facts.gpus)
    if tp > len(visible):
        out.append(Finding("error", "tp-too-large", f"tensor-parallel size {tp} but "
                           f"{len(visible)} GPU{'s' * (len(visible) != 1)} visible{where}",
                           launch.tp_flag))
    if launch.mem_dest is None:
        return out
    frac = as_float(cmd.get(launch.mem_dest))
    if frac is None:
        frac = launch.mem_default
    if frac is not None:
        typed = cmd.typed(launch.mem_dest) or launch.mem_flag
        remedy = _fitting_fraction(visible[:tp], launch.mem_flag)
        for g in visible[:tp]:
            if g.total_mib > 0 and g.free_mib / g.total_mib < frac:
                out.append(Finding(
                    "error" if g.free_mib / g.total_mib < frac - 0.05 else "warning",
                    "gpu-memory", f"GPU {g.index} ({g.name}): {g.free_mib / 1024:.1f} of "
                    f"{g.total_mib / 1024:.1f} GiB free ({g.free_mib / g.total_mib:.0%}), but "
                    f"{typed} {frac:g} asks for {frac:.0%} of it", typed,
                    "free the GPU, or lower " + typed, remedy))
    return out


def _fitting_fraction(gpus: list[GpuFact], flag: str) -> Remedy | None:
    """The largest fraction (in hundredths, rounded down) that every GPU has free."""
    ratios = [g.free_mib / g.total_mib for g in gpus if g.total_mib > 0]
    if not ratios or not flag:
        return None
    value = int(min(ratios) * 100) / 100
    return set_flag(flag, f"{value:g}", f"take {value:.0%} of the GPU memory (what is free)") \
        if value >= 0.05 else None


@record
class Fixed(Record):
    """A command with the lint's remedies applied: its words and what was changed."""

    words: list[str]
    applied: tuple[Finding, ...]


def fix(cmd: ParsedCommand, result: LintResult, table: FlagTable) -> Fixed:
    """Every remedy of ``result``'s findings applied to ``cmd``, in the lint's order (each
    edit on the command as the previous ones left it; one remedy found twice is made once)."""
    words = [*cmd.prefix, *cmd.args]
    done: list[Remedy] = []
    applied: list[Finding] = []
    for f in result.findings:
        if f.remedy is None:
            continue
        if f.remedy not in done:
            words = apply(cmd, f.remedy, table)
            cmd = parse_command(words, {cmd.engine: table})
            done.append(f.remedy)
        applied.append(f)
    return Fixed(words, tuple(applied))


def _visible(cmd: ParsedCommand, gpus: tuple[GpuFact, ...]) -> list[GpuFact]:
    env = dict(cmd.env)
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    if cvd is None:
        return list(gpus)
    wanted = [as_int(x.strip()) for x in cvd.split(",") if x.strip()]
    return [g for g in gpus if g.index in wanted]


#: Every engine's checks: before its own rules (the command, the paths), and after (the host).
BEFORE: tuple[LintRule, ...] = (problems, paths)
AFTER: tuple[LintRule, ...] = (host,)

__all__ = ["AFTER", "BEFORE", "LEVELS", "ConfigFact", "Finding", "Fixed", "GpuFact",
           "LintFacts", "LintResult", "SpecPlan", "fix", "is_eagle3_config", "lint", "spec_plan"]
