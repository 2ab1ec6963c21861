#!/usr/bin/env bash
# The viewers' peers on a machine with no network (the GPU machine), from this folder only:
#   lnav 0.11.1: Debian 12's .debs (debs/: lnav, the libraries it links, ncurses-base's
#     terminfo; not libc6), unpacked with `dpkg-deb -x` (or ar+tar, or Python) into LNAV_ROOT,
#     never installed; LNAV_ROOT/lnav is a wrapper that puts their libraries first.
#   toolong 1.5.0: its wheels (toolong/: it pins Textual 0.58, so its own venv) installed into
#     TOOLONG_VENV with the carried pip wheel (pip/), --no-index.
# Made by benchmarks/peers/prepare.sh. Usage, from the repository root (carry .gl/peers):
#   bash .gl/peers/setup.sh [LNAV_ROOT] [TOOLONG_VENV]     # default /tmp/lnav-root /tmp/toolong-venv
#   python benchmarks/bench_viewers.py --no-install --lnav /tmp/lnav-root/lnav \
#       --toolong-venv /tmp/toolong-venv ...
# Needs glibc >= 2.36 on the machine (the libraries' newest symbol version) and a python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${1:-/tmp/lnav-root}
venv=${2:-/tmp/toolong-venv}
py=${PYTHON:-python3}

unpack() {  # one .deb into $root
    if command -v dpkg-deb >/dev/null 2>&1; then
        dpkg-deb -x "$1" "$root"
    elif command -v ar >/dev/null 2>&1; then
        local t; t=$(mktemp -d)
        (cd "$t" && ar x "$1" && tar -xf data.tar.* -C "$root")
        rm -rf "$t"
    else  # a .deb is an ar archive holding data.tar.xz
        "$py" - "$1" "$root" <<'EOF'
import io, sys, tarfile
data = open(sys.argv[1], "rb").read()
pos = 8
while pos < len(data):
    name, size = data[pos:pos + 16].strip().decode(), int(data[pos + 48:pos + 58])
    body = data[pos + 60:pos + 60 + size]
    if name.startswith("data.tar"):
        tarfile.open(fileobj=io.BytesIO(body)).extractall(sys.argv[2])
    pos += 60 + size + size % 2
EOF
    fi
}

rm -rf "$root" && mkdir -p "$root"
for deb in "$here"/debs/*.deb; do unpack "$deb"; done
cat >"$root/lnav" <<EOF
#!/bin/sh
# lnav from Debian 12's packages unpacked here, with their libraries ahead of the system's
r=$root
export LD_LIBRARY_PATH="\$r/usr/lib/x86_64-linux-gnu:\$r/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export TERMINFO_DIRS="\${TERMINFO_DIRS:+\$TERMINFO_DIRS:}/etc/terminfo:/lib/terminfo:/usr/share/terminfo:\$r/lib/terminfo:\$r/usr/share/terminfo"
exec "\$r/usr/bin/lnav" "\$@"
EOF
chmod +x "$root/lnav"
missing=$(LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu:$root/lib/x86_64-linux-gnu" \
          ldd "$root/usr/bin/lnav" 2>&1 | grep "not found" || true)
[ -z "$missing" ] || { echo "setup.sh: lnav lacks: $missing" >&2; exit 1; }
echo "lnav: $(env -i HOME=/tmp "$root/lnav" -V) at $root/lnav"

rm -rf "$venv"
"$py" -m venv --without-pip "$venv"
pipwhl=$(ls "$here"/pip/pip-*.whl | head -1)
# a PYTHONPATH (the GPU machine's carried wheels for eagle-tui) would make pip take its Textual
# and Rich as installed and leave them out of the venv, where toolong runs without it
unset PYTHONPATH
"$venv/bin/python" "$pipwhl/pip" install -q --no-index --no-cache-dir --disable-pip-version-check \
    --find-links "$here/toolong" toolong==1.5.0
"$venv/bin/python" -c "import importlib.metadata as m; print('toolong', m.version('toolong'), \
'(Textual', m.version('textual') + ')', 'at $venv/bin/tl')"
[ -x "$venv/bin/tl" ]
