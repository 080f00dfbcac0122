#!/bin/sh
# Install the Debian packages stvm needs that are missing. As root it installs them;
# otherwise it prints the exact command to run. Packages: the Criterion test framework
# and libffi (tests, later FFI), gnuplot (the DelayBenchmark plot), pkg-config (the
# install check). STVM_DEPS_EXTRA may name more (e.g. nginx for the HTTP benchmark).
set -eu
want="build-essential libcriterion-dev libffi-dev gnuplot-nox pkg-config ${STVM_DEPS_EXTRA:-}"
missing=""
for p in $want; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then
        echo "install-deps: installing$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        # shellcheck disable=SC2086
        apt-get install -y -qq --no-install-recommends $missing >/dev/null
    else
        echo "install-deps: missing packages:$missing"
        echo "install-deps: run as root:  apt-get update && apt-get install -y$missing"
        exit 1
    fi
fi
# Each process stack is a mapping plus a guard page (two kernel map entries); the
# default limit of 65530 entries caps a VM near 32,000 processes. Raise it when we can.
want_maps=4194304
cur=$(cat /proc/sys/vm/max_map_count 2>/dev/null || echo "$want_maps")
if [ "$cur" -lt "$want_maps" ]; then
    if [ "$(id -u)" = 0 ] && sysctl -q -w vm.max_map_count=$want_maps 2>/dev/null; then
        echo "install-deps: raised vm.max_map_count from $cur to $want_maps"
    else
        echo "install-deps: note: vm.max_map_count is $cur; for more than ~30,000 processes run as root:"
        echo "install-deps:   sysctl -w vm.max_map_count=$want_maps"
    fi
fi
exit 0
