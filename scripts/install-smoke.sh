#!/bin/sh
# Install into a scratch prefix with DESTDIR, then build an outside program that includes
# only <stvm.h> (examples/semantics_tour.c) with `pkg-config --cflags --libs stvm`, and
# run it against the installed shared library.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=/opt/stvm-smoke
make -s install PREFIX=$prefix DESTDIR="$tmp" >/dev/null
export PKG_CONFIG_SYSROOT_DIR="$tmp"
export PKG_CONFIG_PATH="$tmp$prefix/lib/pkgconfig"
src=examples/semantics_tour.c
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror "$src" -o "$tmp/tour" $(pkg-config --cflags --libs stvm) -lpthread
LD_LIBRARY_PATH="$tmp$prefix/lib" "$tmp/tour" > "$tmp/out.txt"
echo "install-smoke: $src built with 'pkg-config --cflags --libs stvm' against an installed copy and ran ($(wc -l < "$tmp/out.txt") lines of output)"
