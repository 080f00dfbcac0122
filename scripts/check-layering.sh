#!/bin/sh
# Includes point down only: vm < scheduler < primitives < image-stubs < bench, examples,
# lab, tools (what the tools share), tests.
# A file may include its own layer, lower layers and include/; nothing above it. A layer
# is a top-level folder, its sub-folders included (image-stubs/kernel/, ...): an include
# is resolved from the including file's folder, and its layer is where it lands.
set -eu
rank() {
    case "$1" in
        include) echo 0 ;; vm) echo 1 ;; scheduler) echo 2 ;; primitives) echo 3 ;;
        image-stubs) echo 4 ;; bench|examples|tests|lab|tools) echo 5 ;; *) echo 9 ;;
    esac
}
# layer_of DIR INCLUDE: the top-level folder INCLUDE (relative to DIR) lands in.
layer_of() {
    path=$1/$2
    # Fold "a/../" pairs until none is left, then take the first component.
    while :; do
        folded=$(echo "$path" | sed 's|[^/.][^/]*/\.\./||')
        [ "$folded" = "$path" ] && break
        path=$folded
    done
    case "$path" in
        ../*) echo outside ;;
        *) echo "${path%%/*}" ;;
    esac
}
bad=0
for f in $(find vm scheduler primitives image-stubs bench examples lab tools -name '*.[ch]' 2>/dev/null | sort); do
    dir=${f%%/*}
    mine=$(rank "$dir")
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        case "$inc" in
            stvm.h) target=include ;;
            *) target=$(layer_of "$(dirname "$f")" "$inc") ;;
        esac
        theirs=$(rank "$target")
        if [ "$theirs" -gt "$mine" ]; then
            echo "layering: $f includes $inc (layer $target is above $dir)"
            bad=1
        fi
        if [ "$dir" = examples ] && [ "$inc" != stvm.h ]; then
            echo "layering: example $f must include only <stvm.h> (found \"$inc\")"
            bad=1
        fi
    done
done
[ "$bad" = 0 ] && echo "layering: includes point down only"
exit $bad
