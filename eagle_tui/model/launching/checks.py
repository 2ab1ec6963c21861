"""The vocabulary of the lint, shared by the generic checks and each engine's own rules.

An engine's package gives its lint rules as functions ``LintInput -> list[Finding]``; this
module holds the types they take and return and the small readings of a checkpoint's
``config.json`` they share (EAGLE-3 markers, hidden size, aux layer ids). It imports no engine
and no registry, so an engine's package can import it without a cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from eagle_tui.model.launching.flags import ParsedCommand
from eagle_tui.model.launching.remedy import Remedy
from eagle_tui.model.record import Record, record

Level = Literal["error", "warning", "info"]
ConfigStatus = Literal["ok", "missing", "not-local", "unreadable"]
LEVELS: tuple[Level, ...] = ("error", "warning", "info")
_EAGLE3_MARKERS = ("eagle3",)


@record
class Finding(Record):
    """One result of the lint."""

    level: Level
    code: str
    message: str
    flag: str | None = None
    fix: str | None = None
    remedy: Remedy | None = None  # the fix as edits of the command, when it is certain


@record
class ConfigFact(Record):
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


@record
class LintFacts(Record):
    """What eagle-tui found out about the target host (``None``: not known, not checked)."""

    host: str = ""
    model: ConfigFact | None = None
    draft: ConfigFact | None = None
    port_in_use: bool | None = None
    free_port: int | None = None  # the next port up that nothing listens on (when in use)
    gpus: tuple[GpuFact, ...] | None = None
    gpu_note: str = ""  # why the GPUs are not known ("no NVIDIA driver", ...)
    cpu_build: bool = False


@record
class SpecPlan(Record):
    """The speculative settings the engine will use, read the engine's way."""

    algorithm: str | None  # the engine's own name of it (``EAGLE3``, ``eagle3``)
    algorithm_flag: str  # the option the user typed, for messages
    inferred: bool = False  # the engine infers the algorithm (from the draft's name)
    draft: str | None = None
    num_steps: int | None = None
    topk: int | None = None
    draft_tokens: int | None = None


@record
class LintInput(Record):
    """What one rule looks at: the command, its speculative plan, the host's facts and the
    configs that could be read (``None``: not read)."""

    cmd: ParsedCommand
    plan: SpecPlan
    facts: LintFacts
    model_cfg: dict[str, Any] | None
    draft_cfg: dict[str, Any] | None

    @property
    def hidden(self) -> int | None:
        """The target's hidden size, when its config was read."""
        return as_int(text_config(self.model_cfg).get("hidden_size")) if self.model_cfg else None


LintRule = Callable[[LintInput], list[Finding]]
PlanReader = Callable[[ParsedCommand], SpecPlan]


def no_plan(cmd: ParsedCommand) -> SpecPlan:
    """The plan of an engine that says nothing of how it speculates."""
    return SpecPlan(algorithm=None, algorithm_flag="")


def as_int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().lstrip("-").isdigit() and len(v) < 12:
        return int(v)
    return None


def as_float(v: Any) -> float | None:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str) and len(v) < 32:
        try:
            f = float(v)
        except ValueError:
            return None
        return f if f == f and abs(f) != float("inf") else None
    return None


def is_eagle3(plan: SpecPlan) -> bool:
    """The plan asks for EAGLE-3 (each engine spells it in its own case)."""
    return plan.algorithm is not None and plan.algorithm.lower() == "eagle3"


def is_eagle3_config(cfg: dict[str, Any]) -> bool:
    """EAGLE-3 markers in a draft's config (any one suffices: trainers mark drafts differently)."""
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


def text_config(cfg: dict[str, Any]) -> dict[str, Any]:
    inner = cfg.get("text_config")
    return inner if isinstance(inner, dict) and "hidden_size" in inner else cfg


def arch(cfg: dict[str, Any]) -> str:
    archs = cfg.get("architectures")
    return str(archs[0]) if isinstance(archs, list) and archs else "no architectures"


def expected_hidden(c: LintInput) -> int | None:
    """The hidden-state width an EAGLE-3 draft is fed: the concatenation of three layers'."""
    hidden = c.hidden
    return 3 * hidden if is_eagle3(c.plan) and hidden else None


def hidden_width(c: LintInput) -> list[Finding]:
    """What the debug lines of an EAGLE-3 run should show, once its draft's config was read (a
    rule engines may list)."""
    hidden = c.hidden
    if c.draft_cfg is None or not is_eagle3(c.plan) or not hidden:
        return []
    return [Finding("info", "spec-hidden-width", f"expected hidden-state width: 3 × {hidden} = "
                    f"{3 * hidden} (the [EAGLE3-DEBUG] lines should show it)")]


def needs_draft(algorithm: str, why: str, hint: str) -> LintRule:
    """A rule: ``algorithm`` given without a draft path is an error (``why`` the engine's
    consequence, ``hint`` where the path goes in its terms)."""

    def rule(c: LintInput) -> list[Finding]:
        algo, flag = c.plan.algorithm, c.plan.algorithm_flag
        if algo != algorithm or c.plan.draft:
            return []
        return [Finding("error", "spec-eagle3-no-draft", f"{flag} {algo} without a draft path: "
                        f"{why}", flag, hint)]

    return rule


def aux_layers(c: LintInput, *, skip: int, meaning: str, fix: str,
               reading: str) -> list[Finding]:
    """EAGLE-3 aux layer ids against the target's depth: an id must be ≤ layers - ``skip``
    (``meaning``, ``fix`` and ``reading`` say why in the engine's terms; ``{limit}`` and
    ``{layers}`` in them are filled in)."""
    if c.draft_cfg is None or c.model_cfg is None or not is_eagle3(c.plan):
        return []
    eagle = c.draft_cfg.get("eagle_config")
    ids_raw = eagle.get("eagle_aux_hidden_state_layer_ids") if isinstance(eagle, dict) else None
    layers = as_int(text_config(c.model_cfg).get("num_hidden_layers"))
    if not isinstance(ids_raw, list) or layers is None:
        return [Finding("info", "spec-aux-default", "the draft names no aux layer ids: the "
                        "engine captures the model's default layers")] if layers else []
    ids = [i for i in ids_raw if isinstance(i, int) and not isinstance(i, bool)]
    limit = layers - skip
    bad = [i for i in ids if i < 0 or i > limit]
    if bad:
        return [Finding("error", "spec-aux-layers", f"EAGLE-3 aux layer ids {ids} do not fit: "
                        f"{meaning.format(limit=limit, layers=layers)}; fewer than {len(ids)} "
                        "hidden states are captured and the draft's fc layer fails with a shape "
                        "mismatch ('mat1 and mat2 shapes cannot be multiplied')",
                        "eagle_aux_hidden_state_layer_ids", fix.format(limit=limit))]
    if len(ids) != 3:
        return [Finding("warning", "spec-aux-count", f"{len(ids)} aux layer ids {ids}: "
                        "EAGLE-3 drafts are trained on 3")]
    return [Finding("info", "spec-aux-layers-ok", f"aux layer ids {ids} fit the {layers}-layer "
                    f"target ({reading})")]


__all__ = ["LEVELS", "ConfigFact", "ConfigStatus", "Finding", "GpuFact", "Level", "LintFacts",
           "LintInput", "LintRule", "PlanReader", "SpecPlan", "arch", "as_float", "as_int",
           "aux_layers", "expected_hidden", "hidden_width", "is_eagle3", "is_eagle3_config",
           "no_plan", "text_config"]
