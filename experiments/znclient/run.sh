#!/bin/sh
# The ZnClient experiment as `make demo` runs it (README.md, "Rerun it"), about two
# minutes and a half: against a real nginx, the sweep per idle mode beside wrk -t1 -c1,
# the seed's fitted world, the fit, the phase diagram and the recording with its replay;
# the report and the plots made from the JSON; then the recording replayed twice more on
# the simulated clock, which must write the same bytes.
#
#   sh experiments/znclient/run.sh [BUILD]      (BUILD: build, where make puts it)
#
# Writes BUILD/znclient-experiment.json (every repetition's counters),
# BUILD/znclient-experiment.md (the report), BUILD/znclient-experiment.png and .csv,
# BUILD/znclient-phase.png and .csv, BUILD/znclient-recording.txt (the recording) and
# BUILD/znclient-replay.json (its replay, for the byte-identity check).
set -eu
B=${1:-build}
here=$(dirname "$0")
zn=$B/experiments/znclient
[ -x "$zn" ] || { echo "$0: $zn is not built (make experiments)" >&2; exit 1; }

"$zn" --idle-mode poll,legacy,spin --subscriber-cost-us 0,10,20,40,60,120,240 \
    --requests 1000 --max-seconds 1 --repeat 5 --with-preset seed2-2017 --fit --phase \
    --record "$B/znclient-recording.txt" --out "$B/znclient-experiment.json"
python3 "$here/report.py" "$B/znclient-experiment.json" --report "$B/znclient-experiment.md" \
    --plot "$B/znclient-experiment.png" --phase-plot "$B/znclient-phase.png"

# The recording replayed twice on the simulated clock: the same bytes both times.
"$zn" --replay "$B/znclient-recording.txt" --quiet --no-context > "$B/znclient-replay.json"
"$zn" --replay "$B/znclient-recording.txt" --quiet --no-context | cmp - "$B/znclient-replay.json"
echo "demo: the replay of $B/znclient-recording.txt, run twice, is byte-identical"
