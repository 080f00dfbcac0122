#!/bin/sh
# What tracing costs, measured side by side (make bench-trace-cost; docs/scheduler.md).
#
#   trace-cost.sh BENCH NOTRACE_BENCH [RUNS]
#
# BENCH is stvm-bench as built (event points compiled in), NOTRACE_BENCH the same
# sources on a library built with -DSTVM_TRACE_POINTS=0 (no event points). Every
# measurement is the simulated-clock DelayBenchmark, us-smallint61, N = 1,000, whose CPU
# per delay is the scheduler's work alone:
#   1. off: BENCH (not tracing) against NOTRACE_BENCH, RUNS interleaved pairs of
#      TRACE_COST_WINDOW_MS (3000) windows: medians and the median of the pairs' ratios;
#      then, when valgrind is installed (and TRACE_COST_CALLGRIND is not 0), callgrind's
#      instructions per delay for both (windows of 200 and 400 ms: the difference
#      divides out the set-up);
#   2. on: BENCH with --trace into rings of 65,536 events (wraps, stays in the caches)
#      and 16,777,216 (keeps a whole run), against BENCH not tracing, interleaved: the
#      extra CPU per delay divided by the events recorded per delay.
# Prints the figures and the issue's targets (off: at most 1% of CPU per delay; on: at
# most 30 ns per event) with met or missed; exits 0 unless a run failed.
set -eu
bench=$1 notrace=$2 runs=${3:-11}
window=${TRACE_COST_WINDOW_MS:-3000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stvm-trace-cost.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM HUP
cell="delay --clock sim --repr us-smallint61 --concurrency 1000 --format csv-wide --quiet"

# The value of CSV column NAME in the data line of FILE (csv-wide: "# " context lines,
# the header, one row).
column() {
    awk -F, -v name="$1" '/^#/ { next } !h { for (i = 1; i <= NF; i++) if ($i == name) c = i;
                          h = 1; next } c { print $c; exit }' "$2"
}

# The median of the numbers on stdin, one per line.
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
                                        else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# run BIN WINDOW OUT [ARGS...]: one cell; its CSV in OUT, its stderr in OUT.err
run() {
    b=$1 w=$2 out=$3
    shift 3
    if ! "$b" $cell --window-ms "$w" "$@" > "$out" 2> "$out.err"; then
        echo "trace-cost: $b $cell --window-ms $w $* failed:" >&2
        cat "$out.err" >&2
        exit 1
    fi
}

verdict() { awk -v v="$1" -v max="$2" 'BEGIN { print (v <= max) ? "met" : "MISSED" }'; }

echo "== tracing compiled in but off, against compiled out ($runs interleaved pairs," \
     "${window} ms simulated windows)"
: > "$tmp/off" ; : > "$tmp/out" ; : > "$tmp/ratio"
i=0
while [ $i -lt "$runs" ]; do
    run "$bench" "$window" "$tmp/a"
    run "$notrace" "$window" "$tmp/b"
    a=$(column cpu_us_per_delay "$tmp/a") b=$(column cpu_us_per_delay "$tmp/b")
    echo "$a" >> "$tmp/off"
    echo "$b" >> "$tmp/out"
    awk -v a="$a" -v b="$b" 'BEGIN { printf "%.6f\n", a / b }' >> "$tmp/ratio"
    i=$((i + 1))
done
off=$(median < "$tmp/off") out=$(median < "$tmp/out") ratio=$(median < "$tmp/ratio")
echo "  CPU us per delay, medians: off $off, compiled out $out"
echo "  pairs' ratios: $(sort -g "$tmp/ratio" | tr '\n' ' ')"
echo "  off: median ratio $ratio  (target at most 1.010: $(verdict "$ratio" 1.010))"

if [ "${TRACE_COST_CALLGRIND:-1}" != 0 ] && command -v valgrind > /dev/null; then
    # instructions per delay: (I(400) - I(200)) / (delays(400) - delays(200))
    for v in off out; do
        b=$bench
        [ $v = out ] && b=$notrace
        for w in 200 400; do
            valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$v.$w" \
                "$b" $cell --window-ms $w > "$tmp/cg.$v.$w.csv" 2> "$tmp/cg.$v.$w.err" ||
                { echo "trace-cost: callgrind of $b failed" >&2; cat "$tmp/cg.$v.$w.err" >&2; exit 1; }
        done
    done
    instr() { sed -n 's/^summary: *//p' "$tmp/cg.$1.$2" | head -1; }
    delays() { column enter_count "$tmp/cg.$1.$2.csv"; }
    instr_per_delay() {
        awk -v i1="$(instr "$1" 200)" -v i2="$(instr "$1" 400)" -v d1="$(delays "$1" 200)" \
            -v d2="$(delays "$1" 400)" 'BEGIN { printf "%.1f\n", (i2 - i1) / (d2 - d1) }'
    }
    ioff=$(instr_per_delay off) iout=$(instr_per_delay out)
    awk -v a="$ioff" -v b="$iout" 'BEGIN {
        printf "  instructions per delay (callgrind): off %.1f, compiled out %.1f: %+.1f (%+.2f%%)\n",
               a, b, a - b, 100 * (a - b) / b }'
else
    echo "  instructions per delay: not measured (valgrind not installed, or TRACE_COST_CALLGRIND=0)"
fi

for ring in 65536 16777216; do
    echo "== tracing on, ring of $ring events, against off ($runs interleaved pairs)"
    : > "$tmp/cost"
    i=0
    while [ $i -lt "$runs" ]; do
        run "$bench" "$window" "$tmp/on" --trace "$tmp/trace.json" --trace-events "$ring"
        run "$bench" "$window" "$tmp/plain"
        rm -f "$tmp/trace.json"
        events=$(sed -n 's/.*: \([0-9]*\) events recorded.*/\1/p' "$tmp/on.err")
        [ -n "$events" ] || { echo "trace-cost: no event count from $bench" >&2; exit 1; }
        awk -v on="$(column cpu_us_per_delay "$tmp/on")" \
            -v off="$(column cpu_us_per_delay "$tmp/plain")" \
            -v ev="$events" -v d="$(column enter_count "$tmp/on")" \
            'BEGIN { printf "%.3f %.2f\n", (on - off) * 1000 / (ev / d), ev / d }' >> "$tmp/cost"
        i=$((i + 1))
    done
    cost=$(cut -d' ' -f1 "$tmp/cost" | median) epd=$(cut -d' ' -f2 "$tmp/cost" | median)
    echo "  events per delay: $epd; ns per event recorded: $(cut -d' ' -f1 "$tmp/cost" | sort -g | tr '\n' ' ')"
    echo "  on: median $cost ns per event  (target at most 30 ns: $(verdict "$cost" 30))"
done
