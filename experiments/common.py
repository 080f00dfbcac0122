"""What the experiments' report scripts share (experiments/README.md): statistics as
stvm-bench computes them, figures as people read them, Markdown tables, targets judged
on the figure as printed, CSV files for gnuplot and running gnuplot, and reading
stvm-bench's JSON (schema stvm-bench/1). Python 3's standard library only.
"""
import csv
import math
import os
import shutil
import subprocess
import sys


def median(values):
    """The median of the finite values (the mean of the middle two), None without any."""
    v = sorted(x for x in values if x is not None and math.isfinite(x))
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def finite(v):
    return v is not None and isinstance(v, (int, float)) and math.isfinite(v)


def cround(v, decimals):
    """C's round() to `decimals`: half away from zero (Python's round() is banker's)."""
    scale = 10 ** decimals
    return math.copysign(math.floor(abs(v) * scale + 0.5), v) / scale


def fmt(v, decimals=0, suffix=""):
    """A figure with its decimals, "-" when not measured."""
    return "%.*f%s" % (decimals, v, suffix) if finite(v) else "-"


def grouped(v):
    """1234567 as "1,234,567"; "-" when not measured."""
    return "{:,.0f}".format(v) if finite(v) else "-"


def ratio(a, b):
    return a / b if finite(a) and finite(b) and b else None


def md_table(head, rows, align=None, title=None, footer=None):
    """A Markdown table (columns padded to their widest cell), its title in bold above
    and its footer below; align is a string of l and r, one per column."""
    rows = [[str(c) for c in r] for r in rows]
    align = align or "l" + "r" * (len(head) - 1)
    width = [max(3, len(str(h)), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]

    def line(cells):
        return "| " + " | ".join(c.rjust(w) if a == "r" else c.ljust(w)
                                 for c, w, a in zip(cells, width, align)) + " |"

    rule = "|" + "|".join(("-" * (w + 1) + ":") if a == "r" else ("-" * (w + 2))
                          for w, a in zip(width, align)) + "|"
    out = []
    if title:
        out += ["**%s**" % title, ""]
    out += [line([str(h) for h in head]), rule] + [line(r) for r in rows]
    if footer:
        out += ["", footer]
    return "\n".join(out) + "\n\n"


class Targets:
    """Targets as stvm-bench judges them: a figure at least or at most a bound, judged on
    the figure as printed (rounded to its decimals); a miss keeps its reason."""

    def __init__(self):
        self.rows = []

    def add(self, text, kind, value, decimals, bound, reason=""):
        if not finite(value) or not finite(bound):
            verdict = "not measured"
        else:
            v = cround(value, decimals)
            ok = v >= bound if kind == "at least" else v <= bound
            verdict = "met" if ok else "MISSED (%s)" % reason if reason else "MISSED"
        self.rows.append((text, verdict, value, decimals, kind, bound))

    def missed(self):
        return sum(r[1].startswith("MISSED") for r in self.rows)

    def markdown(self):
        if not self.rows:
            return ""
        rows = [(t, v, fmt(x, d), ("%s %s" % (">=" if k == "at least" else "<=",
                                               "%.4g" % b) if finite(b) else "-"))
                for t, v, x, d, k, b in self.rows]
        return md_table(["target", "verdict", "value", "bound"], rows, "llrr", "Targets")

    def as_json(self):
        return [{"text": t, "verdict": v.split(" (")[0], "reason": v[len(v.split(" (")[0]):]
                 .strip(" ()"), "value": x, "kind": k, "bound": b}
                for t, v, x, d, k, b in self.rows]


def context_list(ctx, title):
    """The run's context (stvm-bench's or a program's) as a Markdown list."""
    return "## %s\n\n" % title + "".join("- %s: %s\n" % (k, v) for k, v in ctx.items()) + "\n"


def write_csv(path, head, rows, context=None):
    """A CSV file, after the context as '# key: value' lines (gnuplot skips them)."""
    with open(path, "w", newline="") as f:
        for k, v in (context or {}).items():
            f.write("# %s: %s\n" % (k, v))
        w = csv.writer(f, lineterminator="\n")
        w.writerow(head)
        for r in rows:
            w.writerow(["" if c is None or (isinstance(c, float) and not math.isfinite(c))
                        else c for c in r])


def gnuplot(script, datafile, png):
    """gnuplot -e "datafile='X.csv'; outfile='X.png'" SCRIPT: True when it drew; a
    missing gnuplot is a note on stderr, not a failure."""
    if not shutil.which("gnuplot"):
        print("note: gnuplot is not installed: %s not drawn (its data: %s)" % (png, datafile),
              file=sys.stderr)
        return True
    rc = subprocess.run(["gnuplot", "-e", "datafile='%s'; outfile='%s'" % (datafile, png),
                         script]).returncode
    if rc != 0:
        print("error: gnuplot %s failed with status %d" % (script, rc), file=sys.stderr)
        return False
    print("plot written to %s (data %s)" % (png, datafile), file=sys.stderr)
    return True


def beside(png, ext):
    """X.png -> X.csv (the data beside a plot)."""
    return os.path.splitext(png)[0] + ext


# ---- stvm-bench's JSON (bench/README.md, "json") ---------------------------------------

def metric(record, name):
    """A record's metric (a dict with median, samples, ...), or None."""
    for m in record.get("metrics", []):
        if m["name"] == name:
            return m
    return None


def med(record, name):
    """A metric's median, None when not measured."""
    m = metric(record, name) if record else None
    return m["median"] if m and m.get("samples") and finite(m["median"]) else None


def samples(record, name):
    m = metric(record, name) if record else None
    return m["samples"] if m else []
