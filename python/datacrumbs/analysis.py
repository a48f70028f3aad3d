"""A job's figures from its calls, as dc-summary computes them.

Each function takes the dataframe of load() (pandas or Dask) and returns a
pandas dataframe; the figures are the ones `dc-summary --format json`
prints, so that an analysis can start from numbers it can check:

  per_level     calls, bytes, time_s, max_s, read_bytes, write_bytes
  per_function  the same per (level, function)
  per_file      calls, bytes (data read or written), time_s, max_s per
                (level, path); a mover's on the file its data came from
                (path2) too
  per_rank      calls, bytes, time_s, max_s per MPI rank, at rank_level()
  io_over_time  bytes read and written per time bin, at rank_level()
"""

import numpy as np
import pandas as pd

# dc-summary's timeline: 120 bins, the first 1 ms wide, doubled until the
# job fits (summary/summary.h).
TIMELINE_BINS = 120
TIMELINE_FIRST_BIN_NS = 1_000_000


def _pandas(df):
    return df.compute() if hasattr(df, "compute") else df


def _plain_index(df):
    """Categorical keys as plain values: pandas and Dask then agree."""
    if isinstance(df.index, pd.MultiIndex):
        df.index = pd.MultiIndex.from_arrays(
            [df.index.get_level_values(i).astype(object) if df.index.levels[i].dtype == "category"
             else df.index.get_level_values(i) for i in range(df.index.nlevels)], names=df.index.names)
    elif df.index.dtype == "category":
        df.index = pd.Index(df.index.astype(object), name=df.index.name)
    return df


def _totals(df, keys):
    g = df.groupby(keys, observed=True)
    dur = _pandas(g["dur_ns"].agg(["count", "sum", "max"]))
    out = pd.DataFrame({
        "calls": dur["count"].astype(np.int64),
        "bytes": _pandas(g["bytes"].sum()).reindex(dur.index).astype(np.int64),
        "time_s": dur["sum"] / 1e9,
        "max_s": dur["max"] / 1e9,
    })
    return _plain_index(out).sort_index()


def rank_level(calls):
    """Where ranks are compared: every call seen at a system call when the
    syscall level was traced, else the posix level, else the first level."""
    levels = list(calls["level"].cat.categories) if hasattr(calls["level"], "cat") else list(
        dict.fromkeys(_pandas(calls["level"])))
    if "syscall" in levels:
        return "syscall"
    if "posix" in levels:
        return "posix"
    return levels[0] if levels else None


def _at_rank_level(calls):
    level = rank_level(calls)
    return calls[calls["syscall"]] if level == "syscall" else calls[calls["level"] == level]


def per_level(calls):
    out = _totals(calls, "level")
    for kind in ("read", "write"):
        moved = _plain_index(_pandas(calls[calls["io"] == kind].groupby("level", observed=True)["bytes"].sum())
                             .to_frame())["bytes"]
        out[kind + "_bytes"] = moved.reindex(out.index).fillna(0).astype(np.int64)
    return out


def per_function(calls):
    return _totals(calls, ["level", "function"])


def per_file(calls):
    """A call counts on its file and, for a mover (copy_file_range,
    sendfile, splice, tee), on the file its data came from (path2) too, as
    dc-summary counts it."""
    cols = ["level", "path", "bytes", "dur_ns"]
    # A file's bytes are its data's: a directory listing's count as calls.
    calls = calls.assign(bytes=calls["bytes"].where(calls["io"] != "", 0))
    named = calls[calls["path"] != ""][cols]
    if "path2" in calls.columns:
        came = calls[(calls["path2"] != "") & (calls["io"] != "")][["level", "path2", "bytes", "dur_ns"]]
        came = came.rename(columns={"path2": "path"})
        if hasattr(named, "compute"):
            import dask.dataframe as dd
            named = dd.concat([named, came])
        else:
            named = pd.concat([named, came])
    return _totals(named, ["level", "path"])


def per_rank(calls):
    return _totals(_at_rank_level(calls)[lambda d: d["rank"] >= 0], "rank")


def io_over_time(calls):
    """Bytes read and written per bin since the job's start (its time
    origin), at the rank level: columns start_s, read_bytes, write_bytes;
    the bin width is start_s's step."""
    io = _pandas(_at_rank_level(calls)[lambda d: d["io"] != ""][["ts_ns", "io", "bytes"]])
    bin_ns = TIMELINE_FIRST_BIN_NS
    last = int(io["ts_ns"].max()) if len(io) else 0
    while last // bin_ns >= TIMELINE_BINS:
        bin_ns *= 2
    io = io.assign(bin=io["ts_ns"] // bin_ns)
    out = pd.DataFrame({"start_s": np.arange(TIMELINE_BINS) * bin_ns / 1e9})
    for kind in ("read", "write"):
        per_bin = io[io["io"] == kind].groupby("bin")["bytes"].sum()
        out[kind + "_bytes"] = per_bin.reindex(range(TIMELINE_BINS)).fillna(0).astype(np.int64).to_numpy()
    return out
