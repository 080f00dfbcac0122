#!/bin/sh
# What driving stvm from a libuv loop costs, against plain stvm_run (not part of make
# check; about R x 13 s). examples/libuv_host is the server; for each of plain, uv with
# STVM_RUN_NOWAIT and uv with STVM_RUN_ONCE, interleaved over R rounds (the order turns
# each round), it starts the server on a free loopback port, runs
# `wrk -t1 -c8 -d3s --latency` against it and reads requests/s, p50 and p99 from wrk and
# the server's CPU from /proc/PID/stat (utime + stime over the wrk run). Then the idle
# host: each driver with no client for 1 s (--max-seconds 1), its CPU by getrusage and
# host-loop turns (uv_poll + VM-timer callbacks) per second from its summary line.
# Prints Markdown: the rounds, the medians with the ratios to plain, and the targets
# (uv requests/s >= 0.8x plain, uv p99 <= 2x plain, idle CPU < 2% of a core).
#
#   R=3 sh scripts/host-loop-bench.sh [build/examples/libuv_host]
set -eu
bin=${1:-build/examples/libuv_host}
R=${R:-5}
DURATION=${DURATION:-3}
[ -x "$bin" ] || { echo "host-loop-bench: $bin is not built (make all)"; exit 1; }
command -v wrk > /dev/null || { echo "host-loop-bench: wrk is missing"; exit 1; }

# shellcheck source=scripts/libuv-host-server.sh
. "$(dirname "$0")/libuv-host-server.sh"

fail() {
    echo "host-loop-bench: $*" >&2
    [ -s "$tmp/err" ] && { echo "--- server stderr:" >&2; tail -n 20 "$tmp/err" >&2; }
    exit 1
}

tck=$(getconf CLK_TCK)

cpu_ticks() {
    # Fields 14 and 15 of /proc/PID/stat, counted after the ")" that ends the name.
    sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}

# wrk's latency ("63.00us", "1.23ms", "2.00s") in microseconds.
to_us() {
    awk -v v="$1" 'BEGIN {
        n = v + 0
        if (v ~ /us$/) print n; else if (v ~ /ms$/) print n * 1000;
        else if (v ~ /s$/) print n * 1000000; else print "nan" }'
}

opts_of() {
    case $1 in
        plain) echo "--driver plain" ;;
        uv-nowait) echo "--driver uv --run-mode nowait" ;;
        uv-once) echo "--driver uv --run-mode once" ;;
    esac
}

configs="plain uv-nowait uv-once"
version=$("$bin" --self-test 1 --run-mode nowait |
    sed -n '1s/^self-test: \(stvm [^,]*, libuv [^,]*\),.*/\1/p')
commit=$(git rev-parse --short HEAD 2> /dev/null || echo "?")
echo "## libuv host loop against plain stvm_run"
echo
echo "$version, commit $commit, $(nproc) CPUs; wrk -t1 -c8 -d${DURATION}s --latency over" \
     "loopback, $R rounds interleaved; server CPU from /proc/PID/stat during the wrk run."
echo
echo "| round | config | requests/s | p50 µs | p99 µs | server CPU % |"
echo "|---:|---|---:|---:|---:|---:|"
: > "$tmp/results"
r=1
while [ "$r" -le "$R" ]; do
    # Turn the order each round, so that no config always runs first.
    order=$(echo $configs |
        awk -v r="$r" '{ for (i = 0; i < NF; i++) printf "%s ", $(((i + r - 1) % NF) + 1) }')
    for c in $order; do
        # shellcheck disable=SC2046
        server_start $(opts_of "$c") --max-seconds 120
        t0=$(cpu_ticks "$pid")
        timeout $((DURATION + 20)) wrk -t1 -c8 -d"${DURATION}s" --latency \
            "http://127.0.0.1:$port/" > "$tmp/wrk" 2>&1 || fail "wrk failed ($c): $(cat "$tmp/wrk")"
        t1=$(cpu_ticks "$pid")
        server_stop 50
        rps=$(awk '/^Requests\/sec:/ {print $2}' "$tmp/wrk")
        p50=$(to_us "$(awk '$1 == "50%" {print $2}' "$tmp/wrk")")
        p99=$(to_us "$(awk '$1 == "99%" {print $2}' "$tmp/wrk")")
        cpu=$(awk -v a="$t0" -v b="$t1" -v t="$tck" -v d="$DURATION" \
            'BEGIN {printf "%.1f", (b - a) / t / d * 100}')
        [ -n "$rps" ] && [ -n "$p99" ] || fail "could not read wrk's output ($c): $(cat "$tmp/wrk")"
        if grep -q -e 'Non-2xx' -e 'Socket errors' "$tmp/wrk"; then
            echo "host-loop-bench: warning: wrk reported errors ($c):" \
                "$(grep -e 'Non-2xx' -e 'Socket errors' "$tmp/wrk")" >&2
        fi
        echo "$c $rps $p50 $p99 $cpu" >> "$tmp/results"
        printf '| %d | %s | %.0f | %.0f | %.0f | %s |\n' "$r" "$c" "$rps" "$p50" "$p99" "$cpu"
    done
    r=$((r + 1))
done

# The idle host: no client, 1 s, per driver.
: > "$tmp/idle"
r=1
while [ "$r" -le "$R" ]; do
    for c in $configs; do
        # shellcheck disable=SC2046
        server_start $(opts_of "$c") --max-seconds 1
        server_wait 50
        s=$(grep '^summary: ' "$tmp/out") || fail "no summary from the idle server ($c)"
        field() { echo "$s" | sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
        echo "$c $(field cpu-s) $(field wall-s) $(field host-turns)" >> "$tmp/idle"
    done
    r=$((r + 1))
done

median() {   # of column $2 for config $1 in file $3
    awk -v c="$1" -v k="$2" '$1 == c {print $k}' "$3" | sort -g |
        awk '{v[NR] = $1}
             END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
                   else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

prps=$(median plain 2 "$tmp/results")
pp99=$(median plain 4 "$tmp/results")
echo
echo "### Medians over $R rounds"
echo
echo "| config | requests/s | p50 µs | p99 µs | server CPU % | requests/s vs plain | p99 vs plain |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for c in $configs; do
    rps=$(median "$c" 2 "$tmp/results")
    p50=$(median "$c" 3 "$tmp/results")
    p99=$(median "$c" 4 "$tmp/results")
    cpu=$(median "$c" 5 "$tmp/results")
    awk -v c="$c" -v rps="$rps" -v p50="$p50" -v p99="$p99" -v cpu="$cpu" -v prps="$prps" \
        -v pp99="$pp99" 'BEGIN { printf "| %s | %.0f | %.0f | %.0f | %.1f | %.3fx | %.2fx |\n",
                                 c, rps, p50, p99, cpu, rps / prps, p99 / pp99 }'
done
echo
echo "### Idle: no client for 1 s (medians over $R runs)"
echo
echo "| config | CPU s | % of a core | host-loop turns/s |"
echo "|---|---:|---:|---:|"
for c in $configs; do
    cpu=$(median "$c" 2 "$tmp/idle")
    wall=$(median "$c" 3 "$tmp/idle")
    turns=$(median "$c" 4 "$tmp/idle")
    awk -v c="$c" -v cpu="$cpu" -v wall="$wall" -v turns="$turns" \
        'BEGIN { printf "| %s | %.3f | %.2f | %s |\n", c, cpu, cpu / wall * 100,
                        c == "plain" ? "-" : sprintf("%.0f", turns / wall) }'
done
echo
echo "### Targets"
echo
echo "| config | requests/s >= 0.8x plain | p99 <= 2x plain | idle CPU < 2% of a core |"
echo "|---|---|---|---|"
for c in uv-nowait uv-once; do
    rps=$(median "$c" 2 "$tmp/results")
    p99=$(median "$c" 4 "$tmp/results")
    cpu=$(median "$c" 2 "$tmp/idle")
    wall=$(median "$c" 3 "$tmp/idle")
    awk -v c="$c" -v rps="$rps" -v p99="$p99" -v prps="$prps" -v pp99="$pp99" -v cpu="$cpu" \
        -v wall="$wall" '
        function judge(ok, text) { return (ok ? "met" : "MISSED") " (" text ")" }
        BEGIN { a = rps / prps; b = p99 / pp99; i = cpu / wall * 100
                printf "| %s | %s | %s | %s |\n", c, judge(a >= 0.8, sprintf("%.3fx", a)),
                       judge(b <= 2, sprintf("%.2fx", b)), judge(i < 2, sprintf("%.2f%%", i)) }'
done
