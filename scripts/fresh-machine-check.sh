#!/bin/bash
# shellcheck disable=SC2317  # the functions below are called from traps and through step
# fresh-machine-check.sh: does `make demo` and `make check` work on a bare Debian 12
# machine, and do they leave the machine as they found it? Not part of `make check`:
# it needs root, Debian's package mirror and 15-25 minutes.
#
# It builds a minimal Debian 12 root (debootstrap --variant=minbase bookworm) from this
# machine's own apt sources, installs only make, git and ca-certificates in it (what a
# new user has), clones the repository into it (a given checkout's commit), and runs
# `make demo` then `make check` there as root through chroot. Then it compares:
#   (a) the units enabled for boot inside the root (systemd's wants/requires symlinks
#       under /etc/systemd/system, the /etc/rc?.d/S* links) with the state right after
#       debootstrap and the make/git install: none may be new;
#   (b) the host's sysctls (/proc/sys) before and after, less the counters listed in
#       VOLATILE_SYSCTLS below: none may have changed (the root shares the host's kernel,
#       so a build that changed a setting would change it here);
#   (c) the TCP listeners not on loopback (ss -ltn) before and after: none may be new
#       (the root shares the host's network namespace);
#   (d) processes still running in the root afterwards (nginx above all): none.
# It prints each step's wall time, the tail of a failed step's log, and a last line
# `fresh-machine-check: PASS` or `fresh-machine-check: FAIL (reasons)`; it exits 1 on
# FAIL, 2 on a usage error, 130/143 when interrupted.
#
# Mounts (proc, sys read-only, dev, dev/pts, a fresh tmpfs on dev/shm) are undone on
# every exit path, including Ctrl-C and SIGTERM: the long steps run as background jobs
# the script waits for, so a signal is handled at once rather than when the step ends,
# and the clean-up first stops every process whose root is the new root.
set -eu
# The whole script is one { ... } group, so bash reads all of it before running any of
# it: editing the file during a 20-minute run cannot change what that run executes.
{
me=fresh-machine-check
say() { printf '%s: %s\n' "$me" "$*"; }
die() { say "error: $*" >&2; exit 2; }

usage() {
    cat <<EOF
usage: $0 [options]          (as root)
  --repo DIR      the repository to test (default: the one this script lives in)
  --rev REV       the commit to test (default: HEAD of --repo, i.e. its checkout)
  --workdir DIR   where the root and the logs go (default: /var/tmp/stvm-fresh)
  --cache DIR     keep debootstrap's download there as a tarball (debootstrap
                  --make-tarball) and unpack it on later runs (--unpack-tarball)
  --mirror URL    the Debian mirror (default: the first bookworm URI of this
                  machine's apt sources)
  --skip-demo     run make check only
  --keep          keep the root afterwards for inspection (chroot DIR/root)
EOF
}

script_dir=$(cd "$(dirname "$0")" && pwd)
repo=$script_dir/..
rev=HEAD
work=/var/tmp/stvm-fresh
cache=
mirror=
skip_demo=no
keep=no
while [ $# -gt 0 ]; do
    case $1 in
    --repo) [ $# -ge 2 ] || die "--repo needs a folder"; repo=$2; shift 2 ;;
    --rev) [ $# -ge 2 ] || die "--rev needs a revision"; rev=$2; shift 2 ;;
    --workdir) [ $# -ge 2 ] || die "--workdir needs a folder"; work=$2; shift 2 ;;
    --cache) [ $# -ge 2 ] || die "--cache needs a folder"; cache=$2; shift 2 ;;
    --mirror) [ $# -ge 2 ] || die "--mirror needs a URL"; mirror=$2; shift 2 ;;
    --skip-demo) skip_demo=yes; shift ;;
    --keep) keep=yes; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
    esac
done

[ "$(id -u)" = 0 ] || die "run as root (debootstrap, mount and chroot need it): sudo $0 $*"
for c in debootstrap chroot mount umount findmnt ss git apt-config; do
    command -v "$c" >/dev/null 2>&1 || die "needs $c (apt-get install debootstrap mount iproute2 git)"
done

repo=$(git -C "$repo" rev-parse --show-toplevel 2>/dev/null) || die "not a git checkout: $repo"
sha=$(git -C "$repo" rev-parse --verify --quiet "$rev^{commit}") || die "no such commit in $repo: $rev"
mkdir -p "$work"
work=$(cd "$work" && pwd)
case $work/ in
/|/proc/*|/sys/*|/dev/*) die "refusing the work folder $work" ;;
"$repo"/*) die "the work folder $work must not be inside the repository" ;;
esac
root=$work/root
logs=$work/logs
if [ -n "$cache" ]; then
    mkdir -p "$cache"
    cache=$(cd "$cache" && pwd)
fi
arch=$(dpkg --print-architecture)
suite=bookworm

# --- the mirror: this machine's own apt sources --------------------------------------
# deb822 files (/etc/apt/sources.list.d/*.sources): the first URI of a stanza of Types
# deb whose Suites name bookworm itself (not bookworm-security or -updates).
mirror_from_sources() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        awk -v suite="$suite" '
            function flush() { if (deb && hit && uri != "") { print uri; found = 1; exit } deb = hit = 0; uri = "" }
            /^[ \t]*$/ { flush(); next }
            /^[ \t]*#/ { next }
            tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
            tolower($1) == "uris:" { uri = $2 }
            tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == suite) hit = 1 }
            END { if (!found) flush() }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        # deb [options] URI SUITE COMPONENTS...
        awk -v suite="$suite" '
            $1 != "deb" { next }
            { i = 2; if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ } }
            $(i + 1) == suite { print $i; exit }' "$f"
    done
}
if [ -z "$mirror" ]; then
    mirror=$(mirror_from_sources | head -n 1)
    [ -n "$mirror" ] || die "no deb URI for $suite in /etc/apt/sources.list{,.d/*}; pass --mirror URL"
fi

# --- what is compared ----------------------------------------------------------------
# Sysctls that change by themselves, whoever runs: they count or report current use,
# they are not settings. Each is excluded from (b), with the reason.
VOLATILE_SYSCTLS="
fs.dentry-state                the dentry cache's size: changes with every file looked up
fs.inode-nr                    inodes in use: changes with every file created or dropped from cache
fs.inode-state                 the same figures as fs.inode-nr, and more
fs.file-nr                     file handles open right now, machine-wide
fs.aio-nr                      asynchronous I/O contexts in use right now
fs.quota.*                     quota operation counters (lookups, reads, writes, ...)
kernel.ns_last_pid             the last PID handed out: every fork moves it
kernel.random.entropy_avail    the entropy pool's current fill
kernel.random.uuid             a fresh random UUID on every read
kernel.pty.nr                  pseudo-terminals open right now
kernel.hung_task_detect_count  how many hung tasks the kernel has seen (a counter)
kernel.perf_event_max_sample_rate  lowered by the kernel itself when perf interrupts run long
net.netfilter.nf_conntrack_count   connections tracked right now
"
sysctl_snapshot() {
    # "name = value" per line, names in sysctl's dotted form; unreadable and write-only
    # entries are skipped (the same ones both times).
    local pat f v
    pat=$(printf '%s\n' "$VOLATILE_SYSCTLS" | awk 'NF { n = $1; gsub(/\./, "\\.", n); sub(/\*$/, ".*", n); printf "%s^%s =", sep, n; sep = "|" }')
    find /proc/sys -type f -perm -u=r 2>/dev/null | sort | while read -r f; do
        v=$(tr '\n\t' '  ' < "$f" 2>/dev/null) || continue
        f=${f#/proc/sys/}
        printf '%s = %s\n' "$(printf '%s' "$f" | tr / .)" "$v"
    done | grep -Ev "$pat"
}
listeners_outside_loopback() {
    # Local address:port of every TCP listener not on 127.0.0.0/8 or ::1.
    ss -ltnH | awk '{ print $4 }' |
        grep -Ev '^(127\.[0-9.]+|\[::1\]|\[::ffff:127\.[0-9.]+\]):[0-9]+$' | sort -u || true
}
enabled_units() {
    # What the root would start at boot: systemd's enablement symlinks and rc S links.
    local d=$1
    {
        if [ -d "$d/etc/systemd/system" ]; then
            (cd "$d/etc/systemd/system" && find . -type l \( -path '*.wants/*' -o -path '*.requires/*' \) \
                -printf 'systemd %P\n')
        fi
        for l in "$d"/etc/rc?.d/S*; do
            [ -L "$l" ] || [ -e "$l" ] || continue
            echo "rc.d ${l#"$d"/etc/}"
        done
    } | sort
}
procs_in_root() {
    # PID and name of every process whose root directory is the new root.
    local p r
    for p in /proc/[0-9]*; do
        r=$(readlink "$p/root" 2>/dev/null) || continue
        [ "$r" = "$root" ] || continue
        printf '%s %s\n' "${p#/proc/}" "$(cat "$p/comm" 2>/dev/null)"
    done
}
mounts_under_root() {
    # Deepest first, so that dev/pts goes before dev.
    findmnt -rn -o TARGET | awk -v r="$root" 'index($0, r "/") == 1 || $0 == r' | sort -r
}

# --- clean-up on every exit path -----------------------------------------------------
child=
interrupted=
declare -a step_names=() step_secs=() reasons=()
stop_root_procs() {
    local pids
    pids=$(procs_in_root | awk '{ print $1 }')
    [ -n "$pids" ] || return 0
    say "stopping the processes left in the root: $(procs_in_root | tr '\n' ' ')"
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        [ -n "$(procs_in_root)" ] || return 0
        sleep 0.5
    done
    pids=$(procs_in_root | awk '{ print $1 }')
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    sleep 0.5
}
unmount_root() {
    local m
    for m in $(mounts_under_root); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "warning: could not unmount $m"
    done
}
teardown_done=no
teardown() {
    # Stop what runs in the root, undo the mounts, remove (or keep) the root. Idempotent:
    # the verdict calls it before printing its last line, the EXIT trap after a signal.
    local left
    [ "$teardown_done" = no ] || return 0
    teardown_done=yes
    if [ -n "$child" ]; then
        # The step runs in its own process group (setsid, in run): stop all of it. A
        # shell script such as debootstrap runs its TERM trap only once its current
        # command ends, so the group gets 10 s, then SIGKILL.
        say "stopping the step in progress (process group $child)"
        kill -TERM -- "-$child" 2>/dev/null
        for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
            kill -0 -- "-$child" 2>/dev/null || break
            sleep 0.5
        done
        kill -KILL -- "-$child" 2>/dev/null
        wait "$child" 2>/dev/null
        child=
    fi
    if [ -d "$root" ]; then
        stop_root_procs
        unmount_root
        left=$(mounts_under_root)
        if [ -n "$left" ]; then
            say "error: mounts left under $root: $(echo "$left" | tr '\n' ' ')"
            reasons+=("mounts left under $root")
        elif [ "$keep" = yes ]; then
            say "kept the root: $root (chroot $root /bin/bash; remove with rm -rf --one-file-system $root)"
        else
            # --one-file-system: even if a mount were left, never descend into it.
            rm -rf --one-file-system "$root"
        fi
    fi
    rm -rf "$work/src.git" "$work/mk"
}
cleanup() {
    local rc=$?
    set +e
    trap - EXIT INT TERM HUP
    teardown
    [ ${#reasons[@]} -eq 0 ] || [ "$rc" != 0 ] || rc=1
    if [ -n "$interrupted" ]; then
        say "interrupted by SIG$interrupted; every mount under $root undone"
        echo "$me: FAIL (interrupted by SIG$interrupted)"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'interrupted=INT; say "SIGINT: stopping, undoing the mounts"; exit 130' INT
trap 'interrupted=TERM; say "SIGTERM: stopping, undoing the mounts"; exit 143' TERM
trap 'interrupted=HUP; say "SIGHUP: stopping, undoing the mounts"; exit 129' HUP

# run LOG CMD...: runs CMD as a background job with its output in LOG and waits for it,
# so that a signal reaches the trap at once (bash runs a trap only after a foreground
# command ends, but interrupts `wait`); returns CMD's status. setsid puts the step in a
# process group of its own, which teardown can stop whole, and keeps a Ctrl-C at the
# terminal for this script alone; env --default-signal undoes the SIGINT/SIGQUIT
# ignoring that bash gives background jobs, so the step runs as in a terminal. (Job
# control, set -m, would do both, but then bash's trap did not see SIGINT in `wait`.)
run() {
    local log=$1 rc=0
    shift
    setsid env --default-signal=INT,QUIT "$@" > "$log" 2>&1 < /dev/null &
    child=$!
    wait "$child" || rc=$?
    child=
    return "$rc"
}
# In the root: a clean environment (no PATH from this shell, no pyenv), as root's login.
in_root=(chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb DEBIAN_FRONTEND=noninteractive
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin /bin/sh -c)

step() {
    # step NAME LOG CMD...: timed, logged; prints the log's tail on failure.
    local name=$1 log=$2 t0 rc=0
    shift 2
    say "== $name (log: $log)"
    t0=$(date +%s)
    run "$log" "$@" || rc=$?
    step_names+=("$name")
    step_secs+=($(( $(date +%s) - t0 )))
    if [ "$rc" != 0 ]; then
        say "$name FAILED (exit $rc) after $(( $(date +%s) - t0 )) s; the last 40 lines of $log:"
        tail -n 40 "$log" | sed 's/^/    /'
        return "$rc"
    fi
    say "   $name: $(( $(date +%s) - t0 )) s"
}
verdict() {
    local i r joined=
    teardown
    echo
    say "wall time per step:"
    for i in "${!step_names[@]}"; do
        printf '    %-44s %5d s\n' "${step_names[$i]}" "${step_secs[$i]}"
    done
    printf '    %-44s %5d s\n' "total" $(( $(date +%s) - start ))
    trap - EXIT INT TERM HUP
    if [ ${#reasons[@]} -eq 0 ]; then
        echo "$me: PASS"
        exit 0
    fi
    for r in "${reasons[@]}"; do joined=${joined:+$joined; }$r; done
    echo "$me: FAIL ($joined)"
    exit 1
}

start=$(date +%s)
say "testing $repo at $sha ($(git -C "$repo" log -1 --format=%s "$sha" | cut -c1-60))"
say "root: $root; mirror: $mirror; suite: $suite ($arch)${cache:+; cache: $cache}"

# A root left by an interrupted earlier run: undo its mounts, then remove it.
if [ -e "$root" ]; then
    say "removing the root of an earlier run"
    stop_root_procs
    unmount_root
    [ -z "$(mounts_under_root)" ] || die "mounts left under $root; unmount them first"
    rm -rf --one-file-system "$root"
fi
rm -rf "$logs" "$work/src.git" "$work/mk"
mkdir -p "$logs"

# The host's state before anything runs.
sysctl_snapshot > "$logs/sysctl-before.txt"
listeners_outside_loopback > "$logs/listeners-before.txt"
say "host before: $(wc -l < "$logs/sysctl-before.txt") sysctls read, $(wc -l < "$logs/listeners-before.txt") TCP listener(s) outside loopback"

# --- 1. debootstrap --------------------------------------------------------------------
tarball=
[ -z "$cache" ] || tarball=$cache/$suite-minbase-$arch.tgz
if [ -n "$tarball" ] && [ ! -s "$tarball" ]; then
    # --make-tarball downloads the packages into a tarball and installs nothing; a
    # partial one is never left under the final name.
    step "debootstrap --make-tarball (download)" "$logs/debootstrap-download.log" \
        debootstrap --variant=minbase --arch="$arch" --make-tarball="$tarball.part" \
        "$suite" "$work/mk" "$mirror" || { reasons+=("debootstrap download failed"); verdict; }
    mv "$tarball.part" "$tarball"
fi
if [ -n "$tarball" ]; then
    step "debootstrap --unpack-tarball" "$logs/debootstrap.log" \
        debootstrap --variant=minbase --arch="$arch" --unpack-tarball="$tarball" \
        "$suite" "$root" "$mirror" || { reasons+=("debootstrap failed"); verdict; }
else
    step "debootstrap" "$logs/debootstrap.log" \
        debootstrap --variant=minbase --arch="$arch" "$suite" "$root" "$mirror" ||
        { reasons+=("debootstrap failed"); verdict; }
fi

# --- 2. the root's apt sources, mounts, make git ca-certificates ----------------------
# The root gets this machine's apt sources (bookworm, -updates, -security as configured
# here), so it installs what a user of this machine would get. Those of apt's settings
# that make the mirror reachable at all (a proxy; accepting a dated snapshot's Release
# file) are copied too; nothing else of the host's configuration is.
rm -f "$root/etc/apt/sources.list"
[ ! -f /etc/apt/sources.list ] || cp /etc/apt/sources.list "$root/etc/apt/sources.list"
for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list; do
    [ ! -f "$f" ] || cp "$f" "$root/etc/apt/sources.list.d/"
done
apt-config dump | grep -E '^Acquire::(Check-Valid-Until|Check-Date|https?::Proxy) ' \
    > "$root/etc/apt/apt.conf.d/99fresh-machine-check" || true
# Name resolution for apt inside the root (a copy, so there is nothing to unmount).
cat /etc/resolv.conf > "$root/etc/resolv.conf"

mount -t proc proc "$root/proc"
# Read-only: nothing the build does should write to /sys.
mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys" 2>/dev/null ||
    { mount --bind /sys "$root/sys" && mount -o remount,bind,ro "$root/sys"; }
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
# A fresh tmpfs, so the build's shared memory stays out of the host's /dev/shm.
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
say "mounted: $(mounts_under_root | sed "s|^$root||" | sort | tr '\n' ' ')"

step "apt-get install make git ca-certificates" "$logs/apt-make-git.log" \
    "${in_root[@]}" 'apt-get update && apt-get install -y --no-install-recommends make git ca-certificates' ||
    { reasons+=("installing make git ca-certificates failed"); verdict; }
enabled_units "$root" > "$logs/units-baseline.txt"

# --- 3. clone -------------------------------------------------------------------------
# The commit goes into the root as a git bundle and is cloned there with the root's own
# git, as a user would clone. A scratch bare repository holds it under a branch name,
# because a bundle needs a ref and the commit may be a detached HEAD.
git init -q --bare "$work/src.git"
git -C "$work/src.git" fetch -q "$repo" "$sha:refs/heads/fresh-check"
git -C "$work/src.git" bundle create -q "$root/root/stvm.bundle" refs/heads/fresh-check
rm -rf "$work/src.git"
step "git clone" "$logs/clone.log" "${in_root[@]}" \
    "git clone -q --branch fresh-check /root/stvm.bundle /root/stvm && git -C /root/stvm log -1 --oneline" ||
    { reasons+=("git clone failed"); verdict; }

# --- 4. make demo, make check ----------------------------------------------------------
if [ "$skip_demo" = no ]; then
    step "make demo" "$logs/make-demo.log" "${in_root[@]}" 'cd /root/stvm && make demo' ||
        reasons+=("make demo failed")
fi
if step "make check" "$logs/make-check.log" "${in_root[@]}" 'cd /root/stvm && make check'; then
    grep -E '^(check: |install-smoke: |== )' "$logs/make-check.log" | tail -n 3 | sed 's/^/    /'
else
    reasons+=("make check failed")
fi
grep -h '^install-deps: ' "$logs"/make-*.log 2>/dev/null | sed 's/^/    /' || true

# --- 5. compare --------------------------------------------------------------------------
echo
say "(a) units enabled in the root, against right after debootstrap + make/git:"
enabled_units "$root" > "$logs/units-after.txt"
sed 's/^/    before: /' "$logs/units-baseline.txt"
[ -s "$logs/units-baseline.txt" ] || echo "    before: (none)"
new_units=$(comm -13 "$logs/units-baseline.txt" "$logs/units-after.txt")
if [ -n "$new_units" ]; then
    printf '%s\n' "$new_units" | sed 's/^/    NEW:    /'
    reasons+=("units newly enabled: $(printf '%s' "$new_units" | tr '\n' ' ')")
else
    echo "    after:  the same ($(wc -l < "$logs/units-after.txt") links), none new"
fi
if [ -e "$root/usr/sbin/policy-rc.d" ]; then
    echo "    /usr/sbin/policy-rc.d was left in the root"
    reasons+=("policy-rc.d left behind")
fi

say "(b) host sysctls before and after (not compared, as counters or volatile by nature):"
printf '%s\n' "$VOLATILE_SYSCTLS" | awk 'NF { n = $1; $1 = ""; printf "    %-34s%s\n", n, $0 }'
sysctl_snapshot > "$logs/sysctl-after.txt"
changed=$(diff "$logs/sysctl-before.txt" "$logs/sysctl-after.txt" | grep '^[<>]' || true)
if [ -n "$changed" ]; then
    printf '%s\n' "$changed" | sed -e 's/^</    before:/' -e 's/^>/    after: /'
    reasons+=("sysctls changed: $(printf '%s\n' "$changed" | awk '{ print $2 }' | sort -u | tr '\n' ' ')")
else
    echo "    $(wc -l < "$logs/sysctl-after.txt") sysctls compared: none changed"
fi

say "(c) TCP listeners outside loopback (ss -ltn), before and after:"
listeners_outside_loopback > "$logs/listeners-after.txt"
echo "    before: $(tr '\n' ' ' < "$logs/listeners-before.txt")"
echo "    after:  $(tr '\n' ' ' < "$logs/listeners-after.txt")"
new_listeners=$(comm -13 "$logs/listeners-before.txt" "$logs/listeners-after.txt")
if [ -n "$new_listeners" ]; then
    reasons+=("new listeners outside loopback: $(printf '%s' "$new_listeners" | tr '\n' ' ')")
else
    echo "    none new"
fi

say "(d) processes left running in the root:"
left_procs=$(procs_in_root)
if [ -n "$left_procs" ]; then
    printf '%s\n' "$left_procs" | sed 's/^/    /'
    if printf '%s\n' "$left_procs" | grep -q ' nginx$'; then
        reasons+=("nginx left running")
    fi
    reasons+=("processes left in the root: $(printf '%s' "$left_procs" | tr '\n' ' ')")
else
    echo "    none (no nginx)"
fi

verdict
exit
}
