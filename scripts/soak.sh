#!/bin/sh
# make soak's long run of two examples under load (mk/soak.mk; docs/reliability.md,
# "Soak"), loopback only, every step bounded in time, both programs killed on every
# exit path:
#
#   - the libuv-hosted HTTP server (examples/libuv_host --driver uv), kept busy by
#     back-to-back 30 s runs of wrk -t1 -c8, its throughput wrk's requests/s;
#   - a queue example fed by threads (examples/thread_pool by default), run as
#     `EXAMPLE --soak SECONDS`: an example that takes that option works under load for
#     that long, prints "soak: items=N" (work done so far) at least every few seconds,
#     ends with status 0, and its throughput is the items done per second.
#
# Both run at once for SOAK_SECONDS (600). Every 30 s (SOAK_SAMPLE) the script samples
# each program's resident memory (VmRSS of /proc/PID/status), its open descriptors
# (/proc/PID/fd, the server's between two wrk runs, with no connection open) and its
# throughput over the sample, into build/soak.csv (t_s,program,rss_kib,fds,per_s).
#
# It fails on any error: a program that exits early or not with status 0, writes to
# stderr or prints no summary; wrk that sees socket errors or answers other than 200;
# a sample with no throughput; and on growth beyond noise. The rule: the first two
# samples of each program are its warm-up and are left out; of the rest, the last
# third's median RSS may exceed the first third's by at most 10% + 1 MiB, and its
# highest descriptor count may exceed the first third's highest by at most 2; and the
# last third's median throughput must be at least half the first third's. (With fewer
# than 3 samples left there is nothing to compare, and the script says so.)
#
#   sh scripts/soak.sh SERVER QUEUE_EXAMPLE [SECONDS]
set -eu
server=${1:?usage: soak.sh PATH/TO/libuv_host PATH/TO/queue_example [SECONDS]}
queue=${2:?usage: soak.sh PATH/TO/libuv_host PATH/TO/queue_example [SECONDS]}
seconds=${3:-${SOAK_SECONDS:-600}}
sample=${SOAK_SAMPLE:-30}
csv=${SOAK_CSV:-build/soak.csv}
for f in "$server" "$queue"; do
    [ -x "$f" ] || { echo "soak: $f is not built (make examples)"; exit 1; }
done
command -v wrk > /dev/null || { echo "soak: wrk is missing (scripts/install-deps.sh)"; exit 1; }
[ "$seconds" -ge "$sample" ] ||
    { echo "soak: SOAK_SECONDS ($seconds) below one sample ($sample s)"; exit 1; }

tmp=$(mktemp -d)
spid="" qpid=""
cleanup() {
    for p in $spid $qpid; do
        kill -KILL "$p" 2> /dev/null || true
        wait "$p" 2> /dev/null || true
    done
    spid="" qpid=""
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT
trap 'cleanup; exit 143' TERM
trap 'cleanup; exit 129' HUP

fail() {
    echo "soak: FAIL: $*"
    for f in "$tmp"/*.out "$tmp"/*.err; do
        [ -s "$f" ] && { echo "--- $(basename "$f"):"; tail -n 15 "$f"; }
    done
    exit 1
}

rss() { sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB$/\1/p' "/proc/$1/status" 2> /dev/null; }
fds() { ls "/proc/$1/fd" 2> /dev/null | wc -l; }
alive() { kill -0 "$1" 2> /dev/null; }

# The server, a margin past the soak so that it is still there for the last sample; it
# ends on SIGINT (its summary line) or, if this script is killed where no trap runs, by
# itself.
"$server" --port 0 --driver uv --run-mode nowait --max-seconds $((seconds + 120)) \
    > "$tmp/server.out" 2> "$tmp/server.err" &
spid=$!
i=0
while ! grep -q '^listening on 127\.0\.0\.1:[0-9]*$' "$tmp/server.out" 2> /dev/null; do
    alive "$spid" || fail "the server exited before listening"
    i=$((i + 1))
    [ "$i" -le 50 ] || fail "no 'listening on' line from the server within 5 s"
    sleep 0.1
done
port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$tmp/server.out" | head -n 1)
url="http://127.0.0.1:$port/"

# A margin past the last sample, so that it is still there to be sampled.
"$queue" --soak $((seconds + 15)) > "$tmp/queue.out" 2> "$tmp/queue.err" &
qpid=$!

echo "t_s,program,rss_kib,fds,per_s" > "$csv"
echo "soak: $seconds s, a sample every $sample s into $csv: the libuv-hosted server" \
    "(pid $spid, port $port) under wrk -t1 -c8, and $(basename "$queue") --soak (pid $qpid)"
start=$(date +%s)
t=0
last_items=0
while [ $((t + sample)) -le "$seconds" ]; do
    # Load for one sample: a wrk run as long as the sample, bounded in case it hangs.
    timeout $((sample + 15)) wrk -t1 -c8 -d"${sample}s" "$url" > "$tmp/wrk" 2>&1 ||
        fail "wrk failed: $(cat "$tmp/wrk")"
    ! grep -q 'Non-2xx' "$tmp/wrk" || fail "wrk saw answers other than 200: $(cat "$tmp/wrk")"
    ! grep -q 'Socket errors' "$tmp/wrk" || fail "wrk saw socket errors: $(cat "$tmp/wrk")"
    per_s=$(awk '/^Requests\/sec:/ {printf "%d", $2}' "$tmp/wrk")
    [ -n "$per_s" ] || fail "no requests/s from wrk: $(cat "$tmp/wrk")"
    t=$((t + sample))
    sleep 0.5   # the server reads the clients' ends and closes its sockets
    alive "$spid" || fail "the server exited during the soak"
    alive "$qpid" || fail "$(basename "$queue") exited during the soak"
    echo "$t,server,$(rss "$spid"),$(fds "$spid"),$per_s" >> "$csv"
    items=$(sed -n 's/^soak: items=\([0-9]*\)$/\1/p' "$tmp/queue.out" | tail -n 1)
    items=${items:-0}
    elapsed=$(( $(date +%s) - start ))
    echo "$t,queue,$(rss "$qpid"),$(fds "$qpid"),$(( (items - last_items) / sample ))" >> "$csv"
    last_items=$items
    tail -n 2 "$csv" | sed "s/^/soak: [$elapsed s] /"
done

# The ends: the queue example finishes by itself, the server on SIGINT.
i=0
while alive "$qpid"; do
    i=$((i + 1))
    [ "$i" -le 600 ] || fail "$(basename "$queue") still runs 60 s after its soak"
    sleep 0.1
done
rc=0
wait "$qpid" || rc=$?
qpid=""
[ "$rc" = 0 ] || fail "$(basename "$queue") exited with status $rc"
kill -INT "$spid"
i=0
while alive "$spid"; do
    i=$((i + 1))
    [ "$i" -le 100 ] || fail "the server still runs 10 s after SIGINT"
    sleep 0.1
done
rc=0
wait "$spid" || rc=$?
spid=""
[ "$rc" = 0 ] || fail "the server exited with status $rc"
[ ! -s "$tmp/server.err" ] || fail "the server wrote to stderr"
[ ! -s "$tmp/queue.err" ] || fail "$(basename "$queue") wrote to stderr"
ssum=$(grep '^summary: ' "$tmp/server.out") || fail "no summary line from the server"
qsum=$(grep '^summary: ' "$tmp/queue.out") || fail "no summary line from $(basename "$queue")"
echo "$qsum" | grep -q ' ok=1$' || fail "$(basename "$queue") found a mismatch: $qsum"
echo "soak: server $ssum"
echo "soak: $(basename "$queue") $qsum"

# The growth rule (above), per program.
judge() {
    awk -F, -v prog="$1" '
        function median(a, lo, hi,   n, i, j, t, b) {
            n = 0
            for (i = lo; i <= hi; i++) b[++n] = a[i]
            for (i = 2; i <= n; i++)
                for (j = i; j > 1 && b[j - 1] > b[j]; j--) {
                    t = b[j]; b[j] = b[j - 1]; b[j - 1] = t
                }
            return n % 2 ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2
        }
        $2 == prog { n++; if (n > 2) { m++; rss[m] = $3; fd[m] = $4; ps[m] = $5 } }
        END {
            if (m < 3) {
                printf "soak: %s: %d samples past the warm-up: too few to judge growth\n", prog, m
                exit 0
            }
            k = int(m / 3)
            r0 = median(rss, 1, k); r1 = median(rss, m - k + 1, m)
            f0 = 0; for (i = 1; i <= k; i++) if (fd[i] > f0) f0 = fd[i]
            f1 = 0; for (i = m - k + 1; i <= m; i++) if (fd[i] > f1) f1 = fd[i]
            p0 = median(ps, 1, k); p1 = median(ps, m - k + 1, m)
            bad = ""
            if (r1 > r0 * 1.10 + 1024) bad = bad " RSS grew"
            if (f1 > f0 + 2) bad = bad " descriptors grew"
            if (p1 < p0 / 2) bad = bad " throughput fell by half"
            for (i = 1; i <= m; i++) if (ps[i] <= 0) bad = bad " a sample had no throughput"
            printf "soak: %s: RSS %d -> %d KiB, descriptors %d -> %d, throughput %d -> %d /s",
                prog, r0, r1, f0, f1, p0, p1
            printf " (first and last third of %d samples)%s\n", m,
                bad == "" ? ": within the rule" : ":" bad
            exit bad != ""
        }' "$csv"
}
ok=0
judge server || ok=1
judge queue || ok=1
[ "$ok" = 0 ] || fail "growth beyond the rule (above; the samples are in $csv)"
echo "soak: passed in $(( $(date +%s) - start )) s"
