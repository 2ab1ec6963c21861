"""How SGLang is started and what its launch command must get right.

SGLang reads the speculative settings from plain flags (``--speculative-algorithm EAGLE3
--speculative-draft-model-path D --speculative-num-steps ...``) and its own argparse, which
accepts any unambiguous prefix of an option.
"""

from __future__ import annotations

from eagle_tui.model.engines.facets.launch import LaunchFacet
from eagle_tui.model.launching.checks import (
    Finding,
    LintInput,
    SpecPlan,
    arch,
    as_int,
    aux_layers,
    hidden_width,
    is_eagle3_config,
    needs_draft,
)
from eagle_tui.model.launching.flags import ParsedCommand
from eagle_tui.model.launching.remedy import Remedy, set_flag

ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "DFLASH", "UNO", "DSPARK",
              "FROZEN_KV_MTP")
_EAGLE_FAMILY = ("EAGLE", "NEXTN", "EAGLE3")


def read_plan(cmd: ParsedCommand) -> SpecPlan:
    """The algorithm, draft and draft shape SGLang would use for this command."""
    algo = cmd.get("speculative_algorithm")
    return SpecPlan(
        algorithm=str(algo).upper() if algo else None,
        algorithm_flag=cmd.typed("speculative_algorithm") or "--speculative-algorithm",
        draft=cmd.get("speculative_draft_model_path"),
        num_steps=as_int(cmd.get("speculative_num_steps")),
        topk=as_int(cmd.get("speculative_eagle_topk")),
        draft_tokens=as_int(cmd.get("speculative_num_draft_tokens")))


def known_algorithm(c: LintInput) -> list[Finding]:
    algo, flag = c.plan.algorithm, c.plan.algorithm_flag
    if algo is None or algo in ALGORITHMS:
        return []
    return [Finding("error", "spec-unknown-algorithm", f"{flag} {algo}: SGLang knows "
                    f"{', '.join(ALGORITHMS[:5])} (it raises 'Unknown speculative algorithm "
                    "name')", flag)]


eagle3_needs_draft = needs_draft(
    "EAGLE3", "SGLang then loads the target model as its own draft",
    "add --speculative-draft-model-path PATH (the EAGLE-3 checkpoint)")

def draft_fits_algorithm(c: LintInput) -> list[Finding]:
    """EAGLE vs EAGLE3: an EAGLE-3 draft run as EAGLE runs, answers right, and is useless."""
    algo, flag, draft_cfg = c.plan.algorithm, c.plan.algorithm_flag, c.draft_cfg
    if draft_cfg is None or algo not in _EAGLE_FAMILY:
        return []
    hidden = c.hidden
    wants3 = algo == "EAGLE3"
    draft3 = is_eagle3_config(draft_cfg)
    width = f"{hidden} dims" if hidden else "its hidden size"
    triple = f"{3 * hidden}" if hidden else "3 × hidden size"
    if draft3 and not wants3:
        return [Finding(
            "error", "spec-eagle3-draft-as-eagle",
            f"{flag} {algo} with an EAGLE-3 draft ({arch(draft_cfg)} at {c.plan.draft}): use "
            f"EAGLE3. With {algo} the target never captures the three aux layers and hands the "
            f"draft its final hidden state ({width}) instead of their concatenation ({triple}); "
            "the draft's fc projection is then skipped without any error and acceptance length "
            "collapses to ~1.0 — slower than no speculation", flag,
            "--speculative-algorithm EAGLE3", algorithm_remedy("EAGLE3"))]
    if wants3 and not draft3:
        return [Finding(
            "error", "spec-eagle3-wrong-draft",
            f"{flag} {algo} with a draft that is not an EAGLE-3 checkpoint ({arch(draft_cfg)} "
            f"at {c.plan.draft}: no Eagle3 architecture, eagle_config or draft_vocab_size)", flag,
            "use the EAGLE-3 draft, or the algorithm this draft was trained for (EAGLE)",
            # only an EAGLE(-1) draft is certainly fixed by the algorithm; another needs its own
            algorithm_remedy("EAGLE") if "eagle" in arch(draft_cfg).lower() else None)]
    return []


def gpu_count(cmd: ParsedCommand) -> int:
    """GPUs on one node: tensor × pipeline × data-parallel replicas (attention DP runs inside
    the tensor-parallel group and adds none), over ``--nnodes``."""
    size = (as_int(cmd.get("tp_size")) or 1) * (as_int(cmd.get("pp_size")) or 1)
    if not cmd.get("enable_dp_attention"):
        size *= as_int(cmd.get("dp_size")) or 1
    nodes = max(1, as_int(cmd.get("nnodes")) or 1)
    return -(-size // nodes)


def algorithm_remedy(algorithm: str) -> Remedy:
    """Run the draft as ``algorithm``: the fix of a draft/algorithm mismatch."""
    return set_flag("--speculative-algorithm", algorithm, f"run the draft as {algorithm}")


def aux_layer_ids(c: LintInput) -> list[Finding]:
    # SGLang captures the input of layer id+1 (0-based), so the last usable id is layers - 2
    return aux_layers(
        c, skip=2, meaning="SGLang captures the input of layer id+1, so ids must be ≤ {limit} "
        "on this {layers}-layer target (vLLM reads the same ids as layer id: ids made for vLLM "
        "are one too high here)", fix="ids ≤ {limit} for SGLang", reading="SGLang: input of id+1")


def draft_shape(c: LintInput) -> list[Finding]:
    """``--speculative-num-steps``/``-eagle-topk``/``-num-draft-tokens`` against each other."""
    plan = c.plan
    if plan.algorithm not in ("EAGLE", "EAGLE3", "NEXTN"):
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
                           f"--speculative-num-draft-tokens {steps + 1}",
                           set_flag("--speculative-num-draft-tokens", str(steps + 1))))
    elif ndt is not None and ndt > steps * topk + 1:
        out.append(Finding("error", "spec-draft-tokens-tree", f"--speculative-num-draft-tokens "
                           f"{ndt} exceeds the draft tree (num-steps × topk + 1 = "
                           f"{steps * topk + 1})", "--speculative-num-draft-tokens",
                           f"--speculative-num-draft-tokens {steps * topk + 1}",
                           set_flag("--speculative-num-draft-tokens", str(steps * topk + 1))))
    return out


LAUNCH = LaunchFacet(
    modules=("sglang.launch_server", "sglang.srt.server"),
    serve_modules=("sglang",),
    scripts=("sglang",),
    usage=("python -m sglang.launch_server", "sglang serve"),
    flag_table="sglang",
    model_dest="model_path",
    model_flag="--model-path",
    tp_dest="tp_size",
    tp_flag="--tp-size",
    mem_dest="mem_fraction_static",  # no default: SGLang chooses it itself when not given
    mem_flag="--mem-fraction-static",
    cpu_env=(("SGLANG_USE_CPU_ENGINE", "1"),),
    read_plan=read_plan,
    eagle3_remedy=algorithm_remedy("EAGLE3"),
    host_default="127.0.0.1",
    gpu_count=gpu_count,
    images=(("lmsysorg/sglang", ()),),  # it runs the command given after the image
    rules=(known_algorithm, eagle3_needs_draft, draft_fits_algorithm, hidden_width,
           aux_layer_ids, draft_shape),
)

__all__ = ["ALGORITHMS", "LAUNCH", "algorithm_remedy", "gpu_count", "read_plan"]
