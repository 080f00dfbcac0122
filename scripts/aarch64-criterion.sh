#!/bin/sh
# Criterion for the aarch64 test binary (mk/aarch64.mk), unpacked into a folder of the
# build tree, not installed:
#   sh scripts/aarch64-criterion.sh DIR
# leaves DIR/usr/lib/aarch64-linux-gnu/libcriterion.so.3 and libnanomsg.so.5.
#
# Why not `apt-get install libcriterion3:arm64` as the other arm64 libraries are
# (scripts/install-deps.sh): on Debian 12, libnanomsg5 (Criterion's dependency) is a
# binNMU on amd64 (1.1.5+dfsg-1.1+b1) and not on arm64 (1.1.5+dfsg-1.1), and a
# Multi-Arch: same package must have one version on all architectures, so apt installs
# the arm64 Criterion only by removing the amd64 one, which every other test build
# needs. So the two arm64 packages are fetched with `apt-get download` (no root;
# needs arm64 known to dpkg, which install-deps sees to) and unpacked with
# `dpkg-deb -x`. The rest of what libcriterion.so.3 needs (libgit2-1.5, libffi8, libc6
# for arm64) installs beside the amd64 packages and is installed by install-deps.
# The headers are the amd64 libcriterion-dev's, which are the same files (same version,
# no architecture in them).
set -eu
dir=$1
me=aarch64-criterion
want="libcriterion3:arm64 libnanomsg5:arm64"
mkdir -p "$dir/debs"
rm -f "$dir/debs"/*.deb
if ! (cd "$dir/debs" && apt-get download -qq $want 2> apt.err); then
    cat "$dir/debs/apt.err" >&2
    echo "$me: could not download $want (is arm64 a dpkg architecture? make setup adds it)" >&2
    exit 1
fi
for deb in "$dir/debs"/*.deb; do
    dpkg-deb -x "$deb" "$dir"
done
lib=$dir/usr/lib/aarch64-linux-gnu
[ -e "$lib/libcriterion.so.3" ] && [ -e "$lib/libnanomsg.so.5" ] || {
    echo "$me: $lib lacks libcriterion.so.3 or libnanomsg.so.5 after unpacking" >&2
    exit 1
}
echo "$me: unpacked $want into $dir (not installed)"
