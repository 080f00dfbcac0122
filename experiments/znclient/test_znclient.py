#!/usr/bin/env python3
"""The ZnClient experiment's checks (make experiments-check): build/experiments/znclient's
JSON in each world (a real nginx, a server already running, the model, a replay), its
usage errors, and report.py's report, CSV and plots made from it. The program runs for
real: a real nginx and wrk on loopback, every wait bounded by a timeout.

  STVM_BUILD=build python3 experiments/znclient/test_znclient.py [-v] [TestCase.test_name]
"""
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("STVM_BUILD", os.path.join(HERE, "..", "..", "build"))
ZN = os.path.join(BUILD, "experiments", "znclient")
REPORT = os.path.join(HERE, "report.py")
TINY = ["--logging", "off,subscriber", "--idle-mode", "poll", "--repeat", "1", "--requests",
        "20", "--warmup", "2", "--quiet"]
PRESET = ["--model", "--preset", "seed2-2017", "--repeat", "1", "--quiet", "--no-context"]


def zn(args, status=0, timeout=240):
    """The program's stdout; its exit status must be `status`."""
    p = subprocess.run([ZN] + args, capture_output=True, text=True, timeout=timeout)
    if p.returncode != status:
        raise AssertionError("znclient %s: status %d, not %d:\n%s" % (" ".join(args), p.returncode,
                                                                    status, p.stderr[-3000:]))
    return p


def rps(doc):
    """requests/s of each case's first sample (one repetition)."""
    out = {}
    for r in doc["rows"]:
        if r["config"] and r["samples"]:
            s = r["samples"][0]
            out[r["case"]] = s["requests"] / (s["wall_ns"] / 1e9)
    return out


class Static(http.server.BaseHTTPRequestHandler):
    """A keep-alive HTTP/1.1 server of one 300-byte file at /static (404 elsewhere)."""
    protocol_version = "HTTP/1.1"
    body = bytes(range(48, 78)) * 10

    def do_GET(self):
        ok = self.path == "/static"
        body = self.body if ok else b"not found\n"
        self.send_response(200 if ok else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class ZnClient(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="stvm-znclient-test-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    # ---- a real nginx, a server already running -------------------------------------

    def test_nginx_run_has_every_case_and_counter_and_the_report_every_figure(self):
        out = self.path("run.json")
        zn(TINY + ["--wrk-seconds", "1", "--out", out])
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual([r["case"] for r in doc["rows"]], ["wrk", "off", "subscriber"])
        self.assertEqual(doc["world"], "nginx")
        s = doc["rows"][1]["samples"][0]
        for key in ("requests", "wall_ns", "cpu_ns", "first_reads_blocked", "timed_waits",
                    "wait_ns", "os_sleeps", "context_switches", "events_built", "deliveries"):
            self.assertIn(key, s)
        self.assertGreater(doc["rows"][0]["wrk"][0]["rps"], 0)
        csv = self.path("run.csv")
        subprocess.run([sys.executable, REPORT, out, "--report", self.path("run.md"), "--csv",
                        csv], check=True, capture_output=True)
        with open(csv) as f:
            head = f.readline()
        for word in ("case", "idle_mode", "subscriber_cost_us", "requests_per_second", "vs_wrk",
                     "us_per_request", "cpu_us_per_request", "blocked_first_reads_per_request",
                     "timed_waits_per_request", "mean_wait_us", "wrk_p50_us"):
            self.assertIn(word, head)
        with open(self.path("run.md")) as f:
            self.assertIn("logging off, poll, 1 ms: at least 0.8x wrk", f.read())

    def test_url_measures_a_server_already_running(self):
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Static)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        try:
            url = "http://127.0.0.1:%d/static" % srv.server_address[1]
            doc = json.loads(zn(TINY + ["--wrk-seconds", "1", "--url", url]).stdout)
            self.assertEqual(doc["server"], url, "the JSON names the URL")
            self.assertTrue(doc["rows"][0]["wrk"], "wrk runs on the same URL")
            bad = "http://localhost:%d/404" % srv.server_address[1]
            zn(TINY + ["--no-wrk", "--url", bad], status=1)   # every response must be a 200
        finally:
            srv.shutdown()
            srv.server_close()

    def test_url_off_loopback_or_malformed_is_a_usage_error(self):
        for u in ("http://10.0.0.1/", "http://192.168.1.1:80/x", "http://example.com/",
                  "http://127.0.0.2/", "https://127.0.0.1/", "http://[::2]:80/",
                  "http://127.0.0.1:0/", "http://127.0.0.1:65536/", "http://127.0.0.1:x/",
                  "http://127.0.0.1/a b"):
            zn(["--no-wrk", "--repeat", "1", "--url", u], status=2)

    # ---- the model ------------------------------------------------------------------

    def test_the_model_writes_the_same_bytes_on_every_run(self):
        a, b = zn(PRESET).stdout, zn(PRESET).stdout
        self.assertEqual(a, b, "two runs of the model differ")
        doc = json.loads(a)
        self.assertEqual([r["case"] for r in doc["rows"]], ["off", "on", "subscriber"])
        self.assertEqual(doc["world"], "model")

    def test_the_seed2_2017_preset_gives_the_seeds_three_figures_within_15_percent(self):
        r = rps(json.loads(zn(PRESET).stdout))
        # The seed: logging off 3,000/s, on 2,500, on with a subscriber 7,000-8,000.
        self.assertTrue(2550 <= r["off"] <= 3450 and 2125 <= r["on"] <= 2875 and
                        5950 <= r["subscriber"] <= 9200, r)
        self.assertTrue(r["on"] < r["off"] and r["subscriber"] > 2 * r["off"], r)

    def test_in_the_model_the_subscriber_wins_only_when_a_blocked_read_costs(self):
        def ratio(wake):
            r = rps(json.loads(zn(["--model", "--repeat", "1", "--quiet", "--logging",
                                   "off,subscriber", "--idle-mode", "poll",
                                   "--subscriber-cost-us", "20", "--event-cost-us", "18",
                                   "--server-us", "22", "--server-jitter-us", "2",
                                   "--wake-inject-us", str(wake)]).stdout))
            return r["subscriber"] / r["off"]
        cheap, dear = ratio(0), ratio(300)
        self.assertLess(cheap, 1.0, "waking costs nothing: the subscriber only adds")
        self.assertGreater(dear, 2.0, "waking costs 300 us: the subscriber saves it")

    def test_the_fit_is_the_same_on_every_run_and_says_what_it_found(self):
        args = ["--model", "--fit", "--fit-requests", "20", "--logging", "off", "--idle-mode",
                "poll", "--repeat", "1", "--requests", "20", "--quiet", "--no-context"]
        a, b = zn(args).stdout, zn(args).stdout
        self.assertEqual(a, b, "two fits differ")
        with open(self.path("fit.json"), "w") as f:
            f.write(a)
        subprocess.run([sys.executable, REPORT, self.path("fit.json"), "--report",
                        self.path("fit.md")], check=True, capture_output=True)
        with open(self.path("fit.md")) as f:
            text = f.read()
        for said in ("The seed's table, fitted", "configurations evaluated",
                     "The best fit per family", "wake_inject_us", "legacy, 1 ms quantum",
                     "fitting region"):
            self.assertIn(said, text)

    def test_the_phase_diagram_is_drawn_with_its_grid_and_the_seeds_point(self):
        out, png = self.path("phase.json"), self.path("phase.png")
        zn(["--model", "--preset", "seed2-2017", "--repeat", "1", "--requests", "50", "--quiet",
            "--phase", "--out", out])
        subprocess.run([sys.executable, REPORT, out, "--phase-plot", png], check=True,
                       capture_output=True)
        with open(self.path("phase.csv")) as f:
            data = f.read()
        self.assertEqual(data.count("\ngrid,"), 31 * 21, "a cell per grid point")
        self.assertEqual(data.count("\nseed,"), 1)
        if shutil.which("gnuplot"):
            self.assertGreater(os.path.getsize(png), 10000, "gnuplot drew it")

    def test_the_reports_stated_mechanics_are_this_runs_counters(self):
        out, md = self.path("mech.json"), self.path("mech.md")
        zn(["--model", "--idle-mode", "poll,legacy", "--subscriber-cost-us", "20,60",
            "--server-jitter-us", "30", "--repeat", "1", "--requests", "300", "--quiet",
            "--out", out])
        subprocess.run([sys.executable, REPORT, out, "--report", md], check=True,
                       capture_output=True)
        with open(out) as f:
            rows = [r for r in json.load(f)["rows"] if r["config"]]
        with open(md) as f:
            text = f.read()

        def total(key):
            return sum(r["samples"][0][key] for r in rows)

        def per(case, key):
            r = next(r for r in rows if r["case"] == case and
                     (case != "subscriber" or r["config"]["subscriber_events"] == "all"))
            return r["samples"][0][key] / r["samples"][0]["requests"]

        b = total("first_reads_blocked")
        want = [total("timed_waits") / b, total("timing_activations") / b, total("os_sleeps") / b,
                per("on", "events_built"), per("on", "deliveries"),
                per("subscriber", "deliveries")]
        lines = [l for l in text.splitlines() if l.startswith("- mechanics:")]
        got = [float(x) for l in lines for x in re.findall(r"(\d+\.\d\d)\b", l)]
        self.assertEqual(len(lines), 3, lines)
        self.assertEqual(len(got), 6, got)
        for g, w in zip(got, want):
            self.assertAlmostEqual(g, w, delta=0.006)

    # ---- record and replay ------------------------------------------------------------

    def test_a_recorded_run_replays_to_its_own_figures_and_replays_byte_identically(self):
        rec, out = self.path("rec.txt"), self.path("rec.json")
        zn(["--logging", "off,subscriber", "--subscriber-cost-us", "60", "--idle-mode",
            "poll,legacy", "--requests", "300", "--warmup", "30", "--repeat", "1", "--no-wrk",
            "--quiet", "--record", rec, "--out", out])
        subprocess.run([sys.executable, REPORT, out, "--csv", self.path("rec.csv")], check=True,
                       capture_output=True)
        import csv
        with open(self.path("rec.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(sum(1 for r in rows if r["replay_rps_error"]), 4)
        # The bounds are 10% and 0.05 (make demo judges them); a loaded machine moves what
        # the replay cannot model, so the test allows 25% and 0.10.
        for r in rows:
            self.assertLessEqual(float(r["replay_rps_error"]), 0.25, r)
            self.assertLessEqual(float(r["replay_blocked_first_difference"]), 0.10, r)
        args = ["--replay", rec, "--quiet", "--no-context"]
        a, b = zn(args).stdout, zn(args).stdout
        self.assertEqual(a, b, "two replays of one recording differ")
        doc = json.loads(a)
        self.assertEqual(doc["world"], "replay")
        self.assertEqual(sum(r["case"] == "subscriber" for r in doc["rows"]), 2)
        self.assertTrue(all(r["versus"] for r in doc["rows"]), "each row has its recorded run")

    def test_a_broken_recording_is_refused_with_its_file_line_and_what_is_wrong(self):
        cell = ("cell rep=1 logging=0 events=3 cost=0 mode=0 idle_us=1000 inject=0 before=0 "
                "between=0 after=0 event_cost=5 plain=0 background=0 server=0 jitter=0 "
                "client=0 requests=1 timed=1 rps=1000.0 blocked=1.0\n")
        request = "q 0 18000 20000 500 6000 11000 111 1 0:1000:40000:20000\n"
        magic = "stvm-bench zn recording 1\n"
        cases = [("not a recording\n", ":1: not a recording"), (magic, ":1: no cell"),
                 (magic + request, ":2: a request line outside a cell"),
                 (magic + cell + "end\n", ":3: fewer request lines"),
                 (magic + cell + request, "the file ends inside a cell"),
                 (magic + "cell rep=1 colour=blue\n", ":2: an unknown key"),
                 (magic + cell + "q 0 1 2 3\nend\n", ":3: a request line wants six spans"),
                 (magic + cell + "q 0 1 2 3 4 5 111 1 9:1:2:3\nend\n", ":3: a sleep wants")]
        path = self.path("broken.txt")
        for text, said in cases:
            with open(path, "w") as f:
                f.write(text)
            err = zn(["--replay", path, "--quiet"], status=2).stderr
            self.assertIn(said, err)
            self.assertIn(path, err, "the message names the file")

    def test_worlds_that_do_not_go_together_are_usage_errors(self):
        for args in (["--model", "--replay", "/dev/null"], ["--model", "--record",
                                                             self.path("x.rec")],
                     ["--model", "--url", "http://127.0.0.1:1/"]):
            zn(args + ["--quiet"], status=2)

    # ---- the program's options ----------------------------------------------------------

    def test_help_names_every_option_and_bad_values_are_usage_errors(self):
        text = zn(["--help"]).stdout
        for opt in ("--logging", "--idle-mode", "--model", "--fit", "--phase", "--record",
                    "--replay", "--url", "--trace", "--no-context", "--out"):
            self.assertIn(opt, text)
        for bad in (["--idle-mode", "sleepy"], ["--repeat", "0"], ["--requests", "x"],
                    ["--subscriber-cost-us", "5..1"], ["--no-such-option"], ["extra"],
                    ["--out", "/nonexistent/dir/x.json"]):
            zn(bad, status=2)

    def test_trace_records_the_client_vm_of_one_configuration(self):
        trace = self.path("t.json")
        p = zn(["--model", "--logging", "off", "--idle-mode", "poll", "--repeat", "1",
                "--requests", "20", "--warmup", "2", "--quiet", "--trace", trace])
        self.assertIn("trace written to", p.stderr)
        with open(trace) as f:
            self.assertIn("\"name\":\"ui#", f.read())
        zn(["--model", "--logging", "off,on", "--idle-mode", "poll", "--repeat", "1", "--quiet",
            "--trace", trace], status=2)


if __name__ == "__main__":
    if not os.access(ZN, os.X_OK):
        sys.exit("%s is not built (make experiments)" % ZN)
    unittest.main()
