#!/bin/sh
# Install the Debian packages stvm needs that are missing, and nothing else: no system
# setting is changed. As root it installs them; otherwise it prints the exact command
# to run. Packages: build-essential, the Criterion test framework, libffi (FFI),
# gnuplot (the plots), pkg-config (the install check), clang and libclang-rt-14-dev
# (libFuzzer, libclang_rt.fuzzer-x86_64.a: the fuzz targets, mk/fuzz.mk).
# STVM_DEPS_EXTRA may name more.
set -eu
want="build-essential libcriterion-dev libffi-dev gnuplot-nox pkg-config clang libclang-rt-14-dev ${STVM_DEPS_EXTRA:-}"
missing=""
for p in $want; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -n "$missing" ] || exit 0
if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing packages:$missing"
    echo "install-deps: run as root:  apt-get update && apt-get install -y$missing"
    exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
