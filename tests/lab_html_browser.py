#!/usr/bin/env python3
"""The lab's HTML pages in a real browser (make lab-html-check, part of make check).

    lab_html_browser.py STVM_LAB OUT_DIR

For every scenario `STVM_LAB list` names: `STVM_LAB run NAME --trace OUT_DIR/NAME.json
--html OUT_DIR/NAME.html`, then Debian's chromium, headless, loads the page and
  - the script ran without an exception and drew the page (body[data-ready]);
  - every process of the page's data has a lane (g.lane[data-tid]) and every instant a
    mark (.mark), none missing and none extra;
  - a real mouse click on one mark (Input.dispatchMouseEvent at its centre) shows that
    event's name and seq in the "Selected" panel (on a span when the run has no instant);
  - a click on the time axis fills the "At a moment" panel with the running process and
    the run queue;
  - a screenshot goes to OUT_DIR/NAME.png.
One chromium serves every page: it is driven over --remote-debugging-pipe (the DevTools
protocol on two pipes, fds 3 and 4), which needs no port, no network and nothing but
Python's standard library. A missing chromium fails, with the command that installs it.
Exit 0 when every page passes; 1 with the first problem otherwise."""
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

CHROMIUM = "/usr/bin/chromium"
WIDTH = 1300
TIMEOUT = 30.0          # seconds for any one answer from the browser


def fail(msg):
    print("lab-html-check: FAILED: " + msg)
    sys.exit(1)


class Browser:
    """A headless chromium and its DevTools pipe: send() waits for the command's answer,
    keeping the events that arrive meanwhile for wait_event()."""

    def __init__(self, log):
        profile = tempfile.mkdtemp(prefix="stvm-lab-chromium-")
        self.profile = profile
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # The browser reads commands on fd 3 and writes answers on fd 4; moved high first
        # so that the dup2 calls in the child cannot overwrite one with the other.
        hi_r = os.dup2(to_browser_r, 100, inheritable=False)
        hi_w = os.dup2(from_browser_w, 101, inheritable=False)
        os.close(to_browser_r)
        os.close(from_browser_w)

        def wire():
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-extensions", "--disable-background-networking", "--hide-scrollbars",
             "--remote-debugging-pipe", "--user-data-dir=" + profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, close_fds=False,
            preexec_fn=wire)
        os.close(hi_r)
        os.close(hi_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def _read_message(self):
        while b"\0" not in self.buf:
            ready, _, _ = select.select([self.from_browser], [], [], TIMEOUT)
            if not ready:
                fail("chromium did not answer within %d s" % TIMEOUT)
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                fail("chromium closed its pipe (build/lab-html/chromium.log says why)")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.to_browser, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._read_message()
            if m.get("id") == self.next_id:
                if "error" in m:
                    fail("%s: %s" % (method, m["error"].get("message")))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, session):
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            for i, m in enumerate(self.events):
                if m.get("method") == method and m.get("sessionId") == session:
                    return self.events.pop(i)
            self.events.append(self._read_message())
        fail("no %s within %d s" % (method, TIMEOUT))

    def close(self):
        try:
            self.send("Browser.close")
        except SystemExit:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


def evaluate(b, session, expr):
    r = b.send("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session)
    if "exceptionDetails" in r:
        fail("the page's script failed on %r: %s" % (expr[:60], r["exceptionDetails"]))
    return r["result"].get("value")


def click(b, session, x, y):
    for kind in ("mousePressed", "mouseReleased"):
        b.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                            "clickCount": 1}, session)


CHECK = """(function () {
  var D = JSON.parse(document.getElementById('trace-data').textContent);
  var lanes = Array.prototype.map.call(document.querySelectorAll('g.lane[data-tid]'),
    function (g) { return +g.getAttribute('data-tid'); });
  var marks = Array.prototype.map.call(document.querySelectorAll('.mark'),
    function (m) { return +m.getAttribute('data-mark'); });
  return { ready: document.body.getAttribute('data-ready'), tids: D.tracks.map(function (t) { return t[0]; }),
           nmarks: D.marks.length, lanes: lanes, marks: marks, nspans: D.spans.length };
})()"""

# The centre of the first mark (or, without one, the widest span) on the screen, and what
# the detail panel must then say.
TARGET = """(function () {
  var D = JSON.parse(document.getElementById('trace-data').textContent);
  var el = document.querySelector('.mark'), want;
  if (el) { var m = D.marks[+el.getAttribute('data-mark')]; want = [m[3].split(' ')[0], 'seq ' + m[1]]; }
  else {
    var best = null;
    document.querySelectorAll('rect.span').forEach(function (r) {
      if (!best || r.getBoundingClientRect().width > best.getBoundingClientRect().width) best = r; });
    el = best;
    var s = D.spans[+el.getAttribute('data-span')];
    want = [s[6] || D.states[s[1]], 'seq ' + s[2] + ','];
  }
  var r = el.getBoundingClientRect();
  return { x: r.left + r.width / 2, y: r.top + Math.min(r.height / 2, 4), want: want };
})()"""


def check_page(b, name, html, png):
    t = b.send("Target.createTarget", {"url": "about:blank"})
    session = b.send("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True})["sessionId"]
    b.send("Page.enable", {}, session)
    b.send("Runtime.enable", {}, session)
    b.send("Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": 900,
                                                   "deviceScaleFactor": 1, "mobile": False}, session)
    b.send("Page.navigate", {"url": "file://" + os.path.abspath(html)}, session)
    b.wait_event("Page.loadEventFired", session)
    errors = [e for e in b.events if e.get("method") == "Runtime.exceptionThrown"
              and e.get("sessionId") == session]
    if errors:
        fail("%s: the page's script threw: %s" % (name, errors[0]["params"]["exceptionDetails"]))
    c = evaluate(b, session, CHECK)
    if c["ready"] != "1":
        fail("%s: the page's script did not finish (body has no data-ready)" % name)
    if sorted(c["lanes"]) != sorted(c["tids"]):
        fail("%s: lanes for tids %s, the processes are %s" % (name, c["lanes"], c["tids"]))
    if sorted(c["marks"]) != list(range(c["nmarks"])):
        fail("%s: %d marks drawn for %d instants" % (name, len(c["marks"]), c["nmarks"]))
    tgt = evaluate(b, session, TARGET)
    click(b, session, tgt["x"], tgt["y"])
    detail = evaluate(b, session, "document.getElementById('detail').innerText")
    flat = detail.replace("\t", " ").replace("\n", " ")
    while "  " in flat:
        flat = flat.replace("  ", " ")
    if tgt["want"][0] not in flat or tgt["want"][1] not in flat:
        fail("%s: clicked %s, the detail panel says: %s" % (name, tgt["want"], flat))
    # A click a third of the way along the time axis: who is where at that moment.
    axis = evaluate(b, session, "(function () { var r = document.getElementById('plot')"
                    ".getBoundingClientRect(); return [r.left, r.top, r.width]; })()")
    click(b, session, axis[0] + 200 + (axis[2] - 200) / 3, axis[1] + 12)
    moment = evaluate(b, session, "document.getElementById('moment').innerText")
    if not moment.startswith("At event #") or "run queue" not in moment:
        fail("%s: a click on the axis shows: %s" % (name, moment))
    height = evaluate(b, session, "document.documentElement.scrollHeight")
    b.send("Emulation.setDeviceMetricsOverride", {"width": WIDTH, "height": min(int(height), 2000),
                                                   "deviceScaleFactor": 1, "mobile": False}, session)
    shot = b.send("Page.captureScreenshot", {"format": "png"}, session)
    import base64
    with open(png, "wb") as f:
        f.write(base64.b64decode(shot["data"]))
    b.send("Target.closeTarget", {"targetId": t["targetId"]})
    print("lab-html-check: %s: %d lanes, %d marks, %d spans; clicked %s (%s): shown; "
          "moment: %s; %s" % (name, len(c["lanes"]), c["nmarks"], c["nspans"], tgt["want"][0],
                              tgt["want"][1].strip(" ,"), moment.split("\n")[0], png))


def main(lab, out):
    if not os.access(CHROMIUM, os.X_OK):
        fail("%s is not installed: it is Debian's chromium, which scripts/install-deps.sh "
             "installs (make setup, as root)" % CHROMIUM)
    os.makedirs(out, exist_ok=True)
    names = [l.split()[0] for l in subprocess.run([lab, "list"], check=True, capture_output=True,
                                                  text=True).stdout.splitlines() if l.strip()]
    if not names:
        fail("%s list named no scenario" % lab)
    start = time.time()
    pages = []
    for n in names:
        html, js = os.path.join(out, n + ".html"), os.path.join(out, n + ".json")
        r = subprocess.run([lab, "run", n, "--trace", js, "--html", html],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:
            fail("%s run %s --html: status %d: %s" % (lab, n, r.returncode, r.stderr.strip()))
        pages.append((n, html, os.path.join(out, n + ".png")))
    with open(os.path.join(out, "chromium.log"), "w") as log:
        b = Browser(log)
        try:
            for n, html, png in pages:
                check_page(b, n, html, png)
        finally:
            b.close()
    print("lab-html-check: passed: %d pages in %.1f s, screenshots in %s/" %
          (len(pages), time.time() - start, out))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: lab_html_browser.py STVM_LAB OUT_DIR")
        sys.exit(2)
    main(sys.argv[1], sys.argv[2])
