#!/bin/sh
# make gdb-check (mk/gdb.mk, part of make check): the gdb extension (scripts/gdb/
# stvm-gdb.py, docs/debugging.md "gdb") on examples/deadlock, which deadlocks on purpose,
# built with each back end:
#  1. the example alone: exit status 3 and the blocked report naming each process, what
#     it waits on and who holds it, and the cycle;
#  2. gdb in batch mode on the live program, stopped in stvm_vm_blocked_report: the
#     listing names each process and what it waits on (the owner of a mutex or monitor),
#     stvm-bt of a blocked process shows its entry function, and the selected frame and
#     the registers are as they were after it (also after an error); stvm-vm; and,
#     stopped before the first run, a process that has not run yet is said so;
#  3. the same listing and backtrace on the kernel's core file of `deadlock --abort` (with
#     `ulimit -c unlimited`); when the machine's core_pattern sends cores elsewhere (a
#     pipe to a handler, another folder), on a core written by the extension's
#     stvm-gcore instead, and says so;
#  4. (assembly build) on a core written by stvm-gcore, which keeps the green stacks
#     that gdb's own generate-core-file loses behind madvise guard regions.
#
#   sh scripts/gdb-check.sh ASM_DEADLOCK UCTX_DEADLOCK
set -eu
me=gdb-check
ext=$(pwd)/scripts/gdb/stvm-gdb.py
command -v gdb > /dev/null || { echo "$me: gdb is missing (scripts/install-deps.sh)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stvm-gdb-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "$me: FAIL: $1"
    [ -n "${2:-}" ] && [ -f "$2" ] && sed 's/^/    /' "$2"
    exit 1
}
# expect FILE ERE WHAT: a line of FILE matches.
expect() {
    grep -Eq -- "$2" "$1" || fail "$3 (no line matching: $2)" "$1"
}

gdb_run() {   # OUT ARGS...: gdb in batch mode with the extension sourced
    out=$1
    shift
    timeout 60 gdb -nx -batch -iex "set pagination off" -iex "set width 0" \
        -ex "source $ext" "$@" > "$out" 2>&1 || true
}

# The listing and a blocked process's backtrace, as every run must show them.
check_listing() {   # FILE WHERE
    expect "$1" "^ +2 +40 +waiting +meteo +meteo .*monitor 'log' 0x[0-9a-f]+, owned by 'busmgr' \(#3\)" \
        "$2: the listing names meteo and the monitor it waits on, owned by busmgr"
    expect "$1" "^ +3 +40 +waiting +busmgr +busmgr .*mutex 'bus' 0x[0-9a-f]+, owned by 'meteo' \(#2\)" \
        "$2: the listing names busmgr and the mutex it waits on, owned by meteo"
    expect "$1" "^ +4 +50 +waiting +c50 +c50 .*semaphore 'gate' 0x[0-9a-f]+" \
        "$2: the listing names c50 and its semaphore"
    expect "$1" "^ +5 +30 +waiting +shutdown +shutdown_station .*join 'meteo' 0x[0-9a-f]+" \
        "$2: the listing names shutdown and the process it joins"
    expect "$1" "^ +1 +10 +ready +Idle Process" "$2: the listing has the idle process"
}
check_bt() {   # FILE WHERE: stvm-bt busmgr, down to its entry function
    sed -n "/^process 3 'busmgr'/,/^[^#]/p" "$1" > "$1.bt"
    expect "$1.bt" "^#[0-9]+ +(0x[0-9a-f]+ in )?reset_bus \(" "$2: stvm-bt busmgr shows reset_bus"
    expect "$1.bt" "^#[0-9]+ +(0x[0-9a-f]+ in )?busmgr \(vm=" "$2: stvm-bt busmgr reaches its entry function busmgr"
    expect "$1.bt" "^#[0-9]+ +(0x[0-9a-f]+ in )?stvm__process_entry \(" "$2: stvm-bt busmgr reaches stvm__process_entry"
}

for variant in asm uctx; do
    bin=$1
    [ "$variant" = uctx ] && bin=$2
    [ -x "$bin" ] || fail "$bin is not built"
    bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
    start=$(date +%s.%N)

    # 1. the program alone
    rc=0
    "$bin" > "$tmp/$variant.out" 2>&1 || rc=$?
    [ "$rc" = 3 ] || fail "$variant: $bin exited with $rc, not 3 (STVM_EDEADLOCK)" "$tmp/$variant.out"
    expect "$tmp/$variant.out" "^'meteo' \(priority 40\) waits on monitor 'log' 0x[0-9a-f]+, owned by 'busmgr', which waits on mutex 'bus' 0x[0-9a-f]+, owned by 'meteo': a deadlock cycle \('meteo' -> 'busmgr' -> 'meteo'\)$" \
        "$variant: the report names meteo's cycle"
    expect "$tmp/$variant.out" "^'c50' \(priority 50\) waits on semaphore 'gate' 0x[0-9a-f]+, which no process or registered thread can signal$" \
        "$variant: the report says nobody can signal c50's gate"
    expect "$tmp/$variant.out" "^'shutdown' \(priority 30\) waits on join 'meteo' 0x[0-9a-f]+, which waits on monitor 'log'.*: a deadlock cycle \('meteo' -> 'busmgr' -> 'meteo'\)$" \
        "$variant: the report follows shutdown's join into the cycle"

    # 2. live, stopped where the program asks for the report
    live=$tmp/$variant.live
    gdb_run "$live" -ex "break stvm_vm_blocked_report" -ex run \
        -ex "info stvm-processes" -ex "up" -ex "echo REGS-BEFORE\n" -ex "info registers rip rsp rbp rbx" \
        -ex "stvm-bt busmgr" -ex "stvm-bt 2" -ex "stvm-bt nosuch" \
        -ex "echo REGS-AFTER\n" -ex "info registers rip rsp rbp rbx" -ex "frame" \
        -ex "stvm-vm" -ex "stvm-bt all" -ex "stvm-bt host" "$bin"
    check_listing "$live" "$variant, live"
    check_bt "$live" "$variant, live"
    sed -n "/^process 2 'meteo'/,/^[^#]/p" "$live" > "$live.meteo"
    expect "$live.meteo" "^#[0-9]+ +(0x[0-9a-f]+ in )?meteo \(vm=" "$variant, live: stvm-bt 2 reaches meteo"
    expect "$live" "^stvm: no process 'nosuch'" "$variant, live: an unknown name is an error"
    sed -n '/^REGS-BEFORE/,/^process/p' "$live" | grep -E '^(rip|rsp|rbp|rbx) ' > "$live.before" || true
    sed -n '/^REGS-AFTER/,/^#/p' "$live" | grep -E '^(rip|rsp|rbp|rbx) ' > "$live.after" || true
    [ -s "$live.before" ] && cmp -s "$live.before" "$live.after" ||
        fail "$variant, live: the registers changed across stvm-bt" "$live"
    sed -n '/^REGS-AFTER/,$p' "$live" | grep -Eq '^#1 +0x[0-9a-f]+ in main \(' ||
        fail "$variant, live: the selected frame (#1, main) was not kept" "$live"
    expect "$live" "^  run queues: 10: 'Idle Process' \(#1\)$" "$variant, live: stvm-vm's run queues"
    expect "$live" "^  timing process: 'Delay Scheduling Process' \(#6\)" "$variant, live: stvm-vm's timing process"
    expect "$live" "^process 5 'shutdown'" "$variant, live: stvm-bt all"
    expect "$live" "no host context \(stvm_run is not active\)" "$variant, live: stvm-bt host between runs"

    # a process that has not run yet has no caller frames: it is said so
    gdb_run "$live.fresh" -ex "break stvm_run" -ex run -ex "stvm-bt meteo" "$bin"
    expect "$live.fresh" "^  has not run yet: its first turn calls meteo$" \
        "$variant, live: stvm-bt of a process that has not run"

    # 3. the kernel's core file, or stvm-gcore's when the kernel's goes elsewhere
    mkdir "$tmp/$variant.core"
    # (an inner shell waits for the abort, so that its "Aborted" goes to /dev/null)
    (cd "$tmp/$variant.core" && ulimit -c unlimited &&
        sh -c '"$0" --abort > out.txt 2>&1; exit 0' "$bin" 2> /dev/null) || true
    core=$(ls "$tmp/$variant.core"/core* 2>/dev/null | head -n 1 || true)
    if [ -n "$core" ]; then
        how="the kernel's core file"
    else
        how="a core from stvm-gcore (the kernel's went to '$(cat /proc/sys/kernel/core_pattern)')"
        core=$tmp/$variant.core/core.gdb
        gdb_run "$tmp/$variant.gcore" -ex "break stvm_vm_blocked_report" -ex run \
            -ex "stvm-gcore $core" "$bin"
        [ -s "$core" ] || fail "$variant: stvm-gcore wrote no core" "$tmp/$variant.gcore"
    fi
    dead=$tmp/$variant.dead
    gdb_run "$dead" -ex "info stvm-processes" -ex "stvm-bt busmgr" -ex "stvm-vm" "$bin" "$core"
    check_listing "$dead" "$variant, $how"
    check_bt "$dead" "$variant, $how"

    # 4. stvm-gcore's core (the default guard regions are madvise ones on Linux 6.13+)
    if [ "$variant" = asm ]; then
        gcore=$tmp/asm.gcore.core
        gdb_run "$tmp/asm.gcore" -ex "break stvm_vm_blocked_report" -ex run -ex "stvm-gcore $gcore" \
            -ex "x/x ((stvm_vm *)~stvm__debug_vms)->stacks.arenas[0]->base" "$bin"
        [ -s "$gcore" ] || fail "asm: stvm-gcore wrote no core" "$tmp/asm.gcore"
        if grep -q "with guard regions written whole" "$tmp/asm.gcore"; then
            expect "$tmp/asm.gcore" "Cannot access memory at address" \
                "asm: the guard regions are installed again after stvm-gcore"
        fi
        gdb_run "$tmp/asm.gdead" -ex "info stvm-processes" -ex "stvm-bt busmgr" "$bin" "$gcore"
        check_listing "$tmp/asm.gdead" "asm, stvm-gcore's core"
        check_bt "$tmp/asm.gdead" "asm, stvm-gcore's core"
    fi
    took=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    echo "$me: $variant: the report, gdb live and on $how: listing, stvm-bt, stvm-vm as expected (${took} s)"
done
echo "$me: all passed"
