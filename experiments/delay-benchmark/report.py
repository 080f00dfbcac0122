#!/usr/bin/env python3
"""The DelayBenchmark experiment's report (README.md), made from `stvm-bench delay`'s JSON:
per clock and representation the seed's ten rows (Pharo 2015) beside stvm's at the same N,
a seed-shaped summary, the mechanics as the counters state them, the seed's two questions
answered with the run's figures, the per-N table, the seed's transcript lines, and the
targets (each miss with the counters that show why); --plot draws delay.gp.

  python3 experiments/delay-benchmark/report.py RUN.json [--report X.md] [--plot X.png]

--plot writes X.csv beside X.png (a row per record, every figure's median). Exit status:
0 written (a missed target is reported, not a status), 1 a file could not be written or
drawn, 2 a bad argument.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import (Targets, beside, context_list, finite, fmt, gnuplot,  # noqa: E402
                    md_table, med, write_csv)

HERE = os.path.dirname(os.path.abspath(__file__))

# Pharo 2015's DelayBenchmark (the seed, a 32-bit Cog VM), per #ConcurrentDelays
# 1000..10000 step 1000: withNewCodeEnabled: false (ms SmallIntegers), true (µs
# LargePositiveIntegers).
SEED_RATE = [[39498, 77808, 99889, 117632, 128507, 118729, 114437, 114792, 115137, 113973],
             [39018, 71906, 98010, 101227, 64728, 90495, 89220, 89585, 88393, 89073]]
SEED_LABEL = ["withNewCodeEnabled: false, ms", "withNewCodeEnabled: true, µs"]
SEED_CYCLE_US = 50000.0        # the seed's main Morph interCyclePause, 50 ms
DURATIONS_MEAN_MS = 24.686     # the 1000 durations' mean (Random seed: 42, nextInt: 50)


def seed_peak(row):
    """(column, rate) of the seed's peak for a row (the first at the highest rate)."""
    col = max(range(10), key=lambda i: (SEED_RATE[row][i], -i))
    return col, SEED_RATE[row][col]


def seed_row(rec):
    """The seed's row for a representation: 0 for ms SmallIntegers on 31 bits (the old
    code), 1 for µs LargeIntegers on 31 bits (the new code), None for the 61-bit ones."""
    p = rec["params"]
    if p["smallint_bits"] != "31":
        return None
    return 0 if p["delay_clock"] == "ms" else 1


def seed_col(n):
    return n // 1000 - 1 if n % 1000 == 0 and 1000 <= n <= 10000 else None


class Sweep:
    """The records by (clock, N, representation), in stvm-bench delay's order."""

    def __init__(self, doc):
        self.doc = doc
        self.records = doc["results"]
        self.reprs, self.clocks, self.ns = [], [], []
        for r in self.records:
            for lst, v in ((self.reprs, r["case"]), (self.clocks, r["params"]["clock"]),
                           (self.ns, int(r["params"]["concurrency"]))):
                if v not in lst:
                    lst.append(v)
        note = doc.get("note") or ""
        self.cost = note[len("--sim-cost "):] if note.startswith("--sim-cost ") else None
        self.cost_name = doc["parameters"].get("sim-cost", "none")
        self.repeat = doc["parameters"]["repeat"]
        self.window_ms = doc["parameters"]["window-ms"]

    def rec(self, clock, n, repr_):
        for r in self.records:
            p = r["params"]
            if r["case"] == repr_ and p["clock"] == clock and int(p["concurrency"]) == n:
                return r
        return None

    def rate(self, clock, n, repr_):
        return med(self.rec(clock, n, repr_), "delays_per_second")

    def peak_n(self, clock, repr_):
        """The N of repr_'s highest median rate on clock (the first at that rate)."""
        best = None
        for n in self.ns:
            v = self.rate(clock, n, repr_)
            if finite(v) and (best is None or v > self.rate(clock, best, repr_)):
                best = n
        return best

    def peak(self, clock, repr_):
        n = self.peak_n(clock, repr_)
        return self.rec(clock, n, repr_) if n is not None else None

    def where(self, clock):
        if clock == "real":
            return "the real clock"
        if self.cost:
            return "the simulated clock (--sim-cost %s)" % self.cost_name
        return "the simulated clock (no modelled cost)"


def dec(rec, name):
    for m in rec.get("metrics", []) if rec else []:
        if m["name"] == name:
            return m.get("decimals", 0)
    return 0


def cell(rec, name):
    return fmt(med(rec, name), dec(rec, name))


# ---- the tables ---------------------------------------------------------------------

def seed_beside(s, clock, repr_):
    first = s.reprs[0]
    row = seed_row(s.rec(clock, s.ns[0], repr_))
    rows = []
    for n in s.ns:
        sc = seed_col(n)
        seed = SEED_RATE[row][sc] if row is not None and sc is not None else None
        seed0 = SEED_RATE[0][sc] if sc is not None else None
        v, v0 = s.rate(clock, n, repr_), s.rate(clock, n, first)
        rows.append([n, fmt(seed), fmt(100 * seed / seed0 if seed else None, 0, "%"),
                     fmt(1e6 / seed if seed else None, 2), fmt(v),
                     fmt(100 * v / v0 if finite(v) and finite(v0) else None, 0, "%"),
                     fmt(1e6 / v if finite(v) else None, 2)])
    pn, p0 = s.peak_n(clock, repr_), s.peak_n(clock, first)
    v = s.rate(clock, pn, repr_) if pn else None
    v0 = s.rate(clock, p0, first) if p0 else None
    if row is not None:
        sp, sr = seed_peak(row)
        seed_cells = ["%d at %d" % (sr, 1000 * (sp + 1)), fmt(100 * sr / seed_peak(0)[1], 0, "%"),
                      fmt(1e6 / sr, 2)]
    else:
        seed_cells = ["-", "-", "-"]
    rows.append(["peak"] + seed_cells + ["%.0f at %d" % (v, pn) if pn else "-",
                                         fmt(100 * v / v0 if finite(v) and finite(v0) else None,
                                             0, "%"), fmt(1e6 / v if finite(v) else None, 2)])
    title = ("%s: the seed (Pharo 2015, 32-bit Cog VM, %s) beside stvm on %s"
             % (repr_, SEED_LABEL[row], s.where(clock)) if row is not None else
             "%s: stvm on %s (the seed ran no 64-bit VM: its question \"what about Spur64?\")"
             % (repr_, s.where(clock)))
    return md_table(["N", "seed delays/s", "seed relative", "seed µs/delay", "stvm delays/s",
                     "stvm relative", "stvm µs/delay"], rows, "rrrrrrr", title,
                    "Relative: to %s at the same N (the seed's: to withNewCodeEnabled: false); "
                    "in the peak row, peak to peak. µs per delay = 1e6 / delays per second. The "
                    "peak is the first N at the highest rate." % first)


SUMMARY = [
    ("the seed (Pharo 2015): delays per second at its peak", "seed_rate"),
    ("the seed: relative performance", "seed_rel"),
    ("the seed: µs per scheduled delay (1e6 / peak)", "seed_us"),
    ("the seed: relative performance (time)", "seed_rel_time"),
    ("stvm: delays scheduled per second (peak over N)", "delays_per_second"),
    ("relative performance", "rel"),
    ("µs per scheduled delay (1e6 / peak)", "us_per_delay"),
    ("relative performance (time)", "rel_time"),
    ("peak at N", "peak_n"),
    ("ExitCount at peak N", "exit_count"),
    ("modelled cost charged per delay [µs]", "sim_cost_us_per_delay"),
    ("CPU µs per delay (at peak N)", "cpu_us_per_delay"),
    ("boxed allocations per delay", "boxed_per_delay"),
    ("LargeInteger ops per delay", "large_ops_per_delay"),
    ("timing loop passes per delay", "timing_loop_passes_per_delay"),
    ("clock reads per delay", "clock_reads_per_delay"),
    ("idle sleeps (kernel waits) per delay", "idle_sleeps_per_delay"),
    ("OS sleeps per second (at peak N)", "os_sleeps_per_second"),
    ("lateness p50 / p99 / max [µs]", "lateness"),
    ("waits that ended early (ms scheduler)", "early"),
]


def summary_cell(s, clock, repr_, what):
    p, p0 = s.peak(clock, repr_), s.peak(clock, s.reprs[0])
    rate, rate0 = med(p, "delays_per_second"), med(p0, "delays_per_second")
    row = seed_row(p) if p else None
    seed = seed_peak(row)[1] if row is not None else None
    seed0 = seed_peak(0)[1]
    if what == "seed_rate":
        return "%d (N=%d)" % (seed, 1000 * (seed_peak(row)[0] + 1)) if seed else "-"
    if what == "seed_rel":
        return fmt(100 * seed / seed0 if seed else None, 0, "%")
    if what == "seed_us":
        return fmt(1e6 / seed if seed else None, 2)
    if what == "seed_rel_time":
        return fmt(100 * seed0 / seed if seed else None, 0, "%")
    if what == "rel":
        return fmt(100 * rate / rate0 if finite(rate) and finite(rate0) else None, 0, "%")
    if what == "rel_time":
        return fmt(100 * rate0 / rate if finite(rate) and finite(rate0) else None, 0, "%")
    if what == "peak_n":
        return p["params"]["concurrency"] if p else "-"
    if what == "lateness":
        return ("%.0f / %.0f / %.0f" % (med(p, "late_p50_us"), med(p, "late_p99_us"),
                                        med(p, "late_max_us"))) if p else "-"
    if what == "early":
        return "%.0f of %.0f" % (med(p, "early_waits"), med(p, "late_samples")) if p else "-"
    return cell(p, what)


def summary(s, clock):
    rows = [[label] + [summary_cell(s, clock, r, what) for r in s.reprs]
            for label, what in SUMMARY
            if not (what == "sim_cost_us_per_delay" and clock == "real")]
    return md_table([""] + s.reprs, rows, "l" + "r" * len(s.reprs),
                    "Summary on %s (peak over N; per-delay figures at the peak N), beside the "
                    "seed's" % s.where(clock),
                    "The first representation is 100%. The seed's rows: its withNewCodeEnabled: "
                    "false under ms-smallint31, true under us-largeint31.")


def per_repr(s, clock, name, den=None, decimals=None):
    """"ms-smallint31 2.016, us-largeint31 1.949": a figure (or name / den) at each
    representation's peak N."""
    parts = []
    for r in s.reprs:
        p = s.peak(clock, r)
        v = med(p, name)
        if den:
            d = med(p, den)
            v = v / d if finite(v) and finite(d) and d else None
        parts.append("%s %s" % (r, fmt(v, decimals if den else dec(p, name))))
    return ", ".join(parts)


def mechanics(s, clock):
    """Sentences whose every figure comes from the run's counters (a test compares them
    with the JSON), at each representation's peak N."""
    lines = [
        "Clock reads per delay (clock_reads: primitives 135 and 240, read by the timing "
        "process): %s. Per timing-loop pass: %s (the millisecond scheduler reads its clock "
        "again after arming the timer, to catch a wrap during the pass; the microsecond one "
        "reads it once)." % (per_repr(s, clock, "clock_reads_per_delay"),
                             per_repr(s, clock, "clock_reads_per_delay",
                                      "timing_loop_passes_per_delay", 2)),
        "Timing-loop passes per delay (timing_loop_passes): %s. Context switches per delay "
        "(context_switches): %s." % (per_repr(s, clock, "timing_loop_passes_per_delay"),
                                      per_repr(s, clock, "context_switches_per_delay")),
        "Boxed allocations per delay (boxed_allocated): %s. LargeInteger operations per delay "
        "(large_int_ops): %s." % (per_repr(s, clock, "boxed_per_delay"),
                                  per_repr(s, clock, "large_ops_per_delay")),
        "CPU µs per delay (the process's CPU time in the window): %s. Idle sleeps in the "
        "kernel per delay (idle_sleeps): %s.%s" % (
            per_repr(s, clock, "cpu_us_per_delay"), per_repr(s, clock, "idle_sleeps_per_delay"),
            " On the simulated clock this CPU is what the simulation took: it does not move "
            "simulated time." if clock == "sim" else " On the real clock it includes the "
            "kernel's work for each idle sleep and wake-up."),
    ]
    if clock == "sim" and s.cost:
        lines.append("Modelled cost charged per delay (sim_cost_us_per_delay, simulated µs; "
                     "model %s): %s." % (s.cost, per_repr(s, clock, "sim_cost_us_per_delay")))
    return md_table(["what the counters say"], [[l] for l in lines], "l",
                    "The mechanics on %s, as the counters state them (each representation at "
                    "its peak N)" % s.where(clock))


def questions(s):
    """"Is this performance penalty a reasonable trade for eliminating delay clock
    rollover?" and "It would be interesting to check this on Spur64", with the run's
    figures."""
    seed_ms, seed_lg = 1e6 / seed_peak(0)[1], 1e6 / seed_peak(1)[1]
    seed_d, lg_rate = seed_lg - seed_ms, seed_peak(1)[1]
    lines = ["1. The rollover trade. The seed: (%.1f - %.1f) µs / %.0f µs = %.4f%% of one 50 ms "
             "interCyclePause (with its unrounded peaks, %.2f - %.2f = %.2f µs). Its 0.004%% is "
             "right, as the share of one cycle that one delay's extra cost takes: an image "
             "waiting on one Delay per cycle (20 a second) spends %.0f µs a second on it. At its "
             "peak rate, %.0f delays/s, the same %.2f µs per delay is %.3f s of every second "
             "(%.0f%% of the CPU), which is the benchmark's drop to %.0f%%."
             % (seed_lg, seed_ms, SEED_CYCLE_US, 100 * seed_d / SEED_CYCLE_US, seed_lg, seed_ms,
                seed_d, 20 * seed_d, lg_rate, seed_d, seed_d * lg_rate / 1e6,
                100 * seed_d * lg_rate / 1e6, 100 * lg_rate / seed_peak(0)[1])]
    worst = seed_d
    have = set(s.reprs)
    for clock in s.clocks if {"ms-smallint31", "us-largeint31"} <= have else []:
        rm = med(s.peak(clock, "ms-smallint31"), "delays_per_second")
        rl = med(s.peak(clock, "us-largeint31"), "delays_per_second")
        um, ul = 1e6 / rm, 1e6 / rl
        d = ul - um
        worst = max(worst, d)
        lines.append("   stvm on %s: us-largeint31 %.2f µs per delay against ms-smallint31 %.2f "
                     "at their peaks: (%.2f - %.2f) / %.0f = %.4f%% of one cycle, %.0f µs a "
                     "second at one delay per cycle; at us-largeint31's peak rate, %.0f "
                     "delays/s, %.3f s of every second (its relative performance: %.0f%%)."
                     % (s.where(clock), ul, um, ul, um, SEED_CYCLE_US, 100 * d / SEED_CYCLE_US,
                        20 * d, rl, d * rl / 1e6, 100 * rl / rm))
    lines.append("   So the trade is reasonable: at most %.2f µs per delay above (%.4f%% of a "
                 "50 ms UI cycle per delay), which matters only where scheduling delays is the "
                 "workload, as in this benchmark at saturation. The rollover it removes made "
                 "every pending delay late by up to a second every 6.2 days in Pharo's "
                 "millisecond code (stvm's ms scheduler shifts the resumption times exactly "
                 "instead)." % (worst, 100 * worst / SEED_CYCLE_US))
    for i, clock in enumerate(s.clocks if {"ms-smallint31", "us-smallint61"} <= have else []):
        pm, p6 = s.peak(clock, "ms-smallint31"), s.peak(clock, "us-smallint61")
        rel = 100 * med(p6, "delays_per_second") / med(pm, "delays_per_second")
        lines.append("%s Spur64. On %s us-smallint61 (microsecond SmallIntegers on a 61-bit VM) "
                     "reaches %.1f%% of ms-smallint31's peak (%.2f against %.2f µs per delay), "
                     "with %.2f boxed allocations and %.2f LargeInteger operations per delay: %s"
                     % ("  " if i else "2.", s.where(clock), rel,
                        1e6 / med(p6, "delays_per_second"), 1e6 / med(pm, "delays_per_second"),
                        med(p6, "boxed_per_delay"), med(p6, "large_ops_per_delay"),
                        "the penalty is gone, and the clock keeps its microseconds without "
                        "rollover (2^60 µs from 1901 is the year 38435)." if rel >= 99 else
                        "slower than ms-smallint31 here, though it boxes nothing: see the "
                        "counters above for what differs."))
    return md_table(["answer"], [[l] for l in lines], "l",
                    "The seed's two questions, answered with the figures")


PER_N = [("delays/s", "delays_per_second"), ("ExitCount", "exit_count"),
         ("CPU µs/delay", "cpu_us_per_delay"), ("model µs/delay", "sim_cost_us_per_delay"),
         ("boxed/delay", "boxed_per_delay"), ("LI ops/delay", "large_ops_per_delay"),
         ("loops/delay", "timing_loop_passes_per_delay"), ("reads/delay", "clock_reads_per_delay"),
         ("p50 µs", "late_p50_us"), ("p99 µs", "late_p99_us"), ("max µs", "late_max_us"),
         ("early", "early_waits")]


def per_n(s):
    rows = [[r["params"]["clock"], r["params"]["concurrency"], r["case"]] +
            [("FAILED" if r["status"] == "FAILED" and not k else cell(r, name))
             for k, (_, name) in enumerate(PER_N)] for r in s.records]
    return md_table(["clock", "N", "representation"] + [h for h, _ in PER_N], rows,
                    "lrl" + "r" * len(PER_N),
                    "Per N (medians over %d repetition%s; per delay = per delay started in the "
                    "window)" % (s.repeat, "" if s.repeat == 1 else "s"))


def transcript(s, clock):
    lines = []
    for r in s.reprs:
        lines.append("DelayBenchmark %s..." % r)
        for n in s.ns:
            rec = s.rec(clock, n, r)
            lines.append("#ConcurrentDelays: %d . Count: FAILED (%s)" % (n, rec["note"])
                         if rec["status"] == "FAILED" else
                         "#ConcurrentDelays: %d . Count: %.0f per second"
                         % (n, med(rec, "delays_per_second")))
    return md_table(["transcript"], [[l] for l in lines], "l",
                    "In the seed's words, on %s" % s.where(clock))


# ---- the targets --------------------------------------------------------------------

def targets(s):
    """Only for what ran; each miss with the counters that show why."""
    t, have = Targets(), set(s.reprs)
    if "ms-smallint31" not in have:
        return t
    for clock in s.clocks:
        sim = clock == "sim"
        seed1 = sim and s.cost_name.startswith("seed1")
        pm = s.peak(clock, "ms-smallint31")
        if not pm:
            continue
        rm = med(pm, "delays_per_second")
        c = "simulated clock" if sim else "real clock"
        if seed1:
            scale = float(s.cost.split(":")[1].split(" x")[0]) if s.cost else float("nan")
            why = ("charged %.3f µs per delay (sim_cost_us_per_delay), peak %.0f/s: the scale "
                   "would need to be %.4g x %.0f / 128507"
                   % (med(pm, "sim_cost_us_per_delay"), rm, scale, rm))
            t.add("simulated clock, seed1: ms-smallint31's peak at least the seed's 128,507 "
                  "delays/s - 1% (the calibration)", "at least", rm, 0, 128507 * 0.99, why)
            t.add("simulated clock, seed1: ms-smallint31's peak at most the seed's 128,507 "
                  "delays/s + 1% (the calibration)", "at most", rm, 0, 128507 * 1.01, why)
            if 5000 in s.ns:
                t.add("simulated clock, seed1: ms-smallint31 saturated by N = 5,000 as the "
                      "seed's was (its rate there at least 99% of its peak)", "at least",
                      s.rate(clock, 5000, "ms-smallint31"), 0, 0.99 * rm,
                      "ms-smallint31 peaks at N = %s with %.0f delays/s: its knee is not where "
                      "the seed's was" % (pm["params"]["concurrency"], rm))
        cost = not sim or s.cost
        pl = s.peak(clock, "us-largeint31") if "us-largeint31" in have else None
        if pl and cost:
            rl = med(pl, "delays_per_second")
            why = ("%.0f%%: %.2f LargeInteger ops and %.2f boxes per delay (large_ops_per_delay, "
                   "boxed_per_delay) cost %.2f of its %.2f modelled µs (sim_cost_us_per_delay); "
                   "in the seed's Pharo, 2.10 of 9.88"
                   % (100 * rl / rm, med(pl, "large_ops_per_delay"), med(pl, "boxed_per_delay"),
                      med(pl, "sim_cost_us_per_delay") - med(pm, "sim_cost_us_per_delay"),
                      med(pl, "sim_cost_us_per_delay")) if sim else
                   "%.0f%%: %.2f LargeInteger ops and %.2f boxes per delay (large_ops_per_delay, "
                   "boxed_per_delay) take %.3f µs of CPU against ms-smallint31's %.3f "
                   "(cpu_us_per_delay); in the seed's Pharo, 9.88 against 7.78"
                   % (100 * rl / rm, med(pl, "large_ops_per_delay"), med(pl, "boxed_per_delay"),
                      med(pl, "cpu_us_per_delay"), med(pm, "cpu_us_per_delay")))
            t.add("%s: us-largeint31 at least 69%% of ms-smallint31, peak to peak (the seed's "
                  "79%%, within 10 points)" % c, "at least", rl, 0, 0.69 * rm, why)
        p6 = s.peak(clock, "us-smallint61") if "us-smallint61" in have else None
        if p6 and cost:
            r6 = med(p6, "delays_per_second")
            why = ("%.1f%% with %.2f boxes per delay; timer fires per delay %.3f against %.3f, "
                   "idle sleeps %.3f against %.3f (timer_fires, idle_sleeps): the µs scheduler "
                   "wakes per distinct deadline, the ms one per tick"
                   % (100 * r6 / rm, med(p6, "boxed_per_delay"), med(p6, "timer_fires_per_delay"),
                      med(pm, "timer_fires_per_delay"), med(p6, "idle_sleeps_per_delay"),
                      med(pm, "idle_sleeps_per_delay")))
            t.add("%s: us-smallint61 never slower than ms-smallint31, peak to peak (at least %s)"
                  % (c, "0.99x" if sim else "0.97x, this machine's noise"), "at least", r6, 0,
                  (0.99 if sim else 0.97) * rm, why)
        if not sim:
            n = int(pm["params"]["concurrency"])
            allow = n * 1000.0 / DURATIONS_MEAN_MS
            t.add("real clock: the sweep reaches saturation (ms-smallint31's peak below 90%% of "
                  "the %.0f delays/s that N = %d allows: N x 1000 / %.3f ms)"
                  % (allow, n, DURATIONS_MEAN_MS), "at most", rm, 0, 0.9 * allow,
                  "at N = %d it still sleeps %.3f times per delay in the kernel (idle_sleeps): "
                  "the durations, not the CPU, limit the count"
                  % (n, med(pm, "idle_sleeps_per_delay")))
    return t


# ---- the words ----------------------------------------------------------------------

def describe(s):
    clocks = ("simulated, then real clock" if len(s.clocks) == 2 else
              "simulated clock" if s.clocks[0] == "sim" else "real clock")
    text = ("DelayBenchmark: %s, window %d ms + drain %d ms, %d repetition%s per cell. "
            "Durations: 1000 draws of (Random seed: 42) nextInt: 50, mean %.3f ms; workers at "
            "priority 41, coordinator at 42. Lateness = end of wait - (start + duration); a "
            "worker reads stvm_vm_now_us once per delay (the end of one is the start of the "
            "next), which is not among the counted clock reads (the timing process's primitives "
            "135 and 240). \"Per delay\" divides by the delays started in the window "
            "(EnterCount)." % (clocks, s.window_ms, s.window_ms, s.repeat,
                               "" if s.repeat == 1 else "s", DURATIONS_MEAN_MS))
    if "sim" in s.clocks:
        text += (" Simulated clock: time jumps to the next deadline when every process waits, "
                 "and moves only by charged work; CPU figures are real (what the simulation "
                 "took).")
    if s.cost:
        text += (" --sim-cost %s: before it enters each delay, a worker charges the modelled cost "
                 "of what the VM counted since the last charge, as work (stvm_work_us) above the "
                 "other workers' priority, so work is never postponed behind a delay it paid "
                 "for." % s.cost)
    return text


def prose(s):
    return ("# DelayBenchmark on stvm, beside the seed's\n\n"
            "The seed: Pharo's DelayBenchmark in 2015 on a 32-bit Cog VM, the millisecond "
            "SmallInteger Delay code against the new microsecond one (boxed "
            "LargePositiveIntegers): 128,507 against 101,227 delays scheduled per second "
            "(100%% / 79%%), 7.8 against 9.9 µs per delay. Below, each representation's ten rows "
            "of the seed beside stvm's at the same N, first on the simulated clock (a modelled "
            "cost per counted operation when --sim-cost is given, calibrated on the seed's "
            "ms-smallint31 peak), then on this machine's real clock (to N large enough to "
            "saturate it, when the sweep goes that far); then a seed-shaped summary, the "
            "mechanics as the counters state them, the seed's two questions answered with the "
            "figures, the per-N table and the targets (each miss with its reason).\n\n"
            "%s\n\nEvery figure of every run, with each repetition's sample, is in the JSON "
            "this report was made from (`stvm-bench delay --format json`).\n\n" % describe(s))


def write_plot_csv(s, path):
    """stvm-bench's csv-wide columns (delay.gp reads them by name), the context first."""
    names = [m["name"] for m in s.records[0]["metrics"]] if s.records else []
    keys = list(s.records[0]["params"]) if s.records else []
    rows = [[r["case"]] + [r["params"][k] for k in keys] + [r["status"]] +
            [med(r, n) for n in names] + [r["note"]] for r in s.records]
    write_csv(path, ["case"] + keys + ["status"] + names + ["note"], rows, s.doc["context"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="what `stvm-bench delay --format json` wrote")
    ap.add_argument("--report", help="the Markdown report")
    ap.add_argument("--plot", help="delays/s against N per clock with the seed's marks "
                    "(delay.gp), the data beside it as .csv")
    a = ap.parse_args()
    with open(a.json) as f:
        s = Sweep(json.load(f))
    ok = True
    if a.report:
        t = targets(s)
        text = prose(s) + context_list(s.doc["context"], "The run (stvm-bench delay)")
        for clock in s.clocks:
            for r in s.reprs:
                text += seed_beside(s, clock, r)
        for clock in s.clocks:
            text += summary(s, clock) + mechanics(s, clock)
        text += questions(s) + per_n(s)
        for clock in s.clocks:
            text += transcript(s, clock)
        text += t.markdown()
        with open(a.report, "w") as f:
            f.write(text)
        print("report written to %s (%d targets, %d missed)" % (a.report, len(t.rows), t.missed()),
              file=sys.stderr)
    if a.plot:
        data = beside(a.plot, ".csv")
        write_plot_csv(s, data)
        ok &= gnuplot(os.path.join(HERE, "delay.gp"), data, a.plot)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
