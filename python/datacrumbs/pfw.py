"""DFTracer's trace format as dc-merge -f pfw / pfw.gz writes it.

A first line "[", then one JSON object a line: HH (a host's hash), FH (a
file's hash), PR (a process's rank) and process_name metadata lines before
their first use, and an X line per call with the level in capitals as
cat, ts and dur in whole microseconds (ts since the Unix epoch, on the
job's corrected clock) and args hhash, fhash, fd, count (bytes asked),
ret and offset. The format has no column for bytes moved: bytes is ret
for reads and writes that returned a count, as DFAnalyzer takes it.
"""

import gzip
import json

import numpy as np
import pandas as pd


def _lines(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.strip()
            if line and line not in ("[", "]"):
                yield json.loads(line.rstrip(","))


_WRITERS = ("copy_file_range", "sendfile", "sendfile64", "splice", "vmsplice", "tee",
            "fprintf", "vfprintf", "printf", "vprintf", "dprintf", "vdprintf",
            "__fprintf_chk", "__vfprintf_chk", "__printf_chk",
            "fputs", "puts", "fputc", "putc", "_io_putc", "putchar", "putw")
_READERS = ("fgets", "__fgets_chk", "fgetc", "getc", "_io_getc", "getchar", "getw", "fscanf",
            "vfscanf", "__isoc99_fscanf", "__isoc99_vfscanf", "scanf", "__isoc99_scanf",
            "getline", "getdelim")


def _io_kind(name):
    """common/io_kind.h's rule, which an HDF5 file carries as its io
    column and a pfw file cannot (integration.python checks they agree)."""
    low = name.lower()
    if low in _WRITERS:
        return "write"
    if low in _READERS:
        return "read"
    if "read" in low and "readdir" not in low and "readlink" not in low and "readahead" not in low:
        return "read"
    return "write" if "write" in low else ""


def load_pfw(path, dask=False):
    """Every X line (call) of a .pfw or .pfw.gz file as a dataframe, with the
    columns of load_hdf5 that the format carries (times in ns, whole us)."""
    hosts, files, ranks, labels, rows = {}, {}, {}, {}, []
    for o in _lines(path):
        a = o.get("args", {})
        ph, name = o.get("ph"), o.get("name")
        if ph == "M":
            if name == "HH":
                hosts[a["value"]] = a["name"]
            elif name == "FH":
                files[a["value"]] = a["name"]
            elif name == "PR":
                ranks[(a["hhash"], o["pid"])] = int(a["value"])
            elif name == "process_name":
                labels[(a["hhash"], o["pid"])] = a["name"]
        elif ph == "X":
            rows.append((o["ts"], o["dur"], a["hhash"], o["cat"].lower(), name, o["pid"], o["tid"],
                         a.get("fd", -1), a.get("ret", 0), a.get("count", 0), a.get("offset", -1),
                         a.get("fhash"), a.get("fd2", -1), a.get("fhash2")))
    df = pd.DataFrame(rows, columns=["ts_us", "dur_us", "hhash", "level", "function", "pid", "tid", "fd", "ret",
                                     "req", "offset", "fhash", "fd2", "fhash2"])
    key = list(zip(df["hhash"], df["pid"]))
    io = df["function"].map(_io_kind)
    out = pd.DataFrame({
        "ts_ns": df["ts_us"].astype(np.int64) * 1000,
        "dur_ns": df["dur_us"].astype(np.int64) * 1000,
        "host": df["hhash"].map(hosts).astype("category"),
        "level": df["level"].astype("category"),
        "function": df["function"].astype("category"),
        "io": pd.Categorical(io, categories=["", "read", "write"]),
        "rank": pd.Series([ranks.get(k, -1) for k in key], dtype=np.int32),
        "pid": df["pid"].astype(np.int64),
        "tid": df["tid"].astype(np.int64),
        "process": [labels.get(k, "") for k in key],
        "fd": df["fd"].astype(np.int32),
        "ret": df["ret"].astype(np.int64),
        "req": df["req"].astype(np.int64),
        "bytes": np.where((io != "") & (df["ret"] > 0), df["ret"], 0).astype(np.int64),
        "offset": df["offset"].astype(np.int64),
        "path": df["fhash"].map(files).fillna("").astype("category"),
        "fd2": df["fd2"].astype(np.int32),
        "path2": df["fhash2"].map(files).fillna("").astype("category"),
        "syscall": df["level"] == "syscall",
    })
    if dask:
        import dask.dataframe as dd
        return dd.from_pandas(out, npartitions=max(1, len(out) // (1 << 20)))
    return out
