#!/bin/sh
# Install into a scratch prefix with DESTDIR, then build an outside program that includes
# only <stvm.h> (examples/semantics_tour.c) with `pkg-config --cflags --libs stvm`, and
# run it against the installed shared library, and under gdb, which must auto-load the
# installed extension for it; run the installed tools (stvm-lab, which must find its
# installed scenarios, and stvm-bench) and render the installed manual pages; check that
# nothing of experiments/ was installed; then uninstall and check that the scratch tree
# is exactly as it was before the install: the folders install created are gone, and a
# folder that existed before (bin/ here, standing for /usr/local/bin) is kept with what
# else was in it.
set -eu
me=install-smoke
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/dest
work=$tmp/work
prefix=/opt/stvm-smoke
mkdir -p "$dest$prefix/bin" "$work"
echo "not stvm's" > "$dest$prefix/bin/other-tool"
(cd "$dest" && find . | sort) > "$work/before.txt"

make -s install PREFIX=$prefix DESTDIR="$dest" >/dev/null
export PKG_CONFIG_SYSROOT_DIR="$dest"
export PKG_CONFIG_PATH="$dest$prefix/lib/pkgconfig"
# The soname, the link named after it and stvm.pc's abi_version all follow the header's
# STVM_ABI_VERSION.
abi=$(sed -n 's/^#define STVM_ABI_VERSION \([0-9]*\)$/\1/p' include/stvm/core.h)
soname=$(readelf -d "$dest$prefix/lib/libstvm.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libstvm.so.$abi" ] || { echo "$me: soname $soname, the header says libstvm.so.$abi"; exit 1; }
[ -L "$dest$prefix/lib/libstvm.so.$abi" ] || { echo "$me: no link libstvm.so.$abi"; exit 1; }
[ "$(pkg-config --variable=abi_version stvm)" = "$abi" ] ||
    { echo "$me: stvm.pc's abi_version is not $abi"; exit 1; }
echo "$me: soname $soname, its link and stvm.pc's abi_version agree with STVM_ABI_VERSION"
src=examples/semantics_tour.c
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "$src" -o "$work/tour" $(pkg-config --cflags --libs stvm) -lpthread
LD_LIBRARY_PATH="$dest$prefix/lib" "$work/tour" > "$work/out.txt"
echo "$me: $src built with 'pkg-config --cflags --libs stvm' against an installed copy and ran ($(wc -l < "$work/out.txt") lines of output)"
# gdb auto-loads the installed extension for the installed library: it looks under each
# auto-load folder for the library's real path (every symlink followed) + "-gdb.py".
# Staged under DESTDIR, that path holds DESTDIR too, so a scratch auto-load folder maps
# it onto the installed file; then gdb, stopped in the tour's first stvm_run, lists its
# processes with the extension's command.
version=$(sed -n 's/#define STVM_VERSION_STRING "\(.*\)"/\1/p' include/stvm/core.h)
script=$dest$prefix/share/gdb/auto-load$prefix/lib/libstvm.so.$version-gdb.py
[ -f "$script" ] || { echo "$me: $prefix/share/gdb/auto-load$prefix/lib/libstvm.so.$version-gdb.py was not installed"; exit 1; }
[ -f "$dest$prefix/share/stvm/gdb/stvm-gdb.py" ] || { echo "$me: $prefix/share/stvm/gdb/stvm-gdb.py was not installed"; exit 1; }
if command -v gdb > /dev/null; then
    real=$(readlink -f "$dest$prefix/lib/libstvm.so.$abi")
    mkdir -p "$work/auto-load$(dirname "$real")"
    ln -s "$script" "$work/auto-load$real-gdb.py"
    gdb -nx -batch -iex "set auto-load safe-path /" -iex "set auto-load scripts-directory $work/auto-load" \
        -ex "set environment LD_LIBRARY_PATH=$dest$prefix/lib" -ex "set breakpoint pending on" \
        -ex "break stvm_run" -ex run -ex "info auto-load python-scripts" -ex "info stvm-processes" \
        "$work/tour" > "$work/gdb.txt" 2>&1 || true
    if ! grep -q "^Yes .*libstvm.so.$version-gdb.py" "$work/gdb.txt" || ! grep -q "Idle Process" "$work/gdb.txt"; then
        echo "$me: gdb did not auto-load the installed extension for the installed library, or its listing failed:"
        cat "$work/gdb.txt"
        exit 1
    fi
    echo "$me: gdb auto-loaded $prefix/share/gdb/auto-load$prefix/lib/libstvm.so.$version-gdb.py for $(basename "$real") and listed the tour's processes"
else
    echo "$me: gdb is not installed; the extension is installed, gdb's auto-load is not tried"
fi
# Each audience's header on its own, as installed: it includes what it needs (stvm/core.h).
for h in "$dest$prefix"/include/stvm/*.h; do
    name=stvm/${h##*/}
    [ "$name" = stvm/deprecated.h ] && continue   # included by stvm.h only
    printf '#include <%s>\nint main(void) { return stvm_version() == 0; }\n' "$name" > "$work/one.c"
    # shellcheck disable=SC2046
    cc -std=c11 -Wall -Wextra -Werror "$work/one.c" -o "$work/one" $(pkg-config --cflags --libs stvm) ||
        { echo "$me: a program including only <$name> did not build"; exit 1; }
    LD_LIBRARY_PATH="$dest$prefix/lib" "$work/one" || { echo "$me: the <$name> program failed"; exit 1; }
done
echo "$me: a program including only one of $(ls "$dest$prefix"/include/stvm/ | grep -vc deprecated) sub-headers each built and ran against the installed copy"

for t in stvm-bench stvm-lab; do
    [ -x "$dest$prefix/bin/$t" ] || { echo "$me: $prefix/bin/$t was not installed"; exit 1; }
done
# The installed stvm-lab finds its scenarios in <exe>/../share/stvm/scenarios (not in
# the build tree, not through STVM_LAB_SCENARIOS): every one is listed, and one runs with
# the output the build tree's gives.
(unset STVM_LAB_SCENARIOS; "$dest$prefix/bin/stvm-lab" list) > "$work/lab.txt"
want=$(ls lab/scenarios/*.scenario | wc -l)
[ "$(wc -l < "$work/lab.txt")" -eq "$want" ] ||
    { echo "$me: the installed stvm-lab listed $(wc -l < "$work/lab.txt") scenarios, not $want"; exit 1; }
(unset STVM_LAB_SCENARIOS; "$dest$prefix/bin/stvm-lab" run priority_preemption) < /dev/null > "$work/lab-run.txt"
cmp -s "$work/lab-run.txt" tests/lab/priority_preemption.txt ||
    { echo "$me: the installed stvm-lab's priority_preemption differs from tests/lab/"; exit 1; }
"$dest$prefix/bin/stvm-bench" delay --help > /dev/null
echo "$me: installed stvm-lab runs ($want scenarios listed from $prefix/share/stvm/scenarios, one run as expected), stvm-bench runs"
for page in man1/stvm-bench.1 man1/stvm-lab.1 man3/stvm.3; do
    f=$dest$prefix/share/man/$page
    [ -f "$f" ] || { echo "$me: $prefix/share/man/$page was not installed"; exit 1; }
    MANWIDTH=80 man -l "$f" > /dev/null || { echo "$me: the installed $page does not render"; exit 1; }
done
echo "$me: the three manual pages are installed under $prefix/share/man and render"
# The experiments run from the source tree: none of their programs, scripts or plots
# is installed (the only Python installed is the gdb extension).
if (cd "$dest" && find . | grep -v '/gdb/' | grep -E '/bin/(znclient|osvm785|harness)|experiments|/plots|\.gp$|\.py$'); then
    echo "$me: something of experiments/ was installed (above)"
    exit 1
fi
echo "$me: nothing of experiments/ is installed"

make -s uninstall PREFIX=$prefix DESTDIR="$dest" >/dev/null
(cd "$dest" && find . | sort) > "$work/after.txt"
if ! diff -u "$work/before.txt" "$work/after.txt" > "$work/diff.txt"; then
    echo "$me: make uninstall did not leave the scratch prefix as it was (- before, + after):"
    sed -n '3,$p' "$work/diff.txt"
    exit 1
fi
echo "$me: make uninstall removed what install put there and the folders it created; the existing bin/ kept its other file"
