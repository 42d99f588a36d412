#!/usr/bin/env python3
"""Hit fraction over time per scenario, the fault interval shaded (Jepsen style), as SVG written by hand (stdlib only).

    python3 benches/qualify/plots.py RESULTS.json DIR     (scripts/qualify --plots DIR does the same after a run)

One SVG per scenario (DIR/ID.svg): the hit fraction per second of the engines' requests (blue), the baseline's at the
same trace positions (grey, dashed), the requests the Managers left unserved per second (orange bars, right scale),
the fault shaded red from its start to the start of its heal, a heal that takes time (a restart) shaded lighter up to
the dashed line where it ended. DIR/index.html shows them
all with each scenario's figures.
"""

import html
import json
import os
import sys

WIDTH = 720
HEIGHT = 260
LEFT = 48
RIGHT = 48
TOP = 30
BOTTOM = 34


def _x(t, t0, t1):
    return LEFT + (t - t0) / (t1 - t0) * (WIDTH - LEFT - RIGHT)


def _y(v):
    return TOP + (1.0 - v) * (HEIGHT - TOP - BOTTOM)


def svg(result):
    series = result.get("series")
    if not series or not series.get("bins"):
        return None
    bins = series["bins"]
    step = series.get("binS", 1.0)
    t0 = min(b[0] for b in bins)
    t1 = max(series.get("end", bins[-1][0] + step), bins[-1][0] + step)
    if t1 <= t0:
        t1 = t0 + 1
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">'
           % (WIDTH, HEIGHT), '<rect width="100%" height="100%" fill="white"/>']
    fault = series.get("fault", [0, 0])
    fx0, fx1 = _x(fault[0], t0, t1), _x(fault[1], t0, t1)
    out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#e8a0a0" fill-opacity="0.45"/>' % (
        fx0, TOP, max(1.0, fx1 - fx0), HEIGHT - TOP - BOTTOM))
    hx = _x(series.get("healed", fault[1]), t0, t1)
    if hx - fx1 >= 1.0:  # a heal that takes time (a restart): shaded lighter up to its end
        out.append('<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#e8a0a0" fill-opacity="0.2"/>' % (
            fx1, TOP, hx - fx1, HEIGHT - TOP - BOTTOM))
        out.append('<text x="%.1f" y="%d" fill="#903030">heal</text>' % (fx1 + 2, TOP + 24))
    out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#b04040" stroke-dasharray="2,2"/>' % (
        hx, hx, TOP, HEIGHT - BOTTOM))
    out.append('<text x="%.1f" y="%d" fill="#903030">fault</text>' % (fx0 + 2, TOP + 11))
    # axes and grid
    for v in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(v)
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (LEFT, WIDTH - RIGHT, y, y))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.2f</text>' % (LEFT - 4, y + 4, v))
    tick = 5 if t1 - t0 <= 60 else 10
    t = (int(t0) // tick) * tick
    while t <= t1:
        if t >= t0:
            x = _x(t, t0, t1)
            out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#999"/>' % (
                x, x, HEIGHT - BOTTOM, HEIGHT - BOTTOM + 4))
            out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x, HEIGHT - BOTTOM + 15, t))
        t += tick
    out.append('<text x="%d" y="%d" text-anchor="middle">seconds from the fault</text>' % (
        (LEFT + WIDTH - RIGHT) // 2, HEIGHT - 4))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>' % (
        LEFT, TOP, WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM))
    # unserved bars, right scale
    most = max([b[3] for b in bins] + [1])
    for b in bins:
        if b[4]:
            x0, x1 = _x(b[0], t0, t1), _x(b[0] + step, t0, t1)
            h = b[4] / most * (HEIGHT - TOP - BOTTOM)
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#f0a030" fill-opacity="0.7"/>' % (
                x0 + 1, HEIGHT - BOTTOM - h, max(1.0, x1 - x0 - 2), h))
    out.append('<text x="%d" y="%d" text-anchor="start" fill="#c07010">%d req/s</text>' % (
        WIDTH - RIGHT + 4, TOP + 4, most))
    out.append('<text x="%d" y="%d" text-anchor="start" fill="#c07010">0</text>' % (WIDTH - RIGHT + 4, HEIGHT - BOTTOM))

    def line(col, style):
        pts = ["%.1f,%.1f" % (_x(b[0] + step / 2, t0, t1), _y(b[col])) for b in bins if b[col] is not None]
        if pts:
            out.append('<polyline fill="none" %s points="%s"/>' % (style, " ".join(pts)))
    line(2, 'stroke="#888" stroke-width="1.5" stroke-dasharray="5,3"')
    line(1, 'stroke="#1f5fbf" stroke-width="2"')
    status = "PASS" if result.get("passed") else "FAIL"
    out.append('<text x="%d" y="18" font-size="13" font-weight="bold">%s <tspan fill="%s">%s</tspan></text>' % (
        LEFT, html.escape(result["id"]), "#208020" if status == "PASS" else "#c02020", status))
    out.append('<text x="%d" y="18" text-anchor="end" fill="#555">hit (blue), baseline at the same trace positions '
               '(grey), unserved (orange)</text>' % (WIDTH - RIGHT))
    out.append("</svg>")
    return "\n".join(out) + "\n"


FIGURES = ("requests", "unserved", "wrongBytes", "hitBefore", "hitDuring", "hitAfter", "hitLost", "timeToFenceS",
           "wholeAfterHealS", "hitRecoveredVsBaselineS", "incompleteCoverageS", "recomputedRequests", "refusals")


def write_all(summary, directory):
    os.makedirs(directory, exist_ok=True)
    written = []
    parts = ["<!doctype html><meta charset=utf-8><title>qualification run %s</title>" % html.escape(
        str(summary.get("run"))), "<h1>Qualification run %s: %s</h1>" % (
        html.escape(str(summary.get("run"))), "PASS" if summary.get("passed") else "FAIL"),
        "<p>settings: <code>%s</code></p>" % html.escape(json.dumps(summary.get("settings", {})))]
    for result in summary.get("scenarios", []):
        text = svg(result)
        name = result["id"] + ".svg"
        if text is not None:
            with open(os.path.join(directory, name), "w") as f:
                f.write(text)
            written.append(name)
        failed = [c["name"] + ": " + c.get("detail", "")[:300] for c in result.get("checks", []) if not c["passed"]]
        figs = result.get("figures", {})
        parts.append("<h2>%s</h2><p>%s</p>" % (html.escape(result["id"]), html.escape(result.get("title", ""))))
        if text is not None:
            parts.append('<img src="%s">' % html.escape(name))
        parts.append("<pre>%s</pre>" % html.escape("\n".join(
            ["%s: %s" % (k, json.dumps(figs.get(k))) for k in FIGURES if k in figs]
            + ["FAILED " + f for f in failed])))
    with open(os.path.join(directory, "index.html"), "w") as f:
        f.write("\n".join(parts) + "\n")
    written.append("index.html")
    return written


def main():
    if len(sys.argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(sys.argv[1]) as f:
        summary = json.load(f)
    written = write_all(summary, sys.argv[2])
    print("%d files in %s" % (len(written), sys.argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
