# Sourced by scripts/libuv-host-check.sh, scripts/host-loop-bench.sh and
# scripts/valgrind-examples.sh: the one way to run examples/libuv_host as a server on a
# free loopback port, ask it what a real client asks, wait for it to end, and kill it on
# every exit path. The sourcing script sets bin (the example's path) and
# defines fail MESSAGE (print and exit non-zero); the server's output is in $tmp/out
# and $tmp/err.

tmp=$(mktemp -d)
pid=""
server_cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2> /dev/null; then
        kill -KILL "$pid" 2> /dev/null || true
        wait "$pid" 2> /dev/null || true
    fi
    pid=""
    rm -rf "$tmp"
}
trap server_cleanup EXIT
trap 'server_cleanup; exit 130' INT
trap 'server_cleanup; exit 143' TERM
trap 'server_cleanup; exit 129' HUP

# Start the server with the options given (--port 0 first: a free port) and wait at
# most 5 s for its "listening on" line; sets pid and port.
server_start() {
    : > "$tmp/out"
    : > "$tmp/err"
    "$bin" --port 0 "$@" > "$tmp/out" 2> "$tmp/err" &
    pid=$!
    i=0
    while ! grep -q '^listening on 127\.0\.0\.1:[0-9]*$' "$tmp/out" 2> /dev/null; do
        kill -0 "$pid" 2> /dev/null || fail "the server ($*) exited before listening"
        i=$((i + 1))
        [ "$i" -le 50 ] || fail "no 'listening on' line within 5 s ($*)"
        sleep 0.1
    done
    port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$tmp/out" | head -n 1)
}

# What a real client asks of the server started: 10 requests on 10 connections, each
# curl given at most $1 s, then 10 on one keep-alive connection (10 s): each answer
# "hello, world" with 200. Sets url, and fresh: the connections the keep-alive curl
# opened (1 when it kept its first).
server_requests() {
    limit=$1
    url="http://127.0.0.1:$port/"
    n=0
    while [ "$n" -lt 10 ]; do
        body=$(curl -sS --max-time "$limit" "$url") || fail "curl request $((n + 1)) failed"
        [ "$body" = "hello, world" ] || fail "curl request $((n + 1)): unexpected body '$body'"
        n=$((n + 1))
    done
    set -- "$url" "$url" "$url" "$url" "$url" "$url" "$url" "$url" "$url" "$url"
    curl -sS --max-time 10 -o /dev/null -o /dev/null -o /dev/null -o /dev/null -o /dev/null \
        -o /dev/null -o /dev/null -o /dev/null -o /dev/null -o /dev/null \
        -w '%{http_code} %{num_connects}\n' "$@" > "$tmp/keepalive" ||
        fail "curl with 10 requests on one connection failed"
    ok=$(grep -c '^200 ' "$tmp/keepalive" || true)
    [ "$ok" = 10 ] || fail "keep-alive curl: $ok of 10 answers were 200"
    fresh=$(awk '$2 > 0' "$tmp/keepalive" | wc -l)
}

# Wait at most $1 tenths of a second for the server to end, and require exit status 0.
# Tenths, so that no fractional sleep is needed beyond sleep 0.1.
server_wait() {
    i=0
    while kill -0 "$pid" 2> /dev/null; do
        i=$((i + 1))
        [ "$i" -le "$1" ] || fail "the server is still running after $(($1 / 10)) s"
        sleep 0.1
    done
    rc=0
    wait "$pid" || rc=$?
    pid=""
    [ "$rc" = 0 ] || fail "the server exited with status $rc"
}

# Stop it as a user would (SIGINT: its handler calls stvm_stop), within $1 tenths.
server_stop() {
    kill -INT "$pid"
    server_wait "$1"
}
