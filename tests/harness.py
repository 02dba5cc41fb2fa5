"""The harness of the test programs that drive real compilers (test_clang, test_gcc, test_llvm;
test_train uses its fixtures): commands with a timeout, fixtures built once per run, and the
test loop behind "--build BUILD [-k SUBSTRING] [-v] [--keep]", which ends with the line
run_all.py reads: "N passed, M failed[, K skipped]"."""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


class Failure(Exception):
    """A check that did not hold: the test fails with this message and no traceback."""


def expect(cond, what):
    if not cond:
        raise Failure(what)


def describe(e):
    """A Failure by its message; any other exception with its type, as it is a bug."""
    return str(e) if isinstance(e, Failure) else "%s: %s" % (type(e).__name__, e)


# ---- commands ---------------------------------------------------------------------------------

def run(cmd, timeout, **kw):
    """subprocess.run, output captured; a hang or a program that cannot start fails the test."""
    try:
        return subprocess.run(cmd, capture_output=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        raise Failure("timed out after %d s: %s" % (timeout, " ".join(map(str, cmd[:4]))))
    except OSError as e:
        raise Failure("cannot run %s: %s" % (cmd[0], e))


def first_line(b):
    """The first line of a command's output (bytes or text), short enough for a report."""
    s = b.decode(errors="replace") if isinstance(b, bytes) else b
    s = s.strip()
    return s.splitlines()[0][:300] if s else ""


def check_run(cmd, what, timeout, **kw):
    """run() that fails the test on a non-zero exit, with what ran and its first complaint."""
    r = run(cmd, timeout, **kw)
    if r.returncode != 0:
        raise Failure("%s: exit %d: %s" % (what, r.returncode,
                                           first_line(r.stderr) or first_line(r.stdout)))
    return r


# ---- fixtures (built once, on first use; a failure fails every test that needs it) --------

class Ctx:
    """What the tests of one run share: the build, a work directory and the fixtures. A test
    program adds its own fixtures in a subclass."""

    remembered = (Failure,)     # what make() may raise to fail the fixture for the whole run

    def __init__(self, build, work):
        self.build = os.path.abspath(build)
        self.work = work
        self._cache = {}
        self._locks = collections.defaultdict(threading.Lock)
        self._guard = threading.Lock()
        self.n = 0

    def path(self, *p):
        return os.path.join(self.work, *p)

    def fresh(self, name):
        """A new directory for one test, numbered so that --keep shows them in order."""
        self.n += 1
        d = self.path("%02d-%s" % (self.n, re.sub(r"[^\w.+-]", "_", name)))
        os.makedirs(d)
        return d

    def fixture(self, name, make):
        with self._guard:
            lock = self._locks[name]
        with lock:  # a fixture being warmed (main's warm) is waited for, not built twice
            if name not in self._cache:
                try:
                    self._cache[name] = (True, make())
                except self.remembered as e:
                    self._cache[name] = (False, "%s: %s" % (name, describe(e)))
        ok, v = self._cache[name]
        if not ok:
            raise Failure(v)
        return v

    def tool(self, name):
        p = os.path.join(self.build, name)
        expect(os.path.exists(p), "%s is not built (make BUILD=%s)" % (p, self.build))
        return p

    def gym(self):
        """runtime/python/mlbc_gym, our Python host."""
        def imp():
            sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))
            try:
                import mlbc_gym
            except ImportError as e:
                raise Failure("runtime/python/mlbc_gym: %s" % e)
            return mlbc_gym
        return self.fixture("mlbc_gym", imp)


# ---- the test loop ------------------------------------------------------------------------------

# A test returns None, a note (str) for its "ok" line, or a list of (ok, title, detail), one
# per result of a program it ran; ok is True, False or None (skipped).
OUTCOMES = {True: ("passed", "ok  "), False: ("failed", "FAIL"), None: ("skipped", "skip")}


def run_test(name, fn, ctx, verbose, counts):
    """One test: its lines are printed at once, so that a hang shows where it is."""
    t0 = time.time()
    try:
        note = fn(ctx)
        if isinstance(note, list):
            for ok, sub, detail in note:
                counted, word = OUTCOMES[ok]
                counts[counted] += 1
                print("%s  %s%s" % (word, sub, ": " + detail if detail else ""))
            print("      (%s: %.1f s)" % (name, time.time() - t0))
        else:
            counts["passed"] += 1
            print("ok    %s (%.1f s)%s" % (name, time.time() - t0,
                                         ": " + note if isinstance(note, str) else ""))
    except Failure as e:
        counts["failed"] += 1
        print("FAIL  %s: %s" % (name, e))
    except Exception as e:
        counts["failed"] += 1
        print("FAIL  %s: %s" % (name, describe(e)))
        if verbose:
            traceback.print_exc()
    sys.stdout.flush()


def warm_up(ctx, warm):
    """Threads that build the fixtures WARM (functions of ctx) while the first tests run, on
    the other core: a failure stays in the fixture, for the tests that use it to report."""
    def build(fn):
        try:
            fn(ctx)
        except Exception:  # noqa: BLE001 - remembered by the fixture, or met again by its test
            pass
    threads = [threading.Thread(target=build, args=(fn,), daemon=True) for fn in warm]
    for t in threads:
        t.start()
    return threads


def main(tests, ctx_class, work_prefix, missing, warm=()):
    """The whole test program: tests() lists (title, fn(ctx)); missing() says what is not
    installed (then every test is skipped) or returns None. WARM: fixtures to build in the
    background from the start (long builds the later tests need). Returns the exit status."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("-k", default="", help="run only tests whose title contains this")
    ap.add_argument("-v", action="store_true", help="print tracebacks")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    todo = [(n, f) for n, f in tests() if args.k in n]
    why = missing()
    if why:
        print(why)
        print("0 passed, 0 failed, %d skipped" % len(todo))
        return 0
    work = tempfile.mkdtemp(prefix=work_prefix)
    ctx = ctx_class(args.build, work)
    counts = collections.Counter()
    t_all = time.time()
    warming = warm_up(ctx, warm)
    try:
        for name, fn in todo:
            run_test(name, fn, ctx, args.v, counts)
    finally:
        for t in warming:
            t.join()
        if args.keep:
            print("work directory: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("total %.0f s" % (time.time() - t_all))
    skipped = ", %d skipped" % counts["skipped"] if counts["skipped"] else ""
    print("%d passed, %d failed%s" % (counts["passed"], counts["failed"], skipped))
    return 1 if counts["failed"] else 0
