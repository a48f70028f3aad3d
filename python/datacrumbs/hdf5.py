"""The merged (or stitched) HDF5 file that dc-merge -f hdf5 writes.

The layout (docs/outputs.md, "HDF5"): /events rows of calls, /counters
(PROFILE totals), and the small tables that the rows index: /functions
(name, level, io), /levels, /paths, /processes, /nodes. Columns are read
by the names the file's own types give; dc-merge adds columns, never
renames them.
"""

import h5py
import numpy as np
import pandas as pd

EVENTS, COUNTERS, FUNCTIONS, LEVELS, PATHS, PROCESSES, NODES = (
    "events", "counters", "functions", "levels", "paths", "processes", "nodes")
# The newest layout (reader/hdf5_layout.h) this package reads; a file
# without the attribute is of layout 1.
LAYOUT_VERSION = 1


def _check_layout(f, path):
    v = int(f.attrs.get("layout_version", 1))
    if v > LAYOUT_VERSION:
        raise ValueError("%s was written by a newer DataCrumbs (HDF5 layout %d; this package reads up to %d): "
                         "use that release's python/datacrumbs" % (path, v, LAYOUT_VERSION))


def _text(v):
    return v.decode("utf-8", "surrogateescape") if isinstance(v, bytes) else str(v)


def _table(f, name):
    """A compound dataset as a dataframe, its strings decoded."""
    df = pd.DataFrame(f[name][:]) if f[name].shape[0] else pd.DataFrame(
        {k: pd.Series(dtype=f[name].dtype[k]) for k in f[name].dtype.names})
    for col in df.columns:
        if df[col].dtype == object:
            df[col] = df[col].map(_text)
    return df


def _strings(f, name):
    return [_text(v) for v in f[name][:]]


def job_attributes(path):
    """The root group's attributes: job_id, time origin, events, lost events..."""
    with h5py.File(path, "r") as f:
        return {k: (_text(v) if isinstance(v, (bytes, str)) else v.item() if hasattr(v, "item") else v)
                for k, v in f.attrs.items()}


class _Tables:
    """What the rows index, read once: passed whole to every partition."""

    def __init__(self, f):
        self.functions = _table(f, FUNCTIONS)
        if "io" not in self.functions.columns:  # files of releases before the io column
            self.functions["io"] = ""
        self.levels = _strings(f, LEVELS)
        self.paths = _strings(f, PATHS)
        self.nodes = _table(f, NODES)
        self.processes = _table(f, PROCESSES)
        self.syscall_bit = _flag_bit(f[EVENTS].attrs.get("flags", b""), "observed at a system call")

    def categories(self):
        cat = pd.CategoricalDtype
        return {
            "host": cat(list(dict.fromkeys(self.nodes["host"]))),
            "level": cat(list(dict.fromkeys(self.levels))),
            "function": cat(list(dict.fromkeys(self.functions["name"]))),
            "io": cat(["", "read", "write"]),
            "path": cat(list(dict.fromkeys(self.paths))),
        }


def _flag_bit(text, meaning):
    """The bit of /events' flags that the file's own flags attribute gives a meaning."""
    for part in _text(text).split(";"):
        bit, _, what = part.strip().partition(" ")
        if what == meaning:
            return int(bit, 16)
    return 0


def _paths(t, ev, column, dtypes):
    """A column of path indexes as the paths; a file from before the
    column was added (path2) has none."""
    if column not in ev or not len(ev):
        return pd.Series([""] * len(ev), dtype=dtypes["path"])
    return pd.Series(np.asarray(t.paths, dtype=object)[ev[column].to_numpy()], dtype=dtypes["path"])


def _calls(rows, t, dtypes):
    """Rows of /events as calls: indexes replaced by what they name."""
    ev = pd.DataFrame(rows)
    fn = t.functions
    out = pd.DataFrame({
        "ts_ns": ev["ts_ns"].astype(np.int64),
        "dur_ns": ev["dur_ns"].astype(np.int64),
        "host": pd.Categorical.from_codes(ev["node"].astype(np.int64), dtype=dtypes["host"])
        if len(t.nodes) else pd.Categorical([], dtype=dtypes["host"]),
        "level": pd.Series(np.asarray(t.levels, dtype=object)[ev["level"].to_numpy()] if len(ev) else [],
                           dtype=dtypes["level"]),
        "function": pd.Series(fn["name"].to_numpy()[ev["function"].to_numpy()] if len(ev) else [],
                              dtype=dtypes["function"]),
        "io": pd.Series(fn["io"].to_numpy()[ev["function"].to_numpy()] if len(ev) else [], dtype=dtypes["io"]),
        "rank": ev["rank"].astype(np.int32),
        "pid": ev["pid"].astype(np.int64),
        "tid": ev["tid"].astype(np.int64),
        "fd": ev["fd"].astype(np.int32),
        "ret": ev["ret"].astype(np.int64),
        "req": ev["req"].astype(np.int64),
        "bytes": ev["bytes"].astype(np.int64),
        "offset": ev["offset"].astype(np.int64),
        "path": _paths(t, ev, "path", dtypes),
        "fd2": ev["fd2"].astype(np.int32) if "fd2" in ev else np.full(len(ev), -1, dtype=np.int32),
        "path2": _paths(t, ev, "path2", dtypes),
        "flags": ev["flags"].astype(np.uint8),
    })
    out["syscall"] = (out["flags"] & t.syscall_bit) != 0 if t.syscall_bit else False
    labels = t.processes.set_index(["node", "pid"])["label"]
    keys = pd.MultiIndex.from_arrays([ev["node"].astype(labels.index.levels[0].dtype if len(labels) else np.uint16),
                                      ev["pid"].astype(np.uint32)])
    out["process"] = labels.reindex(keys).fillna("").to_numpy() if len(labels) else ""
    return out


def _read_slice(path, start, stop, t, dtypes):
    with h5py.File(path, "r") as f:
        return _calls(f[EVENTS][start:stop], t, dtypes)


def load_hdf5(path, dask=False, rows_per_partition=1 << 20):
    """Every call of a merged or stitched file, one row each.

    Columns: ts_ns (from the job's time origin, clocks corrected), dur_ns,
    host, level, function, io (read, write or empty), rank (-1: none), pid,
    tid (the node's own), process (its label: rank N, task N (host), or
    the command), fd, ret, req (bytes asked), bytes (moved), offset (-1:
    none), path, fd2 and path2 (the second file or name: where the data of
    copy_file_range, sendfile, splice or tee came from, a rename's or a
    link's new name, the name an open was given; -1 and "" for none),
    flags, syscall (observed at a system call).
    With dask=True a Dask dataframe of rows_per_partition rows a partition.
    """
    with h5py.File(path, "r") as f:
        _check_layout(f, path)
        t = _Tables(f)
        n = f[EVENTS].shape[0]
        dtypes = t.categories()
        if not dask:
            return _calls(f[EVENTS][:], t, dtypes)
        meta = _calls(f[EVENTS][0:0], t, dtypes)
    import dask.dataframe as dd
    from dask import delayed
    parts = [delayed(_read_slice)(path, a, min(a + rows_per_partition, n), t, dtypes)
             for a in range(0, max(n, 1), rows_per_partition)]
    return dd.from_delayed(parts, meta=meta)
