#!/bin/sh
# Includes point down only: vm < scheduler < primitives < image-stubs < bench, examples.
# A file may include its own layer, lower layers and include/; nothing above it.
set -eu
rank() {
    case "$1" in
        include) echo 0 ;; vm) echo 1 ;; scheduler) echo 2 ;; primitives) echo 3 ;;
        image-stubs) echo 4 ;; bench|examples|tests|lab) echo 5 ;; *) echo 9 ;;
    esac
}
bad=0
for f in $(ls vm/* scheduler/* primitives/* image-stubs/* bench/* examples/* lab/* 2>/dev/null | grep -E '\.(c|h)$'); do
    dir=${f%%/*}
    mine=$(rank "$dir")
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        case "$inc" in
            ../*) target=$(echo "$inc" | sed 's|^\.\./||; s|/.*||') ;;
            */*) target=${inc%%/*} ;;
            stvm.h) target=include ;;
            *) target=$dir ;;
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
