"""Compile jobs as tasks of Dask distributed.

Every compilation of the training loop (collection, candidate policies, held-out rebuild)
is a task: a module-level function of train/ and its arguments, sent to a worker. By
default the tasks run on a LocalCluster started here (worker processes, one thread each:
the Python policies of mlbc_gym hold the GIL while they answer, and Run.cpu counts the
children of the worker process, exact only when it runs one task at a time). Given a
scheduler address (--scheduler, or MLBC_DASK_SCHEDULER) they run on that cluster instead.
The local cluster spawns its workers, which import the main script again: a script that
makes a Pool must do so under `if __name__ == "__main__"`.

What a worker needs (docs/TRAINING.md, "On a Dask cluster"): clang-19, python3-numpy and
python3-distributed, train/ on its PYTHONPATH, and the paths the client passes (the corpus
bitcode, the build's mlbc-serve, the policies in the output folder) at the same place as on
the client, e.g. one shared folder. Results (sizes, decisions, training-log bytes) come
back as task results; the client writes every file.
"""
import os

import distributed

SCHEDULER_ENV = "MLBC_DASK_SCHEDULER"
CONNECT_SECONDS = 20        # to reach the scheduler
WORKER_SECONDS = 60         # for the first worker to show up there


class Pool:
    """pool.map(fn, items, *args) = [fn(x, *args) for x in items], run as Dask tasks."""

    def __init__(self, scheduler=None, workers=None):
        self.address = scheduler or os.environ.get(SCHEDULER_ENV) or None
        self.cluster = None
        if self.address:
            self.client = _connect(self.address)
        else:
            self.cluster = distributed.LocalCluster(
                n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                processes=True, dashboard_address=None)
            self.client = distributed.Client(self.cluster)

    def map(self, fn, items, *args):
        """Results in the order of items, whichever worker finishes first. A task whose
        worker dies is rerun elsewhere by the scheduler; a task that raises raises here."""
        if not items:
            return []
        futures = self.client.map(fn, items, *[[a] * len(items) for a in args], pure=False)
        try:
            return self.client.gather(futures)
        finally:
            self.client.cancel(futures)     # after an error, the rest must not run on

    def workers(self):
        return len(self.client.scheduler_info()["workers"])

    def close(self):
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _connect(address):
    """A client of the scheduler at address with at least one worker, or RuntimeError
    naming the address (both waits are bounded)."""
    try:
        client = distributed.Client(address, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError) as e:
        raise RuntimeError("cannot reach the Dask scheduler at %s within %d s: %s"
                           % (address, CONNECT_SECONDS, e)) from None
    except ValueError as e:
        raise RuntimeError("bad Dask scheduler address %s: %s" % (address, e)) from None
    try:
        client.wait_for_workers(1, timeout=WORKER_SECONDS)
    except (OSError, TimeoutError):
        client.close()
        raise RuntimeError("the Dask scheduler at %s has no worker after %d s"
                           % (address, WORKER_SECONDS)) from None
    return client
