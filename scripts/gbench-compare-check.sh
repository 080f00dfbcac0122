#!/bin/sh
# Two short runs of a stvm-bench command in the gbench format, compared by Google
# Benchmark's compare.py (Debian's libbenchmark-tools): fails unless compare.py exits 0
# and prints a row for every benchmark of the first run.
#
#   sh scripts/gbench-compare-check.sh BENCH [COMMAND ARGS...]
#
# BENCH is the stvm-bench binary; the command defaults to a short DelayBenchmark sweep
# on the simulated clock.
set -eu
bench=${1:?usage: gbench-compare-check.sh BENCH [COMMAND ARGS...]}
shift
if [ $# -eq 0 ]; then
    set -- delay --clock sim --concurrency 100,200 --repr ms-smallint31,us-smallint61 \
        --window-ms 100 --repeat 3
fi
python=/usr/bin/python3          # Debian's, which has scipy (not a pyenv one)
compare=/usr/share/benchmark/compare.py
[ -r "$compare" ] || { echo "gbench-compare-check: $compare missing (libbenchmark-tools)"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
"$bench" "$@" --quiet --format gbench > "$dir/a.json"
"$bench" "$@" --quiet --format gbench > "$dir/b.json"
"$python" "$compare" --no-color benchmarks "$dir/a.json" "$dir/b.json" > "$dir/compare.txt"
cat "$dir/compare.txt"
# Every run_name of the first run must have its row.
"$python" - "$dir/a.json" "$dir/compare.txt" <<'PY'
import json, sys
names = {b["run_name"] for b in json.load(open(sys.argv[1]))["benchmarks"]}
rows = {line.split()[0] for line in open(sys.argv[2]) if line.strip()}
missing = sorted(names - rows)
if not names or missing:
    sys.exit("gbench-compare-check: compare.py printed no row for %s" % (missing or "any benchmark"))
print("gbench-compare-check: compare.py compared %d benchmarks" % len(names))
PY
