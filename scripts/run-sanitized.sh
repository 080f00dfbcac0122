#!/bin/sh
# Run a test binary built with ASan+UBSan or with TSan and fail on anything a sanitizer
# said, even where Criterion itself passes: a leak found when a test's worker exits is
# reported by Criterion only as a warning ("crashed during its setup or teardown"),
# with exit 0. TSan stops a worker at its first report (halt_on_error). ASan runs with
# detect_stack_use_after_return=1 (frames on fake stacks, so a pointer to a returned
# frame's locals is caught): the mode in which green-thread libraries' fiber
# annotations have crashed (scheduler/context.c says how stvm's handle it).
# Usage: run-sanitized.sh BINARY [ARGS...]
set -u
log=$(mktemp)
trap 'rm -f "$log"' EXIT
here=$(cd "$(dirname "$0")/.." && pwd)
LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$here/tests/lsan.supp:print_suppressions=0} \
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1} \
    "$@" > "$log" 2>&1
rc=$?
cat "$log"
if [ $rc -ne 0 ]; then
    echo "run-sanitized: $1 exited with status $rc"
    exit 1
fi
if grep -q -E 'ERROR: (AddressSanitizer|LeakSanitizer)|SUMMARY: (AddressSanitizer|UndefinedBehaviorSanitizer|ThreadSanitizer)|(WARNING|ERROR|FATAL): ThreadSanitizer|runtime error:|crashed during its setup or teardown' "$log"; then
    echo "run-sanitized: a sanitizer reported a problem in $1 (see above)"
    exit 1
fi
exit 0
