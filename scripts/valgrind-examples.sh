#!/bin/sh
# make valgrind-check (mk/valgrind.mk, part of make check): memcheck with its default
# options (--leak-check=full, and --error-exitcode=1 so that any error fails) over every
# example, then examples/libuv_host as a TCP server under memcheck answering a real
# client (curl: ten requests on ten connections, then ten on one keep-alive connection)
# with the plain driver, whose idle process sleeps in the aio wait: valgrind 3.19 does
# not implement epoll_pwait2, so this is also the library on a "kernel" without it
# (vm/aio.c falls back to epoll_wait). The server is stopped with SIGINT and must exit 0
# with 0 errors. Every step is bounded in time; the server is killed on every exit path.
#
#   sh scripts/valgrind-examples.sh BUILD/examples
set -eu
dir=${1:?usage: valgrind-examples.sh BUILD/examples}
me=valgrind-check
for tool in valgrind curl; do
    command -v "$tool" > /dev/null ||
        { echo "$me: $tool is missing (scripts/install-deps.sh)"; exit 1; }
done
vg="valgrind --error-exitcode=1 --leak-check=full"

# Each example alone: the errors valgrind counted, its exit status, the time it took.
# examples/deadlock deadlocks on purpose and exits 3 (STVM_EDEADLOCK); every other
# example exits 0. (--error-exitcode=1 tells an error apart from either.)
for e in "$dir"/*; do
    [ -x "$e" ] || continue
    want=0
    [ "$(basename "$e")" = deadlock ] && want=3
    log=$(mktemp)
    start=$(date +%s.%N)
    rc=0
    timeout 120 $vg --log-file="$log" "$e" > /dev/null || rc=$?
    took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$log" | tail -n 1)
    if [ "$rc" != "$want" ] || [ "${errors:-x}" != 0 ]; then
        echo "$me: FAIL $e: exit status $rc (not $want), ${errors:-no} errors; memcheck said:"
        grep -v '^==[0-9]*== *$' "$log" | head -n 60
        rm -f "$log"
        exit 1
    fi
    rm -f "$log"
    echo "$me: $(basename "$e"): 0 errors (${took} s)"
done

# The TCP server under memcheck, with a real client. libuv-host-server.sh starts
# "$bin", so bin is a two-line wrapper that execs valgrind (the signal then reaches the
# server itself).
server=$dir/libuv_host
[ -x "$server" ] || { echo "$me: $server is not built"; exit 1; }
fail() {
    echo "$me: FAIL (the TCP server under memcheck): $*"
    for f in "$tmp/out" "$tmp/err" "$tmp/vg"; do
        [ -s "$f" ] && { echo "--- $(basename "$f"):"; tail -n 30 "$f"; }
    done
    exit 1
}
# shellcheck source=scripts/libuv-host-server.sh
. "$(dirname "$0")/libuv-host-server.sh"
bin=$tmp/server
printf '#!/bin/sh\nexec %s --log-file=%s %s "$@"\n' "$vg" "$tmp/vg" "$server" > "$bin"
chmod +x "$bin"
start=$(date +%s.%N)
# 20 s: a limit if this script is killed where no trap runs; memcheck starts in ~1 s.
server_start --max-seconds 20 --driver plain
server_requests 10
server_stop 100
summary=$(grep '^summary: ' "$tmp/out") || fail "no summary line"
echo "$summary" | grep -q ' ended-by=signal$' || fail "not ended by the signal: $summary"
served=$(echo "$summary" | sed -n 's/.* requests=\([0-9]*\) .*/\1/p')
[ "$served" = 20 ] || fail "served $served requests, curl made 20"
errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$tmp/vg" | tail -n 1)
[ "${errors:-x}" = 0 ] || fail "memcheck counted ${errors:-no} errors"
took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
echo "$me: libuv_host --driver plain under memcheck answered curl's 20 requests: 0 errors (${took} s); $summary"
echo "$me: all passed"
