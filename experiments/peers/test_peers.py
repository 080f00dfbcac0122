#!/usr/bin/env python3
"""The peers experiment's checks (make experiments-check), without the peers: make check
never builds them (make bench-peers does), so run.py runs with --peers-dir pointing at an
empty folder. It must still run stvm's side, a cell per (system, N), say of each missing
peer that it was not run and why (a line on stderr, a footer, the run's note) with exit
status 0, and the same for the ping-pong. Tiny counts on the real clock (a 20 ms window at
N = 20, 1000 hand-offs); the Park-Miller durations are checked against bench/random.c's.

  STVM_BUILD=build python3 experiments/peers/test_peers.py [-v]
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("STVM_BUILD", os.path.join(HERE, "..", "..", "build"))
RUN = os.path.join(HERE, "run.py")
sys.path.insert(0, HERE)
import run as peers  # noqa: E402


def run(args, status=0):
    p = subprocess.run([sys.executable, RUN, "--bench", os.path.join(BUILD, "stvm-bench")] + args,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != status:
        raise AssertionError("run.py %s: status %d, not %d:\n%s" % (" ".join(args), p.returncode,
                                                                  status, p.stderr[-2000:]))
    return p


class Peers(unittest.TestCase):
    def setUp(self):
        self.empty = tempfile.mkdtemp(prefix="stvm-peers-test-")
        self.tiny = ["--peers-dir", self.empty, "--concurrency", "20", "--repeat", "1",
                     "--window-ms", "20", "--handoffs", "1000",
                     "--repr", "ms-smallint31,us-smallint61"]

    def tearDown(self):
        for f in os.listdir(self.empty):
            os.unlink(os.path.join(self.empty, f))
        os.rmdir(self.empty)

    def test_the_durations_are_delay_benchmarks(self):
        t = peers.durations()
        self.assertEqual(len(t), 1000)
        self.assertEqual(t[:7], [1, 27, 37, 14, 19, 10, 49])
        self.assertEqual(sum(t), 24686)

    def test_without_peers_stvm_is_measured_and_each_peer_is_a_note(self):
        out = os.path.join(self.empty, "run.json")
        p = run(self.tiny + ["--out", out, "--report", os.path.join(self.empty, "run.md")])
        with open(out) as f:
            doc = json.load(f)
        cells = {(c["system"], c["concurrency"]): c for c in doc["cells"]}
        for r in ("ms-smallint31", "us-smallint61"):
            c = cells[(r, 20)]
            self.assertEqual(len(c["samples"]), 1, c)
            self.assertGreater(c["samples"][0]["delays_per_second"], 0)
        for peer in ("go", "libuv", "erlang"):
            self.assertNotIn((peer, 20), cells)
            self.assertIn("not built", doc["missing"][peer])
            self.assertIn("peers: %s not run: not built" % peer, p.stderr)
        # The ping-pong: stvm's measured, none for a peer that was not run.
        self.assertEqual([c["runtime"] for c in doc["pingpong"]], ["stvm"])
        self.assertGreater(doc["pingpong"][0]["samples"][0]["ns_per_handoff"], 0)
        with open(os.path.join(self.empty, "run.md")) as f:
            text = f.read()
        self.assertIn("stvm ms-smallint31", text)
        self.assertIn("stvm us-smallint61", text)
        # Each peer twice: the table's footer and the run's note.
        self.assertEqual(text.count("not built: no "), 3 * 2, text)
        self.assertIn("Semaphore ping-pong", text)
        self.assertIn("Not run: go", text)

    def test_the_report_is_made_again_from_the_json(self):
        out = os.path.join(self.empty, "run.json")
        first = run(self.tiny + ["--out", out]).stdout
        again = run(["--from", out]).stdout
        self.assertEqual(first, again)

    def test_help_names_the_options_and_the_peers(self):
        text = run(["--help"]).stdout
        for opt in ("--concurrency", "--peers-dir", "--peer", "--repr", "--handoffs", "--from"):
            self.assertIn(opt, text)

    def test_bad_values_are_usage_errors(self):
        run(["--peer", "java"], status=2)
        run(["--repr", "ms-smallint62"], status=2)
        run(["--repeat", "0"], status=2)


if __name__ == "__main__":
    unittest.main()
