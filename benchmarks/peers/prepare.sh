#!/usr/bin/env bash
# Gathers the viewers' peers for a machine with no network (the GPU machine) into DEST
# (default .gl/peers, which git ignores; carry it), on a Debian 12 machine with network:
#   debs/     lnav 0.11.1 (Debian's package), the packages of the libraries it links (its ldd
#             closure on Debian 12, libc6 left out: the target's own glibc >= 2.36 serves) and
#             ncurses-base (terminfo);
#   toolong/  toolong 1.5.0 and its dependencies as wheels (it pins Textual 0.58: its own venv);
#   pip/      a pip wheel, to install them into a venv made without pip;
#   setup.sh  this folder's setup.sh, which installs them there into /tmp.
# Usage: bash benchmarks/peers/prepare.sh [DEST]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-$here/../../.gl/peers}
mkdir -p "$dest/debs" "$dest/toolong" "$dest/pip"
dest=$(cd "$dest" && pwd)
(cd "$dest/debs" && apt-get download lnav ncurses-base libacl1 libarchive13 libbrotli1 \
    libbz2-1.0 libcom-err2 libcurl3-gnutls libffi8 libgcc-s1 libgmp10 libgnutls30 \
    libgssapi-krb5-2 libhogweed6 libicu72 libidn2-0 libk5crypto3 libkeyutils1 libkrb5-3 \
    libkrb5support0 libldap-2.5-0 liblz4-1 liblzma5 libncursesw6 libnettle8 libnghttp2-14 \
    libp11-kit0 libpcre2-8-0 libpsl5 libreadline8 librtmp1 libsasl2-2 libsqlite3-0 libssh2-1 \
    libssl3 libstdc++6 libtasn1-6 libtinfo6 libunistring2 libxml2 libzstd1 zlib1g)
py=${PYTHON:-python3}
"$py" -m pip download -q toolong==1.5.0 --python-version 3.12 --implementation cp \
    --only-binary=:all: --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_28_x86_64 -d "$dest/toolong"
"$py" -m pip download -q pip --no-deps --only-binary=:all: -d "$dest/pip"
cp "$here/setup.sh" "$dest/setup.sh"
du -sh "$dest"/*; du -sh "$dest"
