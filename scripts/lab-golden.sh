#!/bin/sh
# Rewrite the lab's expected outputs: for every scenario, its text (stdout) and JSON.
# Usage: lab-golden.sh BUILD/stvm-lab DIR. Review the diff before committing it.
set -eu
lab=$1
dir=$2
mkdir -p "$dir"
for name in $("$lab" list | sed 's/  .*//'); do
    "$lab" run "$name" --trace "$dir/$name.json" < /dev/null > "$dir/$name.txt"
    echo "lab-golden: $dir/$name.txt, $dir/$name.json"
done
