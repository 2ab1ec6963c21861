# Installed into the SGLang test venv by setup.sh. On a CPU without AMX, SGLang rewrites
# --attention-backend intel_amx to torch_native, which cannot verify drafts (speculative decoding
# then crashes at its first step). With SGLANG_CPU_FORCE_AMX=1 every Python process of this venv
# tells SGLang that AMX is there, so the server starts with its ordinary command line:
#   SGLANG_CPU_FORCE_AMX=1 python -m sglang.launch_server ... --device cpu \
#       --attention-backend intel_amx
import os

if os.environ.get("SGLANG_CPU_FORCE_AMX") == "1":
    try:
        from sglang.srt.runtime_context import override_platform
    except ImportError:  # not SGLang's venv, or an SGLang without the override: nothing to do
        override_platform = None
    if override_platform is not None:
        override_platform(has_amx=True).install()
