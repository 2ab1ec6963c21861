#!/usr/bin/env bash
# The tail scenario on the GPU machine (no network), from the repository root, run from source:
#   .whl/          eagle-tui's dependencies as wheels for that machine's Python (the device
#                  manual's `pip download` line), installed into /tmp/site;
#   .gl/peers/     lnav and toolong (benchmarks/peers/prepare.sh), set up by its setup.sh;
#   .gl/base.tgz   the baseline: `git archive --format=tar.gz -o .gl/base.tgz REV eagle_tui themes`.
# Five interleaved rounds, 3 + 2 side by side; the outputs go to $OUT (default .): tail-a.txt,
# tail-b.txt. Usage: bash benchmarks/peers/run_tail.sh
set -u
out=${OUT:-.}
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
bash .gl/peers/setup.sh > "$out/setup.log" 2>&1 || { tail "$out/setup.log"; exit 1; }
mkdir -p /tmp/base && tar -xzf .gl/base.tgz -C /tmp/base
# not installed: the top-level themes/ is the package eagle_tui.themes only in a wheel
ln -sfn ../themes eagle_tui/themes
ln -sfn ../themes /tmp/base/eagle_tui/themes
for d in . /tmp/base; do
    (cd "$d" && python3 -c "import importlib.resources as r; r.files('eagle_tui.themes')") \
        || exit 1
done
uptime; nproc; tmux -V; python3 -c "import sys, textual; print(sys.version, textual.__version__)"
common=(--only tail --side-by-side --no-install --lnav /tmp/lnav-root/lnav
        --toolong-venv /tmp/toolong-venv --idle-seconds 60 --baseline /tmp/base)
python3 benchmarks/bench_viewers.py "${common[@]}" --repeat 3 > "$out/tail-a.txt" 2>&1 &
sleep 2
python3 benchmarks/bench_viewers.py "${common[@]}" --repeat 2 > "$out/tail-b.txt" 2>&1
wait
rm -f eagle_tui/themes
grep -A7 "median" "$out/tail-a.txt" "$out/tail-b.txt"
