#!/bin/sh
# Install into a scratch prefix with DESTDIR, then build and run an outside program
# (examples/semantics_tour.c) that includes only <stvm.h>, using pkg-config.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=/opt/stvm-smoke
make -s install PREFIX=$prefix DESTDIR="$tmp" >/dev/null
export PKG_CONFIG_SYSROOT_DIR="$tmp"
export PKG_CONFIG_PATH="$tmp$prefix/lib/pkgconfig"
flags=$(pkg-config --cflags --libs --static stvm)
src=examples/semantics_tour.c
[ -f "$src" ] || src=examples/hello.c
cc -std=c11 -Wall -Wextra -Werror "$src" -o "$tmp/tour" $flags -Wl,-Bstatic -lstvm -Wl,-Bdynamic -lpthread -lm 2>/dev/null ||
cc -std=c11 -Wall -Wextra -Werror "$src" -o "$tmp/tour" $flags
"$tmp/tour" > "$tmp/out.txt"
echo "install-smoke: $src built with 'pkg-config --cflags --libs stvm' against an installed copy and ran ($(wc -l < "$tmp/out.txt") lines of output)"
