#!/usr/bin/env bash
# ROOT=DIR bash tests/realserver_sglang/setup.sh: build a CPU venv for a real SGLang 0.5.23 server
# in $ROOT (see README.md beside this file). ~5 min and ~3.2 GB the first time; tests/install.sh
# runs it once and marks $ROOT/.ready, so later runs reuse it.
#
# Everything comes from this repository and PyPI: the pure-PyTorch stand-in for SGLang's CPU
# kernels (sgl_kernel_torch_shim/), the venv's sitecustomize.py (CPU workarounds, so the server is
# started with the command line a user types), and the tiny models of tests/realserver/models
# (the EAGLE-3 draft with SGLang's layer ids, models/tiny-eagle3-sglang/config.json).
set -euo pipefail
ROOT=${ROOT:?set ROOT}
HERE=$(cd "$(dirname "$0")" && pwd)
MODELS=$HERE/../realserver/models
PY=${PYTHON:-python3}
mkdir -p "$ROOT"
"$PY" -m venv "$ROOT/venv"
"$ROOT/venv/bin/pip" install -q -U pip
# CPU wheel; sglang pins torch==2.14.1, whose PyPI build is CUDA: the pin is ignored on purpose.
"$ROOT/venv/bin/pip" install -q torch==2.13.0
# --no-deps: sglang's declared deps pull CUDA-only packages (flashinfer, cutlass, deep-ep, CUDA sgl-kernel).
"$ROOT/venv/bin/pip" install -q --no-deps sglang==0.5.23
grep -vE '^(sglang|torch|torchvision|sgl[-_]kernel)( |=|@)' "$HERE/pip-freeze.txt" | grep -vE '^\s*(#|$)' > "$ROOT/deps.txt"
"$ROOT/venv/bin/pip" install -q --no-deps -r "$ROOT/deps.txt"
# sglang imports torchvision at start; the PyPI build is CUDA, so without its compiled ops it
# crashes at import ("operator torchvision::nms does not exist") unless the fake kernels are guarded.
"$ROOT/venv/bin/pip" install -q --no-deps torchvision==0.28.0
SP=$("$ROOT/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
sed -i -E 's/^@torch\.library\.register_fake\("(torchvision::q?nms)"\)$/@(torch.library.register_fake("\1") if torchvision.extension._has_ops() else (lambda f: f))/' "$SP/torchvision/_meta_registrations.py"
rm -rf "$SP/sgl_kernel" && cp -r "$HERE/sgl_kernel_torch_shim/sgl_kernel" "$SP/"
find "$SP/sgl_kernel" -name __pycache__ -prune -exec rm -rf {} +
cp "$HERE/sitecustomize.py" "$SP/sitecustomize.py"   # SGLANG_CPU_FORCE_AMX=1 keeps intel_amx attention (spec decoding)
mkdir -p "$ROOT/models"
rm -rf "$ROOT/models/tiny-llama" "$ROOT/models/tiny-eagle3-sglang"
cp -r "$MODELS/tiny-llama" "$ROOT/models/"
cp -r "$MODELS/tiny-eagle3" "$ROOT/models/tiny-eagle3-sglang"
cp "$HERE/models/tiny-eagle3-sglang/config.json" "$ROOT/models/tiny-eagle3-sglang/"
"$ROOT/venv/bin/python" -c "import sglang, sgl_kernel, torch; print('sglang', sglang.__version__, 'torch', torch.__version__)"
