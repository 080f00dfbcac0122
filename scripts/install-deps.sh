#!/bin/sh
# Install the Debian packages stvm needs that are missing, and nothing else: no system
# setting is changed, no service is started, and no service is left enabled that was not
# enabled before. As root it installs them; otherwise it prints the exact command to run
# and exits non-zero. Packages: build-essential, the Criterion test framework, libffi
# (FFI), gnuplot (the plots), pkg-config (the install check), nginx and wrk (the HTTP
# harness, experiments/znclient/harness/: it starts its own nginx as the current user,
# wrk is the baseline), curl (a real HTTP client used by a check), python3
# (tests/trace_check.py, run by the trace, bench and lab tests, and the experiments'
# report scripts), libuv1-dev (the libuv host-loop example),
# clang and libclang-rt-14-dev (libFuzzer, libclang_rt.fuzzer-x86_64.a: the fuzz
# targets, mk/fuzz.mk), libbenchmark-tools and python3-scipy (Google Benchmark's
# compare.py, /usr/share/benchmark/compare.py, which make check runs on two stvm-bench
# exports), man-db and groff-base (`man -l` and groff, which render the manual pages
# under man/ for scripts/man-check.sh), chromium (Debian's browser, run headless by
# tests/lab_html_browser.py: the lab's HTML timeline in a real browser), valgrind
# (its <valgrind/valgrind.h>, with which the library registers each green stack, and
# memcheck, which make valgrind-check runs over the examples; callgrind for make
# switch-count), gdb (make gdb-check runs the library's gdb extension on a deadlocked
# example and its core file; build-essential does not bring it),
# gcc-aarch64-linux-gnu, libc6-dev-arm64-cross and qemu-user with the arm64 builds of
# libffi-dev, libuv1-dev and libgit2-1.5 (make check-aarch64, mk/aarch64.mk: the
# aarch64 back end cross-built and run under qemu-aarch64; the arm64 Criterion itself
# cannot be installed beside the amd64 one, so scripts/aarch64-criterion.sh unpacks it
# into the build tree instead, and libgit2-1.5 is what it needs from here). Installing
# an arm64 library upgrades its amd64 twin (a Multi-Arch: same package has one version
# on both) when the amd64 one is older. STVM_DEPS_EXTRA may name more.
#
# The arm64 packages are Debian multiarch ones: dpkg must know arm64 as a foreign
# architecture first. If it does not, this script adds it (dpkg --add-architecture
# arm64, before apt-get update) and says so; that is the one setting it changes, and only
# when an arm64 package is missing. It installs only on amd64 (on any other machine the
# :arm64 packages and the cross compiler would not be what mk/aarch64.mk expects, and
# they are left out with a message).
#
# --peers adds the peer programs' group, which nothing else installs (make bench-peers
# asks for it; make setup and make check do not): golang-go, erlang-nox and libuv1-dev,
# for experiments/peers/ (Go, Erlang and libuv builds of the DelayBenchmark workload).
#
# Every package is checked with dpkg-query, not by looking for a command on PATH: a
# python3 from pyenv or a hand-built nginx on a developer's machine is not what a bare
# Debian machine has, and the tests must not depend on it.
#
# Services. Installing a package that ships a service (nginx) does two things:
#  1. it would start the service now, through invoke-rc.d. While packages are installed,
#     Debian's /usr/sbin/policy-rc.d must answer 101 ("action forbidden"): if there is
#     none, this script puts one there for the duration of the install and removes it
#     afterwards; if there is one that would let nginx start, it refuses to install.
#  2. it enables the service for the next boot (a systemd wants-symlink made by
#     deb-systemd-helper, /etc/rc?.d/S* links made by update-rc.d). policy-rc.d does not
#     prevent that. So the enabled units are listed before and after the install, and
#     any unit the install newly enabled is disabled again with `deb-systemd-helper
#     disable` and `update-rc.d NAME disable`. Both record the choice (deb-systemd-helper's
#     state, K links in place of S links), so a later upgrade of the package does not
#     enable it again. A unit that was enabled before the install is left as it was.
set -eu
me=install-deps
peers=""
for arg in "$@"; do
    case $arg in
    --peers) peers="golang-go erlang-nox libuv1-dev" ;;
    *) echo "$me: unknown option '$arg' (known: --peers)"; exit 2 ;;
    esac
done
want="build-essential libcriterion-dev libffi-dev gnuplot-nox pkg-config nginx wrk curl"
want="$want python3 libuv1-dev clang libclang-rt-14-dev libbenchmark-tools python3-scipy"
want="$want man-db groff-base chromium valgrind gdb $peers ${STVM_DEPS_EXTRA:-}"
if [ "$(dpkg --print-architecture)" = amd64 ]; then
    want="$want gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user"
    want="$want libffi-dev:arm64 libuv1-dev:arm64 libgit2-1.5:arm64"
else
    echo "$me: not an amd64 machine: the aarch64 cross-build packages are left out (make check-aarch64 needs them)"
fi
missing=""
for p in $want; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -n "$missing" ] || exit 0
policy=/usr/sbin/policy-rc.d
if [ "$(id -u)" != 0 ]; then
    echo "$me: missing packages:$missing"
    echo "$me: run as root:  sh scripts/install-deps.sh${peers:+ --peers}  (apt-get, with no service started or enabled)"
    exit 1
fi

tmp=$(mktemp -d)
made_policy=no
remove_policy() {
    if [ "$made_policy" = yes ]; then
        rm -f "$policy"
        made_policy=no
        echo "$me: removed the temporary $policy"
    fi
}
cleanup() { remove_policy; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
trap 'cleanup; exit 129' HUP

# What is enabled for boot: systemd's symlinks in the *.wants/*.requires folders under
# /etc/systemd/system (one per unit and target), and the S links of the rc folders.
enabled_units() {
    {
        find /etc/systemd/system -type l \( -path '*.wants/*' -o -path '*.requires/*' \) \
            -printf 'systemd %f\n' 2>/dev/null || true
        for l in /etc/rc?.d/S*; do
            [ -e "$l" ] || [ -L "$l" ] || continue
            # S01nginx -> nginx
            echo "sysv $(basename "$l" | sed 's/^S[0-9]*//')"
        done
    } | sort -u
}

if [ -e "$policy" ]; then
    # invoke-rc.d asks it "<service> <action>"; 101 means the action is forbidden.
    answer=0
    "$policy" nginx start >/dev/null 2>&1 || answer=$?
    if [ "$answer" != 101 ]; then
        echo "$me: $policy answers $answer (not 101) to 'nginx start', so installing"
        echo "$me: would start services (nginx's), which a build must not do."
        echo "$me: not installing:$missing"
        exit 1
    fi
    echo "$me: $policy (already present) answers 101: packages will not start services"
else
    printf '#!/bin/sh\n# stvm install-deps: no service starts during the install\nexit 101\n' > "$policy"
    chmod 755 "$policy"
    made_policy=yes
    echo "$me: wrote a temporary $policy answering 101, so packages start no service"
fi

enabled_units > "$tmp/before"
# The :arm64 packages need arm64 known to dpkg as a foreign architecture (multiarch).
case $missing in
*:arm64*)
    if ! dpkg --print-foreign-architectures | grep -qx arm64; then
        echo "$me: adding arm64 as a foreign dpkg architecture (dpkg --add-architecture arm64), for the :arm64 packages of make check-aarch64"
        dpkg --add-architecture arm64
    fi
    ;;
esac
echo "$me: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
remove_policy

# Undo what the install enabled (nginx.service and /etc/init.d/nginx, on Debian 12).
enabled_units > "$tmp/after"
comm -13 "$tmp/before" "$tmp/after" > "$tmp/new"
while read -r kind name; do
    case $kind in
    systemd)
        echo "$me: the install enabled $name for boot; disabling it (deb-systemd-helper disable $name)"
        if command -v deb-systemd-helper >/dev/null 2>&1; then
            # deb-systemd-helper runs only when it sees dpkg's DPKG_MAINTSCRIPT_PACKAGE
            # (it reads nothing else from it): name the package that owns the unit.
            unit=$(find /lib/systemd/system /usr/lib/systemd/system /etc/systemd/system \
                -maxdepth 1 -name "$name" -type f 2>/dev/null | head -n 1)
            owner=$( [ -z "$unit" ] || dpkg-query -S "$unit" 2>/dev/null | head -n 1 | cut -d: -f1)
            DPKG_MAINTSCRIPT_PACKAGE=${owner:-stvm-install-deps} deb-systemd-helper disable "$name"
        fi
        # Without deb-systemd-helper (or for a link it does not own) remove the link itself.
        find /etc/systemd/system -type l \( -path '*.wants/*' -o -path '*.requires/*' \) \
            -name "$name" -exec rm -f {} +
        ;;
    sysv)
        echo "$me: the install enabled /etc/init.d/$name for boot; disabling it (update-rc.d $name disable)"
        update-rc.d "$name" disable >/dev/null 2>&1 || true
        ;;
    esac
done < "$tmp/new"
enabled_units > "$tmp/final"
left=$(comm -13 "$tmp/before" "$tmp/final" | tr '\n' ' ')
if [ -n "$left" ]; then
    echo "$me: error: still enabled after the install, and not before it: $left"
    exit 1
fi
echo "$me: installed$missing; no service was started, and none is enabled that was not before"
