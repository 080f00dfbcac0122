#!/bin/sh
# make check's test of examples/libuv_host against real clients, loopback only: for the
# plain driver and the uv driver in both run modes, start the server on a free port,
# wait for its "listening on" line, make 20 requests with curl (10 connections of one
# request, then one connection of 10: keep-alive), run wrk -t1 -c8 -d1s, send SIGINT
# and check that it exits 0 within 2 s with its summary line. Every step is bounded in
# time; the server is killed on every exit path.
#
#   sh scripts/libuv-host-check.sh build/examples/libuv_host
set -eu
bin=${1:?usage: libuv-host-check.sh PATH/TO/libuv_host}
[ -x "$bin" ] || { echo "libuv-host-check: $bin is not built"; exit 1; }
for tool in curl wrk; do
    command -v "$tool" > /dev/null ||
        { echo "libuv-host-check: $tool is missing (scripts/install-deps.sh)"; exit 1; }
done

# shellcheck source=scripts/libuv-host-server.sh
. "$(dirname "$0")/libuv-host-server.sh"

fail() {
    echo "libuv-host-check: FAIL ($label): $*"
    for f in "$tmp/out" "$tmp/err"; do
        [ -s "$f" ] && { echo "--- server $(basename "$f"):"; tail -n 20 "$f"; }
    done
    exit 1
}

check_one() {
    label=$*
    # --max-seconds: if this script is killed where no trap runs, the server still ends.
    server_start --max-seconds 60 "$@"
    server_requests 5
    # The keep-alive curl must reuse its first connection (num_connects 0 after it).
    [ "$fresh" = 1 ] || fail "keep-alive curl opened $fresh connections for 10 requests, not 1"

    timeout 10 wrk -t1 -c8 -d1s "$url" > "$tmp/wrk" 2>&1 || fail "wrk failed: $(cat "$tmp/wrk")"
    reqs=$(awk '/requests in/ {print $1}' "$tmp/wrk")
    [ -n "$reqs" ] && [ "$reqs" -gt 0 ] || fail "wrk made no request: $(cat "$tmp/wrk")"
    ! grep -q 'Non-2xx' "$tmp/wrk" || fail "wrk saw answers other than 200: $(cat "$tmp/wrk")"
    ! grep -q 'Socket errors' "$tmp/wrk" || fail "wrk saw socket errors: $(cat "$tmp/wrk")"

    server_stop 20
    summary=$(grep '^summary: ' "$tmp/out") || fail "no summary line"
    echo "$summary" | grep -q ' ended-by=signal$' || fail "not ended by the signal: $summary"
    served=$(echo "$summary" | sed -n 's/.* requests=\([0-9]*\) .*/\1/p')
    [ "$served" -ge $((20 + reqs)) ] ||
        fail "served $served requests, curl and wrk made $((20 + reqs))"
    [ ! -s "$tmp/err" ] || fail "the server wrote to stderr"
    echo "libuv-host-check: ok ($label): 20 curl requests, wrk $reqs requests in 1 s; $summary"
}

check_one --driver plain
check_one --driver uv --run-mode nowait
check_one --driver uv --run-mode once
echo "libuv-host-check: all passed"
