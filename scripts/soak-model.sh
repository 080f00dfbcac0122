#!/bin/sh
# Long run of the model-based scheduler tests (tests/test_model.c): OPS operations in
# total, split evenly over the test binaries given (one per back end) and CHUNKS runs of
# each, JOBS runs at a time. Every run starts its own seed sequence (STVM_MODEL_SEED_BASE),
# fixed unless SOAK_MODEL_SALT is set, so a soak is reproducible and another salt gives
# fresh seeds. Prints one line per back end and a total; fails if any run failed.
# Usage: soak-model.sh OPS CHUNKS JOBS BINARY...
set -u
if [ "${1:-}" = "--one" ]; then   # one chunk: BINARY BASE OPS LOG
    STVM_MODEL_OPS=$4 STVM_MODEL_SEED_BASE=$3 "$2" --filter 'model/lockstep*' --jobs 1 > "$5" 2>&1
    echo $? > "$5.rc"
    exit 0
fi
[ $# -ge 4 ] || { echo "usage: $0 OPS CHUNKS JOBS BINARY..." >&2; exit 2; }
ops=$1 chunks=$2 jobs=$3
shift 3
per=$((ops / (chunks * $#)))
salt=${SOAK_MODEL_SALT:-0}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
start=$(date +%s)
i=0
for bin in "$@"; do
    k=0
    while [ $k -lt "$chunks" ]; do
        base=$(printf '0x%x' $((0x536f616b00000000 + (salt * 65536 + i * 256 + k) * 4294967297)))
        echo "$0 --one $bin $base $per $dir/$i.$k.log"
        k=$((k + 1))
    done
    i=$((i + 1))
done | xargs -P "$jobs" -L 1 sh

status=0
for rc in "$dir"/*.rc; do
    if [ "$(cat "$rc")" != 0 ]; then
        status=1
        log=${rc%.rc}
        echo "soak-model: a run failed ($(head -c 200 "$log.rc")):"
        cat "$log"
    fi
done
# Lines: "model: preemption_yields=... on BACKEND...: N operations, S seeds, V violations, ..."
cat "$dir"/*.log | grep '^model: preemption_yields' | awk -v secs=$(($(date +%s) - start)) '
    { be = $4; sub(/:$/, "", be); if ($5 == "(ASan+UBSan):") be = be " (ASan+UBSan)"
      for (f = 1; f <= NF; f++) {
          if ($(f + 1) == "operations,") { o[be] += $f; to += $f }
          if ($(f + 1) == "seeds,") { s[be] += $f; ts += $f }
          if ($(f + 1) == "violations,") { v[be] += $f; tv += $f }
      } }
    END { for (b in o) printf "soak-model: %s: %d operations, %d seeds, %d violations\n", b, o[b], s[b], v[b]
          printf "soak-model: total %d operations, %d seeds, %d violations, %d s\n",
                 to, ts, tv, secs
          if (tv > 0) exit 1 }' || status=1
exit $status
