#!/bin/sh
# Rewrite the lab's expected outputs: for every built-in scenario and every example
# (lab/scenarios/examples/*.scenario), its text (stdout) and JSON.
# Usage: lab-golden.sh BUILD/stvm-lab DIR. Review the diff before committing it.
set -eu
lab=$1
dir=$2
mkdir -p "$dir"
for name in $("$lab" list | sed 's/  .*//'); do
    "$lab" run "$name" --trace "$dir/$name.json" < /dev/null > "$dir/$name.txt"
    echo "lab-golden: $dir/$name.txt, $dir/$name.json"
done
for file in lab/scenarios/examples/*.scenario; do
    name=$(basename "$file" .scenario)
    "$lab" run "$file" --trace "$dir/$name.json" < /dev/null > "$dir/$name.txt"
    echo "lab-golden: $dir/$name.txt, $dir/$name.json"
done
