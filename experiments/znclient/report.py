#!/usr/bin/env python3
"""The ZnClient experiment's report (README.md), made from the JSON build/experiments/
znclient writes: every figure per request derived from the raw counters, the seed's tables
(seed 2 side by side, the fit, the sweep in the seed's shape), the records, the targets
(each miss with its reason, read off the counters) and the plots.

  python3 experiments/znclient/report.py RUN.json [--report X.md] [--csv X.csv]
                                        [--plot X.png] [--phase-plot Y.png]

--plot writes X.csv beside X.png (a row per configuration, every figure's median) and
draws zn.gp; --phase-plot writes Y.csv and draws zn-phase.gp (needs a run with --phase).
Exit status: 0 written (a missed target is reported, not a status), 1 a file could not be
written or drawn, 2 a bad argument.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import (Targets, beside, context_list, finite, fmt, gnuplot,  # noqa: E402
                    md_table, median, ratio, write_csv)

HERE = os.path.dirname(os.path.abspath(__file__))

# The seed (Pharo 6/7 on a 2017 Mac, ZnClient against a local nginx).
SEED_OFF, SEED_ON, SEED_SUB_LO, SEED_SUB_HI, TOLERANCE = 3000.0, 2500.0, 7000.0, 8000.0, 0.15
SEED_TEXT = ["3,000", "2,500", "7,000-8,000"]
CELL_NAMES = ["logging off", "logging on", "on, subscriber (all events)"]

# A VM row's figures per request: (name, unit, decimals, counter, scale). With a counter,
# the figure is that count times scale per request; None: computed below.
FIGURES = [
    ("requests_per_second", "1/s", 0, None, 1), ("vs_wrk", "", 2, None, 1),
    ("us_per_request", "us", 1, "wall_ns", 1e-3), ("cpu_us_per_request", "us", 1, "cpu_ns", 1e-3),
    ("blocked_reads_per_request", "", 3, "reads_blocked", 1),
    ("blocked_first_reads_per_request", "", 3, "first_reads_blocked", 1),
    ("timed_waits_per_request", "", 3, "timed_waits", 1),
    ("timing_activations_per_request", "", 3, "timing_activations", 1),
    ("os_sleeps_per_request", "", 3, "os_sleeps", 1),
    ("os_slept_us_per_request", "us", 1, "os_slept_us", 1),
    ("wakeups_io_per_request", "", 3, "wakeups_io", 1),
    ("wakeups_timer_per_request", "", 3, "wakeups_timer", 1),
    ("wakeups_relinquish_per_request", "", 3, "wakeups_relinquish", 1),
    ("wakeups_external_per_request", "", 3, "wakeups_external", 1),
    ("fds_ready_per_request", "", 3, "fds_ready", 1),
    ("io_polls_busy_per_request", "", 3, "io_polls_busy", 1),
    ("context_switches_per_request", "", 2, "context_switches", 1),
    ("events_per_request", "", 2, "events_built", 1),
    ("deliveries_per_request", "", 2, "deliveries", 1),
    ("mean_before_us", "us", 1, "before_ns", 1e-3), ("mean_between_us", "us", 1, "between_ns", 1e-3),
    ("mean_wait_us", "us", 1, "wait_ns", 1e-3), ("mean_parse_us", "us", 1, "parse_ns", 1e-3),
    ("mean_after_us", "us", 1, "after_ns", 1e-3),
    ("connects_per_request", "", 4, "connects", 1),
    ("requests", "", 0, None, 1), ("cut_short", "", 0, None, 1),
]
WRK_FIGURES = [("requests_per_second", 0), ("vs_wrk", 2), ("us_per_request", 1),
               ("wrk_p50_us", 1), ("wrk_p99_us", 1), ("wrk_errors", 0)]
DECIMALS = dict([(f[0], f[2]) for f in FIGURES] + WRK_FIGURES)

# What each of the fit's parameters stands for (zn_fit.c's zn_fit_params, by name).
PARAM_MEANING = {
    "wake_inject_us": "the blocking penalty: what waking from an OS sleep costs",
    "server_us": "the server's least turnaround after the request left",
    "server_jitter_us": "the mean of the turnaround's exponential spread",
    "event_cost_us": "building and announcing one ZnLogEvent",
    "subscriber_cost_us": "the subscriber's work per event",
    "client_us": "the client's own CPU per request (writing, parsing)",
    "idle_us": "the idle quantum (legacy mode: the blind sleep)",
}
# The fit's families of worlds (zn_fit.c's zn_fit_families, in order).
FAMILY_NAMES = ["poll, 1 ms quantum (Pharo 6/7 on the VM since May 2017)",
                "legacy, 1 ms quantum (Pharo 6 on a VM before May 2017)",
                "legacy, quantum fitted (no Pharo release used one under 1 ms)"]

WORLDS = {
    "nginx": "a real nginx on loopback, the wall clock",
    "model": "the modelled world on the simulated clock (no nginx, no wall clock: the same "
             "figures on every run)",
    "replay": "a replay, on the simulated clock, of the recording",
}


# ---- the rows' figures --------------------------------------------------------------

class Row:
    """One configuration: its knobs, each figure's samples and median."""

    def __init__(self, raw, wrk_row, world):
        self.case, self.cfg, self.note = raw["case"], raw["config"], raw["note"]
        self.samples = raw["samples"] if self.cfg else raw["wrk"]
        self.fig = {}
        if self.cfg is None:   # the wrk row
            w = raw["wrk"]
            self.fig = {"requests_per_second": [s["rps"] for s in w],
                        "vs_wrk": [1.0 for _ in w],
                        "us_per_request": [1e6 / s["rps"] for s in w],
                        "wrk_p50_us": [s["p50_us"] for s in w],
                        "wrk_p99_us": [s["p99_us"] for s in w],
                        "wrk_errors": [s["errors"] for s in w]}
        else:
            wrk_rps = [s["rps"] for s in wrk_row["wrk"]] if wrk_row else []
            for name, unit, dec, counter, scale in FIGURES:
                self.fig[name] = []
            for k, c in enumerate(raw["samples"]):
                n = c["requests"]
                for name, unit, dec, counter, scale in FIGURES:
                    if counter:
                        self.fig[name].append(c[counter] * scale / n)
                rps = n / (c["wall_ns"] / 1e9)
                self.fig["requests_per_second"].append(rps)
                self.fig["vs_wrk"].append(rps / wrk_rps[k] if k < len(wrk_rps) and wrk_rps[k]
                                          else None)
                self.fig["requests"].append(n)
                self.fig["cut_short"].append(1 if c["cut_short"] else 0)
            self.versus(raw, world == "replay")
        self.recorded = raw.get("recorded", {})

    def versus(self, raw, is_replay):
        """A replay beside the run it replays: a recorded run's row carries its replays, a
        replay's row its recording's figures; either way the errors are the replay's."""
        v = raw["versus"]
        n = min(len(v), len(raw["samples"]))
        if not n:
            return
        who = "recorded" if is_replay else "replay"
        rps, blk = self.fig["requests_per_second"], self.fig["blocked_first_reads_per_request"]
        self.fig[who + "_requests_per_second"] = [s["rps"] for s in v[:n]]
        self.fig[who + "_blocked_first_reads_per_request"] = [s["blocked_first"] for s in v[:n]]
        err, diff = [], []
        for k in range(n):
            replay, recorded = (rps[k], v[k]["rps"]) if is_replay else (v[k]["rps"], rps[k])
            err.append(abs(replay / recorded - 1) if recorded > 0 else None)
            diff.append(abs(v[k]["blocked_first"] - blk[k]))
        self.fig["replay_rps_error"], self.fig["replay_blocked_first_difference"] = err, diff
        DECIMALS.update({who + "_requests_per_second": 0,
                         who + "_blocked_first_reads_per_request": 3,
                         "replay_rps_error": 3, "replay_blocked_first_difference": 3})

    def m(self, name):
        return median(self.fig.get(name, []))

    def text(self):
        """The row for people: "subscriber 60 us/all, poll 1000 us, wake-up 300 us"."""
        k = self.cfg
        if k is None:
            return "wrk -t1 -c1"
        if self.case == "subscriber":
            t = "subscriber %d us/%s, %s %d us" % (k["subscriber_cost_us"], k["subscriber_events"],
                                                  k["idle_mode"], k["idle_us"])
        else:
            t = "%s, %s %d us" % (self.case, k["idle_mode"], k["idle_us"])
        return t + (", wake-up %d us" % k["wake_inject_us"] if k["wake_inject_us"] else "")


class Run:
    def __init__(self, doc):
        self.doc, self.world, self.opts = doc, doc["world"], doc["options"]
        raws = doc["rows"]
        wrk = raws[0] if raws and raws[0]["case"] == "wrk" else None
        self.rows = [Row(r, wrk, self.world) for r in raws]
        self.preset = doc.get("preset")
        self.fit = doc.get("fit")

    def find(self, cfg):
        for r in self.rows:
            if r.cfg == cfg:
                return r
        return None

    def ran(self, cfg):
        r = self.find(cfg)
        return r if r and r.samples else None


def plain(logging, mode, cost):
    """The sweep's plain cell: the 1 ms quantum, 5 us per event, nothing else."""
    return {"logging": logging, "subscriber_events": "all", "idle_mode": mode, "wait": "timed",
            "background": "off", "subscriber_cost_us": cost if logging == "subscriber" else 0,
            "idle_us": 1000, "wake_inject_us": 0, "before_us": 0, "between_us": 0,
            "after_us": 0, "event_cost_us": 5, "server_us": 0, "server_jitter_us": 0,
            "client_us": 0}


# ---- the tables ---------------------------------------------------------------------

def seed2_table(run):
    """Seed 2 side by side: the seed's figures, the modelled world of the preset, this
    run's cells of it (real: on nginx) and their replay."""
    p = run.preset
    if not p or not p.get("model"):
        return ""
    model, real = p["model"], run.world == "nginx"
    rows, got = [], []
    for l, cfg in enumerate(p["cells"]):
        r = run.find(cfg)
        rps = r.m("requests_per_second") if r else None
        got.append(rps)
        replay = r.m("replay_requests_per_second") if r and real else None
        rows.append([CELL_NAMES[l], SEED_TEXT[l], fmt(model["rps"][l]), fmt(model["blocked"][l], 2),
                     fmt(rps), fmt(r.m("blocked_first_reads_per_request") if r else None, 2),
                     fmt(replay), fmt(ratio(rps, model["rps"][l]), 2)])
    where = ("a real nginx on this machine, the wake-up cost injected" if real
             else "the model" if run.world == "model" else "a replay")
    title = ("Seed 2 side by side: the seed (Pharo 6/7, a 2017 Mac), the modelled world of "
             "--preset %s, this run of it (%s; medians)%s"
             % (p["name"], where, ", and the replay of this run's recording" if real else ""))
    footer = ("%s: %s. Ratios: seed on/off 0.83, subscriber/off 2.3-2.7; model %s and %s; this "
              "run %s and %s." % (p["name"], p["what"], fmt(ratio(model["rps"][1], model["rps"][0]), 2),
                                  fmt(ratio(model["rps"][2], model["rps"][0]), 2),
                                  fmt(ratio(got[1], got[0]), 2), fmt(ratio(got[2], got[0]), 2)))
    return md_table(["", "seed /s", "model /s", "model: blocked 1st", "this run /s", "blocked 1st",
                     "replay /s", "run / model"], rows, "lrrrrrrr", title, footer)


def config_text(k):
    return ("%s %d us, wake %d us, server %d+%d us, event %d us, subscriber %d us, client %d us"
            % (k["idle_mode"], k["idle_us"], k["wake_inject_us"], k["server_us"],
               k["server_jitter_us"], k["event_cost_us"], k["subscriber_cost_us"], k["client_us"]))


def fit_tables(f):
    b = f["best"]
    rows = [[CELL_NAMES[c], SEED_TEXT[c], fmt(b["rps"][c]), "%+.1f%%" % (100 * b["err"][c]),
             fmt(b["blocked"][c], 2)] for c in range(3)]
    out = md_table(["", "seed /s", "model /s", "residual", "blocked 1st"], rows, "lrrrr",
                   "The seed's table, fitted: requests per second, the seed's and the model's "
                   "best fit in a world Pharo 6/7 ran in",
                   "Best fit (%s): %s; on/off %.2f, subscriber/off %.2f. %d configurations "
                   "evaluated, %d of them in the worlds Pharo ran in fit (every figure within "
                   "15%%, on slower than off, the subscriber over 2x off)."
                   % ("fits" if b["fits"] else "DOES NOT FIT", config_text(b["config"]),
                      b["rps"][1] / b["rps"][0], b["rps"][2] / b["rps"][0], f["evaluated"],
                      f["fitting"]))
    rows = []
    for name, fam in zip(FAMILY_NAMES, f["families"]):
        x = fam["best"]
        if not x:
            continue
        worst = max(abs(e) for e in x["err"])
        rows.append([name] + [fmt(v) for v in x["rps"]] +
                    ["%.1f%%%s" % (100 * worst, "" if x["fits"] else " (no fit)"),
                     config_text(x["config"])])
    out += md_table(["idle mode", "off /s", "on /s", "subscriber /s", "worst residual",
                     "configuration"], rows, "lrrrrl", "The best fit per family of worlds searched")
    rows = []
    for p in f["params"]:
        rows.append([p["name"], b["config"][p["name"]],
                     "%d..%d" % tuple(p["region"]) if p["region"] else "-",
                     "%d..%d" % tuple(p["alone"]) if p["alone"] else "-",
                     "%.2f / %.2f" % tuple(p["score_at"]) if p["score_at"] else "-",
                     PARAM_MEANING.get(p["name"], "")])
    out += md_table(["parameter", "best", "fitting region", "alone, fits in", "score 0.8x / 1.2x",
                     "what it stands for"], rows, "lrrrrl",
                    "The fitted parameters: the best value, the region of every fitting "
                    "configuration found, the range where the best still fits with only this "
                    "parameter moved, and the score at 0.8x and 1.2x (the worst residual plus a "
                    "tenth of the mean; up to 0.15 fits)")
    return out


def seed_table(run):
    """Off, on and subscriber requests/s per idle mode and quantum: one line per plain
    subscriber row (no other knob) whose off row ran."""
    rows = []
    for r in run.rows:
        k = r.cfg
        if (not k or r.case != "subscriber" or k["subscriber_events"] != "all" or k["before_us"]
                or k["between_us"] or k["after_us"] or k["wait"] != "timed"
                or k["background"] != "off"):
            continue
        off = run.find(dict(k, logging="off", subscriber_cost_us=0))
        on = run.find(dict(k, logging="on", subscriber_cost_us=0))
        o, s = off.m("requests_per_second") if off else None, r.m("requests_per_second")
        n = on.m("requests_per_second") if on else None
        if not off or not finite(s):
            continue
        rows.append([k["idle_mode"], k["idle_us"], k["wake_inject_us"], k["subscriber_cost_us"],
                     fmt(o), fmt(n), fmt(s), fmt(ratio(n, o), 2), fmt(ratio(s, o), 2),
                     fmt(off.m("blocked_first_reads_per_request"), 2),
                     fmt(r.m("blocked_first_reads_per_request"), 2)])
    if not rows:
        return ""
    return md_table(["idle mode", "idle us", "wake-up us", "sub. us", "off /s", "on /s",
                     "subscriber /s", "on/off", "sub/off", "off: blocked 1st", "sub: blocked 1st"],
                    rows, "lrrrrrrrrrr", "The sweep in the seed's shape: requests per second "
                    "with logging off, on, and on with a subscriber to every event (medians)")


RECORD_COLUMNS = [("requests_per_second", "/s"), ("us_per_request", "us/req"),
                  ("cpu_us_per_request", "CPU us/req"),
                  ("blocked_first_reads_per_request", "blocked 1st"),
                  ("os_sleeps_per_request", "OS sleeps"), ("mean_wait_us", "wait us"),
                  ("events_per_request", "events"), ("deliveries_per_request", "deliveries")]


def records_table(run, csv_name):
    """A row per configuration with its main figures per request (medians); the CSV
    beside the report has every figure."""
    versus = "recorded" if run.world == "replay" else "replay"
    has_versus = any(versus + "_requests_per_second" in r.fig for r in run.rows)
    head = ["configuration", "n"] + [h for _, h in RECORD_COLUMNS]
    if has_versus:
        head += [versus + " /s", "rps error"]
    rows = []
    for r in run.rows:
        if r.cfg is None:
            cells = [r.text(), len(r.samples), fmt(r.m("requests_per_second")),
                     fmt(r.m("us_per_request"), 1)] + ["-"] * (len(RECORD_COLUMNS) - 2)
        else:
            cells = [r.text(), len(r.samples)] + [fmt(r.m(n), DECIMALS[n]) for n, _ in RECORD_COLUMNS]
        if has_versus:
            cells += [fmt(r.m(versus + "_requests_per_second")), fmt(r.m("replay_rps_error"), 3)]
        rows.append(cells)
    return md_table(head, rows, "lr" + "r" * (len(head) - 2),
                    "The records: each configuration's figures per request (medians over its "
                    "repetitions)", "Every figure of every configuration%s is in %s, and every "
                    "repetition's counters in the JSON." % (
                        " (the replay's errors too)" if has_versus else "", csv_name))


# ---- the targets --------------------------------------------------------------------

def costs(r, who):
    """What a request cost in row r, from its counters."""
    blocked, wait = r.m("blocked_first_reads_per_request"), r.m("mean_wait_us")
    t = "%s %.0f us per request (%.0f us of it CPU), " % (who, r.m("us_per_request"),
                                                         r.m("cpu_us_per_request"))
    if finite(blocked) and blocked >= 0.005:
        return t + "%.2f first reads blocked per request, waiting %.0f us each" % (
            blocked, wait / blocked)
    return t + "no first read blocked"


def ratio_target(run, t, text, kind, num, den, limit, reason):
    """A target on num's requests/s against limit x den's (both rows must have run)."""
    a, b = run.ran(num), run.ran(den)
    if not a or not b:
        return
    t.add(text, kind, a.m("requests_per_second"), 0, limit * b.m("requests_per_second"), reason)


def shape_targets(run, t, world, off, on, sub, inverted):
    """The shape of the seed in a world: logging on slower than off, and the subscriber
    more than twice as fast where blocking is dear (inverted), no faster where it is
    cheap (the poll and spin modes on this machine: no inversion on today's Linux)."""
    o, n, s = run.find(off), run.find(on), run.find(sub)
    if not o or not n or not s:
        return
    bo, bn = o.m("blocked_first_reads_per_request"), n.m("blocked_first_reads_per_request")
    why = ("logging on blocked %.2f first reads per request against off's %.2f: the "
           "request-written event's %d us between the send and the read let the answer arrive "
           "first in %.2f of requests, which saved more waiting than the three events cost"
           % (bn, bo, on["event_cost_us"], bo - bn)) if finite(bo) and finite(bn) else ""
    ratio_target(run, t, "%s: logging on slower than off (the seed: 0.83x)" % world, "at most",
                 on, off, 0.999, why)
    if inverted:
        answer = o.recorded.get("answer_median_us")
        why = ("%s; %s: it removed %.2f blocked reads per request, not enough against the work "
               "it added for twice logging off's rate%s"
               % (costs(o, "logging off:"), costs(s, "the subscriber:"),
                  bo - s.m("blocked_first_reads_per_request"),
                  "; the recording: nginx's answer came a median %.1f us after the flush "
                  "returned (0: during it)" % answer if finite(answer) else ""))
        ratio_target(run, t, "%s: the subscriber (%d us per event) over 2x logging off (the "
                     "seed: 2.3-2.7x)" % (world, sub["subscriber_cost_us"]), "at least", sub, off,
                     2.0, why)
        return
    why = ("%s; %s: a blocked read cost less here than the subscriber's work, yet it won: the "
           "machine's own rhythm changed nginx's turnaround"
           % (costs(o, "logging off:"), costs(s, "the subscriber:")))
    ratio_target(run, t, "%s: the subscriber (%d us per event) no faster than logging off "
                 "(blocking is cheap: no inversion)" % (world, sub["subscriber_cost_us"]),
                 "at most", sub, off, 1.0, why)


def seed_targets(run, t, p):
    """The seed's own figures, within 15%, in the modelled world of a preset."""
    lo, hi = [SEED_OFF, SEED_ON, SEED_SUB_LO], [SEED_OFF, SEED_ON, SEED_SUB_HI]
    names = ["logging off", "logging on", "the subscriber"]
    for l, cfg in enumerate(p["cells"]):
        r = run.ran(cfg)
        if not r:
            continue
        why = ("the model ran %.0f us per request with %.2f first reads blocked; the preset was "
               "fitted with --fit-requests cells, this run's length differs"
               % (r.m("us_per_request"), r.m("blocked_first_reads_per_request")))
        for side in (0, 1):
            bound = hi[l] * (1 + TOLERANCE) if side else lo[l] * (1 - TOLERANCE)
            t.add("model %s: %s at %s %.0f/s (the seed's %.0f%s, %s 15%%)"
                  % (p["name"], names[l], "most" if side else "least", bound,
                     hi[l] if side else lo[l], (" top" if side else " bottom") if l == 2 else "",
                     "+" if side else "-"), "at most" if side else "at least",
                  r.m("requests_per_second"), 0, bound, why)


def replay_targets(run, t):
    """Every row beside its replay: requests/s within 10%, blocked first reads within
    0.05."""
    for r in run.rows:
        if r.cfg is None or "replay_rps_error" not in r.fig:
            continue
        rec = r.m("recorded_requests_per_second" if run.world == "replay" else "requests_per_second")
        rep = r.m("requests_per_second" if run.world == "replay" else "replay_requests_per_second")
        t.add("replay of %s: requests/s within 10%% of the recorded run" % r.text(), "at most",
              r.m("replay_rps_error"), 3, 0.10,
              "recorded %.0f/s, replayed %.0f/s: what the replay does not model (README.md, "
              "\"What a replay cannot capture\") moved this cell" % (rec, rep))
        t.add("replay of %s: blocked first reads within 0.05 of the recorded run" % r.text(),
              "at most", r.m("replay_blocked_first_difference"), 3, 0.05,
              "a request blocks in the replay when the recorded answer came later after the "
              "flush than the client's first read did: the recorded spans disagree at the "
              "boundary for these requests")


def targets(run):
    """Each target only when its rows ran: a run that did not ask for one is not judged."""
    t = Targets()
    off = plain("off", "poll", 0)
    o = run.ran(off)
    wrk = run.rows[0] if run.rows and run.rows[0].cfg is None else None
    if o and wrk:
        vs = o.fig["vs_wrk"]
        t.add("logging off, poll, 1 ms: at least 0.8x wrk -t1 -c1's requests/s in the same "
              "repetition", "at least", o.m("vs_wrk"), 2, 0.8,
              "%s; wrk: %.0f us per request; the ratio is the median of the repetitions' "
              "(%.2f..%.2f): nginx's and wrk's rates move between repetitions on a shared "
              "machine" % (costs(o, "the client:"), wrk.m("us_per_request"),
                           min(v for v in vs if finite(v)), max(v for v in vs if finite(v))))
    world = run.world
    for mode in ("poll", "legacy", "spin"):
        shape_targets(run, t, "%s, %s 1 ms" % (world, mode), plain("off", mode, 0),
                      plain("on", mode, 0), plain("subscriber", mode, 60), mode == "legacy")
    p = run.preset
    if p:
        shape_targets(run, t, "%s, preset %s" % (world, p["name"]), *p["cells"], True)
        if world == "model":
            seed_targets(run, t, p)
    replay_targets(run, t)
    return t


# ---- the words ----------------------------------------------------------------------

def total(run, name):
    """A per-request figure times the row's requests, summed over the VM rows: the run's
    total of that counter."""
    s = 0.0
    for r in run.rows:
        per, n = r.m(name), r.m("requests")
        if r.cfg is not None and finite(per) and finite(n):
            s += per * n
    return s


def mechanics(run):
    """The mechanics the report states, each a ratio of this run's own counters (the
    tests check these lines against the JSON)."""
    out = "## The mechanics, as this run counted them\n\n"
    blocked = total(run, "blocked_first_reads_per_request")
    if blocked > 0:
        out += ("- mechanics: per blocked first read, %.2f timed waits (DelayWaitTimeout), %.2f "
                "timing-process activations and %.2f OS sleeps (totals over every "
                "configuration: a blocked read is one of each; one activation, not Pharo's two, "
                "because stvm's waiter unschedules its own Delay).\n"
                % (total(run, "timed_waits_per_request") / blocked,
                   total(run, "timing_activations_per_request") / blocked,
                   total(run, "os_sleeps_per_request") / blocked))
    for r in run.rows:
        if r.case == "on" and finite(r.m("events_per_request")):
            out += ("- mechanics: logging on builds %.2f ZnLogEvents per request (one, the "
                    "request-written event, between the send and the first read; two after it) "
                    "and delivers %.2f: nobody is subscribed, the announcer returns at once.\n"
                    % (r.m("events_per_request"), r.m("deliveries_per_request")))
            break
    for r in run.rows:
        if r.case == "subscriber" and r.cfg["subscriber_events"] == "all":
            out += ("- mechanics: a subscriber to every ZnLogEvent receives %.2f deliveries per "
                    "request, each in the announcing process.\n" % r.m("deliveries_per_request"))
            break
    return out + "\n"


def prose(run):
    o, p, world = run.opts, run.preset, run.world
    server = "its server modelled" if world == "model" else run.doc["server"]
    out = ("# The ZnClient experiment\n\n"
           "The seed: a ZnClient loop against a local nginx on a 2017 Mac (Pharo 6 and 7) did "
           "about **3,000 requests/s with logging off, 2,500 with logging on, and 7,000-8,000 "
           "with logging on while a GT inspector was subscribed** to the log announcer: more "
           "work, more than twice as fast.\n\n"
           "This run: %s (%s), %d requests after %d of warm-up per configuration (at most %d s), "
           "each configuration in a fresh VM, %d repetitions%s. Every figure is a median over "
           "the repetitions; the JSON keeps each one's counters.\n\n"
           % (WORLDS[world], server, o["requests"], o["warmup"], o["max_seconds"], o["repeat"],
              "; wrk -t1 -c1 on the same URL in every repetition"
              if world == "nginx" and not o["no_wrk"] else ""))
    out += "## How to read it\n\n"
    items = []
    if p:
        items.append("**Seed 2 side by side**: the seed's three figures, the modelled world of "
                     "the preset %s (%s) on the simulated clock, this run's cells of that "
                     "world%s. The model reproduces the seed; the real machine shows what "
                     "differs (nginx's turnaround here, a wake-up that spins instead of idling) "
                     "and the replay shows that the model's machinery reproduces the real run "
                     "once it is given the real world's timings."
                     % (p["name"], p["what"], " on nginx and their replay" if world == "nginx"
                        else ""))
    if run.fit:
        items.append("**The fit** (`--fit`): the search over the model's physical parameters "
                     "for the seed's figures; the best fit in the worlds Pharo 6/7 ran in, the "
                     "best per family of worlds (the legacy idle mode with Pharo 6's 1 ms "
                     "quantum cannot exceed about 1,000 requests/s with logging off: the seed's "
                     "own 3,000 rules it out), and each parameter's fitting range and "
                     "sensitivity.")
    items += ["**The sweep in the seed's shape**: per idle mode and quantum, logging off, on and "
              "the subscriber at each cost, with on/off, subscriber/off and the blocked first "
              "reads. The poll mode is the VM since May 2017 (stvm's default), legacy the one "
              "before (a blind sleep of the quantum), spin never sleeps.",
              "**The records**: every configuration's main figures per request (the CSV beside "
              "the report has them all: the phases, what ended each OS sleep, and beside a "
              "recorded run its replay's requests/s with the replay's errors).",
              "**The targets**, each with what it measures, what it got and its bound; a missed "
              "target carries its reason, read off this run's counters."]
    out += "".join("%d. %s\n" % (i + 1, s) for i, s in enumerate(items)) + "\n"
    if o["record"] or o["replay"]:
        out += ("The replay (`--record`, `--replay`) runs the same client, scheduler and Delay "
                "machinery on the simulated clock against what the recorded run's world did: "
                "for every request the answer's arrival after the flush (the kernel's receive "
                "timestamp), every OS sleep's wake-up cost, and the client's own CPU between "
                "its points. What it cannot capture: how nginx would have answered a different "
                "rhythm (a replay of other knobs keeps the recorded turnarounds), CPU frequency "
                "and cache effects beyond the recorded spans, and preemption of the VM's thread "
                "inside a span (it counts as the client's CPU).\n\n")
    return out + mechanics(run)


def notes(run):
    lines = []
    for r in run.rows:
        cut = sum(r.fig.get("cut_short", []))
        if r.note:
            lines.append("%s: FAILED: %s" % (r.text(), r.note))
        elif cut:
            lines.append("%s: %d repetitions hit the %d s limit" % (r.text(), cut,
                                                                    run.opts["max_seconds"]))
    return "**Notes**\n\n" + "".join("- %s\n" % l for l in lines) + "\n" if lines else ""


# ---- the CSVs, the plots ------------------------------------------------------------

KNOBS = ["idle_mode", "idle_us", "wake_inject_us", "before_us", "between_us", "after_us",
         "event_cost_us", "wait", "background", "server_us", "server_jitter_us", "client_us",
         "subscriber_cost_us", "subscriber_events"]


def write_records_csv(run, path):
    """A row per configuration: its knobs (the subscriber's for subscriber rows only, the
    modelled world's in the model only), then every figure's median (zn.gp reads it)."""
    names = []
    for r in run.rows:
        names += [n for n in r.fig if n not in names]
    knobs = [k for k in KNOBS if not k.startswith(("server_", "client")) or run.world == "model"]
    rows = []
    for r in run.rows:
        k = r.cfg or {}
        cells = [r.case, run.doc["server"]]
        for key in knobs:
            sub_only = key.startswith("subscriber_")
            cells.append(k.get(key) if k and (not sub_only or r.case == "subscriber") else None)
        cells += ["FAILED" if r.note else "ok"] + [r.m(n) for n in names] + [r.note]
        rows.append(cells)
    write_csv(path, ["case", "server"] + knobs + ["status"] + names + ["note"], rows)


def write_phase_csv(run, path):
    """The phase diagram's data: the grid, the seed's point, this run's real subscriber
    rows where their own wake-up cost puts them (zn-phase.gp reads it)."""
    ph = run.doc["phase"]
    rows = [["grid", "", w, g, r, 1 if fits else 0] for w, g, r, fits in ph["cells"]]
    a = ph["around"]
    rows.append(["seed", "seed (fitted: %d us, %d us)" % (a["wake_inject_us"], a["subscriber_cost_us"]),
                 a["wake_inject_us"], a["subscriber_cost_us"],
                 (SEED_SUB_LO + SEED_SUB_HI) / 2 / SEED_OFF, 1])
    for r in run.rows if run.world == "nginx" else []:
        k = r.cfg
        if (not k or r.case != "subscriber" or k["subscriber_events"] != "all"
                or k["idle_mode"] != "poll" or k["before_us"] or k["between_us"] or k["after_us"]):
            continue
        off = run.find(dict(k, logging="off", subscriber_cost_us=0))
        sub, o = r.m("requests_per_second"), off.m("requests_per_second") if off else None
        late = r.recorded.get("wake_median_us")
        if finite(sub) and finite(o):
            rows.append(["run", "inject %d" % k["wake_inject_us"],
                         k["wake_inject_us"] + (late if finite(late) else 0),
                         k["subscriber_cost_us"], sub / o, 0])
    write_csv(path, ["case", "label", "wake_us", "subscriber_cost_us", "sub_over_off", "fits"], rows)
    fitting = sum(1 for c in ph["cells"] if c[3])
    print("phase diagram: %d of %d grid cells fit the seed" % (fitting, len(ph["cells"])),
          file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("json", help="what build/experiments/znclient wrote")
    ap.add_argument("--report", help="the Markdown report")
    ap.add_argument("--csv", help="the records as CSV (default: beside --plot)")
    ap.add_argument("--plot", help="requests/s and blocked first reads against the subscriber's "
                    "cost (zn.gp), the data beside it as .csv")
    ap.add_argument("--phase-plot", help="the phase diagram (zn-phase.gp; needs znclient "
                    "--phase), the data beside it as .csv")
    a = ap.parse_args()
    with open(a.json) as f:
        run = Run(json.load(f))
    ok = True
    csv_path = a.csv or (beside(a.plot, ".csv") if a.plot else None)
    if csv_path:
        write_records_csv(run, csv_path)
    if a.report:
        t = targets(run)
        text = prose(run)
        text += context_list(run.doc["context"], "The run (build/experiments/znclient)")
        text += seed2_table(run)
        if run.fit:
            text += fit_tables(run.fit)
        text += seed_table(run)
        text += records_table(run, os.path.basename(csv_path) if csv_path else "the CSV (--csv)")
        text += t.markdown() + notes(run)
        with open(a.report, "w") as f:
            f.write(text)
        print("report written to %s (%d targets, %d missed)" % (a.report, len(t.rows), t.missed()),
              file=sys.stderr)
    if a.plot:
        if not any(r.case == "subscriber" and r.samples for r in run.rows):
            print("error: no subscriber rows to plot (--logging subscriber)", file=sys.stderr)
            ok = False
        else:
            ok &= gnuplot(os.path.join(HERE, "zn.gp"), csv_path, a.plot)
    if a.phase_plot:
        if not run.doc.get("phase"):
            print("error: --phase-plot: the run has no phase grid (znclient --phase)",
                  file=sys.stderr)
            ok = False
        else:
            data = beside(a.phase_plot, ".csv")
            write_phase_csv(run, data)
            ok &= gnuplot(os.path.join(HERE, "zn-phase.gp"), data, a.phase_plot)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
