"""train/'s compile jobs on a Dask cluster (train/pool.py), on loopback: a scheduler and two
workers started here as separate processes (Debian's python3-distributed), a collection of
the committed corpus's training modules whose logs must equal a serial run's byte for byte,
the same with one worker killed (SIGKILL) while it holds tasks, and clear errors for a
scheduler that is not there or has no worker.

    python3 tests/test_dask.py --build BUILD [-k SUBSTRING]

Every process started here is in its own session and killed with it (also on failure);
SIGALRM bounds the whole run. Ends with one line "N passed, M failed".
"""
import argparse
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import harness
from harness import Failure, expect

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "train"))
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))
CORPUS = os.path.join(HERE, "train_corpus")
ZFLAGS = ["-DHAVE_UNISTD_H", "-DHAVE_STDARG_H"]
RUN_SECONDS = 240           # the whole program, whatever hangs


class Ctx(harness.Ctx):
    def __init__(self, build, work):
        super().__init__(build, work)
        self.procs = {}         # name -> Popen of the scheduler and workers

    def start(self, name, module, *args, env=None):
        """python3 -m distributed.cli.MODULE ARGS in a session of its own, output to a file."""
        with open(self.path(name + ".out"), "wb") as out:
            self.procs[name] = subprocess.Popen(
                [sys.executable, "-m", "distributed.cli." + module] + list(args),
                stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)

    def output(self, name):
        with open(self.path(name + ".out"), errors="replace") as f:
            return f.read()[-800:]

    def scheduler(self):
        """The address of a scheduler on loopback (no worker yet)."""
        def make():
            sf = self.path("scheduler.json")
            self.start("scheduler", "dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                       "--no-dashboard", "--scheduler-file", sf)
            for _ in range(300):
                if os.path.exists(sf) and os.path.getsize(sf):
                    with open(sf) as f:
                        return json.load(f)["address"]
                expect(self.procs["scheduler"].poll() is None,
                       "dask-scheduler exited: " + self.output("scheduler"))
                time.sleep(0.1)
            raise Failure("dask-scheduler wrote no address in 30 s")
        return self.fixture("scheduler", make)

    def workers(self):
        """Two single-thread workers of scheduler(), without nannies (one process each, so
        SIGKILL is a lost worker, not a restart); train/ on their path, their temporary
        folders in the work folder. Returns a client; worker names w1, w2."""
        def make():
            import distributed
            addr = self.scheduler()
            for name in ("w1", "w2"):
                tmp = self.path("tmp-" + name)
                os.makedirs(tmp)
                env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "train"), TMPDIR=tmp)
                self.start(name, "dask_worker", addr, "--name", name, "--nthreads", "1",
                           "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
                           "--local-directory", tmp, "--death-timeout", "30", env=env)
            client = distributed.Client(addr, timeout=30)
            try:
                client.wait_for_workers(2, timeout=60)
            except TimeoutError:
                raise Failure("2 workers did not join in 60 s: %s" % self.output("w1"))
            return client
        return self.fixture("workers", make)

    def worker_address(self, name):
        for addr, w in self.workers().scheduler_info()["workers"].items():
            if w["name"] == name:
                return addr
        raise Failure("no worker %s at the scheduler" % name)

    def modules(self):
        def make():
            import inliner_env as env
            m = env.manifest_from_dir(CORPUS, self.path("corpus"), ZFLAGS)
            return [x for x in env.load_manifest(m) if x.split == "train"]
        return self.fixture("modules", make)

    def serial(self):
        """collect_task on every module in this process, one after the other: the
        reference. Returns (results, logs as name -> bytes)."""
        def make():
            import collect
            res = [collect.collect_task(m) for m in self.modules()]
            logs = {m.name + ".log": r[3] for m, (r, err) in zip(self.modules(), res)
                    if r is not None and r[3] is not None}
            expect(len(logs) >= 5, "serial collection: only %d logs" % len(logs))
            return res, logs
        return self.fixture("serial", make)

    def close(self):
        ok, client = self._cache.get("workers", (False, None))
        if ok:
            client.close()
        for p in self.procs.values():
            try:
                os.killpg(p.pid, signal.SIGKILL)    # the process and any compiler it left
            except ProcessLookupError:
                pass
            p.wait(timeout=10)


def read_dir(d):
    out = {}
    for fn in sorted(os.listdir(d)):
        with open(os.path.join(d, fn), "rb") as f:
            out[fn] = f.read()
    return out


def same_as_serial(ctx, data, log_dir):
    """collect.collect's result and logs against the serial reference."""
    res, logs = ctx.serial()
    got = read_dir(log_dir)
    expect(sorted(got) == sorted(logs), "logs %s, serially %s" % (sorted(got), sorted(logs)))
    bad = [n for n in logs if got[n] != logs[n]]
    expect(not bad, "logs differ from the serial run's: %s" % bad)
    for m, (r, _) in zip(ctx.modules(), res):
        if r is not None and r[3] is not None:
            X, y, text = data[m.name]
            expect((X == r[0]).all() and (y == r[1]).all() and text == r[2],
                   "%s: features, decisions or size differ" % m.name)


# ---- tests -------------------------------------------------------------------------------------

def test_unreachable_scheduler(ctx):
    # nothing listens on a port just freed: a bounded wait, then an error naming the address
    import pool
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    addr = "tcp://127.0.0.1:%d" % s.getsockname()[1]
    s.close()
    pool.CONNECT_SECONDS = 3
    t0 = time.time()
    try:
        pool.Pool(scheduler=addr)
        raise Failure("connected to %s" % addr)
    except RuntimeError as e:
        expect(addr in str(e) and "cannot reach" in str(e), "message: %s" % e)
    expect(time.time() - t0 < 30, "gave up after %.0f s" % (time.time() - t0))


def test_scheduler_without_workers(ctx):
    import pool
    addr = ctx.scheduler()
    pool.WORKER_SECONDS = 2
    try:
        pool.Pool(scheduler=addr)
        raise Failure("a pool without workers")
    except RuntimeError as e:
        expect(addr in str(e) and "no worker" in str(e), "message: %s" % e)


def test_collect_same_as_serial(ctx):
    # through MLBC_DASK_SCHEDULER; both workers must have run tasks
    import collect
    import pool
    from distributed import get_task_stream
    ctx.workers()
    ctx.serial()
    log_dir = ctx.fresh("collect")
    os.environ[pool.SCHEDULER_ENV] = ctx.scheduler()
    try:
        with pool.Pool() as p, get_task_stream(p.client) as ts:
            expect(p.address == ctx.scheduler() and p.workers() == 2, "pool: %s" % p.address)
            data = collect.collect(ctx.modules(), log_dir, p, log=lambda s: 0)
    finally:
        del os.environ[pool.SCHEDULER_ENV]
    ran_on = {t["worker"] for t in ts.data}
    expect(len(ran_on) == 2, "tasks ran on %s only" % ran_on)
    same_as_serial(ctx, data, log_dir)


def test_worker_killed_mid_run(ctx):
    # w2 is killed while it runs a task (the task's temporary folder is there); w1
    # finishes the run, with the same logs
    import collect
    import pool
    client = ctx.workers()
    victim = ctx.worker_address("w2")
    tmp = ctx.path("tmp-w2")
    held = []

    def kill_when_busy():
        deadline = time.time() + 60
        while time.time() < deadline:
            keys = client.processing([victim]).get(victim, [])
            if keys and any(f.startswith("mlbc-collect-") for f in os.listdir(tmp)):
                held.extend(keys)
                os.kill(ctx.procs["w2"].pid, signal.SIGKILL)
                return
            time.sleep(0.02)

    log_dir = ctx.fresh("killed")
    with pool.Pool(scheduler=ctx.scheduler()) as p:
        killer = threading.Thread(target=kill_when_busy)
        killer.start()
        data = collect.collect(ctx.modules(), log_dir, p, log=lambda s: 0)
        killer.join()
        expect(held, "w2 never held a task")
        expect(ctx.procs["w2"].wait(timeout=10) == -signal.SIGKILL, "w2 was not killed")
        expect(p.workers() == 1, "%d workers after the kill" % p.workers())
    same_as_serial(ctx, data, log_dir)


TESTS = [v for k, v in list(globals().items()) if k.startswith("test_")]


def timed_out(signum, frame):
    raise Failure("the run took more than %d s" % RUN_SECONDS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("-k", default="")
    args = ap.parse_args()
    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # lost workers are the point
    work = tempfile.mkdtemp(prefix="mlbc-test-dask-")
    ctx = Ctx(args.build, work)
    passed = failed = 0
    signal.signal(signal.SIGALRM, timed_out)
    signal.alarm(RUN_SECONDS)
    try:
        for t in TESTS:
            if args.k and args.k not in t.__name__:
                continue
            t0 = time.time()
            try:
                t(ctx)
                passed += 1
                print("PASS %s (%.1f s)" % (t.__name__, time.time() - t0), flush=True)
            except Failure as e:
                failed += 1
                print("FAIL %s: %s" % (t.__name__, e), flush=True)
            except Exception:  # noqa: BLE001
                failed += 1
                print("FAIL %s: unexpected error" % t.__name__)
                traceback.print_exc(file=sys.stdout)
    finally:
        signal.alarm(0)
        ctx.close()
        shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
