"""Pre-launch checks of an SGLang or vLLM command: catch the bug before the server starts.

The costly mistakes of speculative decoding do not fail: an EAGLE-3 draft launched with
``--speculative-algorithm EAGLE`` (vLLM: ``"method": "eagle"``) runs, answers correctly, and
collapses acceptance length to ~1.0 (FORMATS.md §1.5). Only comparing the command with the
checkpoints' ``config.json`` shows it, and minutes of loading are saved by doing it first.

Pure: :func:`lint` takes the parsed command (:mod:`.cmdline`) and the facts gathered about the
host (``eagle_tui.probe.facts``: configs, port, GPUs) and returns findings. Each finding has a
level (``error``: the server will fail or run wrong; ``warning``: likely not what was meant;
``info``: what was checked or could not be), a stable ``code`` for scripts, and a fix in the
engine's own terms where there is one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from eagle_tui.model.launching.cmdline import ParsedCommand, as_json
from eagle_tui.model.record import Record, record

Level = Literal["error", "warning", "info"]
ConfigStatus = Literal["ok", "missing", "not-local", "unreadable"]
LEVELS: tuple[Level, ...] = ("error", "warning", "info")

SGLANG_ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "UNO",
                     "DSPARK", "FROZEN_KV_MTP")
_EAGLE3_MARKERS = ("eagle3",)
DEFAULT_PORT = {"sglang": 30000, "vllm": 8000}
DEFAULT_MEM = {"vllm": 0.9}  # SGLang chooses --mem-fraction-static itself when not given


@record
class Finding(Record):
    """One result of the lint."""

    level: Level
    code: str
    message: str
    flag: str | None = None
    fix: str | None = None


@dataclass(frozen=True)
class ConfigFact:
    """A checkpoint's ``config.json`` as found on the host (or why it was not)."""

    given: str  # the path or hub id as written in the command
    status: ConfigStatus
    config: dict[str, Any] | None = None
    where: str = ""  # the file actually read, or where it was looked for
    detail: str = ""


@record
class GpuFact(Record):
    """One visible GPU: its memory, for the tensor-parallel and memory-fraction checks."""

    index: int
    name: str
    total_mib: float
    free_mib: float


@dataclass(frozen=True)
class LintFacts:
    """What eagle-tui found out about the target host (``None``: not known, not checked)."""

    host: str = ""
    model: ConfigFact | None = None
    draft: ConfigFact | None = None
    port_in_use: bool | None = None
    gpus: tuple[GpuFact, ...] | None = None
    gpu_note: str = ""  # why the GPUs are not known ("no NVIDIA driver", ...)
    cpu_build: bool = False


@dataclass(frozen=True)
class SpecPlan:
    """The speculative settings the engine will use, read the engine's way."""

    algorithm: str | None  # SGLang's name (EAGLE3) or vLLM's method (eagle3)
    algorithm_flag: str  # the option the user typed, for messages
    inferred: bool = False  # vLLM: method left out, inferred from the draft's name
    draft: str | None = None
    num_steps: int | None = None
    topk: int | None = None
    draft_tokens: int | None = None


@dataclass(frozen=True)
class LintResult:
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


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().lstrip("-").isdigit() and len(v) < 12:
        return int(v)
    return None


def _float(v: Any) -> float | None:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str) and len(v) < 32:
        try:
            f = float(v)
        except ValueError:
            return None
        return f if f == f and abs(f) != float("inf") else None
    return None


def spec_plan(cmd: ParsedCommand) -> SpecPlan:
    """The algorithm, draft and draft shape the engine would use for this command."""
    if cmd.engine == "sglang":
        algo = cmd.get("speculative_algorithm")
        return SpecPlan(
            algorithm=str(algo).upper() if algo else None,
            algorithm_flag=cmd.typed("speculative_algorithm") or "--speculative-algorithm",
            draft=cmd.get("speculative_draft_model_path"),
            num_steps=_int(cmd.get("speculative_num_steps")),
            topk=_int(cmd.get("speculative_eagle_topk")),
            draft_tokens=_int(cmd.get("speculative_num_draft_tokens")))
    spec = dict(as_json(cmd.get("speculative_config")) or {})
    for dest, key in (("spec_method", "method"), ("spec_model", "model"),
                      ("spec_tokens", "num_speculative_tokens")):
        if cmd.get(dest) is not None:
            spec.setdefault(key, cmd.get(dest))
    method = spec.get("method")
    draft = spec.get("model") if isinstance(spec.get("model"), str) else None
    inferred = False
    if not method and draft:
        name = draft.lower()
        method = "eagle3" if "eagle3" in name else "eagle" if "eagle-" in name else "draft_model"
        inferred = True
    return SpecPlan(algorithm=str(method).lower() if method else None,
                    algorithm_flag="--speculative-config" if cmd.has("speculative_config")
                    else "--spec-method", inferred=inferred, draft=draft,
                    draft_tokens=_int(spec.get("num_speculative_tokens")))


def is_eagle3_config(cfg: dict[str, Any]) -> bool:
    """EAGLE-3 markers in a draft's config (any one suffices; FORMATS.md §1.5)."""
    archs = cfg.get("architectures")
    if isinstance(archs, list) and any(
            isinstance(a, str) and any(m in a.lower() for m in _EAGLE3_MARKERS) for a in archs):
        return True
    eagle = cfg.get("eagle_config")
    if isinstance(eagle, dict) and (eagle.get("eagle_aux_hidden_state_layer_ids")
                                    or eagle.get("use_aux_hidden_state") is True):
        return True
    return "draft_vocab_size" in cfg or str(cfg.get("speculators_model_type", "")).lower() == \
        "eagle3"


def _text_config(cfg: dict[str, Any]) -> dict[str, Any]:
    inner = cfg.get("text_config")
    return inner if isinstance(inner, dict) and "hidden_size" in inner else cfg


def _arch(cfg: dict[str, Any]) -> str:
    archs = cfg.get("architectures")
    return str(archs[0]) if isinstance(archs, list) and archs else "no architectures"


def lint(cmd: ParsedCommand, facts: LintFacts) -> LintResult:
    """All checks, in the order a user should fix them (the command, the spec, the host)."""
    out: list[Finding] = []
    for p in cmd.problems:
        fix = f"did you mean {p.suggestion}?" if p.suggestion else None
        level: Level = "warning" if p.kind == "cut" else "error"
        out.append(Finding(level, f"args-{p.kind}", f"{p.message} (the engine refuses to "
                           "start)" if level == "error" else p.message, p.token, fix))
    plan = spec_plan(cmd)
    model_cfg = facts.model.config if facts.model and facts.model.status == "ok" else None
    draft_cfg = facts.draft.config if facts.draft and facts.draft.status == "ok" else None
    out += _paths(cmd, facts)
    expected = _algorithm(cmd, plan, model_cfg, draft_cfg, out)
    out += _aux_layers(cmd, plan, model_cfg, draft_cfg)
    out += _draft_shape(cmd, plan)
    out += _host(cmd, facts)
    return LintResult(cmd.engine, cmd.entry, cmd.table_version, plan, tuple(out), expected)


def _paths(cmd: ParsedCommand, facts: LintFacts) -> list[Finding]:
    out: list[Finding] = []
    for what, fact, flag in (("model", facts.model, "--model-path" if cmd.engine == "sglang"
                              else "model"), ("draft", facts.draft, "draft")):
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


def _algorithm(cmd: ParsedCommand, plan: SpecPlan, model_cfg: dict[str, Any] | None,
               draft_cfg: dict[str, Any] | None, out: list[Finding]) -> int | None:
    """The algorithm-vs-draft checks; returns the expected hidden-state width when known."""
    algo = plan.algorithm
    if algo is None:
        return None
    sglang = cmd.engine == "sglang"
    flag = plan.algorithm_flag
    hidden = _int(_text_config(model_cfg).get("hidden_size")) if model_cfg else None
    if sglang and algo not in SGLANG_ALGORITHMS:
        out.append(Finding("error", "spec-unknown-algorithm", f"{flag} {algo}: SGLang knows "
                           f"{', '.join(SGLANG_ALGORITHMS[:5])} (it raises 'Unknown speculative "
                           "algorithm name')", flag))
        return None
    eagle_family = algo in ("EAGLE", "NEXTN", "EAGLE3") if sglang else algo in ("eagle",
                                                                                   "eagle3")
    wants3 = algo in ("EAGLE3", "eagle3")
    if plan.inferred:
        out.append(Finding("info", "spec-method-inferred", f"--speculative-config has no "
                           f"\"method\": vLLM infers {algo!r} from the draft's name", flag))
    if wants3 and not plan.draft:
        what = ("SGLang then loads the target model as its own draft" if sglang else
                "vLLM needs the draft checkpoint in \"model\"")
        fix = ("add --speculative-draft-model-path PATH (the EAGLE-3 checkpoint)" if sglang
               else "add \"model\": \"PATH\" to --speculative-config")
        out.append(Finding("error", "spec-eagle3-no-draft", f"{flag} {algo} without a draft "
                           f"path: {what}", flag, fix))
    if draft_cfg is None or not eagle_family:
        return 3 * hidden if wants3 and hidden else None
    draft3 = is_eagle3_config(draft_cfg)
    width = f"{hidden} dims" if hidden else "its hidden size"
    triple = f"{3 * hidden}" if hidden else "3 × hidden size"
    if draft3 and not wants3:
        fix = ("--speculative-algorithm EAGLE3" if sglang else
               "\"method\": \"eagle3\" in --speculative-config")
        given = f"{flag} {algo}" if not plan.inferred else f"the inferred method {algo!r}"
        out.append(Finding(
            "error", "spec-eagle3-draft-as-eagle",
            f"{given} with an EAGLE-3 draft ({_arch(draft_cfg)} at {plan.draft}): use "
            f"{'EAGLE3' if sglang else 'eagle3'}. " + (
                f"With {algo} the target never captures the "
                f"three aux layers and hands the draft its final hidden state ({width}) instead "
                f"of their concatenation ({triple}); the draft's fc projection is then skipped "
                "without any error and acceptance length collapses to ~1.0 — slower than no "
                "speculation" if sglang else
                f"With {algo} vLLM (0.32, measured) refuses to start: it looks for an EAGLE-1 "
                "model of the draft (Eagle + its architecture) and finds none; an EAGLE-3 draft "
                f"needs the three aux layers' concatenation ({triple}), not the final hidden "
                f"state ({width})"), flag, fix))
    elif wants3 and not draft3:
        out.append(Finding(
            "error", "spec-eagle3-wrong-draft",
            f"{flag} {algo} with a draft that is not an EAGLE-3 checkpoint ({_arch(draft_cfg)} "
            f"at {plan.draft}: no Eagle3 architecture, eagle_config or draft_vocab_size)", flag,
            "use the EAGLE-3 draft, or the algorithm this draft was trained for"
            f" ({'EAGLE' if sglang else 'eagle'})"))
    if wants3 and hidden:
        out.append(Finding("info", "spec-hidden-width", f"expected hidden-state width: 3 × "
                           f"{hidden} = {3 * hidden} (the [EAGLE3-DEBUG] lines should show it)"))
        return 3 * hidden
    return None


def _aux_layers(cmd: ParsedCommand, plan: SpecPlan, model_cfg: dict[str, Any] | None,
                draft_cfg: dict[str, Any] | None) -> list[Finding]:
    """EAGLE-3 aux layer ids against the target's depth, with each engine's meaning."""
    if draft_cfg is None or model_cfg is None or plan.algorithm not in ("EAGLE3", "eagle3"):
        return []
    eagle = draft_cfg.get("eagle_config")
    ids_raw = eagle.get("eagle_aux_hidden_state_layer_ids") if isinstance(eagle, dict) else None
    layers = _int(_text_config(model_cfg).get("num_hidden_layers"))
    if not isinstance(ids_raw, list) or layers is None:
        return [Finding("info", "spec-aux-default", "the draft names no aux layer ids: the "
                        "engine captures the model's default layers")] if layers else []
    ids = [i for i in ids_raw if isinstance(i, int) and not isinstance(i, bool)]
    sglang = cmd.engine == "sglang"
    # SGLang captures the input of layer id+1, vLLM the input of layer id (both 0-based)
    limit = layers - 2 if sglang else layers - 1
    bad = [i for i in ids if i < 0 or i > limit]
    if bad:
        meaning = ("SGLang captures the input of layer id+1, so ids must be ≤ "
                   f"{limit} on this {layers}-layer target (vLLM reads the same ids as "
                   "layer id: ids made for vLLM are one too high here)" if sglang else
                   f"vLLM captures the input of layer id, so ids must be ≤ {limit} on this "
                   f"{layers}-layer target")
        return [Finding("error", "spec-aux-layers", f"EAGLE-3 aux layer ids {ids} do not fit: "
                        f"{meaning}; fewer than {len(ids)} hidden states are captured and the "
                        "draft's fc layer fails with a shape mismatch ('mat1 and mat2 shapes "
                        "cannot be multiplied')", "eagle_aux_hidden_state_layer_ids",
                        f"ids ≤ {limit} for {'SGLang' if sglang else 'vLLM'}")]
    if len(ids) != 3:
        return [Finding("warning", "spec-aux-count", f"{len(ids)} aux layer ids {ids}: "
                        "EAGLE-3 drafts are trained on 3")]
    return [Finding("info", "spec-aux-layers-ok", f"aux layer ids {ids} fit the {layers}-layer "
                    f"target ({'SGLang: input of id+1' if sglang else 'vLLM: input of id'})")]


def _draft_shape(cmd: ParsedCommand, plan: SpecPlan) -> list[Finding]:
    if cmd.engine != "sglang" or plan.algorithm not in ("EAGLE", "EAGLE3", "NEXTN"):
        if cmd.engine == "vllm" and plan.algorithm in ("eagle", "eagle3", "draft_model",
                                                        "ngram") and plan.draft_tokens is None:
            return [Finding("error", "spec-num-tokens", "--speculative-config has no "
                            "\"num_speculative_tokens\" (vLLM requires it)",
                            "--speculative-config", "add \"num_speculative_tokens\": 3")]
        return []
    steps, topk, ndt = plan.num_steps, plan.topk, plan.draft_tokens
    if steps is None and topk is None and ndt is None:
        return [Finding("info", "spec-auto-shape", "no --speculative-num-steps/-eagle-topk/"
                        "-num-draft-tokens: SGLang chooses them for the model (e.g. 3/1/4)")]
    out: list[Finding] = []
    for name, v in (("--speculative-num-steps", steps), ("--speculative-eagle-topk", topk),
                    ("--speculative-num-draft-tokens", ndt)):
        if v is not None and v < 1:
            out.append(Finding("error", "spec-shape-range", f"{name} {v}: must be ≥ 1", name))
    if out or steps is None or topk is None:
        return out
    if topk == 1 and ndt is not None and ndt != steps + 1:
        out.append(Finding("warning", "spec-draft-tokens-adjusted", f"--speculative-eagle-topk "
                           f"1 with --speculative-num-draft-tokens {ndt}: SGLang adjusts it to "
                           f"num-steps + 1 = {steps + 1}", "--speculative-num-draft-tokens",
                           f"--speculative-num-draft-tokens {steps + 1}"))
    elif ndt is not None and ndt > steps * topk + 1:
        out.append(Finding("error", "spec-draft-tokens-tree", f"--speculative-num-draft-tokens "
                           f"{ndt} exceeds the draft tree (num-steps × topk + 1 = "
                           f"{steps * topk + 1})", "--speculative-num-draft-tokens"))
    return out


def _host(cmd: ParsedCommand, facts: LintFacts) -> list[Finding]:
    out: list[Finding] = []
    sglang = cmd.engine == "sglang"
    port = _int(cmd.get("port")) or DEFAULT_PORT[cmd.engine]
    where = f" on {facts.host}" if facts.host else ""
    if facts.port_in_use:
        out.append(Finding("error", "port-in-use", f"port {port} is already in use{where} (the "
                           "server fails at the HTTP server with 'address already in use')",
                           "--port", "choose a free --port, or stop the server using it"))
    device = str(cmd.get("device") or "")
    if facts.cpu_build or device == "cpu":
        out.append(Finding("info", "gpu-not-applicable", "GPU checks: not applicable (a CPU "
                           "build or --device cpu)"))
        return out
    tp = _int(cmd.get("tp_size" if sglang else "tensor_parallel_size")) or 1
    if facts.gpus is None:
        note = facts.gpu_note or "no GPU information"
        out.append(Finding("info", "gpu-unknown", f"GPU checks skipped: {note}"))
        return out
    visible = _visible(cmd, facts.gpus)
    if tp > len(visible):
        out.append(Finding("error", "tp-too-large", f"tensor-parallel size {tp} but "
                           f"{len(visible)} GPU{'s' * (len(visible) != 1)} visible{where}",
                           "--tp-size" if sglang else "--tensor-parallel-size"))
    flag = "mem_fraction_static" if sglang else "gpu_memory_utilization"
    frac = _float(cmd.get(flag))
    if frac is None:
        frac = DEFAULT_MEM.get(cmd.engine)
    if frac is not None:
        typed = cmd.typed(flag) or ("--gpu-memory-utilization" if not sglang else
                                    "--mem-fraction-static")
        for g in visible[:tp]:
            if g.total_mib > 0 and g.free_mib / g.total_mib < frac:
                out.append(Finding(
                    "error" if g.free_mib / g.total_mib < frac - 0.05 else "warning",
                    "gpu-memory", f"GPU {g.index} ({g.name}): {g.free_mib / 1024:.1f} of "
                    f"{g.total_mib / 1024:.1f} GiB free ({g.free_mib / g.total_mib:.0%}), but "
                    f"{typed} {frac:g} asks for {frac:.0%} of it", typed,
                    "free the GPU, or lower " + typed))
    return out


def _visible(cmd: ParsedCommand, gpus: tuple[GpuFact, ...]) -> list[GpuFact]:
    env = dict(cmd.env)
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    if cvd is None:
        return list(gpus)
    wanted = [_int(x.strip()) for x in cvd.split(",") if x.strip()]
    return [g for g in gpus if g.index in wanted]


__all__ = ["LEVELS", "ConfigFact", "Finding", "GpuFact", "LintFacts", "LintResult", "SpecPlan",
           "is_eagle3_config", "lint", "spec_plan"]
