#!/usr/bin/env python3
"""Summarizes a dc-merge JSON trace for the tests, and checks its shape.

Prints one line per (level, function): "level function count req bytes",
sorted, after checking that the file parses, that "X" events are in time
order, and that every pid of an event has a process_name.
Usage: trace_summary.py TRACE.json [--processes] [--path REGEX]
(--path: only calls whose path matches)
"""
import gzip
import json
import re
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def main():
    trace = load(sys.argv[1])
    events = trace["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events
             if e["ph"] == "M" and e["name"] == "process_name"}
    sort_index = {e["pid"]: e["args"]["sort_index"] for e in events
                  if e["ph"] == "M" and e["name"] == "process_sort_index"}
    calls = [e for e in events if e["ph"] == "X"]
    stamps = [e["ts"] for e in calls]
    if stamps != sorted(stamps):
        sys.exit("events are not in time order")
    missing = {e["pid"] for e in calls} - set(names)
    if missing:
        sys.exit(f"pids without a process_name: {sorted(missing)}")
    if "--processes" in sys.argv:
        for pid in sorted(names, key=lambda p: sort_index.get(p, 1 << 30)):
            print(names[pid])
        return
    if "--path" in sys.argv:
        pattern = re.compile(sys.argv[sys.argv.index("--path") + 1])
        calls = [e for e in calls if pattern.search(e["args"].get("path", ""))]
    totals = {}
    for e in calls:
        key = (e["cat"], e["name"])
        c = totals.setdefault(key, [0, 0, 0])
        c[0] += 1
        c[1] += e["args"].get("req", 0)
        c[2] += e["args"].get("bytes", 0)
    for (level, name), (n, req, moved) in sorted(totals.items()):
        print(level, name, n, req, moved)


if __name__ == "__main__":
    main()
