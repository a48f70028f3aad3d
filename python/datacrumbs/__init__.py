"""DataCrumbs traces in pandas and Dask.

Loads a job's trace, as ``dc-merge -f hdf5`` (merged or stitched) or
``dc-merge -f pfw.gz`` wrote it, into one dataframe of calls with the
level, function, host, rank, process label and path of each call, times
already corrected to the job's clock by dc-merge:

    import datacrumbs as dc
    calls = dc.load("1234.h5")              # pandas
    calls = dc.load("1234.h5", dask=True)   # Dask, read in pieces
    dc.per_level(calls)                     # calls, bytes, time_s per level

Needs only Debian's python3-h5py, python3-pandas and python3-dask.
"""

from .hdf5 import load_hdf5, job_attributes
from .pfw import load_pfw
from .analysis import per_level, per_rank, per_file, per_function, io_over_time, rank_level

__all__ = ["load", "load_hdf5", "load_pfw", "job_attributes", "per_level", "per_rank", "per_file",
           "per_function", "io_over_time", "rank_level"]


def load(path, dask=False, rows_per_partition=1 << 20):
    """A job's calls from a merged or stitched HDF5 file, or a .pfw/.pfw.gz file."""
    path = str(path)
    if path.endswith((".pfw", ".pfw.gz")):
        return load_pfw(path, dask=dask)
    return load_hdf5(path, dask=dask, rows_per_partition=rows_per_partition)
