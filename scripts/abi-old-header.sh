#!/bin/sh
# The two-build ABI check (include/README.md, "Structs that grow"): a program compiled
# against an older stvm.h keeps working with the library built from this tree.
#
# The older header is made from this tree's: each public struct's newest fields are cut
# off (what the header said before they were appended; the config loses osvm764_fixes
# and osvm764_idle_beat_us, a pair that keeps it free of tail padding, and cpu_time
# with the unused bytes that fill it out). tests/abi/old_client.c is compiled
# against that copy, linked with the shared library (build/libstvm.so), and run; then
# once more against the real header, as the baseline. Usage: abi-old-header.sh [BUILD]
set -eu
me=abi-old-header
B=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/old"

# The field declarations to cut, in whichever public header holds each struct (a
# field's comment may go on over further lines: they go with it, up to the line that
# closes the comment). The other headers are copied as they are.
cut_fields() {
    awk '
    function starts(line) {
        return line ~ /^    uint32_t osvm764_fixes;/ || line ~ /^    uint32_t osvm764_idle_beat_us;/ ||
               line ~ /^    int wait_kind;/ || line ~ /^    int wait_fd;/ ||
               line ~ /^    const void \*wait_handle;/ || line ~ /^    const char \*wait_name;/ ||
               line ~ /^    uint64_t wait_since_us;/ || line ~ /^    uint64_t buffer_bytes;/ ||
               line ~ /^    int64_t extra;/ || line ~ /^    uint64_t socket_reads_blocked;/ ||
               line ~ /^    uint64_t callbacks_refused;/ || line ~ /^    bool cpu_time;/ ||
               line ~ /^    uint8_t unused_1\[7\];/ || line ~ /^    uint64_t cpu_ns;/
    }
    skipping { if ($0 ~ /\*\//) skipping = 0; next }
    starts($0) { cut++; if ($0 ~ /\/\*/ && $0 !~ /\*\//) skipping = 1; next }
    { print }
    END { print cut + 0 > "/dev/stderr" }
    '
}
cuts=0
for h in $(cd include && find . -name '*.h' | sort); do
    mkdir -p "$tmp/old/$(dirname "$h")"
    n=$(cut_fields < "include/$h" 2>&1 > "$tmp/old/$h")
    cuts=$((cuts + n))
done
[ "$cuts" -eq 14 ] || { echo "$me: cut $cuts fields from the headers, not 14"; exit 1; }

# The shared library under its soname, as an installed copy would be found.
abi=$(sed -n 's/^#define STVM_ABI_VERSION \([0-9]*\)$/\1/p' include/stvm/core.h)
mkdir -p "$tmp/lib"
ln -s "$(cd "$B" && pwd)/libstvm.so" "$tmp/lib/libstvm.so.$abi"
ln -s "libstvm.so.$abi" "$tmp/lib/libstvm.so"
for h in old new; do
    inc=$tmp/old
    [ $h = new ] && inc=include
    cc -std=c11 -Wall -Wextra -Werror -I"$inc" tests/abi/old_client.c -o "$tmp/${h}_client" \
        -L"$tmp/lib" -lstvm -Wl,-rpath,"$tmp/lib"
done
# The library that runs is the tree's, not one installed elsewhere.
ldd "$tmp/old_client" | grep -q "libstvm.so.$abi => $tmp/lib/libstvm.so.$abi" ||
    { echo "$me: the old client does not load $B/libstvm.so"; exit 1; }

for client in new old; do
    if ! "$tmp/${client}_client" > "$tmp/$client.txt"; then
        echo "$me: the client built with the $client header failed:"
        cat "$tmp/$client.txt"
        exit 1
    fi
done
new=$(sed -n 1p "$tmp/new.txt")
old=$(sed -n 1p "$tmp/old.txt")
[ "$new" != "$old" ] || { echo "$me: the old header's structs are not smaller: $old"; exit 1; }
echo "$me: new header ($new) and old header ($old): $(grep -c '^ok' "$tmp/old.txt") checks passed against $B/libstvm.so"
