/* pipe.c - the pipe runner: the compiler side of development ("gym") mode.
 *
 * The compiler writes observations to BASE.out and reads advice from BASE.in, two named
 * pipes created by the host. Three framings:
 *
 *  MLBC_FRAMING_LLVM (default), byte-compatible with LLVM 19's InteractiveModelRunner:
 *      BASE.out: {"features":[SPEC,...],"advice":SPEC}\n          once, when opened
 *                {"context":"NAME"}\n                               at every context switch
 *                {"observation":N}\n TENSOR_0 ... TENSOR_n-1 \n     per evaluate
 *      BASE.in:  the advice tensor's raw bytes, exactly, per observation.
 *      SPEC = {"name":"f","type":"int64_t","port":0,"shape":[1]}; tensors are raw,
 *      row-major, native byte order; N counts from 0 per context name.
 *
 *  MLBC_FRAMING_BRIDGE_BITSTREAM (ML-Compiler-Bridge BitstreamSerDes over its pipe runner):
 *      BASE.out: LEN(8) {"features":[SPEC,...]}\n TENSOR_0 ... TENSOR_n-1 \n  per evaluate
 *      BASE.in:  LEN(8) ADVICE_BYTES
 *
 *  MLBC_FRAMING_BRIDGE_JSON (ML-Compiler-Bridge JsonSerDes over its pipe runner):
 *      BASE.out: LEN(8) {"f1":7,"f2":[1,2,3],...}   per evaluate (one element: a scalar)
 *      BASE.in:  LEN(8) {"out":VALUE}                VALUE a number or a (nested) array
 *
 *  MLBC_FRAMING_BRIDGE_PROTOBUF (the Bridge's protobuf SerDes; messages of runtime/mlbc.proto,
 *  proto.c):
 *      BASE.out: LEN(8) Observation{context, index, features}   per evaluate
 *      BASE.in:  LEN(8) Advice{advice}
 *      Contexts have no record of their own: each observation names its context, and its
 *      index counts per context name, as in the LLVM framing.
 *
 *  LEN is an unsigned 64-bit count of the bytes that follow, in native byte order. The
 *  bitstream and JSON framings carry no context (the Bridge protocol has none).
 *
 * Robustness: both FIFOs are opened O_NONBLOCK (a blocking open could hang forever), every
 * open, read and write waits with poll() for at most the timeout, SIGPIPE is blocked around
 * writes and a pending one consumed (the process-wide disposition is never touched), reply
 * lengths are bounded, and surplus advice bytes are detected. Any failure makes the runner
 * failed for good: evaluate returns NULL at once from then on.
 *
 * Trust: both ends are opened with O_NOFOLLOW and checked on the descriptor before a byte
 * crosses them: a FIFO of this user's, mode 0600 (in the Bridge framings also one others may
 * read but not write, as the Bridge's Python host makes them: mode 0644), or
 * (MLBC_PIPE_REGULAR_FILES) a regular file as private with one link. Another user's FIFO or
 * file is never read as advice, and a file BASE.out merely names (a link) is never truncated.
 *
 * The Bridge's own runners change the features and the reply's type and length from message
 * to message: mlbc_runner_evaluate_bridge sends the features given to it and learns the
 * reply's count from the reply, the observation otherwise built as evaluate builds it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "json.h"
#include "proto.h"

#define DEFAULT_TIMEOUT_MS 10000
#define MAX_ADVICE_BYTES ((size_t)16 << 20)     /* an advice tensor larger than this is refused */
#define MAX_PIPE_BYTES ((size_t)1 << 20)       /* FIFO capacity asked for at most (Linux's
                                                   default limit for unprivileged users) */
#define MAX_IOV_INPUTS 64                     /* more inputs: one copied buffer */
#define SPLICE_MIN_BYTES 16384                /* observations this large go by vmsplice(2) */
#define JSON_REPLY_SLACK 4096                    /* JSON reply limit: slack + 64 bytes/element */
#define MLBC_BRIDGE_MAX_FEATURES 4096          /* features of one evaluate_bridge */

typedef struct ctx_count {
    char *name;
    int64_t next;                   /* number of the next observation in this context */
} ctx_count;

enum { TRUST_FILES = 1, TRUST_BRIDGE = 2 };   /* what open_with_deadline accepts */

typedef struct pipe_impl {
    int framing;
    int timeout_ms;
    int in_fd, out_fd;
    int in_is_fifo;                 /* surplus detection needs a FIFO (or pipe) */
    int trust;                      /* TRUST_*: MLBC_PIPE_REGULAR_FILES, a Bridge framing */
    int no_splice;                  /* BASE.out refused vmsplice(2) (not a pipe): writev */
    char *base;
    /* this evaluation: the features sent, the advice expected */
    const mlbc_tensor_spec *specs;
    const void *const *data;
    int n;
    int advice_type;
    int64_t advice_count;           /* the count, or with learn the largest */
    int learn;                      /* the reply decides the count (evaluate_bridge) */
    int64_t got;                    /* the count received */
    unsigned char *advice;          /* the advice buffer returned by evaluate */
    size_t advice_bytes, advice_cap;
    size_t reply_limit;             /* Bridge framings: largest accepted LEN */
    char *bits_header;              /* bitstream: {"features":[SPEC,...]}\n */
    size_t bits_header_len;
    ctx_count *ctxs;                /* LLVM framing: observation numbers per context */
    int nctxs, capctxs, cur;
    char *out_path;                 /* BASE.out, for reconnecting */
    int confirmed;                  /* a complete reply has arrived in this session */
    int payload;                    /* send_record appends the inputs and "\n" (LLVM) */
    jbuf pre;                       /* all sent while unconfirmed, to resend on reconnect */
    jbuf out;                       /* the record being written */
    unsigned char *rbuf;            /* a Bridge reply being read (at most reply_limit) */
    size_t rcap;
    proto_obs *pobs;                /* protobuf framing: the Observation over the inputs */
} pipe_impl;

/* ---- small utilities -------------------------------------------------------------------- */

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int remaining_ms(int64_t deadline)
{
    int64_t left = deadline - now_ms();
    return left < 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* Appends printf output to the record. */
static void jb_printf(jbuf *b, const char *fmt, ...) MLBC_PRINTF(2, 3);
static void jb_printf(jbuf *b, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof tmp)
        b->failed = 1;
    else
        jb_raw(b, tmp, (size_t)n);
}

/* ---- descriptor I/O with deadlines ------------------------------------------------------ */

/* ---- opening ------------------------------------------------------------------------------ */

/* A FIFO another user owns or may open could read the compiler's features or answer for
 * the host. */
static const trust_rule private_fifo = {
    "pipe: ", "the FIFO", S_IFIFO, S_IRWXG | S_IRWXO,
    "another user could read the features or answer for the host; the host must create "
    "BASE.in and BASE.out itself, mode 0600: mkfifo -m 600, or umask 077"
};

/* A regular file, allowed when asked for (advice prepared in advance, observations
 * captured), must be as private; one link, too: the runner truncates BASE.out, and a second
 * name could be someone's file linked there. */
static const trust_rule private_file = {
    "pipe: ", "the file", S_IFREG, S_IRWXG | S_IRWXO,
    "regular files as BASE.in/BASE.out must be this user's, mode 0600, with one link"
};

/* The ML-Compiler-Bridge's Python host makes its FIFOs mode 0666 less the umask (0644 by
 * default). Others may then open them to read: see the features, or take a message, which
 * the runner then misses (a timeout, or a length that does not add up: an error, the
 * compiler's own heuristic used). None may write, so what the runner reads as advice still
 * comes from this user's processes only. */
static const trust_rule bridge_fifo = {
    "pipe: ", "the FIFO", S_IFIFO, S_IWGRP | S_IWOTH,
    "another user could answer for the host; the host must create BASE.in and BASE.out "
    "itself, with no write permission for group or others (the Bridge's 0666 less a umask "
    "of 022 is fine)"
};

int mlbc_fifo_private(int fd, const char *path, char *err, size_t errlen)
{
    return check_ours(fd, path, &private_fifo, err, errlen);
}

/* A FIFO as check_ours demands (TRUST_BRIDGE: as the Bridge makes them), or with
 * TRUST_FILES a regular file. */
static int check_end(int fd, const char *path, int trust, char *err, size_t errlen)
{
    struct stat st;
    if (!(trust & TRUST_FILES) || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return check_ours(fd, path, trust & TRUST_BRIDGE ? &bridge_fifo : &private_fifo, err,
                          errlen);
    if (check_ours(fd, path, &private_file, err, errlen))
        return -1;
    if (st.st_nlink != 1) {
        set_err(err, errlen, "pipe: refusing %s: the file has %lu links (%s)", path,
                (unsigned long)st.st_nlink, private_file.fix);
        return -1;
    }
    return 0;
}

/* Opens path with flags|O_NONBLOCK|O_NOFOLLOW, retrying while the FIFO has no peer (ENXIO)
 * or does not exist yet (ENOENT), until the deadline; then checks it with check_end. Returns
 * the descriptor or -1 (err filled). */
static int open_with_deadline(const char *path, int flags, int trust, int64_t deadline,
                              int timeout_ms, const char *role, char *err, size_t errlen)
{
    int delay = 1;
    for (;;) {
        int fd = open(path, flags | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            if (check_end(fd, path, trust, err, errlen)) {
                close(fd);
                return -1;
            }
            return fd;
        }
        int e = errno;
        if (e == EINTR)
            continue;
        if (refuse_link(AT_FDCWD, path, path, &private_fifo, err, errlen))
            return -1;
        if (e != ENXIO && e != ENOENT) {
            set_err(err, errlen, "pipe: cannot open %s (%s): %s", path, role, strerror(e));
            return -1;
        }
        int left = remaining_ms(deadline);
        if (left == 0) {
            if (e == ENOENT)
                set_err(err, errlen, "pipe: %s does not exist (the host must create it with "
                        "mkfifo before the compiler starts; waited %d ms)", path, timeout_ms);
            else
                set_err(err, errlen, "pipe: no host opened %s for reading within %d ms",
                        path, timeout_ms);
            return -1;
        }
        sleep_ms(delay < left ? delay : left);
        if (delay < 50)
            delay *= 2;
    }
}

/* About the size of an observation record: its tensors (JSON: as text) and some slack. */
static size_t record_bytes(const mlbc_runner *r, const pipe_impl *p)
{
    size_t n = 4 * 4096;            /* the header; spliced, a slot for the newline and two
                                     * for the payload's unaligned ends */
    for (int i = 0; i < r->ninputs; i++)
        n += p->framing == MLBC_FRAMING_BRIDGE_JSON ? (size_t)mlbc_spec_count(&r->specs[i]) * 24
                                                   : mlbc_spec_bytes(&r->specs[i]);
    return n;
}

/* Lets a FIFO hold a whole record of `bytes` (at most MAX_PIPE_BYTES) when its
 * capacity is smaller: the record is then one write that does not wait for the host to
 * drain the pipe chunk by chunk, a context switch each. Best effort: a kernel or limit that
 * refuses, or a regular file (no pipe size), leaves it as it was; only the speed differs. */
static void fit_pipe(int fd, size_t bytes)
{
    int have = fcntl(fd, F_GETPIPE_SZ);
    if (have <= 0 || bytes <= (size_t)have)
        return;
    fcntl(fd, F_SETPIPE_SZ, (int)(bytes < MAX_PIPE_BYTES ? bytes : MAX_PIPE_BYTES));
}

/* Writes the iovecs until done or the deadline (SIGPIPE is blocked by the caller). 0, or
 * -EPIPE (no reader), -ETIMEDOUT, or another -errno. *sent counts the bytes written.
 *
 * With splice, the pages are lent to the pipe by vmsplice(2) instead of copied into it: the
 * host's read is then the only copy, which halved the round trip of 200 KB observations.
 * The pipe holds references to the pages until the host reads them, so a spliced record
 * must stay unchanged until then: only an observation is (the inputs, its header in p->out
 * and the newline change at the next record at the earliest, after the host's answer, which
 * it gives once it has read the observation). BASE.out being no pipe (or vmsplice being
 * refused) turns splicing off for good, with nothing written. */
static int write_iov(pipe_impl *p, struct iovec *iov, int n, int64_t deadline, size_t *sent,
                     int splice)
{
    size_t off = 0;
    int rc = 0;
    while (n > 0 && iov->iov_len == 0) {
        iov++;
        n--;
    }
    while (n > 0) {
        int cnt = n > IOV_MAX ? IOV_MAX : n, lend = splice && !p->no_splice;
        ssize_t w = lend ? vmsplice(p->out_fd, iov, (size_t)cnt, SPLICE_F_NONBLOCK)
                         : writev(p->out_fd, iov, cnt);
        if (w < 0 && lend && (errno == EBADF || errno == EINVAL || errno == ENOSYS ||
                              errno == EPERM)) {
            p->no_splice = 1;
            continue;
        }
        if (w > 0) {
            off += (size_t)w;
            while (n > 0 && (size_t)w >= iov->iov_len) {
                w -= (ssize_t)iov->iov_len;
                iov++;
                n--;
            }
            if (n > 0) {
                iov->iov_base = (char *)iov->iov_base + w;
                iov->iov_len -= (size_t)w;
            }
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            rc = -errno;
            break;
        }
        struct pollfd pfd = {p->out_fd, POLLOUT, 0};
        int left = remaining_ms(deadline);
        int k = left ? poll(&pfd, 1, left) : 0;
        if (k < 0 && errno != EINTR) {
            rc = -errno;
            break;
        }
        if (k == 0) {
            rc = -ETIMEDOUT;
            break;
        }
    }
    if (sent)
        *sent = off;
    return rc;
}

static int write_all(pipe_impl *p, const char *data, size_t len, int64_t deadline,
                     size_t *sent)
{
    struct iovec v = {(void *)data, len};
    return write_iov(p, &v, 1, deadline, sent, 0);
}

/* SIGPIPE blocked for this thread around a whole record; one raised by its writes is
 * consumed before the mask is restored (the process-wide disposition is never touched). */
typedef struct sigpipe_guard {
    sigset_t set, old;
    int was_pending;
} sigpipe_guard;

static void sigpipe_block(sigpipe_guard *g)
{
    sigemptyset(&g->set);
    sigaddset(&g->set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &g->set, &g->old);
    g->was_pending = 0;
    if (sigismember(&g->old, SIGPIPE) == 1) {   /* already blocked: one may be pending */
        sigset_t pending;
        sigemptyset(&pending);
        sigpending(&pending);
        g->was_pending = sigismember(&pending, SIGPIPE) == 1;
    }
}

static void sigpipe_restore(sigpipe_guard *g, int got_epipe)
{
    if (got_epipe && !g->was_pending) {
        struct timespec zero = {0, 0};
        while (sigtimedwait(&g->set, NULL, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* The record's pieces: p->out, then (an LLVM observation) the inputs and "\n", sent from
 * where they are, without a copy. Returns their count; *total, their bytes. */
static int record_iov(const pipe_impl *p, struct iovec *iov, size_t *total)
{
    int n = 0;
    iov[n++] = (struct iovec){p->out.data, p->out.len};
    if (p->payload) {
        for (int i = 0; i < p->n; i++)
            iov[n++] = (struct iovec){(void *)p->data[i], mlbc_spec_bytes(&p->specs[i])};
        iov[n++] = (struct iovec){"\n", 1};
    }
    *total = 0;
    for (int i = 0; i < n; i++)
        *total += iov[i].iov_len;
    return n;
}

/* Writes the record in p->out. 0 on success; else the runner failed with a message.
 *
 * Until the session's first reply, a vanished reader (EPIPE) may have been the previous
 * session's host, which had not yet closed BASE.out when this runner opened it: BASE.out is
 * then reopened (until the deadline) and everything sent so far is sent again. */
static int send_record(mlbc_runner *r, pipe_impl *p, const char *what)
{
    int64_t deadline = now_ms() + p->timeout_ms;
    size_t sent = 0;
    char err[160];
    if (p->out.failed || p->pre.failed) {
        runner_fail(r, "pipe %s: out of memory", p->base);
        return -1;
    }
    struct iovec iov[2 + MAX_IOV_INPUTS];
    size_t total;
    int niov = record_iov(p, iov, &total);
    int splice = p->payload && total >= SPLICE_MIN_BYTES;
    sigpipe_guard guard;
    sigpipe_block(&guard);
    int rc = write_iov(p, iov, niov, deadline, &sent, splice);
    int epipe = rc == -EPIPE;
    while (rc == -EPIPE && !p->confirmed) {
        close(p->out_fd);
        p->out_fd = open_with_deadline(p->out_path, O_WRONLY, p->trust, deadline,
                                       p->timeout_ms, "observations to the host", err,
                                       sizeof err);
        if (p->out_fd < 0) {
            sigpipe_restore(&guard, epipe);
            runner_fail(r, "pipe %s: the host closed %s.out before its first answer (while "
                        "the compiler was sending %s), and no host reopened it within %d ms",
                        p->base, p->base, what, p->timeout_ms);
            return -1;
        }
        fit_pipe(p->out_fd, record_bytes(r, p));
        rc = write_all(p, p->pre.data, p->pre.len, deadline, NULL);
        if (!rc) {
            niov = record_iov(p, iov, &total);       /* write_iov advanced the last */
            rc = write_iov(p, iov, niov, deadline, &sent, splice);
        }
        epipe |= rc == -EPIPE;
    }
    sigpipe_restore(&guard, epipe);
    if (rc == -EPIPE) {
        runner_fail(r, "pipe %s: the host closed %s.out while the compiler was sending %s "
                    "(it died or stopped reading)", p->base, p->base, what);
        return -1;
    }
    if (rc == -ETIMEDOUT) {
        runner_fail(r, "pipe %s: the host did not read %s within %d ms (%zu of %zu bytes "
                    "sent); is it stalled?", p->base, what, p->timeout_ms, sent, total);
        return -1;
    }
    if (rc) {
        runner_fail(r, "pipe %s: writing %s to %s.out: %s", p->base, what, p->base,
                    strerror(-rc));
        return -1;
    }
    if (!p->confirmed) {
        niov = record_iov(p, iov, &total);
        for (int i = 0; i < niov; i++)
            jb_raw(&p->pre, iov[i].iov_base, iov[i].iov_len);
    }
    return 0;
}

enum { RECV_TOLERANT = 1, RECV_LAST = 2 };     /* recv_exact's flags */

/* Reads exactly n bytes from BASE.in into dst. 0 on success; else runner failed.
 *
 * While waiting, a host that closes BASE.out (POLLERR on our write end) has stopped reading
 * observations: reported at once. Except with RECV_TOLERANT (the start of the first reply of
 * a session): then end of file on BASE.in and a closed BASE.out may be the previous session's
 * host going away late, and the next host is waited for until the deadline. */
static int recv_exact(mlbc_runner *r, pipe_impl *p, void *dst, size_t n, int64_t deadline,
                      const char *what, int flags)
{
    int tolerant = flags & RECV_TOLERANT;
    /* RECV_LAST: the end of a reply. The host never sends anything unasked, so a byte
     * beyond it is a surplus (a desynchronised host): reading one byte more finds it in the
     * same read(2), instead of a FIONREAD check after the reply. */
    unsigned char extra;
    int probe = (flags & RECV_LAST) && p->in_is_fifo;
    size_t off = 0;
    int saw_eof = 0, saw_err = 0;
    while (off < n) {
        struct pollfd pfd[2] = {{p->in_fd, POLLIN, 0}, {p->out_fd, 0, 0}};
        int left = remaining_ms(deadline);
        int k = left ? poll(pfd, 2, left) : 0;
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            runner_fail(r, "pipe %s: poll: %s", p->base, strerror(errno));
            return -1;
        }
        if (k == 0) {
            if (saw_eof || saw_err)
                runner_fail(r, "pipe %s: the host closed %s.%s before its first answer, and "
                            "no host reopened it within %d ms", p->base, p->base,
                            saw_eof ? "in" : "out", p->timeout_ms);
            else
                runner_fail(r, "pipe %s: no %s from the host within %d ms (%zu of %zu bytes "
                            "received); the host is stalled or never answered", p->base, what,
                            p->timeout_ms, off, n);
            return -1;
        }
        if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) {
            if (!(pfd[1].revents & (POLLERR | POLLHUP)))
                continue;
            if (tolerant && off == 0) {
                saw_err = 1;
                sleep_ms(2);
                continue;
            }
            /* A dying host closes both ends in no particular order: give BASE.in a moment
             * to show its end of file (or data) before blaming BASE.out alone. */
            struct pollfd in = {p->in_fd, POLLIN, 0};
            int grace = remaining_ms(deadline);
            if (poll(&in, 1, grace < 50 ? grace : 50) > 0)
                continue;
            runner_fail(r, "pipe %s: the host closed %s.out (it stopped reading "
                        "observations) while the compiler waited for %s (%zu of %zu bytes "
                        "received)", p->base, p->base, what, off, n);
            return -1;
        }
        struct iovec iov[2] = {{(unsigned char *)dst + off, n - off}, {&extra, 1}};
        ssize_t got = readv(p->in_fd, iov, probe ? 2 : 1);
        if (got > (ssize_t)(n - off)) {
            runner_fail(r, "pipe %s: the host sent more than the %zu bytes of %s "
                        "(desynchronised host)", p->base, n, what);
            return -1;
        }
        if (got > 0) {
            off += (size_t)got;
            continue;
        }
        if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
            continue;
        if (got == 0 && tolerant && off == 0) {
            saw_eof = 1;
            sleep_ms(2);
            continue;
        }
        if (got == 0) {
            runner_fail(r, "pipe %s: the host closed %s.in (end of file) after %zu of the %zu "
                        "bytes of %s; it died or closed early", p->base, p->base, off, n, what);
            return -1;
        }
        runner_fail(r, "pipe %s: reading %s from %s.in: %s", p->base, what, p->base,
                    strerror(errno));
        return -1;
    }
    return 0;
}

/* The host never sends anything unasked: bytes waiting in BASE.in are a surplus of the
 * previous reply (a desynchronised host). */
static int check_no_surplus(mlbc_runner *r, pipe_impl *p, const char *when)
{
    int avail = 0;
    if (p->in_is_fifo && ioctl(p->in_fd, FIONREAD, &avail) == 0 && avail > 0) {
        runner_fail(r, "pipe %s: the host sent %d byte(s) more than the %zu-byte advice %s "
                    "(desynchronised host)", p->base, avail, p->advice_bytes, when);
        return -1;
    }
    return 0;
}

/* ---- the runner ----------------------------------------------------------------------------- */

static void pipe_destroy(mlbc_runner *r)
{
    pipe_impl *p = r->impl;
    if (!p)
        return;
    /* BASE.in first, as LLVM: when the host sees EOF on BASE.out, the advice end is closed. */
    if (p->in_fd >= 0)
        close(p->in_fd);
    if (p->out_fd >= 0)
        close(p->out_fd);
    for (int i = 0; i < p->nctxs; i++)
        free(p->ctxs[i].name);
    free(p->ctxs);
    free(p->advice);
    free(p->bits_header);
    proto_obs_free(p->pobs);
    jb_free(&p->out);
    jb_free(&p->pre);
    free(p->out_path);
    free(p->rbuf);
    free(p->base);
    free(p);
    r->impl = NULL;
}

/* Makes name the current context (observation numbers count per context name, as LLVM's
 * Logger does); -1 if out of memory. */
static int select_context(pipe_impl *p, const char *name)
{
    for (int i = 0; i < p->nctxs; i++)
        if (!strcmp(p->ctxs[i].name, name)) {
            p->cur = i;
            return 0;
        }
    if (p->nctxs == p->capctxs) {
        int cap = p->capctxs ? p->capctxs * 2 : 8;
        ctx_count *c = realloc(p->ctxs, (size_t)cap * sizeof *c);
        if (!c)
            return -1;
        p->ctxs = c;
        p->capctxs = cap;
    }
    char *d = dupstr(name);
    if (!d)
        return -1;
    p->ctxs[p->nctxs].name = d;
    p->ctxs[p->nctxs].next = 0;
    p->cur = p->nctxs++;
    return 0;
}

static int pipe_set_context(mlbc_runner *r, const char *name)
{
    pipe_impl *p = r->impl;
    if (r->failed || !p)
        return -1;
    if (!name)
        name = "";
    if (p->framing != MLBC_FRAMING_LLVM && p->framing != MLBC_FRAMING_BRIDGE_PROTOBUF)
        return 0;                   /* the Bridge's bitstream and JSON have no contexts */
    if (select_context(p, name)) {
        runner_fail(r, "pipe %s: out of memory", p->base);
        return -1;
    }
    if (p->framing == MLBC_FRAMING_BRIDGE_PROTOBUF)
        return 0;                   /* named in each Observation */
    p->out.len = 0;
    jb_raw(&p->out, "{\"context\":", 11);
    jb_str(&p->out, name);
    jb_raw(&p->out, "}\n", 2);
    if (check_no_surplus(r, p, "before this context record"))
        return -1;
    return send_record(r, p, "a context record");
}

/* One element of a tensor as a JSON value (Bridge JSON framing). A float is written as the
 * Bridge's C++ writes it, its double's 17 digits (3.14f: 3.1400001049041748), so that Python
 * reads the same double from either. Non-finite floats are written NaN / Infinity /
 * -Infinity, as Python's json module reads them. */
static void jb_elem(jbuf *b, int type, const unsigned char *e)
{
    switch (type) {
    case MLBC_FLOAT: case MLBC_DOUBLE: {
        double v;
        if (type == MLBC_FLOAT) {
            float f;
            memcpy(&f, e, 4);
            v = f;
        } else {
            memcpy(&v, e, 8);
        }
        if (isnan(v))
            jb_raw(b, "NaN", 3);
        else if (isinf(v))
            jb_raw(b, v > 0 ? "Infinity" : "-Infinity", v > 0 ? 8 : 9);
        else
            jb_printf(b, "%.17g", v);
        return;
    }
    case MLBC_BOOL: jb_raw(b, *e ? "true" : "false", *e ? 4 : 5); return;
    case MLBC_INT8: jb_printf(b, "%d", (int)*(const int8_t *)e); return;
    case MLBC_UINT8: jb_printf(b, "%u", (unsigned)*e); return;
    case MLBC_INT16: { int16_t v; memcpy(&v, e, 2); jb_printf(b, "%d", (int)v); return; }
    case MLBC_UINT16: { uint16_t v; memcpy(&v, e, 2); jb_printf(b, "%u", (unsigned)v); return; }
    case MLBC_INT32: { int32_t v; memcpy(&v, e, 4); jb_printf(b, "%ld", (long)v); return; }
    case MLBC_UINT32: { uint32_t v; memcpy(&v, e, 4); jb_printf(b, "%lu", (unsigned long)v); return; }
    case MLBC_INT64: { int64_t v; memcpy(&v, e, 8); jb_printf(b, "%lld", (long long)v); return; }
    case MLBC_UINT64: { uint64_t v; memcpy(&v, e, 8); jb_printf(b, "%llu", (unsigned long long)v); return; }
    }
    b->failed = 1;
}

/* The JSON framing's order of the features: by name, as the Bridge's C++ writes an object
 * (its test reads the first key of each message). */
static int by_name(const void *a, const void *b, void *specs)
{
    const mlbc_tensor_spec *s = specs;
    return strcmp(s[*(const int *)a].name, s[*(const int *)b].name);
}

static void build_json(pipe_impl *p, jbuf *b)
{
    int order[MAX_IOV_INPUTS], *at = p->n <= MAX_IOV_INPUTS ? order : malloc(p->n * sizeof *at);
    if (!at) {
        b->failed = 1;
        return;
    }
    for (int i = 0; i < p->n; i++)
        at[i] = i;
    qsort_r(at, (size_t)p->n, sizeof *at, by_name, (void *)p->specs);
    jb_raw(b, "{", 1);
    for (int j = 0; j < p->n; j++) {
        const mlbc_tensor_spec *s = &p->specs[at[j]];
        int64_t n = mlbc_spec_count(s);
        size_t es = mlbc_type_size(s->type);
        const unsigned char *d = p->data[at[j]];
        if (j)
            jb_raw(b, ",", 1);
        jb_str(b, s->name);
        jb_raw(b, ":", 1);
        if (n == 1) {
            jb_elem(b, s->type, d);
            continue;
        }
        jb_raw(b, "[", 1);
        for (int64_t k = 0; k < n; k++) {
            if (k)
                jb_raw(b, ",", 1);
            jb_elem(b, s->type, d + (size_t)k * es);
        }
        jb_raw(b, "]", 1);
    }
    jb_raw(b, "}", 1);
    if (at != order)
        free(at);
}

static void build_observation(pipe_impl *p)
{
    jbuf *b = &p->out;
    uint64_t len = 0;
    b->len = 0;
    p->payload = 0;
    switch (p->framing) {
    case MLBC_FRAMING_LLVM: {
        ctx_count *c = &p->ctxs[p->cur];
        jb_record(b, "observation", c->next++);
        jb_raw(b, "\n", 1);
        if (p->n <= MAX_IOV_INPUTS) {
            p->payload = 1;             /* sent from the input buffers by send_record */
            return;
        }
        for (int i = 0; i < p->n; i++)
            jb_raw(b, p->data[i], mlbc_spec_bytes(&p->specs[i]));
        jb_raw(b, "\n", 1);
        return;
    }
    case MLBC_FRAMING_BRIDGE_PROTOBUF: {
        ctx_count *c = &p->ctxs[p->cur];
        jb_raw(b, (const char *)&len, 8);
        proto_obs_pack(p->pobs, c->name, c->next++, b);
        break;
    }
    case MLBC_FRAMING_BRIDGE_BITSTREAM:
        jb_raw(b, (const char *)&len, 8);
        if (p->learn) {                 /* features of this call: their own header */
            jb_header(b, p->specs, p->n, NULL, NULL, 1);
            jb_raw(b, "\n", 1);
        } else {
            jb_raw(b, p->bits_header, p->bits_header_len);
        }
        for (int i = 0; i < p->n; i++)
            jb_raw(b, p->data[i], mlbc_spec_bytes(&p->specs[i]));
        jb_raw(b, "\n", 1);
        break;
    default:                        /* MLBC_FRAMING_BRIDGE_JSON */
        jb_raw(b, (const char *)&len, 8);
        build_json(p, b);
        break;
    }
    if (!b->failed) {
        len = b->len - 8;
        memcpy(b->data, &len, 8);
    }
}

/* ---- JSON reply ({"out": VALUE}) -------------------------------------------------------------- */

/* Stores the numbers of v (a number, a boolean or nested arrays of them) into the advice,
 * converted to its element type. *k counts the elements seen. NULL or an error message. */
static const char *store_value(const json_doc *doc, const json_value *v, int type,
                               unsigned char *dst, int64_t want, int64_t *k)
{
    if (v->kind == JSON_ARRAY) {
        for (int c = v->first; c >= 0; c = doc->v[c].next) {
            const char *e = store_value(doc, &doc->v[c], type, dst, want, k);
            if (e)
                return e;
        }
        return NULL;
    }
    if (v->kind != JSON_INT && v->kind != JSON_NUMBER && v->kind != JSON_BOOL)
        return "advice values must be numbers (or arrays of numbers)";
    if ((*k)++ >= want)
        return NULL;                /* counted; the caller reports the size mismatch */
    size_t es = mlbc_type_size(type);
    unsigned char *d = dst + (size_t)(*k - 1) * es;
    if (type == MLBC_FLOAT || type == MLBC_DOUBLE) {
        double x = v->kind == JSON_NUMBER ? v->d : (double)v->i;
        if (type == MLBC_FLOAT) {
            float f = (float)x;
            memcpy(d, &f, 4);
        } else {
            memcpy(d, &x, 8);
        }
        return NULL;
    }
    /* integer advice: an integral value in the type's range */
    int64_t iv;
    uint64_t uv;
    int neg;
    if (v->kind != JSON_NUMBER) {
        iv = v->i;
        neg = iv < 0;
        uv = (uint64_t)iv;
    } else {
        double x = v->d;
        if (x != floor(x) || !(fabs(x) < 18446744073709551616.0))
            return "non-integral or huge number for an integer advice";
        neg = x < 0;
        if (neg && x < -9223372036854775808.0)
            return "integer out of range for the advice type";
        iv = neg ? (int64_t)x : 0;
        uv = neg ? (uint64_t)iv : (uint64_t)x;
        if (!neg && uv <= (uint64_t)INT64_MAX)
            iv = (int64_t)uv;
    }
    int64_t lo = 0, hi = 0;
    uint64_t uhi = 0;
    int is_signed = 1;
    switch (type) {
    case MLBC_INT8: lo = INT8_MIN; hi = INT8_MAX; break;
    case MLBC_INT16: lo = INT16_MIN; hi = INT16_MAX; break;
    case MLBC_INT32: lo = INT32_MIN; hi = INT32_MAX; break;
    case MLBC_INT64: lo = INT64_MIN; hi = INT64_MAX; break;
    case MLBC_BOOL: lo = 0; hi = 1; break;
    case MLBC_UINT8: is_signed = 0; uhi = UINT8_MAX; break;
    case MLBC_UINT16: is_signed = 0; uhi = UINT16_MAX; break;
    case MLBC_UINT32: is_signed = 0; uhi = UINT32_MAX; break;
    default: is_signed = 0; uhi = UINT64_MAX; break;
    }
    if (is_signed ? (!neg && uv > (uint64_t)INT64_MAX) || iv < lo || iv > hi
                  : neg || uv > uhi)
        return "integer out of range for the advice type";
    uint64_t bits = is_signed ? (uint64_t)iv : uv;
    switch (es) {
    case 1: { uint8_t x = (uint8_t)bits; memcpy(d, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)bits; memcpy(d, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)bits; memcpy(d, &x, 4); break; }
    default: memcpy(d, &bits, 8); break;
    }
    return NULL;
}

static int parse_json_reply(mlbc_runner *r, pipe_impl *p, size_t len)
{
    json_doc doc;
    char msg[160] = "";
    size_t at = 0;
    int rc = -1;
    memset(&doc, 0, sizeof doc);
    if (json_parse(&doc, (const char *)p->rbuf, len, msg, sizeof msg, &at)) {
        runner_fail(r, "pipe %s: the host's reply is not JSON (%s at byte %zu of %zu); "
                    "expected {\"out\": VALUE}", p->base, msg, at, len);
        goto done;
    }
    const json_value *out = json_member(&doc, &doc.v[0], "out");
    if (doc.v[0].kind != JSON_OBJECT || !out) {
        runner_fail(r, "pipe %s: the host's JSON reply has no \"out\" member; expected "
                    "{\"out\": VALUE}", p->base);
        goto done;
    }
    int64_t k = 0;
    const char *e = store_value(&doc, out, p->advice_type, p->advice, p->advice_count, &k);
    if (e) {
        runner_fail(r, "pipe %s: bad JSON reply: %s", p->base, e);
        goto done;
    }
    if (p->learn ? k < 1 || k > p->advice_count : k != p->advice_count) {
        runner_fail(r, "pipe %s: the host's JSON reply has %lld value(s), the advice has "
                    "%s%lld", p->base, (long long)k, p->learn ? "1 to " : "",
                    (long long)p->advice_count);
        goto done;
    }
    p->got = k;
    rc = 0;
done:
    json_free(&doc);
    return rc;
}

/* The LLVM and bitstream headers name element types as LLVM's TensorSpec does (the
 * Bridge's bitstream a bool as uint8_t; its header names no advice). */
static int check_llvm_name(const mlbc_tensor_spec *s, int framing, const char *what, char *err,
                           size_t errlen)
{
    if (framing == MLBC_FRAMING_BRIDGE_BITSTREAM && s->type == MLBC_BOOL)
        return 0;
    if ((framing == MLBC_FRAMING_LLVM || framing == MLBC_FRAMING_BRIDGE_BITSTREAM) &&
        !mlbc_type_llvm_name(s->type)) {
        set_err(err, errlen, "pipe: %s '%s': element type %d has no LLVM TensorSpec name "
                "(use float, double or a sized integer type)", what, s->name, s->type);
        return -1;
    }
    return 0;
}

/* ---- evaluate -------------------------------------------------------------------------------- */

/* Integer advice sent as 4-byte ints (the Bridge's Python host packs every int and bool
 * so): k of them, each in the advice type's range, into the advice. 0, or -1. */
static int widen_ints(pipe_impl *p, int64_t k)
{
    size_t es = mlbc_type_size(p->advice_type);
    for (int64_t i = 0; i < k; i++) {
        int32_t v;
        memcpy(&v, p->rbuf + 4 * i, 4);
        int64_t w = v;
        switch (p->advice_type) {
        case MLBC_BOOL: if (v != 0 && v != 1) return -1; break;
        case MLBC_INT8: if (v != (int8_t)v) return -1; break;
        case MLBC_UINT8: if (v != (uint8_t)v) return -1; break;
        case MLBC_INT16: if (v != (int16_t)v) return -1; break;
        case MLBC_UINT16: if (v != (uint16_t)v) return -1; break;
        case MLBC_UINT32: case MLBC_UINT64: w = (uint32_t)v; break;
        }
        unsigned char *d = p->advice + es * (size_t)i;
        if (es == 1)
            *d = (unsigned char)w;
        else if (es == 2)
            memcpy(d, &(uint16_t){(uint16_t)w}, 2);
        else
            memcpy(d, &w, 8);
    }
    p->got = k;
    return 0;
}

static int is_int_type(int type)
{
    return type != MLBC_FLOAT && type != MLBC_DOUBLE;
}

/* A bitstream reply of len bytes: the advice's bytes (with learn, of 1 to advice_count
 * elements), or for integer advice not of 4-byte elements, as many 4-byte ints. */
static int take_bits(mlbc_runner *r, pipe_impl *p, size_t len)
{
    size_t es = mlbc_type_size(p->advice_type);
    int64_t k = (int64_t)(len / es);
    if (len % es == 0 && (p->learn ? k >= 1 && k <= p->advice_count : k == p->advice_count)) {
        memcpy(p->advice, p->rbuf, len);
        p->got = k;
        return 0;
    }
    k = (int64_t)(len / 4);
    if (es != 4 && is_int_type(p->advice_type) && len % 4 == 0 &&
        (p->learn ? k >= 1 && k <= p->advice_count : k == p->advice_count)) {
        if (!widen_ints(p, k))
            return 0;
        runner_fail(r, "pipe %s: the host sent %lld 4-byte int(s), one out of range for the "
                    "advice's type %d", p->base, (long long)k, p->advice_type);
        return -1;
    }
    if (p->learn)
        runner_fail(r, "pipe %s: the host sent a %zu-byte reply, the advice has 1 to %lld "
                    "elements of %zu bytes", p->base, len, (long long)p->advice_count, es);
    else
        runner_fail(r, "pipe %s: the host sent a %zu-byte reply, the advice has %zu bytes",
                    p->base, len, p->advice_bytes);
    return -1;
}

static int recv_reply(mlbc_runner *r, pipe_impl *p)
{
    int64_t deadline = now_ms() + p->timeout_ms;
    if (p->framing == MLBC_FRAMING_LLVM)
        return recv_exact(r, p, p->advice, p->advice_bytes, deadline, "advice",
                          (p->confirmed ? 0 : RECV_TOLERANT) | RECV_LAST);

    uint64_t len;
    if (recv_exact(r, p, &len, 8, deadline, "reply length", p->confirmed ? 0 : RECV_TOLERANT))
        return -1;
    if (len > p->reply_limit || len == 0) {
        runner_fail(r, "pipe %s: the host announced a %llu-byte reply; refused (must be "
                    "1..%zu bytes for this advice): garbage or a desynchronised host",
                    p->base, (unsigned long long)len, p->reply_limit);
        return -1;
    }
    if (recv_exact(r, p, p->rbuf, (size_t)len, deadline, "the reply", RECV_LAST))
        return -1;
    if (p->framing == MLBC_FRAMING_BRIDGE_JSON)
        return parse_json_reply(r, p, (size_t)len);
    if (p->framing == MLBC_FRAMING_BRIDGE_PROTOBUF) {
        char msg[200];
        if (!proto_advice_unpack(&r->advice, p->rbuf, (size_t)len, p->advice, msg, sizeof msg))
            return 0;
        runner_fail(r, "pipe %s: bad protobuf reply: %s", p->base, msg);
        return -1;
    }
    return take_bits(r, p, (size_t)len);
}

/* The advice this evaluation expects: count elements of type (with learn, 1 to count), and
 * the largest reply accepted; the buffers grown to fit. -1 when out of memory. */
static int expect_advice(mlbc_runner *r, pipe_impl *p, int type, int64_t count, int learn)
{
    size_t es = mlbc_type_size(type);
    p->advice_type = type;
    p->advice_count = count;
    p->learn = learn;
    p->advice_bytes = (size_t)count * es;
    p->reply_limit = p->framing == MLBC_FRAMING_BRIDGE_JSON
                         ? JSON_REPLY_SLACK + (size_t)count * 64
                     : p->framing == MLBC_FRAMING_BRIDGE_PROTOBUF
                         ? proto_advice_limit(&r->advice)
                     : p->advice_bytes + (es < 4 && is_int_type(type) ? (size_t)count * (4 - es) : 0);
    if (p->advice_bytes > p->advice_cap) {
        unsigned char *a = realloc(p->advice, p->advice_bytes);
        if (!a)
            return -1;
        memset(a, 0, p->advice_bytes);
        p->advice = a;
        p->advice_cap = p->advice_bytes;
    }
    if (p->framing != MLBC_FRAMING_LLVM && p->reply_limit > p->rcap) {
        unsigned char *b = realloc(p->rbuf, p->reply_limit);
        if (!b)
            return -1;
        p->rbuf = b;
        p->rcap = p->reply_limit;
    }
    return 0;
}

/* One observation of p's features, its reply into p->advice. */
static const void *exchange(mlbc_runner *r, pipe_impl *p)
{
    if (check_no_surplus(r, p, "before this observation"))
        return NULL;
    build_observation(p);
    int sent = send_record(r, p, "an observation");
    p->payload = 0;
    if (sent || recv_reply(r, p))
        return NULL;
    if (!p->confirmed) {
        p->confirmed = 1;
        jb_free(&p->pre);
    }
    return p->advice;
}

/* The runner's features and advice (0; -1 when out of memory). */
static int own_view(mlbc_runner *r, pipe_impl *p)
{
    p->specs = r->specs;
    p->data = (const void *const *)r->inputs;
    p->n = r->ninputs;
    return expect_advice(r, p, r->advice.type, mlbc_spec_count(&r->advice), 0);
}

static const void *pipe_evaluate(mlbc_runner *r)
{
    pipe_impl *p = r->impl;
    if (r->failed || !p)
        return NULL;
    return exchange(r, p);          /* the runner's own view: evaluate_bridge restores it */
}

static const void *pipe_evaluate_bridge(mlbc_runner *r, const mlbc_tensor_spec *features,
                                        const void *const *data, int n, int advice_type,
                                        int64_t max_count, int64_t *count)
{
    pipe_impl *p = r->impl;
    mlbc_tensor_spec advice = mlbc_spec("advice", advice_type, 1, &max_count);
    if (r->failed || !p)
        return NULL;
    if (p->framing != MLBC_FRAMING_BRIDGE_BITSTREAM && p->framing != MLBC_FRAMING_BRIDGE_JSON) {
        set_err(r->error, sizeof r->error, "pipe %s: features per evaluation need the "
                "Bridge's bitstream or JSON framing", p->base);
        return NULL;
    }
    if (n < 0 || n > MLBC_BRIDGE_MAX_FEATURES || (n && (!features || !data)) || max_count < 1 ||
        spec_check(&advice, r->error, sizeof r->error) ||
        mlbc_spec_bytes(&advice) > MAX_ADVICE_BYTES) {
        if (!r->error[0])
            set_err(r->error, sizeof r->error, "pipe %s: bad evaluation (%d features, advice "
                    "of type %d, at most %lld)", p->base, n, advice_type, (long long)max_count);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (spec_check(&features[i], r->error, sizeof r->error) ||
            check_llvm_name(&features[i], p->framing, "feature", r->error, sizeof r->error))
            return NULL;
        if (!data[i]) {
            set_err(r->error, sizeof r->error, "pipe %s: feature '%s' has no data", p->base,
                    features[i].name);
            return NULL;
        }
    }
    p->specs = features;
    p->data = data;
    p->n = n;
    if (expect_advice(r, p, advice_type, max_count, 1)) {
        runner_fail(r, "pipe %s: out of memory", p->base);
        return NULL;
    }
    const void *a = exchange(r, p);
    own_view(r, p);
    if (a && count)
        *count = p->got;
    return a;
}

static const runner_ops pipe_ops = {pipe_evaluate, pipe_set_context, pipe_destroy,
                                    pipe_evaluate_bridge};

static int check_pipe_options(const char *channel_base, int framing, char *err, size_t errlen)
{
    if (!channel_base || !*channel_base) {
        set_err(err, errlen, "pipe: no channel base given");
        return -1;
    }
    if (framing != MLBC_FRAMING_LLVM && framing != MLBC_FRAMING_BRIDGE_BITSTREAM &&
        framing != MLBC_FRAMING_BRIDGE_JSON && framing != MLBC_FRAMING_BRIDGE_PROTOBUF) {
        set_err(err, errlen, "pipe: unknown framing %d", framing);
        return -1;
    }
    return framing == MLBC_FRAMING_BRIDGE_PROTOBUF ? proto_check_host(err, errlen) : 0;
}

/* check_llvm_name's kin for the runner's own specs */
static int check_llvm_names(const mlbc_runner *r, int framing, char *err, size_t errlen)
{
    if (framing == MLBC_FRAMING_LLVM && check_llvm_name(&r->advice, framing, "advice", err, errlen))
        return -1;
    for (int i = 0; i < r->ninputs; i++)
        if (check_llvm_name(&r->specs[i], framing, "feature", err, errlen))
            return -1;
    return 0;
}

static int check_advice_bytes(const mlbc_runner *r, char *err, size_t errlen)
{
    size_t abytes = mlbc_spec_bytes(&r->advice);
    if (abytes == 0 || abytes > MAX_ADVICE_BYTES) {
        set_err(err, errlen, "pipe: advice '%s' has %zu bytes (must be 1..%zu)",
                r->advice.name, abytes, MAX_ADVICE_BYTES);
        return -1;
    }
    return 0;
}

/* Bitstream framing: every observation repeats the header {"features":[SPEC,...]}\n. */
static int save_bits_header(mlbc_runner *r, pipe_impl *p)
{
    jb_header(&p->out, r->specs, r->ninputs, NULL, NULL, 1);
    jb_raw(&p->out, "\n", 1);
    if (p->out.failed || !(p->bits_header = malloc(p->out.len)))
        return -1;
    memcpy(p->bits_header, p->out.data, p->out.len);
    p->bits_header_len = p->out.len;
    return 0;
}

/* The pipe's buffers and names; -1 when out of memory. */
static int alloc_pipe(mlbc_runner *r, pipe_impl *p, const char *channel_base)
{
    p->base = dupstr(channel_base);
    size_t plen = strlen(channel_base);
    p->out_path = malloc(plen + 5);
    if (!p->base || !p->out_path || runner_own_unbound(r) || own_view(r, p))
        return -1;
    if (p->framing == MLBC_FRAMING_BRIDGE_PROTOBUF &&
        (!(p->pobs = proto_obs_new(r)) || select_context(p, "")))
        return -1;
    snprintf(p->out_path, plen + 5, "%s.out", channel_base);
    return p->framing == MLBC_FRAMING_BRIDGE_BITSTREAM ? save_bits_header(r, p) : 0;
}

/* Gives runner r its pipe (r->impl), not yet connected. */
static int new_pipe(mlbc_runner *r, const char *channel_base, const mlbc_pipe_options *o,
                    int trust, char *err, size_t errlen)
{
    pipe_impl *p = calloc(1, sizeof *p);
    if (p) {
        r->impl = p;
        p->in_fd = p->out_fd = -1;
        p->framing = o->framing;
        p->trust = trust;
        p->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
    }
    if (!p || alloc_pipe(r, p, channel_base)) {
        set_err(err, errlen, "pipe: out of memory");
        return -1;
    }
    return 0;
}

/* As LLVM: BASE.in for reading first, then BASE.out for writing. Both O_NONBLOCK: a FIFO's
 * read end opens at once, its write end fails with ENXIO until a reader exists. */
static int connect_pipe(mlbc_runner *r, pipe_impl *p, const char *channel_base, char *err,
                        size_t errlen)
{
    size_t plen = strlen(channel_base);
    char *in_path = malloc(plen + 5);
    if (!in_path) {
        set_err(err, errlen, "pipe: out of memory");
        return -1;
    }
    snprintf(in_path, plen + 5, "%s.in", channel_base);
    int64_t deadline = now_ms() + p->timeout_ms;
    p->in_fd = open_with_deadline(in_path, O_RDONLY, p->trust, deadline, p->timeout_ms,
                                  "advice from the host", err, errlen);
    if (p->in_fd >= 0)
        p->out_fd = open_with_deadline(p->out_path, O_WRONLY, p->trust, deadline,
                                       p->timeout_ms, "observations to the host", err, errlen);
    free(in_path);
    if (p->in_fd < 0 || p->out_fd < 0)
        return -1;
    struct stat st;
    p->in_is_fifo = fstat(p->in_fd, &st) == 0 && S_ISFIFO(st.st_mode);
    fit_pipe(p->out_fd, record_bytes(r, p));
    if (fstat(p->out_fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(p->out_fd, 0) != 0) {
        set_err(err, errlen, "pipe: cannot truncate %s: %s", p->out_path, strerror(errno));
        return -1;
    }
    return 0;
}

/* LLVM framing: the header, then the first context record (LLVM's inliner sends ""). */
static int send_llvm_start(mlbc_runner *r, pipe_impl *p, const char *context, char *err,
                           size_t errlen)
{
    p->out.len = 0;
    jb_header(&p->out, r->specs, r->ninputs, NULL, &r->advice, 0);
    jb_raw(&p->out, "\n", 1);
    if (send_record(r, p, "the header") || pipe_set_context(r, context ? context : "")) {
        set_err(err, errlen, "%s", mlbc_runner_error(r));
        return -1;
    }
    return 0;
}

mlbc_runner *mlbc_runner_pipe(const char *channel_base, const mlbc_tensor_spec *features,
                              int nfeatures, const mlbc_tensor_spec *advice,
                              const mlbc_pipe_options *opt, char *err, size_t errlen)
{
    mlbc_pipe_options o = {MLBC_FRAMING_LLVM, 0, NULL};
    if (opt)
        o = *opt;
    int trust = o.framing & MLBC_PIPE_REGULAR_FILES ? TRUST_FILES : 0;
    o.framing &= ~MLBC_PIPE_REGULAR_FILES;
    if (o.framing == MLBC_FRAMING_BRIDGE_BITSTREAM || o.framing == MLBC_FRAMING_BRIDGE_JSON)
        trust |= TRUST_BRIDGE;
    if (check_pipe_options(channel_base, o.framing, err, errlen))
        return NULL;
    mlbc_runner *r = runner_new(&pipe_ops, features, nfeatures, advice, err, errlen);
    if (!r)
        return NULL;
    if (check_llvm_names(r, o.framing, err, errlen) || check_advice_bytes(r, err, errlen) ||
        new_pipe(r, channel_base, &o, trust, err, errlen) ||
        connect_pipe(r, r->impl, channel_base, err, errlen) ||
        (o.framing == MLBC_FRAMING_LLVM && send_llvm_start(r, r->impl, o.context, err, errlen))) {
        mlbc_runner_free(r);
        return NULL;
    }
    return r;
}
