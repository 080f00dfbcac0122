#!/usr/bin/env python3
"""Check a page written by stvm-lab's --html (lab/html.c; the lab_html suite runs this):
it is one self-contained file (no http:// or https:// anywhere, no <script src>, <link>,
<img>, <iframe> or CSS url()); its embedded data (the #trace-data script) is valid JSON
with the fields the page's script reads, every span and mark on a track that exists,
every span's state known and its seq and time not going backwards; the text timeline is
there. Prints "tracks N spans N marks N counts N" and exits 0, or prints the first
problem and exits 1."""
import json
import re
import sys


def fail(msg):
    print("lab_html_check: " + msg)
    sys.exit(1)


def main(path):
    with open(path, encoding="utf-8") as f:
        page = f.read()
    low = page.lower()
    for bad in ("http://", "https://", "<link", "<img", "<iframe", "url("):
        if bad in low:
            fail("the page refers outside itself: %r at %d" % (bad, low.index(bad)))
    if re.search(r"<script[^>]*\bsrc\s*=", low):
        fail("a <script src=...>: the page must carry its script")
    m = re.search(r'<script type="application/json" id="trace-data">(.*?)</script>', page, re.S)
    if not m:
        fail("no #trace-data script")
    try:
        d = json.loads(m.group(1))
    except ValueError as e:
        fail("the embedded data is not JSON: %s" % e)
    for key in ("title", "clock", "events", "dropped", "cut", "states", "tracks", "spans",
                "marks", "counts"):
        if key not in d:
            fail("the data has no %r" % key)
    ntracks, nstates = len(d["tracks"]), len(d["states"])
    tids = [t[0] for t in d["tracks"]]
    if tids != sorted(set(tids)):
        fail("tracks are not in tid order, or one repeats")
    for i, s in enumerate(d["spans"]):
        track, state, seq0, seq1, ns0, ns1, name = s
        if not 0 <= track < ntracks or not 0 <= state < nstates:
            fail("span %d: track %d or state %d out of range" % (i, track, state))
        if seq1 < seq0 or ns1 < ns0:
            fail("span %d ends before it begins" % i)
        if not isinstance(name, str):
            fail("span %d: its name is not a string" % i)
    for i, mk in enumerate(d["marks"]):
        track, seq, ns, name, detail = mk
        if not -1 <= track < ntracks or not isinstance(name, str) or not name:
            fail("mark %d: track %d out of range or no name" % (i, track))
    if '<details id="text">' not in page or "<pre>" not in page:
        fail("no text timeline (details#text with a pre)")
    print("tracks %d spans %d marks %d counts %d" % (ntracks, len(d["spans"]), len(d["marks"]),
                                                      len(d["counts"])))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: lab_html_check.py PAGE.html")
        sys.exit(2)
    main(sys.argv[1])
