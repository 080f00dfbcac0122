#!/usr/bin/env python3
"""Check a Trace Event JSON file written by stvm_trace_write_json (used by the trace and
lab suites): it parses; otherData.dropped is a count; every entry but the metadata carries
args.seq; on every track (tid) the times never go backwards and every B has its E; each
track is named by exactly one thread_name metadata event, and no two tracks share one.
Prints the first problem and exits 1, or exits 0."""
import json
import sys


def fail(msg):
    print("trace_check: " + msg)
    sys.exit(1)


def main(path):
    with open(path) as f:
        doc = json.load(f)
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        fail("no traceEvents list")
    dropped = doc.get("otherData", {}).get("dropped")
    if not isinstance(dropped, int) or dropped < 0:
        fail("otherData.dropped is not a count")
    names, last_ts, open_slices, used = {}, {}, {}, set()
    for i, e in enumerate(events):
        ph = e.get("ph")
        if ph == "M":
            if e.get("name") == "thread_name":
                tid = e["tid"]
                if tid in names:
                    fail("track %d named twice" % tid)
                names[tid] = e["args"]["name"]
            continue
        if not isinstance(e.get("args", {}).get("seq"), int):
            fail("entry %d has no args.seq: %r" % (i, e))
        if "tid" not in e:
            continue
        tid, ts = e["tid"], float(e["ts"])
        used.add(tid)
        if ts < last_ts.get(tid, 0.0):
            fail("track %d goes back in time at entry %d (%r < %r)" % (tid, i, ts, last_ts[tid]))
        last_ts[tid] = ts
        if ph == "B":
            open_slices.setdefault(tid, []).append(e["name"])
        elif ph == "E":
            if not open_slices.get(tid):
                fail("track %d: E without B at entry %d" % (tid, i))
            open_slices[tid].pop()
        elif ph == "X" and float(e["dur"]) < 0:
            fail("entry %d: negative duration" % i)
    for tid, stack in open_slices.items():
        if stack:
            fail("track %d: slice %r never closed" % (tid, stack[-1]))
    for tid in used:
        if tid not in names:
            fail("track %d has no thread_name" % tid)
    if len(set(names.values())) != len(names):
        fail("two tracks share a name")
    print("trace_check: %d entries, %d tracks, %d dropped" % (len(events), len(names), dropped))


if __name__ == "__main__":
    main(sys.argv[1])
