#!/usr/bin/env python3
"""The DelayBenchmark experiment's checks (make experiments-check): report.py's report made
from `stvm-bench delay`'s JSON shows the seed's rows and transcript, the summary, the two
questions and the targets; the mechanics it states are the records' figures; the
calibrated simulated sweep meets the calibration; the plot's data has the columns
delay.gp reads. Tiny sweeps on the simulated clock (no waiting), and one on the real one.

  STVM_BUILD=build python3 experiments/delay-benchmark/test_delay_benchmark.py [-v]
"""
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("STVM_BUILD", os.path.join(HERE, "..", "..", "build"))
BENCH = os.path.join(BUILD, "stvm-bench")
REPORT = os.path.join(HERE, "report.py")
TINY = ["delay", "--clock", "sim", "--repr", "ms-smallint31,us-largeint31", "--concurrency",
        "10,20", "--window-ms", "20", "--repeat", "2", "--quiet"]
SEED1 = ["delay", "--clock", "sim", "--sim-cost", "seed1", "--concurrency", "1000..10000:1000",
         "--quiet"]


class DelayBenchmark(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="stvm-delay-benchmark-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def report(self, bench_args, *report_args):
        """Run stvm-bench, then report.py on its JSON: (the JSON, the report's text)."""
        js, md = os.path.join(self.tmp, "run.json"), os.path.join(self.tmp, "run.md")
        with open(js, "w") as f:
            subprocess.run([BENCH] + bench_args + ["--format", "json"], stdout=f, check=True,
                           timeout=300)
        subprocess.run([sys.executable, REPORT, js, "--report", md] + list(report_args),
                       check=True, capture_output=True, timeout=60)
        with open(js) as f, open(md) as g:
            return json.load(f), g.read()

    def test_the_report_shows_the_seed_beside_stvm_the_summary_the_questions_and_the_targets(self):
        _, text = self.report(TINY)
        for said in ("ms-smallint31: the seed (Pharo 2015, 32-bit Cog VM, withNewCodeEnabled: "
                     "false, ms) beside stvm", "DelayBenchmark us-largeint31...",
                     "Summary on the simulated clock", "relative performance",
                     "LargeInteger ops per delay", "The seed's two questions",
                     "1. The rollover trade.", "Per N (medians over 2 repetitions",
                     "what the counters say", "reads stvm_vm_now_us once per delay"):
            self.assertIn(said, text)
        self.assertEqual(text.count("#ConcurrentDelays: 10 . Count: "), 2)
        # People read the seed's tables first, the targets last.
        self.assertLess(text.index("Summary on "), text.index("Per N ("))
        self.assertNotIn("two stvm_vm_now_us reads", text)

    def test_the_stated_mechanics_are_the_counters(self):
        for args in (["delay", "--clock", "sim", "--concurrency", "10,20", "--window-ms", "20",
                      "--quiet"],
                     ["delay", "--clock", "sim", "--sim-cost", "seed1", "--concurrency",
                      "1000,3000", "--window-ms", "200", "--quiet"],
                     ["delay", "--clock", "real", "--concurrency", "10,20", "--window-ms", "20",
                      "--quiet"]):
            doc, text = self.report(args)
            m = text[text.index("what the counters say"):]
            for sentence, metric, digits in (
                    ("Clock reads per delay (clock_reads", "clock_reads_per_delay", 3),
                    ("Timing-loop passes per delay", "timing_loop_passes_per_delay", 3),
                    ("Boxed allocations per delay", "boxed_per_delay", 2),
                    ("LargeInteger operations per delay", "large_ops_per_delay", 2),
                    ("Context switches per delay", "context_switches_per_delay", 3),
                    ("Idle sleeps in the kernel per delay", "idle_sleeps_per_delay", 3)):
                at = m.index(sentence)
                end = m.find(". ", at)
                for r in ("ms-smallint31", "us-largeint31", "us-smallint61"):
                    recs = [x for x in doc["results"] if x["case"] == r]
                    peak = max(recs, key=lambda x: (next(v["median"] for v in x["metrics"]
                                                         if v["name"] == "delays_per_second"),
                                                    -recs.index(x)))
                    v = next(x["median"] for x in peak["metrics"] if x["name"] == metric)
                    want = "%s %.*f" % (r, digits, v)
                    self.assertIn(want, m[at:end], "%s: %s" % (" ".join(args), sentence))

    def test_the_calibrated_sweep_puts_ms_smallint31_at_the_seeds_peak(self):
        _, text = self.report(SEED1)
        self.assertIn("128507 at 5000", text)
        for line in text.splitlines():
            if "(the calibration)" in line or "saturated by N = 5,000" in line:
                self.assertIn("| met ", line)
        self.assertIn("us-smallint61 never slower than ms-smallint31", text)

    def test_the_plot_data_has_the_columns_delay_gp_reads(self):
        png = os.path.join(self.tmp, "run.png")
        self.report(TINY, "--plot", png)
        with open(os.path.join(self.tmp, "run.csv")) as f:
            lines = [l for l in f if not l.startswith("#")]
        head = next(csv.reader(lines[:1]))
        for col in ("case", "clock", "concurrency", "window_ms", "delays_per_second",
                    "cpu_us_per_delay", "sim_cost_us_per_delay"):
            self.assertIn(col, head)
        self.assertEqual(len(lines), 1 + 4)
        if shutil.which("gnuplot"):
            self.assertGreater(os.path.getsize(png), 10000, "gnuplot drew it")


if __name__ == "__main__":
    if not os.access(BENCH, os.X_OK):
        sys.exit("%s is not built (make tools)" % BENCH)
    unittest.main()
