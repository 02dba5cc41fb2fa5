"""The pipe soak (issue 11): sessions in a row between the C pipe runner (soak_client, one
long-lived process, as a compiler embedding the runtime) and mlbc_gym (this process, as a
long-lived trainer), with a fault injected into most of them at a random point:

    host killed          bad_host.py die_after_header / die_mid_reply, after K good answers
    host stalled         bad_host.py stall: silent past the runner's timeout
    truncated reply      bad_host.py short
    oversized reply      bad_host.py long, huge_length (length-prefixed framings)
    garbage              bad_host.py garbage (length-prefixed framings)
    FIFO deleted         the FIFOs are removed before the runner opens them
    compiler killed      a pipe_client sending 256 KB observations gets SIGKILL mid-stream

Every session must end within its bound (no hang). A runner that meets a fault must report
it at the evaluation it happened (the documented fallback: evaluate returns NULL, the runner
stays failed and answers NULL at once) and give the right advice before it; the host must
report a compiler killed mid-message and go on serving. Both long-lived processes must keep
their open descriptors and RSS flat (measured after a warm-up and at the end).

    python3 tests/pipe/soak.py --build build [--sessions 1000] [--seed 1]

Prints one line of figures and exits 1 on any problem (listing the first ones).
"""
import argparse
import os
import random
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from statistics import median

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "runtime", "python"))

import mlbc_gym                 # noqa: E402

FRAMINGS = ("llvm", "bitstream", "json", "protobuf")
BAD_MODES = {  # mode -> framings it applies to
    "die_after_header": FRAMINGS, "die_mid_reply": ("llvm", "bitstream", "protobuf"),
    "stall": FRAMINGS, "short": ("llvm", "bitstream", "protobuf"), "long": FRAMINGS,
    "huge_length": ("bitstream", "json", "protobuf"),
    "garbage": ("bitstream", "json", "protobuf"),
}
SESSION_BOUND = 10.0            # seconds any session may take, faults included
# The runner's timeout where a fault is expected: a stalled host costs this much, and a
# loaded machine may take a few hundred ms to start a misbehaving host's Python.
HOST_TIMEOUT_MS = 1000
WARM_UP = 50                    # sessions before the first RSS / descriptor reading
SAMPLE = 10                     # sessions between readings


def build_clients(build):
    """soak_client and pipe_client built against BUILD/libmlbc_rt.a into BUILD/soak/ (the
    soak runs without tests/test_pipe.py); returns that folder."""
    out = os.path.join(build, "soak")
    os.makedirs(out, exist_ok=True)
    for prog in ("soak_client", "pipe_client"):
        subprocess.run(["cc", "-O1", "-g", "-std=c11", "-Wall", "-Wextra", "-Werror",
                        "-D_GNU_SOURCE", "-I" + os.path.join(ROOT, "runtime"), "-o",
                        os.path.join(out, prog), os.path.join(HERE, prog + ".c"),
                        os.path.join(build, "libmlbc_rt.a"), "-lprotobuf-c", "-ldl", "-lm",
                        "-lpthread"], check=True)
    return out


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def nfds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


class Soak:
    def __init__(self, bins, seed):
        self.rnd = random.Random(seed)
        self.dir = tempfile.mkdtemp(prefix="mlbc-soak-")
        self.base = os.path.join(self.dir, "ch")
        self.client = subprocess.Popen([os.path.join(bins, "soak_client")],
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.pipe_client = os.path.join(bins, "pipe_client")
        self.problems = []
        self.counts = {}
        self.seconds = {}           # per kind of session
        self.fifos()

    def fifos(self):
        for path in (self.base + ".in", self.base + ".out"):
            mlbc_gym.make_fifo(path)

    def note(self, kind):
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def problem(self, i, what):
        self.problems.append("session %d: %s" % (i, what))

    def ask(self, i, framing, evaluations, timeout_ms):
        """Starts a session of the long-lived client; its result line, or None on a hang."""
        self.client.stdin.write("%s %s %d %d\n" % (framing, self.base, evaluations, timeout_ms))
        self.client.stdin.flush()
        ready, _, _ = select.select([self.client.stdout], [], [], SESSION_BOUND)
        if not ready:
            self.problem(i, "the runner hung (no result within %.0f s)" % SESSION_BOUND)
            return None
        return self.client.stdout.readline().strip()

    def host(self, framing, open_timeout=SESSION_BOUND, gone=lambda: False):
        """mlbc_gym serving one session in a thread: (channel, thread). gone() tells the host
        the compiler has exited, as serve() does for a command it started."""
        ch = mlbc_gym.Channel(self.base, lambda f, c, k: f["a"][0] + 1, framing=framing,
                              advice="int64_t", max_sessions=1, open_timeout=open_timeout,
                              read_timeout=SESSION_BOUND / 2)
        t = threading.Thread(target=ch.run, args=(gone, threading.Event()), daemon=True)
        t.start()
        return ch, t

    def joined(self, i, t):
        t.join(SESSION_BOUND)
        if t.is_alive():
            self.problem(i, "the host hung")
            return False
        return True

    # -- one session of each kind
    def good(self, i, framing):
        n = self.rnd.randint(1, 8)
        ch, t = self.host(framing)
        line = self.ask(i, framing, n, 5000)
        if self.joined(i, t) and line is not None:
            want = "ok " + " ".join(str(k + 1) for k in range(n))
            errs = [s.error for s in ch.sessions if s.error]
            if line != want or errs or ch.exception:
                self.problem(i, "good host: %r (want %r), host %r %r" % (line, want, errs,
                                                                      ch.exception))
        self.note("good")

    def bad_host(self, i, framing):
        mode = self.rnd.choice([m for m, f in sorted(BAD_MODES.items()) if framing in f])
        good = self.rnd.randint(0, 3)
        host = subprocess.Popen([sys.executable, os.path.join(HERE, "bad_host.py"), self.base,
                                 framing, mode, str(good)], stdin=subprocess.DEVNULL)
        line = self.ask(i, framing, good + 3, HOST_TIMEOUT_MS)
        host.kill()
        host.wait()
        if line is not None:
            want = "fail %d " % good
            values = line.split("|")[0].split()[3:]
            if not line.startswith(want) or values != ["7"] * good or " stuck" in line:
                self.problem(i, "%s after %d answers: %r (want %r..., %d advice of 7, then "
                             "NULL at once)" % (mode, good, line, want, good))
        self.note("host fault: " + mode)

    def fifo_deleted(self, i, framing):
        for path in (self.base + ".in", self.base + ".out"):
            os.unlink(path)
        line = self.ask(i, framing, 2, HOST_TIMEOUT_MS)
        if line is not None and not line.startswith("open-fail"):
            self.problem(i, "FIFOs deleted: %r (want open-fail)" % line)
        self.fifos()
        self.note("FIFO deleted")

    def compiler_killed(self, i, framing):
        p = subprocess.Popen([self.pipe_client, self.base, "--framing", framing, "--timeout",
                              "5000", "--big", str(1 << 16), "obs=1000"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ch, t = self.host(framing, gone=lambda: p.returncode is not None)
        time.sleep(self.rnd.uniform(0.005, 0.05))
        p.send_signal(signal.SIGKILL)
        p.wait()
        if self.joined(i, t):
            if ch.exception:
                self.problem(i, "host raised after the compiler was killed: %r" % ch.exception)
            reported = [s for s in ch.sessions if s.error]
            self.note("compiler killed, host reported it" if reported else
                      "compiler killed between messages (nothing to report)")

    def run(self, sessions):
        """Runs the sessions; returns (seconds, samples): (runner RSS, fds, host RSS, fds)
        every SAMPLE sessions after the warm-up."""
        kinds = [self.good] * 8 + [self.bad_host] * 8 + [self.fifo_deleted, self.compiler_killed] * 2
        samples = []
        t0 = time.monotonic()
        for i in range(sessions):
            kind, t1 = self.rnd.choice(kinds), time.monotonic()
            kind(i, self.rnd.choice(FRAMINGS))
            self.seconds[kind.__name__] = self.seconds.get(kind.__name__, 0) + time.monotonic() - t1
            if i + 1 >= min(WARM_UP, sessions) and (i + 1) % SAMPLE == 0 or i + 1 == sessions:
                samples.append((rss_kb(self.client.pid), nfds(self.client.pid),
                                rss_kb(os.getpid()), nfds(os.getpid())))
            if len(self.problems) > 20:
                break
        seconds = time.monotonic() - t0
        self.client.stdin.close()
        self.client.wait(SESSION_BOUND)
        return seconds, samples

    def close(self):
        for path in (self.base + ".in", self.base + ".out"):
            if os.path.exists(path):
                os.unlink(path)
        os.rmdir(self.dir)


def main():
    # One malloc arena: each session's host thread would otherwise get a glibc arena of its
    # own, and the host's RSS would climb while arenas are created (up to 8 per core) to a
    # plateau that is not a leak but would hide one.
    if os.environ.get("MALLOC_ARENA_MAX") != "1":
        os.execve(sys.executable, [sys.executable] + sys.argv,
                  dict(os.environ, MALLOC_ARENA_MAX="1"))
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    # The runner allocates nothing between sessions that survives them: its RSS must not move
    # beyond page noise. The host's moves with Python's allocator (256 KB messages come and
    # go): its median may not grow by more than 4 MB from the first quarter to the last; a
    # leaked message per compiler-killed session would be 25 MB over 1000 sessions.
    ap.add_argument("--readings", action="store_true", help="print every RSS reading")
    ap.add_argument("--runner-slack-kb", type=int, default=256)
    ap.add_argument("--host-slack-kb", type=int, default=4096)
    args = ap.parse_args()
    soak = Soak(build_clients(os.path.abspath(args.build)), args.seed)
    try:
        seconds, samples = soak.run(args.sessions)
    finally:
        soak.close()
    runner = [x[0] for x in samples]
    host = [x[2] for x in samples]
    fds = sorted(set((x[1], x[3]) for x in samples))
    quarter = max(1, len(samples) // 4)
    first, last = median(host[:quarter]), median(host[-quarter:])
    if len(fds) != 1:
        soak.problems.append("open descriptors moved (runner, host): %r" % fds)
    if max(runner) - min(runner) > args.runner_slack_kb:
        soak.problems.append("runner RSS moved: %d..%d KB" % (min(runner), max(runner)))
    if last - first > args.host_slack_kb:
        soak.problems.append("host RSS grew: median %d KB in the first quarter, %d KB in the "
                             "last" % (first, last))
    print("soak: %d sessions in %.0f s, no hang; from session %d on, %d readings: runner RSS "
          "%d..%d KB, host RSS median %d KB (first quarter) -> %d KB (last), range %d..%d KB; "
          "open descriptors (runner, host) %s" % (
              args.sessions, seconds, min(WARM_UP, args.sessions), len(samples), min(runner),
              max(runner), first, last, min(host), max(host),
              " -> ".join("%d, %d" % f for f in fds)))
    if args.readings:
        print("  host RSS readings (MB): " + " ".join("%.1f" % (h / 1024) for h in host))
    for kind, n in sorted(soak.counts.items()):
        print("  %5d  %s" % (n, kind))
    print("  time by kind of session: " + ", ".join(
        "%s %.1f s" % kv for kv in sorted(soak.seconds.items())))
    for p in soak.problems[:10]:
        print("PROBLEM " + p)
    return 1 if soak.problems else 0


if __name__ == "__main__":
    sys.exit(main())
