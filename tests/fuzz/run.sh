#!/bin/sh
# Run one libFuzzer target (mk/fuzz.mk calls this; tests/fuzz/README.md).
#
#   run.sh check TARGET RUNS      replay tests/fuzz/corpus/TARGET (every input once), then
#                                 fuzz RUNS inputs in a scratch corpus under build/fuzz/
#                                 (the checked-in corpus is read, never written) from the
#                                 fixed seed FUZZ_SEED (1), so that every run starts
#                                 with the same mutations (coverage depends a little on
#                                 timing, so runs drift apart later); FUZZ_SEED=0 picks
#                                 a new seed each time
#   run.sh run TARGET SECONDS     fuzz for SECONDS, growing build/fuzz/corpus/TARGET (a
#                                 copy of the checked-in corpus); prints how to merge
#
# Fails on a crash, a timeout, a leak, a sanitizer report or a failed check, and
# prints the input that did it (build/fuzz/artifacts/). Ends with one summary line:
#   fuzz-summary: TARGET MODE: [replayed N inputs;] EXECS execs in S s (R/s); corpus A -> B
#   inputs (N new); coverage C -> D edges (+E new); F crashes; known defects: #id xcount
set -u
mode=$1 t=$2 amount=$3   # runs for check, seconds for run
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
bin=build/fuzz/$t
seeds=tests/fuzz/corpus/$t
art=build/fuzz/artifacts
mkdir -p "$art"
rm -f "$art"/"$t"-*   # what an earlier run left: the count below is this run's
[ -x "$bin" ] || { echo "run.sh: $bin is not built (make fuzz-targets)"; exit 1; }
[ -d "$seeds" ] || { echo "run.sh: no corpus $seeds"; exit 1; }

# Leaks fail (libFuzzer checks after every input); UBSan stops at the first report;
# ASan keeps frames on fake stacks (detect_stack_use_after_return=1), as make check's
# sanitizer build does (scripts/run-sanitized.sh).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
opts="-timeout=10 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 -artifact_prefix=$art/$t-"

bad_output() {
    grep -q -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: (AddressSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|stvm-fuzz: CHECK FAILED' "$1"
}

fail() {
    echo "run.sh: $t ($1) failed; the log:"
    grep -v -E '^#[0-9]+' "$2" | tail -60
    echo "run.sh: reproduce with: $bin <input>   (STVM_FUZZ_TRACE=1 prints every call)"
    ls -1 "$art"/"$t"-* 2>/dev/null | sed 's/^/run.sh: input: /'
    exit 1
}

stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -1; }
# "#N INITED cov: C ft: F corp: A/Bb ..." -> the field after the given key
field() { sed -n "s/.*$1 *cov: \([0-9]*\) ft: [0-9]* corp: \([0-9]*\)\/.*/\\$2/p" "$3" | tail -1; }

replayed=0
if [ "$mode" = check ]; then
    log=build/fuzz/$t.replay.log
    replayed=$(ls "$seeds" | wc -l)
    # -runs=0: read and execute every input of the corpus once, then stop
    "$bin" $opts -runs=0 "$seeds" > "$log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || bad_output "$log"; then fail "replaying $replayed inputs" "$log"; fi
    scratch=build/fuzz/check-corpus/$t
    rm -rf "$scratch"
    mkdir -p "$scratch"
    dirs="$scratch $seeds"   # new inputs go to the first directory only
elif [ "$mode" = run ]; then
    scratch=build/fuzz/corpus/$t
    mkdir -p "$scratch"
    cp -n "$seeds"/* "$scratch"/ 2>/dev/null
    dirs=$scratch
else
    echo "usage: run.sh check TARGET RUNS | run.sh run TARGET SECONDS"
    exit 2
fi

if [ "$mode" = check ]; then
    # 600 s only bounds a machine far slower than any seen (CI: about 15 s per target)
    limit="-seed=${FUZZ_SEED:-1} -runs=$amount -max_total_time=600"
else
    limit="-max_total_time=$amount"
fi
log=build/fuzz/$t.$mode.log
start=$(date +%s)
"$bin" $opts $limit $dirs > "$log" 2>&1
rc=$?
took=$(( $(date +%s) - start ))
crashes=$(ls "$art"/"$t"-crash-* "$art"/"$t"-timeout-* "$art"/"$t"-leak-* "$art"/"$t"-oom-* 2>/dev/null | wc -l)
execs=$(stat number_of_executed_units "$log")
rate=$(stat average_exec_per_sec "$log")
new=$(stat new_units_added "$log")
cov0=$(field INITED 1 "$log")
cov1=$(field DONE 1 "$log")
corp0=$(field INITED 2 "$log")
corp1=$(field DONE 2 "$log")
known=$(sed -n 's/^stvm-fuzz: known defects met (counted, skipped)://p' "$log" | tail -1)
[ -n "$cov1" ] || cov1=$cov0
[ -n "$corp1" ] || corp1=$corp0
failed=0
if [ $rc -ne 0 ] || bad_output "$log"; then failed=1; [ "$crashes" -gt 0 ] || crashes=1; fi
replay=""
[ "$mode" = check ] && replay="replayed ${replayed} inputs; "
echo "fuzz-summary: $t $mode: ${replay}${execs:-0} execs in ${took} s (${rate:-0}/s); corpus ${corp0:-?} -> ${corp1:-?} inputs (${new:-0} new); coverage ${cov0:-?} -> ${cov1:-?} edges (+$(( ${cov1:-0} - ${cov0:-0} )) new); ${crashes} crashes; known defects:${known:- none}"
[ $failed = 0 ] || fail "fuzzing" "$log"
if [ "$mode" = run ]; then
    echo "run.sh: $scratch now holds $(ls "$scratch" | wc -l) inputs. To keep what is new, merge it"
    echo "run.sh: (minimised) into the checked-in corpus and commit that:"
    echo "run.sh:   $bin -merge=1 $seeds $scratch"
fi
exit 0
