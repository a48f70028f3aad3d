#!/usr/bin/env python3
"""pftrace_check.py DECODED [JSON]: checks a Perfetto trace that protoc decoded
(protoc --decode=perfetto.protos.Trace datacrumbs_io.proto < trace) as a
reader needs it: every interned id defined before its use (per packet
sequence), every slice begun and ended on its track in stack order,
timestamps never decreasing, no track described twice, one process track a
pid and each thread track naming its process's pid, a track's slices on one
sequence, no sequence begun twice, and how many slice packets name their track (none, where each
thread is a sequence with its track as the default). Prints
"level name count bytes" per function; with JSON (dc-merge's JSON of the same
job), checks that they equal the JSON's. --nest A,B,C: prints how many slices
named C lie inside a B inside an A on one track. --io-schema DECODED
EXPECTED: checks only the trace's description of its io extension against
EXPECTED (datacrumbs_io.proto's FileDescriptorSet, decoded by protoc)."""
import fnmatch, json, re, sys


def parse(text):
    """protoc's text format into nested lists of (key, value)."""
    root, stack = [], []
    cur = root
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.endswith("{"):
            child = []
            cur.append((line[:-1].strip(), child))
            stack.append(cur)
            cur = child
        elif line == "}":
            cur = stack.pop()
        else:
            k, v = line.split(":", 1)
            v = v.strip()
            if v.startswith('"'):
                v = bytes(v[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8", "surrogateescape")
            cur.append((k.strip(), v))
    return root


def get(msg, key, default=None):
    for k, v in msg:
        if k == key:
            return v
    return default


def all_of(msg, key):
    return [v for k, v in msg if k == key]


class Sequence:
    """What a packet sequence has defined: interning, its clock and its
    defaults (the clock packets use, the track of events that name none)
    are per sequence (each thread's calls are one; a trace joined from parts
    holds several files' sequences)."""

    def __init__(self):
        self.defined = {"event_names": set(), "event_categories": set(), "debug_annotation_names": set(),
                        "debug_annotation_string_values": set()}
        self.tables = ({}, {}, {}, {})
        self.clock = None
        self.clock_id = None
        self.track = None
        self.ts = 0


def check(packets, nest=None):
    seqs = {}
    stacks, totals, nested = {}, {}, 0
    named, slice_seq = [0, 0], {}  # slice packets without, with their track named; track -> its sequence
    owners = {}  # track uuid -> (sequence, descriptor): no two sequences may define one differently
    pids, pid_owner = {}, {}  # process track -> pid, pid -> process track: one process a pid
    for p in packets:
        seq_id = get(p, "trusted_packet_sequence_id")
        if get(p, "first_packet_on_sequence") == "true":
            # A joined trace's parts must not share a sequence id.
            assert seq_id not in seqs, "sequence %s begun twice" % seq_id
        seq = seqs.setdefault(seq_id, Sequence())
        defined = seq.defined
        names, cats, strings, ann_names = seq.tables
        if get(p, "sequence_flags") in ("1", "3"):
            for s in defined.values():
                s.clear()
            seq.clock_id = seq.track = None
        defaults = get(p, "trace_packet_defaults")
        if defaults:
            assert get(p, "sequence_flags") in ("1", "3"), "defaults outside a packet that clears the state"
            seq.clock_id = get(defaults, "timestamp_clock_id")
            seq.track = get(get(defaults, "track_event_defaults", []), "track_uuid")
        td = get(p, "track_descriptor")
        if td:
            uuid = get(td, "uuid")
            mine = (get(p, "trusted_packet_sequence_id"), repr(td))
            if uuid != "0":
                assert owners.setdefault(uuid, mine) == mine, "track %s described twice, differently" % uuid
            proc, thread = get(td, "process"), get(td, "thread")
            if proc:
                pids[uuid] = get(proc, "pid")
                assert pid_owner.setdefault(get(proc, "pid"), uuid) == uuid, "two processes with pid %s" % get(proc, "pid")
            if thread:
                parent = get(td, "parent_uuid")
                assert pids.get(parent) == get(thread, "pid"), \
                    "thread track %s names pid %s, its process track %s has %s" % (uuid, get(thread, "pid"), parent, pids.get(parent))
        for idata in all_of(p, "interned_data"):
            for kind, table in (("event_names", names), ("event_categories", cats),
                                ("debug_annotation_names", ann_names),
                                ("debug_annotation_string_values", strings)):
                for entry in all_of(idata, kind):
                    iid = int(get(entry, "iid"))
                    table[iid] = get(entry, "name", get(entry, "str"))
                    defined[kind].add(iid)
        snap = get(p, "clock_snapshot")
        if snap:
            for c in all_of(snap, "clocks"):
                if get(c, "clock_id") == "64":
                    seq.clock = int(get(c, "timestamp"))
        if get(p, "timestamp") is not None:
            assert seq.clock is not None, "a timestamp before the clock snapshot"
            assert seq.clock_id == "64", "a timestamp on a sequence whose clock is not the incremental 64"
            d = int(get(p, "timestamp"))
            assert d >= 0, "a negative delta"
            seq.ts = (seq.ts or seq.clock) + d
        te = get(p, "track_event")
        if not te:
            continue
        kind = get(te, "type")
        track = get(te, "track_uuid", seq.track)
        assert track is not None, "an event on no track (none named, no default)"
        if kind in ("TYPE_SLICE_BEGIN", "TYPE_SLICE_END"):
            named[get(te, "track_uuid") is not None] += 1
            assert track not in slice_seq or slice_seq[track] == id(seq), "track %s's slices on two sequences" % track
            slice_seq[track] = id(seq)
        if kind == "TYPE_SLICE_BEGIN":
            nid = int(get(te, "name_iid"))
            assert nid in defined["event_names"], "event name %d used before it is defined" % nid
            cat = ""
            for c in all_of(te, "category_iids"):
                assert int(c) in defined["event_categories"], "category %s used before it is defined" % c
                cat = cats[int(c)]
            args = {}
            for a in all_of(te, "debug_annotations"):
                aid = int(get(a, "name_iid"))
                assert aid in defined["debug_annotation_names"], "annotation name %d undefined" % aid
                if get(a, "string_value_iid") is not None:
                    sid = int(get(a, "string_value_iid"))
                    assert sid in defined["debug_annotation_string_values"], "string %d undefined" % sid
                    args[ann_names[aid]] = strings[sid]
                else:
                    args[ann_names[aid]] = int(get(a, "int_value"))
            io = get(te, "[datacrumbs.io]")
            assert io is not None, "a call without its io fields (fd, bytes, offset...)"
            for k, v in io:
                args[k] = int(v)
            name = names[nid]
            t = totals.setdefault((cat, name), [0, 0])
            t[0] += 1
            t[1] += args.get("bytes", 0)
            stack = stacks.setdefault(track, [])
            stack.append(name)
            if nest and len(stack) >= len(nest) and all(
                    fnmatch.fnmatchcase(n, pat) for n, pat in zip(stack[-len(nest):], nest)):
                nested += 1
        elif kind == "TYPE_SLICE_END":
            assert stacks.get(track), "an end on track %s with no slice open" % track
            stacks[track].pop()
    open_ = {k: v for k, v in stacks.items() if v}
    assert not open_, "slices never ended: %s" % open_
    return totals, nested, named


def json_totals(path):
    t = {}
    for e in json.load(open(path))["traceEvents"]:
        if e.get("ph") == "X":
            x = t.setdefault((e.get("cat", ""), e["name"]), [0, 0])
            x[0] += 1
            x[1] += e.get("args", {}).get("bytes", 0)
    return t


def io_schema(blocks):
    """The io extension as a FileDescriptorSet describes it: its message's
    fields and the extension itself, without what protoc adds (json names)."""
    def strip(msg):
        return [(k, strip(v) if isinstance(v, list) else v) for k, v in msg if k != "10"]
    for f in blocks:
        if get(f, "package") == "datacrumbs":
            return [strip(m) for m in all_of(f, "message_type")], [strip(x) for x in all_of(f, "extension")]
    raise AssertionError("no datacrumbs file in the descriptor set")


def check_io_schema(decoded, expected):
    """--io-schema DECODED EXPECTED: the trace describes its io extension as
    tests/perfetto/datacrumbs_io.proto does (EXPECTED: that file's
    FileDescriptorSet decoded by protoc), which is what trace_processor
    decodes the trace's io fields with."""
    packets = [v for k, v in parse(open(decoded, encoding="utf-8").read()) if k == "packet"]
    sets = [get(get(p, "extension_descriptor"), "extension_set") for p in packets if get(p, "extension_descriptor")]
    assert sets, "the trace carries no ExtensionDescriptor for its io fields"
    want = io_schema(all_of(parse(open(expected, encoding="utf-8").read()), "file"))
    for s in sets:
        assert io_schema(all_of(s, "file")) == want, "the trace's io schema differs from datacrumbs_io.proto"
    print("ok: the io extension as datacrumbs_io.proto describes it, in %d descriptor(s)" % len(sets))


def main():
    args = sys.argv[1:]
    if args and args[0] == "--io-schema":
        check_io_schema(args[1], args[2])
        return
    nest = None
    if "--nest" in args:
        i = args.index("--nest")
        nest = args[i + 1].split(",")
        del args[i:i + 2]
    packets = [v for k, v in parse(open(args[0], encoding="utf-8", errors="surrogateescape").read())
               if k == "packet"]
    totals, nested, named = check(packets, nest)
    for (cat, name), (n, b) in sorted(totals.items()):
        print(cat, name, n, b)
    print("slice packets on their track's own sequence %d, naming their track %d" % tuple(named))
    if nest:
        print("nested", nested)
    if len(args) > 1:
        want = json_totals(args[1])
        assert totals == want, "perfetto %s != json %s" % (sorted(totals.items())[:5], sorted(want.items())[:5])
        print("ok: same calls and bytes as the JSON")


if __name__ == "__main__":
    main()
