#!/usr/bin/env python3
"""pftrace_unpack.py IN OUT: a Perfetto trace with every compressed_packets
batch inflated (zlib, as trace_processor inflates it) and its packets put
in its place, so that protoc decodes the trace as Perfetto reads it.
Prints "batches N packets M largest L": the batches found, the packets in
them, and the largest batch packet's size in bytes (Perfetto's limit is
512 KiB)."""
import sys
import zlib

TRACE_PACKET, COMPRESSED_PACKETS = 1, 50


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """(field, wire type, value or bytes, start, end) of each field of message b."""
    i = 0
    while i < len(b):
        start = i
        key, i = varint(b, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            v, i = varint(b, i)
        elif wire == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wire == 1:
            v, i = b[i:i + 8], i + 8
        elif wire == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d at byte %d" % (wire, start))
        yield field, wire, v, start, i


def main():
    data = open(sys.argv[1], "rb").read()
    out, batches, inner, largest = bytearray(), 0, 0, 0
    for field, wire, packet, start, end in fields(data):
        assert field == TRACE_PACKET and wire == 2, "not a TracePacket at byte %d" % start
        comp = [v for f, w, v, _, _ in fields(packet) if f == COMPRESSED_PACKETS]
        if not comp:
            out += data[start:end]
            continue
        assert len(list(fields(packet))) == 1, "a batch packet with other fields"
        batches += 1
        largest = max(largest, end - start)
        assert end - start < 512 * 1024, "a batch of %d bytes (Perfetto's limit: 512 KiB)" % (end - start)
        plain = zlib.decompress(comp[0])
        for f, w, _, s, e in fields(plain):
            assert f == TRACE_PACKET and w == 2, "a batch holds something else than packets"
            inner += 1
        out += plain
    open(sys.argv[2], "wb").write(out)
    print("batches %d packets %d largest %d" % (batches, inner, largest))


if __name__ == "__main__":
    main()
