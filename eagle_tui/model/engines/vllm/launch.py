"""How vLLM is started and what its launch command must get right.

vLLM reads the speculative settings from one JSON flag (``--speculative-config '{"method":
"eagle3", "model": D, "num_speculative_tokens": 3}'``), whose keys may also be set one at a
time (``--speculative-config.method eagle3``); its parser takes ``_`` for ``-`` in options.
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
from eagle_tui.model.launching.flags import ParsedCommand, as_json
from eagle_tui.model.launching.remedy import Remedy, set_flag, set_key

_NEEDS_TOKENS = ("eagle", "eagle3", "draft_model", "ngram")


def read_plan(cmd: ParsedCommand) -> SpecPlan:
    """The method, draft and token count vLLM would use (the method inferred as vLLM does
    when ``--speculative-config`` leaves it out)."""
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
                    draft_tokens=as_int(spec.get("num_speculative_tokens")))


def method_inferred(c: LintInput) -> list[Finding]:
    if not c.plan.inferred or c.plan.algorithm is None:
        return []
    return [Finding("info", "spec-method-inferred", f"--speculative-config has no \"method\": "
                    f"vLLM infers {c.plan.algorithm!r} from the draft's name",
                    c.plan.algorithm_flag)]


eagle3_needs_draft = needs_draft(
    "eagle3", "vLLM needs the draft checkpoint in \"model\"",
    "add \"model\": \"PATH\" to --speculative-config")

def draft_fits_method(c: LintInput) -> list[Finding]:
    """``"method": "eagle"`` with an EAGLE-3 draft (and the other way round)."""
    algo, flag, draft_cfg = c.plan.algorithm, c.plan.algorithm_flag, c.draft_cfg
    if draft_cfg is None or algo not in ("eagle", "eagle3"):
        return []
    hidden = c.hidden
    wants3 = algo == "eagle3"
    draft3 = is_eagle3_config(draft_cfg)
    width = f"{hidden} dims" if hidden else "its hidden size"
    triple = f"{3 * hidden}" if hidden else "3 × hidden size"
    if draft3 and not wants3:
        given = f"{flag} {algo}" if not c.plan.inferred else f"the inferred method {algo!r}"
        return [Finding(
            "error", "spec-eagle3-draft-as-eagle",
            f"{given} with an EAGLE-3 draft ({arch(draft_cfg)} at {c.plan.draft}): use eagle3. "
            f"With {algo} vLLM (0.32, measured) refuses to start: it looks for an EAGLE-1 model "
            "of the draft (Eagle + its architecture) and finds none; an EAGLE-3 draft needs the "
            f"three aux layers' concatenation ({triple}), not the final hidden state ({width})",
            flag, "\"method\": \"eagle3\" in --speculative-config", method_remedy(c.cmd, "eagle3"))]
    if wants3 and not draft3:
        return [Finding(
            "error", "spec-eagle3-wrong-draft",
            f"{flag} {algo} with a draft that is not an EAGLE-3 checkpoint ({arch(draft_cfg)} "
            f"at {c.plan.draft}: no Eagle3 architecture, eagle_config or draft_vocab_size)", flag,
            "use the EAGLE-3 draft, or the algorithm this draft was trained for (eagle)",
            # only an EAGLE(-1) draft is certainly fixed by the method; another needs its own
            method_remedy(c.cmd, "eagle") if "eagle" in arch(draft_cfg).lower() else None)]
    return []


def aux_layer_ids(c: LintInput) -> list[Finding]:
    # vLLM captures the input of layer id (0-based), so the last usable id is layers - 1
    return aux_layers(
        c, skip=1, meaning="vLLM captures the input of layer id, so ids must be ≤ {limit} on "
        "this {layers}-layer target", fix="ids ≤ {limit} for vLLM", reading="vLLM: input of id")


def num_tokens(c: LintInput) -> list[Finding]:
    if c.plan.algorithm not in _NEEDS_TOKENS or c.plan.draft_tokens is not None:
        return []
    return [Finding("error", "spec-num-tokens", "--speculative-config has no "
                    "\"num_speculative_tokens\" (vLLM requires it)", "--speculative-config",
                    "add \"num_speculative_tokens\": 3", _tokens_remedy(c.cmd))]


def gpu_count(cmd: ParsedCommand) -> int:
    """GPUs on one node: tensor × pipeline × the data-parallel ranks here (``--data-parallel-
    size-local``, else all of them), a tensor/pipeline group spread over ``--nnodes``."""
    group = (as_int(cmd.get("tensor_parallel_size")) or 1) * \
        (as_int(cmd.get("pipeline_parallel_size")) or 1)
    local = as_int(cmd.get("data_parallel_size_local"))
    if local is not None:
        return group * local
    nodes = max(1, as_int(cmd.get("nnodes")) or 1)
    return -(-group * (as_int(cmd.get("data_parallel_size")) or 1) // nodes)


def method_remedy(cmd: ParsedCommand | None, method: str) -> Remedy:
    """Set the method where the command gives it: the JSON (or its dotted keys), else
    ``--spec-method`` when that is how it was given (the JSON wins over it, as in vLLM)."""
    title = f"run the draft as {method}"
    if cmd is not None and cmd.has("spec_method") and not cmd.has("speculative_config"):
        return set_flag("--spec-method", method, title)
    return set_key("--speculative-config", "method", method, title)


def _tokens_remedy(cmd: ParsedCommand) -> Remedy:
    if cmd.has("spec_method") and not cmd.has("speculative_config"):
        return set_flag("--spec-tokens", "3", "speculate 3 tokens")
    return set_key("--speculative-config", "num_speculative_tokens", 3, "speculate 3 tokens")


LAUNCH = LaunchFacet(
    modules=("vllm.entrypoints.api_server",),
    module_prefixes=("vllm.entrypoints.openai.api_server",),
    serve_modules=("vllm", "vllm.entrypoints.cli.main"),
    scripts=("vllm",),
    usage=("vllm serve", "python -m vllm.entrypoints.openai.api_server"),
    process_titles=("VLLM",),  # its workers are titled ``VLLM::EngineCore``, ...
    flag_table="vllm",
    underscores=True,  # its FlexibleArgumentParser
    dotted=True,
    model_dest="model",
    model_positional=True,  # ``vllm serve MODEL``
    model_flag="model",
    mem_dest="gpu_memory_utilization",
    mem_flag="--gpu-memory-utilization",
    mem_default=0.9,
    cpu_env=(("VLLM_TARGET_DEVICE", "cpu"),),
    read_plan=read_plan,
    eagle3_remedy=method_remedy(None, "eagle3"),
    gpu_count=gpu_count,
    images=(("vllm/vllm-openai", ("vllm", "serve")),),  # its ENTRYPOINT: the words are flags
    rules=(method_inferred, eagle3_needs_draft, draft_fits_method, hidden_width, aux_layer_ids,
           num_tokens),
)

__all__ = ["LAUNCH", "gpu_count", "method_remedy", "read_plan"]
