#!/usr/bin/env python3
"""Checks a DFTracer trace (.pfw) that dc-merge wrote against the Chrome
JSON trace of the same job.

Usage: pfw_check.py TRACE.pfw TRACE.json [PATH_PREFIX]

The first line is "[", as DFTracer writes it; every other line must parse
as one JSON object. Every call line has DFTracer's fields (id, name, cat,
pid, tid, ts, dur, ph "X", args with hhash), every fhash and hhash is
defined by an FH or HH line before its use, and per (level, function) the
calls, bytes moved (ret of reads and writes, as DFAnalyzer sizes them),
and start times (us since the epoch = the JSON's us from the job's start
+ its time origin) equal the JSON's. Prints one line per (level, function),
and with PATH_PREFIX, "prefix LEVEL calls bytes" of the writes to files
whose path (from its FH line) starts with it.
"""
import json
import sys
from collections import Counter, defaultdict


def fail(msg):
    sys.exit("pfw_check: " + msg)


def main():
    pfw, js = sys.argv[1:3]
    prefix = sys.argv[3] if len(sys.argv) > 3 else None
    paths, under = {}, Counter()
    lines = open(pfw, encoding="utf-8").read().split("\n")
    if lines[0] != "[":
        fail(f"the first line is {lines[0][:40]!r}, not '['")
    if lines[-1] != "":
        fail("the file does not end with a newline")
    hashes = {"HH": set(), "FH": set()}
    calls, size, starts = Counter(), Counter(), defaultdict(list)
    ranks, ids = {}, set()
    for k, line in enumerate(lines[1:-1], start=2):
        try:
            ev = json.loads(line)
        except ValueError as e:
            fail(f"line {k} is not JSON: {e}: {line[:80]}")
        if ev["id"] in ids:
            fail(f"line {k}: id {ev['id']} used twice")
        ids.add(ev["id"])
        args = ev.get("args", {})
        if ev["ph"] == "M":
            if ev["name"] in hashes:
                hashes[ev["name"]].add(args["value"])
            if ev["name"] == "FH":
                paths[args["value"]] = args["name"]
            if ev["name"] == "PR" and args["name"] == "rank":
                ranks[(args["hhash"], ev["pid"])] = int(args["value"])
            continue
        if args.get("hhash") not in hashes["HH"]:
            fail(f"line {k}: hhash {args.get('hhash')} used before an HH line defines it")
        if "fhash" in args and args["fhash"] not in hashes["FH"]:
            fail(f"line {k}: fhash {args['fhash']} used before an FH line defines it")
        if ev["ph"] != "X":
            continue
        for f in ("name", "cat", "pid", "tid", "ts", "dur"):
            if f not in ev:
                fail(f"line {k}: no {f}")
        key = (ev["cat"].lower(), ev["name"])
        calls[key] += 1
        low = ev["name"].lower()
        if ("read" in low or "write" in low) and args.get("ret", 0) > 0:
            size[key] += args["ret"]
        starts[key].append(ev["ts"])
        if prefix and "write" in low and paths.get(args.get("fhash"), "").startswith(prefix):
            under[(key[0], "calls")] += 1
            under[(key[0], "bytes")] += max(args.get("ret", 0), 0)

    doc = json.load(open(js))
    origin_us = doc["otherData"]["time_origin_unix_ns"] // 1000
    jcalls, jsize, jstarts = Counter(), Counter(), defaultdict(list)
    for ev in doc["traceEvents"]:
        if ev.get("ph") != "X":
            continue
        key = (ev["cat"], ev["name"])
        jcalls[key] += 1
        low = ev["name"].lower()
        if ("read" in low or "write" in low) and ev["args"].get("ret", 0) > 0:
            jsize[key] += ev["args"]["ret"]
        jstarts[key].append(ev["ts"])
    if calls != jcalls:
        fail(f"calls differ: pfw {dict(calls - jcalls)} json {dict(jcalls - calls)}")
    if size != jsize:
        fail(f"bytes differ: pfw {dict(size)} json {dict(jsize)}")
    for key in calls:
        a, b = sorted(starts[key]), sorted(jstarts[key])
        # pfw: whole us since the epoch; JSON: us (3 decimals) from the origin.
        for x, y in zip(a, b):
            if abs(x - (origin_us + y)) > 1.001:
                fail(f"{key}: a call starts at {x} us in pfw, {origin_us + y} in JSON")
    for key in sorted(calls):
        print(key[0], key[1], calls[key], size[key])
    print("ranks", sorted(set(ranks.values())))
    for level in sorted({lv for lv, _ in under}):
        print("prefix", level, under[(level, "calls")], under[(level, "bytes")])


if __name__ == "__main__":
    main()
