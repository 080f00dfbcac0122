#!/usr/bin/env python3
"""The peers experiment (README.md): DelayBenchmark's workload on stvm and on the peers
people compare a scheduler with (Go, libuv, Erlang: delay.go, delay_uv.c, delay_peer.erl,
built by `make bench-peers` into build/peers/), every system on the same pinned core,
one after the other within each repetition and N so that noise hits them alike; then the
semaphore ping-pong of stvm, Go and Erlang. It writes the measurements as JSON and the
report (the figures per system and N, the ratios stvm / peer, the ping-pong) as Markdown.

  python3 experiments/peers/run.py [--bench build/stvm-bench] [--peers-dir build/peers]
      [--cpu 0] [--concurrency 10000,100000] [--repeat 3] [--window-ms 1000]
      [--repr ms-smallint31,us-largeint31,us-smallint61] [--peer go,libuv,erlang]
      [--handoffs 2000000] [--out RUN.json] [--report RUN.md]
  python3 experiments/peers/run.py --from RUN.json --report RUN.md   (the report only)

stvm's side is `stvm-bench delay --clock real` for one representation, one N and one
repetition at the VM's default configuration, and `stvm-bench micro`'s handoff case; a
peer is a child of this process, pinned with it. A peer not built, or whose runtime is
not installed, is skipped with the reason (a line on stderr, a footer under the table),
not a failure; a peer that fails fails the run (status 1).
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import fmt, grouped, md_table, med, median, ratio  # noqa: E402

REPRS = ["ms-smallint31", "us-largeint31", "us-smallint61", "ms-smallint61"]
PEERS = ["go", "libuv", "erlang"]
PEER_FILE = {"go": "delay-go", "libuv": "delay-uv", "erlang": "delay_peer.beam"}
PINGPONG = {"go": "one-slot channels", "erlang": "messages"}   # libuv has no processes
FIGURES = ["delays_per_second", "us_per_delay", "cpu_us_per_delay", "late_p50_us",
           "late_p99_us", "late_max_us", "early_waits", "enter_count", "exit_in_window",
           "exit_count", "wall_window_ms", "cpu_window_ms"]


def durations():
    """DelayBenchmark's 1000 durations: Pharo 4/5's Random (Park-Miller, a = 16807,
    m = 2^31 - 1, in Floats step for step, as bench/random.c) seeded 42, nextInt: 50;
    checked against the first draws and the sum every peer checks again."""
    a, m = 16807.0, 2147483647.0
    q, r, seed = float(int(m / a)), m % a, 42.0
    table = []
    for _ in range(1000):
        hi = float(int(seed / q))
        lo = seed - hi * q
        t = a * lo - r * hi
        seed = t if t > 0.0 else t + m
        table.append(int(seed / m * 50) + 1)
    if table[:7] != [1, 27, 37, 14, 19, 10, 49] or sum(table) != 24686:
        sys.exit("peers: the Park-Miller self-check failed")
    return table


def parse_line(text):
    """The peer's "peer=NAME key=value ..." line as a dict of floats (and peer)."""
    for line in text.splitlines():
        if line.startswith("peer="):
            out = {}
            for item in line.split():
                k, _, v = item.partition("=")
                try:
                    out[k] = float(v)
                except ValueError:
                    out[k] = v
            return out
    return None


def run_child(argv, timeout):
    """A child's output, and its CPU seconds (user + system), or raise with the reason."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise RuntimeError("%s ended with status %d: %s" % (os.path.basename(argv[0]),
                                                           p.returncode, (p.stderr or p.stdout)
                                                           .strip().splitlines()[-1:]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return p.stdout, cpu


class Experiment:
    def __init__(self, a):
        self.a = a
        self.ns = [int(x) for x in a.concurrency.split(",")]
        self.reprs = a.repr.split(",")
        self.peers = a.peer.split(",")
        for opt, given, known in (("--repr", self.reprs, REPRS), ("--peer", self.peers, PEERS)):
            for x in given:
                if x not in known:
                    print("peers: %s: unknown '%s' (known: %s)" % (opt, x, ", ".join(known)),
                          file=sys.stderr)
                    sys.exit(2)
        self.erl = shutil.which("erl") or ("/usr/bin/erl" if os.access("/usr/bin/erl", os.X_OK)
                                           else None)
        self.missing = {}
        for p in self.peers:
            path = os.path.join(a.peers_dir, PEER_FILE[p])
            if not os.access(path, os.R_OK if p == "erlang" else os.X_OK):
                self.missing[p] = "not built: no %s (make bench-peers builds the peers)" % path
            elif p == "erlang" and not self.erl:
                self.missing[p] = ("erl not found in PATH (install erlang-nox: sh "
                                   "scripts/install-deps.sh --peers)")
        self.found = [p for p in self.peers if p not in self.missing]

    # ---- one cell ----------------------------------------------------------------

    def stvm_delay(self, repr_, n):
        out, _ = run_child([self.a.bench, "delay", "--clock", "real", "--repr", repr_,
                            "--concurrency", str(n), "--repeat", "1", "--window-ms",
                            str(self.a.window_ms), "--cpu", str(self.a.cpu), "--quiet",
                            "--format", "json"], 600)
        rec = json.loads(out)["results"][0]
        if rec["status"] != "ok":
            raise RuntimeError(rec["note"])
        v = {f: med(rec, f) for f in FIGURES}
        v["timer_slack_us"] = rec["params"]["timer_slack_us"]
        return v

    def peer_delay(self, p, n, table):
        d = self.a.peers_dir
        argv = ([self.erl, "+S", "1:1", "+SDcpu", "1:1", "+P", "2000000", "-noshell", "-pa", d,
                 "-run", "delay_peer", "main", str(n), str(self.a.window_ms), table]
                if p == "erlang" else [os.path.join(d, PEER_FILE[p]), str(n),
                                       str(self.a.window_ms), table])
        out, _ = run_child(argv, 120 + 4 * self.a.window_ms / 1000 + n / 1000)
        x = parse_line(out)
        if not x or "enter" not in x or "cpu_ms" not in x:
            raise RuntimeError("%s printed no enter= or cpu_ms=: %s" % (p, out.strip()[:200]))
        return {"enter_count": x["enter"], "cpu_window_ms": x["cpu_ms"],
                "cpu_us_per_delay": x["cpu_ms"] * 1e3 / x["enter"] if x["enter"] else None,
                "late_p50_us": x.get("late_p50_us"), "late_p99_us": x.get("late_p99_us"),
                "late_max_us": x.get("late_max_us"), "early_waits": x.get("early"),
                "exit_in_window": x.get("exit_in_window"), "exit_count": x.get("exit"),
                "wall_window_ms": x.get("wall_ms")}

    def stvm_pingpong(self):
        out, _ = run_child([self.a.bench, "micro", "--repeat", "1", "--iterations",
                            str(self.a.handoffs), "--pthread-iterations", "2", "--processes",
                            "1", "--cpu", str(self.a.cpu), "--quiet", "--format", "json"], 600)
        rec = next(r for r in json.loads(out)["results"] if r["case"] == "handoff")
        return {"ns_per_handoff": med(rec, "time_ns"), "cpu_ns_per_handoff": med(rec, "cpu_ns")}

    def peer_pingpong(self, p):
        d, h = self.a.peers_dir, str(self.a.handoffs)
        argv = ([self.erl, "+S", "1:1", "+SDcpu", "1:1", "-noshell", "-pa", d, "-run",
                 "delay_peer", "pingpong", h] if p == "erlang"
                else [os.path.join(d, PEER_FILE[p]), "pingpong", h])
        out, _ = run_child(argv, 120 + self.a.handoffs / 100000)
        x = parse_line(out)
        if not x or not x.get("handoffs") or "wall_ns" not in x or "cpu_ns" not in x:
            raise RuntimeError("%s printed no handoffs=, wall_ns= or cpu_ns=: %s"
                               % (p, out.strip()[:200]))
        return {"ns_per_handoff": x["wall_ns"] / x["handoffs"],
                "cpu_ns_per_handoff": x["cpu_ns"] / x["handoffs"]}

    # ---- the sweep ---------------------------------------------------------------

    def run(self):
        a = self.a
        for p, why in self.missing.items():
            print("peers: %s not run: %s" % (p, why), file=sys.stderr)
        os.environ["GOMAXPROCS"] = "1"   # Go's runtime reads it at start: one P, one core
        os.sched_setaffinity(0, {a.cpu})  # the peers, children, inherit the core
        systems = [("stvm", r) for r in self.reprs] + [(p, p) for p in self.found]
        cells = {"%s N=%d" % (name, n): {"system": name, "runtime": rt, "concurrency": n,
                                         "samples": [], "note": ""}
                 for n in self.ns for rt, name in systems}
        pp = {rt: {"runtime": rt, "channel": PINGPONG.get(rt, "semaphores"), "samples": [],
                   "note": ""} for rt in ["stvm"] + [p for p in self.found if p in PINGPONG]}
        failed = False
        total, done = len(cells) * a.repeat + (len(pp) * a.repeat if a.handoffs else 0), 0
        with tempfile.NamedTemporaryFile("w", prefix="stvm-peers-", suffix=".txt") as t:
            t.write("".join("%d\n" % d for d in durations()))
            t.flush()
            for k in range(a.repeat):
                for n in self.ns:
                    for rt, name in systems:
                        c = cells["%s N=%d" % (name, n)]
                        if c["note"]:
                            continue
                        try:
                            v = self.stvm_delay(name, n) if rt == "stvm" else \
                                self.peer_delay(name, n, t.name)
                            # The rate over the window as measured: a peer without
                            # priorities ends its window late at saturation.
                            e, w = v["enter_count"], v["wall_window_ms"]
                            v["delays_per_second"] = e * 1000.0 / w if w else None
                            v["us_per_delay"] = w * 1000.0 / e if e else None
                            c["samples"].append(v)
                        except (RuntimeError, subprocess.TimeoutExpired, ValueError) as x:
                            c["note"] = "repetition %d failed: %s" % (k + 1, x)
                            print("peers: %s at N = %d: %s" % (name, n, c["note"]),
                                  file=sys.stderr)
                            failed = True
                        done += 1
                        print("peers: [%d/%d] %s N=%d rep %d/%d" % (done, total, name, n, k + 1,
                                                                    a.repeat), file=sys.stderr)
                for rt, c in pp.items() if a.handoffs else []:
                    if c["note"]:
                        continue
                    try:
                        c["samples"].append(self.stvm_pingpong() if rt == "stvm"
                                            else self.peer_pingpong(rt))
                    except (RuntimeError, subprocess.TimeoutExpired, ValueError) as x:
                        c["note"] = "repetition %d failed: %s" % (k + 1, x)
                        print("peers: pingpong of %s: %s" % (rt, c["note"]), file=sys.stderr)
                        failed = True
                    done += 1
                    print("peers: [%d/%d] pingpong %s rep %d/%d" % (done, total, rt, k + 1,
                                                                    a.repeat), file=sys.stderr)
        doc = {"schema": "stvm-peers/1", "window_ms": a.window_ms, "repeat": a.repeat,
               "concurrency": self.ns, "reprs": self.reprs, "peers": self.peers,
               "peers_dir": a.peers_dir, "cpu": a.cpu, "handoffs": a.handoffs,
               "missing": self.missing, "cells": list(cells.values()),
               "pingpong": list(pp.values()) if a.handoffs else []}
        return doc, failed


# ---- the report -----------------------------------------------------------------------

def fig(cell, name):
    return median(s.get(name) for s in cell["samples"]) if cell else None


def ratios(a, b, name):
    """Each repetition of a over b's in the same repetition, then the median."""
    if not a or not b:
        return None
    return median(ratio(x.get(name), y.get(name)) for x, y in zip(a["samples"], b["samples"]))


def report(doc):
    cells = {(c["system"], c["concurrency"]): c for c in doc["cells"]}
    systems = [("stvm " + r, r) for r in doc["reprs"]] + [(p, p) for p in doc["peers"]]
    ns = doc["concurrency"]
    rows = []
    for label, name in systems:
        row = [label]
        for n in ns:
            c = cells.get((name, n))
            row += [grouped(fig(c, "delays_per_second")), fmt(fig(c, "cpu_us_per_delay"), 2),
                    "%s/%s" % (fmt(fig(c, "late_p50_us")), fmt(fig(c, "late_p99_us")))]
        rows.append(row)
    head = ["system"]
    for n in ns:
        head += ["N=%d delays/s" % n, "CPU us/delay", "late p50/p99 us"]
    footer = "\n".join("%s: %s" % (p, why) for p, why in doc["missing"].items()) or None
    out = ("# DelayBenchmark's workload on stvm, Go, libuv and Erlang\n\n%s\n\n"
           % describe(doc))
    out += md_table(head, rows, "l" + "r" * (len(head) - 1),
                    "DelayBenchmark on one pinned core: medians of %d, a %d ms window"
                    % (doc["repeat"], doc["window_ms"]), footer)
    rows = []
    for p in doc["peers"]:
        if p in doc["missing"]:
            continue
        for r in doc["reprs"]:
            row = ["%s / %s" % (r, p)]
            for n in ns:
                a, b = cells.get((r, n)), cells.get((p, n))
                row += [fmt(ratios(a, b, "delays_per_second"), 2, "x"),
                        fmt(ratios(a, b, "cpu_us_per_delay"), 2, "x")]
            rows.append(row)
    if rows:
        head = ["stvm / peer"]
        for n in ns:
            head += ["N=%d delays/s" % n, "CPU/delay"]
        out += md_table(head, rows, "l" + "r" * (len(head) - 1),
                        "stvm / peer, each repetition against the peer's in the same repetition "
                        "(medians): delays/s (higher: stvm faster) and CPU per delay (lower: stvm "
                        "cheaper)")
    pp = {c["runtime"]: c for c in doc["pingpong"]}
    if "stvm" in pp:
        rows = []
        for rt, c in pp.items():
            rows.append([rt, c["channel"], fmt(fig(c, "ns_per_handoff"), 1),
                         fmt(fig(c, "cpu_ns_per_handoff"), 1),
                         "" if rt == "stvm" else fmt(ratios(pp["stvm"], c, "ns_per_handoff"), 2,
                                                     "x")])
        out += md_table(["system", "hands over", "ns/hand-off", "CPU ns/hand-off", "stvm / peer"],
                        rows, "llrrr", "Semaphore ping-pong: ns per hand-off (medians), stvm / "
                        "peer repetition by repetition")
    notes = [c for c in doc["cells"] + doc["pingpong"] if c["note"]]
    if notes:
        out += "**Notes**\n\n" + "".join("- %s %s: %s\n" % (c.get("system", "pingpong"),
                                                          c.get("concurrency", c.get("runtime")),
                                                          c["note"]) for c in notes) + "\n"
    return out


def describe(doc):
    missing = "".join(" Not run: %s (%s)." % (p, why) for p, why in doc["missing"].items())
    return ("DelayBenchmark's workload (1000 durations of 1..50 ms from Park-Miller seed 42, a "
            "shared index, a %d ms window, then a drain as long) on stvm and each peer found in "
            "%s, one after the other within each repetition and N, all on CPU %d. delays/s "
            "counts the delays started in the window per second of the window as measured (a "
            "coordinator without priority over its workers, Go's or libuv's, ends it late at "
            "saturation); CPU per delay is the process's CPU over the window (every thread: "
            "Go's runtime, Erlang's schedulers) per delay started. stvm: `stvm-bench delay "
            "--clock real`, a fresh VM at the default configuration. Go: one goroutine per "
            "worker, time.Sleep, GOMAXPROCS=1. libuv: one uv_timer_t per worker on one loop, no "
            "context switch (a wait may end early against the worker's own clock: libuv counts "
            "from the loop's cached time). Erlang: one process per worker, receive after, erl +S "
            "1:1 (its timers have ms resolution). Lateness above 1 ms is in ms buckets in the "
            "peers (their p50/p99 are bucket upper edges); stvm's histogram is finer. The "
            "ping-pong (%d hand-offs a repetition, after the delay runs): stvm's two green "
            "processes of equal priority through two semaphores (`stvm-bench micro`'s handoff, "
            "its time_ns and cpu_ns), two goroutines through two one-slot channels, two Erlang "
            "processes sending each other a message; libuv has no processes and no ping-pong.%s"
            % (doc["window_ms"], doc["peers_dir"], doc["cpu"], doc["handoffs"], missing))


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    build = os.path.join(os.path.dirname(os.path.dirname(here)), "build")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", default=os.path.join(build, "stvm-bench"))
    ap.add_argument("--peers-dir", default=os.path.join(build, "peers"))
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--concurrency", default="10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--window-ms", type=int, default=1000)
    ap.add_argument("--repr", default="ms-smallint31,us-largeint31,us-smallint61")
    ap.add_argument("--peer", default="go,libuv,erlang")
    ap.add_argument("--handoffs", type=int, default=2000000,
                    help="the ping-pong's hand-offs per repetition; 0: none")
    ap.add_argument("--out", help="the measurements as JSON")
    ap.add_argument("--report", help="the Markdown report (default: on standard output)")
    ap.add_argument("--from", dest="source", help="make the report from this JSON, run nothing")
    a = ap.parse_args()
    if a.source:
        with open(a.source) as f:
            doc, failed = json.load(f), False
    else:
        if a.repeat < 1 or a.window_ms < 1 or a.handoffs < 0 or a.cpu < 0:
            ap.error("--repeat and --window-ms want at least 1, --handoffs and --cpu at least 0")
        if not os.access(a.bench, os.X_OK):
            sys.exit("peers: %s is not built (make tools)" % a.bench)
        doc, failed = Experiment(a).run()
        if a.out:
            with open(a.out, "w") as f:
                json.dump(doc, f, indent=1)
    text = report(doc)
    if a.report:
        with open(a.report, "w") as f:
            f.write(text)
        print("peers: report written to %s" % a.report, file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
