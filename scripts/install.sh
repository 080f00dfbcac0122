#!/bin/sh
# `make install` and `make uninstall` (the Makefile passes DESTDIR, PREFIX, LIBDIR,
# INCLUDEDIR, BINDIR, DATADIR, MANDIR, VERSION, ABI (the soname's number) and B, the
# build folder).
#
# install copies the headers (stvm.h and include/stvm/*.h), both libraries (with the
# .so.ABI and .so links), stvm.pc, the tools stvm-bench and stvm-lab and the manual
# pages stvm-bench(1), stvm-lab(1) and stvm(3) (MANDIR/man1, MANDIR/man3; all three
# made into B/man by make man: stvm-bench's by the tool, the other two from man/*.in),
# stvm-lab's built-in scenarios
# lab/scenarios/*.scenario (DATADIR/stvm/scenarios: the installed tool's
# <exe>/../share/stvm/scenarios), the gdb extension scripts/gdb/stvm-gdb.py twice: where
# gdb auto-loads it for the installed shared library (DATADIR/gdb/auto-load/LIBDIR/
# libstvm.so.VERSION-gdb.py: gdb looks for OBJFILE-gdb.py under its auto-load folders,
# OBJFILE the library's real file name with every symlink followed, as libstdc++'s
# printers are installed) and as DATADIR/stvm/gdb/stvm-gdb.py, to `source` for a
# program linked with the static library (docs/debugging.md, "gdb"), and writes a
# manifest, DATADIR/stvm/install-manifest:
# one line per file installed ("f PATH") and per folder it had to create ("d PATH"),
# paths without DESTDIR, so a staged install's manifest stays right once it is moved.
# uninstall removes the files the manifest names, the manifest itself, and then the
# folders it names, deepest first and only when empty: a folder that was there before
# the install (/usr/local/bin, say) is never named, so it stays. The experiments
# (experiments/) are not installed: they run from the source tree.
set -eu
me=install
: "${DESTDIR=}" "${PREFIX:?}" "${LIBDIR:?}" "${INCLUDEDIR:?}" "${BINDIR:?}" "${DATADIR:?}"
: "${MANDIR:=$DATADIR/man}"
: "${VERSION:?}" "${ABI:?}" "${B:=build}"
manifest=$DATADIR/stvm/install-manifest

# mkdirs DIR...: create each DIR (under DESTDIR) and append to $new the folders that did
# not exist, parents first.
new=
mkdirs() {
    for dir in "$@"; do
        missing=
        d=$dir
        while [ -n "$d" ] && [ "$d" != / ] && [ "$d" != . ] && [ ! -d "$DESTDIR$d" ]; do
            missing="$d $missing"
            d=$(dirname "$d")
        done
        for d in $missing; do
            mkdir "$DESTDIR$d"
            echo "$me: created $DESTDIR$d"
            new="$new $d"
        done
    done
}
files=
put() { # put MODE SRC DEST
    install -m "$1" "$2" "$DESTDIR$3"
    echo "$me: $2 -> $DESTDIR$3"
    files="$files $3"
}

do_install() {
    for t in "$B/libstvm.a" "$B/libstvm.so" "$B/stvm-bench" "$B/stvm-lab" "$B/man/stvm-bench.1" \
             "$B/man/stvm-lab.1" "$B/man/stvm.3"; do
        [ -f "$t" ] || { echo "$me: $t is not built (make lib tools man)" >&2; exit 1; }
    done
    # Folders a previous install created stay on the list, so a reinstall followed by
    # one uninstall still removes them.
    old_dirs=
    if [ -f "$DESTDIR$manifest" ]; then
        old_dirs=$(sed -n 's/^d //p' "$DESTDIR$manifest")
    fi
    gdb_auto=$DATADIR/gdb/auto-load$LIBDIR
    mkdirs "$INCLUDEDIR" "$INCLUDEDIR/stvm" "$LIBDIR/pkgconfig" "$BINDIR" "$DATADIR/stvm" "$DATADIR/stvm/scenarios" "$DATADIR/stvm/gdb" "$gdb_auto" "$MANDIR/man1" "$MANDIR/man3"
    put 644 include/stvm.h "$INCLUDEDIR/stvm.h"
    for h in include/stvm/*.h; do
        put 644 "$h" "$INCLUDEDIR/stvm/${h##*/}"
    done
    put 644 "$B/libstvm.a" "$LIBDIR/libstvm.a"
    put 755 "$B/libstvm.so" "$LIBDIR/libstvm.so.$VERSION"
    ln -sf "libstvm.so.$VERSION" "$DESTDIR$LIBDIR/libstvm.so.$ABI"
    ln -sf "libstvm.so.$ABI" "$DESTDIR$LIBDIR/libstvm.so"
    files="$files $LIBDIR/libstvm.so.$ABI $LIBDIR/libstvm.so"
    sed -e "s|@PREFIX@|$PREFIX|" -e "s|@LIBDIR@|$LIBDIR|" -e "s|@INCLUDEDIR@|$INCLUDEDIR|" \
        -e "s|@VERSION@|$VERSION|" -e "s|@ABI@|$ABI|" stvm.pc.in > "$DESTDIR$LIBDIR/pkgconfig/stvm.pc"
    echo "$me: stvm.pc -> $DESTDIR$LIBDIR/pkgconfig/stvm.pc"
    files="$files $LIBDIR/pkgconfig/stvm.pc"
    put 755 "$B/stvm-bench" "$BINDIR/stvm-bench"
    put 755 "$B/stvm-lab" "$BINDIR/stvm-lab"
    put 644 "$B/man/stvm-bench.1" "$MANDIR/man1/stvm-bench.1"
    put 644 "$B/man/stvm-lab.1" "$MANDIR/man1/stvm-lab.1"
    put 644 "$B/man/stvm.3" "$MANDIR/man3/stvm.3"
    for sc in lab/scenarios/*.scenario; do
        put 644 "$sc" "$DATADIR/stvm/scenarios/${sc##*/}"
    done
    put 644 scripts/gdb/stvm-gdb.py "$gdb_auto/libstvm.so.$VERSION-gdb.py"
    put 644 scripts/gdb/stvm-gdb.py "$DATADIR/stvm/gdb/stvm-gdb.py"
    {
        echo "# stvm $VERSION: installed by make install; make uninstall reads this"
        for f in $files $manifest; do echo "f $f"; done
        for d in $old_dirs $new; do echo "d $d"; done | awk '!seen[$0]++'
    } > "$DESTDIR$manifest"
    echo "$me: wrote $DESTDIR$manifest"
}

do_uninstall() {
    if [ ! -f "$DESTDIR$manifest" ]; then
        # An install made before the manifest existed: its files, no folders.
        echo "$me: no $DESTDIR$manifest; removing the files an install puts there"
        rm -f "$DESTDIR$INCLUDEDIR/stvm.h" "$DESTDIR$LIBDIR/libstvm.a" "$DESTDIR$LIBDIR"/libstvm.so* \
              "$DESTDIR$LIBDIR/pkgconfig/stvm.pc" "$DESTDIR$BINDIR/stvm-bench" "$DESTDIR$BINDIR/stvm-lab" \
              "$DESTDIR$MANDIR/man1/stvm-bench.1" "$DESTDIR$MANDIR/man1/stvm-lab.1" "$DESTDIR$MANDIR/man3/stvm.3" \
              "$DESTDIR$DATADIR"/stvm/plots/*.gp "$DESTDIR$DATADIR"/stvm/scenarios/*.scenario \
              "$DESTDIR$DATADIR/gdb/auto-load$LIBDIR/libstvm.so.$VERSION-gdb.py" \
              "$DESTDIR$DATADIR/stvm/gdb/stvm-gdb.py"
        return 0
    fi
    dirs=$(sed -n 's/^d //p' "$DESTDIR$manifest")
    sed -n 's/^f //p' "$DESTDIR$manifest" | while read -r f; do
        if [ -e "$DESTDIR$f" ] || [ -L "$DESTDIR$f" ]; then
            rm -f "$DESTDIR$f"
            echo "$me: removed $DESTDIR$f"
        fi
    done
    # Deepest first: a folder goes only once what is below it has gone.
    for d in $(printf '%s\n' "$dirs" | awk '{ print length($0), $0 }' | sort -rn | cut -d' ' -f2-); do
        [ -d "$DESTDIR$d" ] || continue
        if rmdir "$DESTDIR$d" 2>/dev/null; then
            echo "$me: removed the folder $DESTDIR$d"
        else
            echo "$me: kept $DESTDIR$d (not empty: something else was put there)"
        fi
    done
}

case ${1:-} in
install) do_install ;;
uninstall) do_uninstall ;;
*) echo "usage: $0 install|uninstall (run by make install / make uninstall)" >&2; exit 2 ;;
esac
