#!/bin/sh
# examples/chat.c against real clients (make check): for each driver (plain stvm_run,
# then a libuv loop started as docs/io.md's recipe says, with no run of its own first),
# start the server on a free port, run scripts/chat-client.py (Python's socket module:
# a half-close, twenty clients at once, an idle client), stop the server with SIGTERM
# and check its summary line: no error, and every check passed.
#   chat-check.sh CHAT_BINARY
set -eu
chat=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
pid=
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM
idle=700
for driver in plain uv; do
    flag=; [ $driver = uv ] && flag=--uv
    "$chat" --port 0 $flag --idle-ms $idle --tick-ms 100 --max-seconds 60 \
        > "$tmp/out" 2> "$tmp/err" &
    pid=$!
    port=
    for _ in $(seq 100); do
        port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$tmp/out")
        [ -n "$port" ] && break
        sleep 0.05
    done
    [ -n "$port" ] || { echo "chat-check: $driver: the server did not start"; cat "$tmp/err"; exit 1; }
    if ! python3 "$here/chat-client.py" "$port" $idle; then
        echo "chat-check: $driver: the clients failed; the server said:"; cat "$tmp/err"; exit 1
    fi
    kill -TERM "$pid"
    wait "$pid" || true
    pid=
    summary=$(grep '^summary:' "$tmp/out" || true)
    echo "chat-check: $driver: $summary"
    case $summary in
    *" errors=0 failures=0") ;;
    *) echo "chat-check: $driver: the server reported errors:"; cat "$tmp/err"; exit 1 ;;
    esac
done
