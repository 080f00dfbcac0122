#!/bin/sh
# The DelayBenchmark experiment as `make demo` runs it (README.md, "Rerun it"), about a
# minute and a half: the calibrated simulated sweep beside the seed's table, then the
# real clock to saturation, on CPU 0; the report and the plot made from the JSON; then
# the simulated sweep twice more, which must write the same bytes.
#
#   sh experiments/delay-benchmark/run.sh [BUILD]      (BUILD: build, where make puts it)
#
# Writes BUILD/delay-benchmark.json (every figure, each repetition's sample),
# BUILD/delay-benchmark.md (the report), BUILD/delay-benchmark.png and .csv (the plot and
# its data) and BUILD/delay-sim.csv (the simulated sweep, for the byte-identity check).
set -eu
B=${1:-build}
here=$(dirname "$0")
bench=$B/stvm-bench
[ -x "$bench" ] || { echo "$0: $bench is not built (make tools)" >&2; exit 1; }

"$bench" delay --cpu 0 --clock sim,real --sim-cost seed1 \
    --concurrency 1000..10000:1000,20000,50000,100000,150000 \
    --format json > "$B/delay-benchmark.json"
python3 "$here/report.py" "$B/delay-benchmark.json" --report "$B/delay-benchmark.md" \
    --plot "$B/delay-benchmark.png"

# The calibrated simulated sweep run twice: the same bytes both times.
"$bench" delay --clock sim --sim-cost seed1 --quiet --no-context --format csv-wide \
    > "$B/delay-sim.csv"
"$bench" delay --clock sim --sim-cost seed1 --quiet --no-context --format csv-wide |
    cmp - "$B/delay-sim.csv"
echo "demo: the calibrated simulated DelayBenchmark, run twice, is byte-identical"
