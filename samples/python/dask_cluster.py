"""A jitc program over a Dask array on a Dask cluster.

    python3 samples/python/dask_cluster.py                  # a LocalCluster here
    python3 samples/python/dask_cluster.py tcp://HOST:8786  # a running cluster
    python3 samples/python/dask_cluster.py tcp://HOST:8786 cuda   # on the workers' GPUs

With no address it starts a LocalCluster of two worker processes on this
machine; with one it connects to that scheduler, and the work runs on its
workers, on as many machines as they are (each worker needs jitc
installed, as this script does).  Nothing else changes.  JITC_SAMPLE_N
sets the size (default 10M).

With `cuda`, each block runs on its worker's GPU (one worker per GPU:
`dask cuda worker`, or `dask worker` started with CUDA_VISIBLE_DEVICES; with
JITC_DEVICES=0 in the workers' environment, as jitc otherwise spreads a run
over every GPU it sees), and the array has one block per worker: Dask's scheduling costs about
20 ms a graph and 1 to 2 ms a task more (docs/PERFORMANCE.md, "Dask
arrays"), so a GPU's block must carry seconds of work for that to be a
small part of it: gigabytes of host memory a block, as JITC_SAMPLE_N=2e9
gives.
"""
import sys

import numpy as np
import dask.array as da
from dask.distributed import Client, LocalCluster

import jitc.dask
from _common import N


def main(address=None, target=None):
    cluster = None
    if address is None:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        address = cluster.scheduler_address
    with Client(address) as client:
        workers = client.scheduler_info()["workers"]
        print(f"scheduler {address}, {len(workers)} workers")
        # One block per worker on GPUs, where each block must be large; else 8.
        blocks = len(workers) if target == "cuda" else 8
        chunk = max(-(-N // blocks), 1)
        x = da.random.default_rng(0).standard_normal(N, chunks=chunk)
        # Two outputs from one pass over x: computed together, one task per block.
        r = jitc.dask.evaluate("y = where(x > 0, x, 0.1 * x); z = x * x", target=target)
        y_sum, z_sum = client.compute([r["y"].sum(), r["z"].sum()], sync=True)
        xs = x.compute()
        assert np.isclose(y_sum, np.where(xs > 0, xs, 0.1 * xs).sum())
        assert np.isclose(z_sum, (xs * xs).sum())
        print(f"{N} elements in {x.numblocks[0]} blocks: sum(y) = {y_sum:.6g}, "
              f"sum(z) = {z_sum:.6g}, as NumPy finds")
    if cluster is not None:
        cluster.close()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None, sys.argv[2] if len(sys.argv) > 2 else None)
