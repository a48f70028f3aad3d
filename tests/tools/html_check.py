#!/usr/bin/env python3
"""Holds dc-summary's HTML report, as a browser parsed it, to its JSON report.

Usage: html_check.py DOM.html SUMMARY.json SCREENSHOT.png [--path-must-show TEXT]

DOM.html is the page after Chromium loaded it (--dump-dom). Every element
with data-k names the JSON value it shows: its text, or its data-v, must
equal that value. The page must fetch nothing and run no script, every
chart must have been drawn (its colour is in the screenshot), and warnings
must come before the first chart. Prints what it checked; exits 1 with
the first difference.
"""
import html.parser
import json
import sys

from PIL import Image

CHART_COLOURS = {  # summary_html.c's, one per chart
    "timeline read": (0x1F, 0x77, 0xB4),
    "timeline write": (0xFF, 0x7F, 0x0E),
    "heatmap's busiest cell": (0x54, 0x27, 0x8F),
    "time per level": (0x2C, 0xA0, 0x2C),
    "access sizes read": (0x17, 0xBE, 0xCF),
    "access sizes write": (0xBC, 0xBD, 0x22),
    "slowest ranks": (0xD6, 0x27, 0x28),
}


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.shown = []  # (key, text or data-v, position)
        self.heat_rows = []
        self.open = []  # [key, text pieces] of data-k elements being read
        self.tags = []
        self.order = []  # ("warn" | "chart", position)
        self.fetches = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "action", "srcset", "poster", "data") and value:
                self.fetches.append(f"<{tag} {name}={value}>")
            if name == "style" and value and "url(" in value:
                self.fetches.append(f"<{tag} style={value}>")
        if tag in ("script", "link", "iframe", "object", "embed", "img"):
            self.fetches.append(f"<{tag}>")
        if "warn" in (a.get("class") or "").split():
            self.order.append(("warn", self.getpos()))
        if tag == "svg":
            self.order.append(("chart", self.getpos()))
        key = a.get("data-k")
        if key == "heat_row":
            self.heat_rows.append((a["data-label"], int(a["data-bytes"])))
        elif key and "data-v" in a:
            self.shown.append((key, a["data-v"]))
        elif key:
            self.open.append([key, [], len(self.tags)])

    def handle_endtag(self, tag):
        while self.open and self.open[-1][2] >= len(self.tags):
            key, text, _ = self.open.pop()
            self.shown.append((key, "".join(text)))
        if self.tags:
            self.tags.pop()

    def handle_data(self, data):
        for o in self.open:
            o[1].append(data)


def json_value(doc, key):
    """'levels.posix.calls' -> the posix level's calls; lists by index,
    levels by name."""
    v = doc
    parts = key.split(".")
    i = 0
    while i < len(parts):
        p = parts[i]
        if isinstance(v, list) and p.isdigit():
            v = v[int(p)]
        elif isinstance(v, list):  # levels by their name
            v = next(x for x in v if x["level"] == p)
        else:
            v = v[p]
        i += 1
    return v


def same(shown, want):
    if isinstance(want, list):
        return [int(x) for x in shown.split(",")] == want
    if isinstance(want, float):
        # The page shows seconds to the microsecond (the JSON to the ns):
        # half a microsecond apart at most, and a hair more for the binary.
        return abs(float(shown) - want) <= 5.001e-7
    if isinstance(want, int):
        return int(shown) == want
    return shown == want


def fail(msg):
    sys.exit("html_check: " + msg)


def main():
    dom, js, png = sys.argv[1:4]
    must_show = sys.argv[5] if len(sys.argv) > 5 and sys.argv[4] == "--path-must-show" else None
    doc = json.load(open(js))
    p = Page()
    p.feed(open(dom, encoding="utf-8").read())
    if p.fetches:
        fail(f"the page fetches or runs something: {p.fetches[:3]}")
    n = 0
    for key, shown in p.shown:
        if key == "node_warning":
            continue
        want = json_value(doc, key)
        if not same(shown.strip(), want):
            fail(f"{key}: the page shows {shown.strip()!r}, the JSON says {want!r}")
        n += 1
    keys = {k for k, _ in p.shown}
    for need in ("events", "lost_events", "timeline.read_bytes", "timeline.write_bytes", "ranks.0.time_s",
                 "functions.0.calls", "top_files_by_bytes.0.bytes"):
        if need not in keys:
            fail(f"the page does not show {need}")
    total = sum(doc["timeline"]["read_bytes"]) + sum(doc["timeline"]["write_bytes"])
    if sum(b for _, b in p.heat_rows) != total:
        fail(f"heatmap rows hold {sum(b for _, b in p.heat_rows)} bytes, the timeline {total}")
    warned = [k for k, _ in p.shown if k == "node_warning"]
    if len(warned) != len(doc["node_warnings"]):
        fail(f"{len(warned)} node warnings on the page, {len(doc['node_warnings'])} in the JSON")
    warn_at = [pos for kind, pos in p.order if kind == "warn"]
    chart_at = [pos for kind, pos in p.order if kind == "chart"]
    if warn_at and chart_at and max(warn_at) > min(chart_at):
        fail("a warning comes after a chart: warnings belong at the top")
    if must_show is not None and must_show not in [s for k, s in p.shown if k.endswith(".path")]:
        fail(f"the path {must_show!r} is not shown as text")
    img = Image.open(png).convert("RGB")
    counts = {colour: n for n, colour in img.getcolors(maxcolors=1 << 24)}
    for chart, colour in CHART_COLOURS.items():
        if counts.get(colour, 0) < 20:
            fail(f"the {chart} chart was not drawn ({counts.get(colour, 0)} pixels of its colour)")
    print(f"ok: {n} figures on the page equal the JSON; {len(p.heat_rows)} heatmap rows hold {total} bytes; "
          f"{len(CHART_COLOURS)} charts drawn; {len(warned)} node warnings; nothing fetched")


if __name__ == "__main__":
    main()
