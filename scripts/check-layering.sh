#!/bin/sh
# Includes point down only: vm < scheduler < primitives < image-stubs < the tools (bench,
# lab, examples, experiments, and tools/, what the tools share). A file may include its
# own layer, lower layers and include/; nothing above it. A layer is a top-level folder,
# its sub-folders included (image-stubs/kernel/, ...): an include is resolved from the
# including file's folder, and its layer is where it lands.
#
# The tools are held to the public API: a file of bench/, lab/, examples/, experiments/ or
# tools/ includes <stvm.h> (not <stvm/...>, not a library folder's header), headers of its
# own folder (bench/, lab/, examples/ or tools/ for theirs, its experiment's folder
# (experiments/NAME/, sub-folders included) for an experiment's) and tools/'s, which the
# tools share. The one exception, named here, is experiments/znclient/internal.h, which
# says which of the library's internal declarations the ZnClient experiment needs and why.
set -eu
EXCEPTION=experiments/znclient/internal.h
rank() {
    case "$1" in
        include) echo 0 ;; vm) echo 1 ;; scheduler) echo 2 ;; primitives) echo 3 ;;
        image-stubs) echo 4 ;; bench|examples|tests|lab|experiments|tools) echo 5 ;; *) echo 9 ;;
    esac
}
# fold PATH: PATH with every "a/../" pair folded away.
fold() {
    path=$1
    while :; do
        folded=$(echo "$path" | sed -e 's|/\./|/|g' -e 's|^\./||' -e 's|[^/.][^/]*/\.\./||')
        [ "$folded" = "$path" ] && break
        path=$folded
    done
    echo "$path"
}
# home FILE: the folder a tool's file may include from.
home() {
    case "$1" in
        experiments/*/*) echo "$1" | cut -d/ -f1-2 ;;
        *) echo "${1%%/*}" ;;
    esac
}
bad=0
tools=0
for f in $(find vm scheduler primitives image-stubs bench examples lab experiments tools \
               -name '*.[ch]' 2>/dev/null | sort); do
    dir=${f%%/*}
    mine=$(rank "$dir")
    tool=no
    case "$dir" in bench|lab|examples|experiments|tools) tool=yes; tools=$((tools + 1)) ;; esac
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        case "$inc" in
            stvm.h) path=include/stvm.h ;;
            *) path=$(fold "$(dirname "$f")/$inc") ;;
        esac
        case "$path" in ../*) target=outside ;; *) target=${path%%/*} ;; esac
        theirs=$(rank "$target")
        if [ "$theirs" -gt "$mine" ]; then
            echo "layering: $f includes $inc (layer $target is above $dir)"
            bad=1
        fi
        [ "$tool" = yes ] && [ "$f" != "$EXCEPTION" ] || continue
        h=$(home "$f")
        case "$path" in
            include/stvm.h) ;;
            "$h"/* | tools/*) ;;
            *) echo "layering: $f includes \"$inc\" ($path): a tool includes <stvm.h>," \
                    "its own folder's ($h/) headers and tools/'s only"
               bad=1 ;;
        esac
    done
    if [ "$tool" = yes ]; then
        for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\(stvm[^>]*\)>.*/\1/p' "$f"); do
            [ "$inc" = stvm.h ] && continue
            echo "layering: $f includes <$inc>: a tool includes <stvm.h> only"
            bad=1
        done
    fi
done
if [ "$bad" = 0 ]; then
    echo "layering: includes point down only"
    echo "layering: bench/, lab/, examples/, experiments/ and tools/ ($tools files) include" \
         "<stvm.h>, their own folder's headers and tools/'s only; the one exception: $EXCEPTION"
fi
exit $bad
