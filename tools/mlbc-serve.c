/* mlbc-serve - answer a compiler's interactive ML advisor with a policy compiled by mlbc.
 *
 *   mlbc-serve --model policy.so --channel BASE [--log FILE] [--timeout MS] [-- COMMAND ...]
 *   mlbc-serve --remote HOST:PORT --channel BASE [...]     the policy is a gRPC model server
 *   mlbc-serve --model policy.so --listen HOST:PORT [...]  be that model server
 *
 * The model may also be an ONNX model (policy.onnx, .onnxtxt): the runtime compiles it with
 * mlbc and cc into its cache before serving (mlbc_onnx_compile; mlbc next to this tool).
 *
 * Plays the host side of LLVM 19's InteractiveModelRunner protocol (llvm-mlgo.md §3-§6):
 * creates the FIFOs BASE.in and BASE.out, optionally runs the compiler command, and for every
 * session (one per runner the compiler creates; a new header follows each EOF) binds the
 * features of the session's header by name to the model's inputs, answers every observation
 * with the model's decision and, with --log, writes a training log in LLVM's format: the
 * features, then the decision as one more feature named like the advice.
 *
 * With --remote, each observation is passed on to a model server (mlbc.Inference/Evaluate,
 * mlbc_grpc.h) and its advice to the compiler: the compiler's pipes stay local, the policy
 * runs elsewhere. With --listen, mlbc-serve is such a model server for the model.
 *
 * Never hangs: opens are non-blocking and polled, the compiler's exit ends every wait, and
 * --timeout bounds each wait for the compiler. On a fatal error while the compiler waits for
 * advice, the compiler is stopped (LLVM 19 spins forever once its BASE.in is closed).
 * Exit status: the command's (128+N if killed by signal N); without a command 0; 1 for an
 * error in serving; 2 for bad usage; 127 if the command cannot be run.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mlbc_grpc.h"
#include "mlbc_runtime.h"

#define PROG "mlbc-serve"
#define MAX_FEATURES 4096

static const char usage_text[] =
    "usage: " PROG " --model POLICY.so --channel BASE [options] [-- COMMAND ...]\n"
    "       " PROG " --remote HOST:PORT --channel BASE [options] [-- COMMAND ...]\n"
    "       " PROG " --model POLICY.so --listen HOST:PORT [options] [-- COMMAND ...]\n"
    "\n"
    "Serves a compiler's interactive ML advisor (LLVM's -inliner-interactive-channel-base=BASE,\n"
    "-regalloc-evict-interactive-channel-base=BASE, ...) with a policy compiled by mlbc and\n"
    "built with `cc -shared -fPIC`. Creates the FIFOs BASE.in and BASE.out (removed at exit),\n"
    "runs COMMAND if given and exits with its status; serves one session after another.\n"
    "\n"
    "options:\n"
    "  --model PATH         the policy: a shared object built from mlbc's output, or an ONNX\n"
    "                       model (.onnx, .onnxtxt) compiled at start into the cache\n"
    "                       ($MLBC_CACHE_DIR, else ~/.cache/mlbc; $MLBC, $CC: the compilers)\n"
    "  --remote ADDRESS     no local model: ask the gRPC model server at ADDRESS (HOST:PORT,\n"
    "                       unix:PATH) for each decision (mlbc.Inference/Evaluate)\n"
    "  --listen ADDRESS     no channel: be a gRPC model server for --model at ADDRESS (port 0:\n"
    "                       any free port); says 'listening on ... port N' on stderr, serves\n"
    "                       until COMMAND exits or a signal\n"
    "  --advice NAME        --listen: the model's result to answer with (default: its first)\n"
    "  --token TOKEN        gRPC: a shared secret the client sends and the server requires\n"
    "                       (visible in ps: prefer --token-file or $MLBC_GRPC_TOKEN, read when\n"
    "                       neither option is given)\n"
    "  --token-file PATH    gRPC: the token in a file only you may read or write (chmod 600)\n"
    "  --tls-cert PEM, --tls-key PEM\n"
    "                       gRPC: this side's certificate and key (a server needs both)\n"
    "  --tls-ca PEM         gRPC: the CA that signs the peer (a client speaks TLS with it; a\n"
    "                       server then requires client certificates)\n"
    "  --allow-remote       gRPC: accept an address other than loopback\n"
    "  --insecure           gRPC: let the token cross such an address without TLS (in clear)\n"
    "  --symbol NAME        its descriptor symbol (default: file name without extension + _desc)\n"
    "  --channel BASE       channel base name, as given to the compiler\n"
    "  --log FILE           write a training log: the features, then the decision (named as\n"
    "                       the advice), as LLVM's development mode logs\n"
    "  --timeout MS         give up when the compiler is silent for MS milliseconds (default:\n"
    "                       wait; the command's exit always ends a wait); with --remote, also\n"
    "                       each call's deadline (default 10000)\n"
    "  --sessions N         stop after N sessions (default: until the command exits or a signal)\n"
    "  --feed-prefix P      bind feature F to model input P+F first (as LLVM's FeedPrefix)\n"
    "  --fetch-prefix P     read the advice from model output P+ADVICE first\n"
    "  --model-selector S   fill the model's model_selector input with MD5(S)\n"
    "  -v, --verbose        one line per session on stderr\n"
    "  -h, --help           this text\n";

/* ---- state ------------------------------------------------------------------------------- */

static volatile sig_atomic_t g_signal;      /* SIGINT/SIGTERM/SIGHUP received */

/* A FIFO this program made: removed at exit only if its path still names that FIFO. */
typedef struct made_fifo {
    const char *path;               /* NULL: not made */
    dev_t dev;
    ino_t ino;
} made_fifo;

typedef struct server {
    const char *model_path, *symbol, *channel, *log_path;
    const char *remote, *listen, *advice_name;  /* gRPC: --remote, --listen, --advice */
    mlbc_grpc_options gopt;
    mlbc_release_options ropt;
    int timeout_ms;                 /* 0: no limit */
    long max_sessions;              /* 0: no limit */
    int verbose;
    char **command;                 /* NULL: no command */

    char in_path[PATH_MAX], out_path[PATH_MAX];
    made_fifo fifo_in, fifo_out;    /* what make_fifos created, for cleanup */
    pid_t child;                    /* 0: none or reaped */
    int child_status;               /* valid once reaped */
    int child_reaped;

    int fd_in, fd_out;              /* BASE.in (we write), BASE.out (we read) */
    const char *why;                /* why a wait gave up: set by wait_* */

    void *dl;                       /* the policy's shared object (mlbc_model_open) */
    const mlbc_model_desc *desc;

    FILE *log_file;
    mlbc_logger *logger;
    int log_nfeatures;
    mlbc_tensor_spec *log_specs;    /* features + decision of the first session */

    long sessions, observations;
} server;

static void msg(const char *kind, const char *fmt, va_list ap)
{
    fprintf(stderr, PROG ": %s: ", kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

static void error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    msg("error", fmt, ap);
    va_end(ap);
}

static void note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    msg("note", fmt, ap);
    va_end(ap);
}

static void usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    msg("error", fmt, ap);
    va_end(ap);
    fprintf(stderr, "Try '" PROG " --help'.\n");
    exit(2);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static void on_signal(int sig)
{
    g_signal = sig;
}

/* ---- the model's descriptor ------------------------------------------------------------ */

static int load_desc(server *s)
{
    char err[512];
    s->dl = mlbc_model_open(s->model_path, s->symbol, &s->desc, err, sizeof err);
    if (!s->dl) {
        error("%s", err);
        return -1;
    }
    return 0;
}

static int same_spec(const mlbc_tensor_spec *a, const mlbc_tensor_spec *b)
{
    if (strcmp(a->name, b->name) || a->type != b->type || a->rank != b->rank) return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

/* ---- the child ----------------------------------------------------------------------------- */

static int child_exited(server *s)
{
    if (!s->child) return s->child_reaped;
    int st;
    pid_t p = waitpid(s->child, &st, WNOHANG);
    if (p == s->child) {
        s->child_status = st;
        s->child_reaped = 1;
        s->child = 0;
        return 1;
    }
    return 0;
}

static int start_command(server *s)
{
    int ep[2];
    if (pipe2(ep, O_CLOEXEC) < 0) {
        error("pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t p = fork();
    if (p < 0) {
        error("fork: %s", strerror(errno));
        return -1;
    }
    if (p == 0) {
        signal(SIGPIPE, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        close(ep[0]);
        execvp(s->command[0], s->command);
        int e = errno;
        if (write(ep[1], &e, sizeof e) < 0) { /* nothing more to do */ }
        _exit(127);
    }
    close(ep[1]);
    int e = 0;
    ssize_t k;
    while ((k = read(ep[0], &e, sizeof e)) < 0 && errno == EINTR) {}
    close(ep[0]);
    s->child = p;
    if (k == (ssize_t)sizeof e) {
        error("cannot run '%s': %s", s->command[0], strerror(e));
        child_exited(s);
        while (!child_exited(s)) sleep_ms(1);
        return -1;
    }
    return 0;
}

/* Stops the command (sig, then SIGKILL after 2 s): after a fatal error it may be blocked on
 * advice that never comes. */
static void stop_child(server *s, int sig)
{
    if (!s->child) return;
    kill(s->child, sig);
    for (int i = 0; i < 200 && !child_exited(s); i++) sleep_ms(10);
    if (s->child) {
        kill(s->child, SIGKILL);
        while (!child_exited(s)) sleep_ms(5);
    }
}

/* ---- waiting on the channel ------------------------------------------------------------------ */

enum { WAIT_READY = 0, WAIT_CHILD_GONE, WAIT_TIMEOUT, WAIT_SIGNAL, WAIT_ERROR };

static int deadline_passed(server *s, int64_t deadline)
{
    return s->timeout_ms > 0 && now_ms() >= deadline;
}

/* Opens BASE.in for writing once the compiler has it open for reading (LLVM opens BASE.in
 * first and blocks in that open). A blocking open here would never return if the compiler
 * exits first, so poll with non-blocking opens instead. */
static int open_inbound(server *s)
{
    int64_t deadline = now_ms() + s->timeout_ms;
    int pause = 1;
    for (;;) {
        int fd = open(s->in_path, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            char err[512];
            if (mlbc_fifo_private(fd, s->in_path, err, sizeof err)) {
                close(fd);
                error("%s", err);
                return WAIT_ERROR;
            }
            s->fd_in = fd;
            return WAIT_READY;
        }
        if (errno != ENXIO && errno != EINTR) {
            error("cannot open %s: %s", s->in_path, strerror(errno));
            return WAIT_ERROR;
        }
        if (g_signal) return WAIT_SIGNAL;
        if (s->command && child_exited(s)) return WAIT_CHILD_GONE;
        if (deadline_passed(s, deadline)) return WAIT_TIMEOUT;
        sleep_ms(pause);
        if (pause < 20) pause *= 2;
    }
}

/* Waits until fd is readable (data, or the writer's close); *revents gets poll's answer.
 * check_child: also give up when the command has exited (needed while no writer has
 * connected yet: only then does a dead compiler not show as a close). */
static int wait_readable(server *s, int fd, int64_t deadline, int check_child, short *revents)
{
    for (;;) {
        struct pollfd p = { fd, POLLIN, 0 };
        int r = poll(&p, 1, 50);
        if (r > 0) {
            if (revents) *revents = p.revents;
            return WAIT_READY;
        }
        if (r < 0 && errno != EINTR) {
            error("poll: %s", strerror(errno));
            return WAIT_ERROR;
        }
        if (g_signal) return WAIT_SIGNAL;
        if (deadline_passed(s, deadline)) return WAIT_TIMEOUT;
        if (check_child && s->command && child_exited(s)) {
            /* Let poll see what the dead compiler left, then give up. */
            p.revents = 0;
            if (poll(&p, 1, 0) > 0) {
                if (revents) *revents = p.revents;
                return WAIT_READY;
            }
            return WAIT_CHILD_GONE;
        }
    }
}

static const char *wait_reason(server *s, int w)
{
    static char buf[96];
    switch (w) {
    case WAIT_CHILD_GONE: return "the command exited";
    case WAIT_TIMEOUT:
        snprintf(buf, sizeof buf, "no word from the compiler for %d ms (--timeout)", s->timeout_ms);
        return buf;
    case WAIT_SIGNAL: return "interrupted by a signal";
    default: return "error";
    }
}

/* BASE.out, read through stdio so that mlbc_log_next can parse it: every read waits with
 * poll (timeout, signals), then takes what is there; it never asks for more than the
 * compiler has sent, so a record is returned as soon as it is complete. */
typedef struct chan_cookie {
    server *s;
    int fd;
    int wait;                       /* the WAIT_* that ended the stream, if any */
} chan_cookie;

static ssize_t chan_read(void *c, char *buf, size_t n)
{
    chan_cookie *ck = c;
    int64_t deadline = now_ms() + ck->s->timeout_ms;
    for (;;) {
        ssize_t k = read(ck->fd, buf, n);
        if (k >= 0) return k;
        if (errno != EAGAIN && errno != EINTR) return -1;
        /* No child check: once connected, the compiler's exit closes its end (EOF). */
        int w = wait_readable(ck->s, ck->fd, deadline, 0, NULL);
        if (w != WAIT_READY) {
            ck->wait = w;
            errno = w == WAIT_TIMEOUT ? ETIMEDOUT : EINTR;
            return -1;
        }
    }
}

static int write_all(int fd, const void *p, size_t n, server *s)
{
    const unsigned char *b = p;
    int64_t deadline = now_ms() + s->timeout_ms;
    while (n) {
        ssize_t k = write(fd, b, n);
        if (k > 0) {
            b += k;
            n -= (size_t)k;
            continue;
        }
        if (k < 0 && errno != EAGAIN && errno != EINTR) {
            s->why = errno == EPIPE ? "the compiler closed BASE.in" : strerror(errno);
            return -1;
        }
        struct pollfd pf = { fd, POLLOUT, 0 };
        poll(&pf, 1, 50);
        if (g_signal) {
            s->why = "interrupted by a signal";
            return -1;
        }
        if (deadline_passed(s, deadline)) {
            s->why = "the compiler does not read its advice (--timeout)";
            return -1;
        }
    }
    return 0;
}

/* ---- one session ---------------------------------------------------------------------- */

enum { SESSION_OK = 0, SESSION_END, SESSION_FATAL };

static int open_log(server *s, const mlbc_tensor_spec *f, int n, const mlbc_tensor_spec *adv)
{
    if (s->logger) {
        int same = s->log_nfeatures == n + 1 && same_spec(&s->log_specs[n], adv);
        for (int i = 0; same && i < n; i++) same = same_spec(&s->log_specs[i], &f[i]);
        if (!same) {
            error("session %ld's header differs from the first session's; one training log "
                  "cannot hold both (use one mlbc-serve per advisor)", s->sessions + 1);
            return -1;
        }
        return 0;
    }
    s->log_specs = calloc((size_t)n + 1, sizeof *s->log_specs);
    if (!s->log_specs) {
        error("out of memory");
        return -1;
    }
    memcpy(s->log_specs, f, (size_t)n * sizeof *f);
    s->log_specs[n] = *adv;           /* the decision, named as the advice (as LLVM's logs) */
    s->log_nfeatures = n + 1;
    s->log_file = fopen(s->log_path, "wb");
    if (!s->log_file) {
        error("cannot write %s: %s", s->log_path, strerror(errno));
        return -1;
    }
    s->logger = mlbc_logger_open(s->log_file, s->log_specs, n + 1, NULL, NULL);
    if (!s->logger) {
        error("cannot start the training log %s", s->log_path);
        return -1;
    }
    return 0;
}

/* One session's state: the stream from the compiler, and the runner bound to its header. */
typedef struct session {
    long no;                        /* s->sessions + 1, for messages */
    chan_cookie ck;
    mlbc_log_reader *rd;
    int n;                          /* features */
    mlbc_tensor_spec *feat;         /* the header's features */
    mlbc_tensor_spec advice;
    size_t advice_bytes;
    mlbc_runner *r;
    const void **tensors;           /* an observation's features and decision, for the log */
    long nobs, nctx;
} session;

/* Reads the session's header: its features and advice. */
static int read_header(server *s, session *ss, FILE *in)
{
    char err[512] = "";
    ss->rd = mlbc_log_open(in, err, sizeof err);
    if (!ss->rd) {
        error("session %ld: bad header on %s: %s", ss->no, s->out_path,
              ss->ck.wait != WAIT_READY ? wait_reason(s, ss->ck.wait) : err);
        return -1;
    }
    int n = mlbc_log_num_features(ss->rd);
    const mlbc_tensor_spec *adv = mlbc_log_advice(ss->rd);
    if (!adv) {
        error("session %ld: the header on %s has no \"advice\": not an interactive stream",
              ss->no, s->out_path);
        return -1;
    }
    if (n < 0 || n > MAX_FEATURES) {
        error("session %ld: %d features", ss->no, n);
        return -1;
    }
    ss->feat = calloc((size_t)n + 1, sizeof *ss->feat);
    ss->tensors = calloc((size_t)n + 2, sizeof *ss->tensors);
    if (!ss->feat || !ss->tensors) {
        error("out of memory");
        return -1;
    }
    for (int i = 0; i < n; i++) ss->feat[i] = *mlbc_log_feature(ss->rd, i);
    ss->n = n;
    ss->advice = *adv;
    return 0;
}

/* The session's runner: the model bound to the header's features, or (--remote) a gRPC
 * client of the model server. */
static int make_runner(server *s, session *ss)
{
    char err[512] = "";
    if (s->remote) {
        ss->r = mlbc_runner_grpc(s->remote, ss->feat, ss->n, &ss->advice, &s->gopt, err,
                                 sizeof err);
        if (!ss->r) error("%s", err);
        return ss->r ? 0 : -1;
    }
    /* Every model input must be a feature the compiler sends: names what is not. */
    if (mlbc_model_check(s->desc, ss->feat, ss->n, &ss->advice, &s->ropt, err, sizeof err) < 0) {
        error("%s does not fit what the compiler sends: %s; is the policy for another "
              "advisor?", s->model_path, err);
        return -1;
    }
    ss->r = mlbc_runner_release(s->desc, ss->feat, ss->n, &ss->advice, &s->ropt, err,
                                sizeof err);
    if (!ss->r) {
        error("%s: %s", s->model_path, err);
        return -1;
    }
    return 0;
}

/* Binds the header to the policy; opens (or checks) the training log. */
static int bind_model(server *s, session *ss)
{
    if (make_runner(s, ss) < 0) return -1;
    if (s->log_path && open_log(s, ss->feat, ss->n, &ss->advice) < 0) return -1;
    ss->advice_bytes = mlbc_spec_bytes(&ss->advice);
    return 0;
}

static int answer_context(server *s, session *ss, const mlbc_log_record *rec)
{
    ss->nctx++;
    mlbc_runner_set_context(ss->r, rec->context);
    if (s->logger && mlbc_logger_context(s->logger, rec->context) != 0) {
        error("writing %s failed", s->log_path);
        return -1;
    }
    return 0;
}

static int log_observation(server *s, session *ss, const mlbc_log_record *rec,
                           const void *decision)
{
    for (int i = 0; i < ss->n; i++) ss->tensors[i] = rec->tensors[i];
    ss->tensors[ss->n] = decision;
    if (mlbc_logger_observation(s->logger, ss->tensors) != 0) {
        error("writing %s failed", s->log_path);
        return -1;
    }
    return 0;
}

/* Runs the model on the observation and sends its decision to the compiler. */
static int answer_observation(server *s, session *ss, const mlbc_log_record *rec)
{
    for (int i = 0; i < ss->n; i++) {
        void *buf = mlbc_runner_input(ss->r, i);
        if (buf) memcpy(buf, rec->tensors[i], mlbc_spec_bytes(&ss->feat[i]));
    }
    const void *a = mlbc_runner_evaluate(ss->r);
    if (!a) {
        error("session %ld, context \"%s\", observation %lld: the %s failed: %s",
              ss->no, rec->context ? rec->context : "", (long long)rec->id,
              s->remote ? "model server" : "model", mlbc_runner_error(ss->r));
        return -1;
    }
    if (write_all(s->fd_in, a, ss->advice_bytes, s) < 0) {
        error("session %ld, observation %lld: cannot send the advice: %s", ss->no,
              (long long)rec->id, s->why);
        return -1;
    }
    ss->nobs++;
    return s->logger ? log_observation(s, ss, rec, a) : 0;
}

/* Answers every record up to the end of the stream (the compiler closed BASE.out). */
static int answer_records(server *s, session *ss)
{
    mlbc_log_record rec;
    int k;
    while ((k = mlbc_log_next(ss->rd, &rec)) == 1) {
        int rc = 0;
        if (rec.kind == MLBC_RECORD_CONTEXT)
            rc = answer_context(s, ss, &rec);
        else if (rec.kind == MLBC_RECORD_OBSERVATION)
            rc = answer_observation(s, ss, &rec);
        /* Outcome records do not occur in interactive streams; nothing to answer. */
        if (rc < 0) return -1;
    }
    if (k < 0) {
        if (ss->ck.wait != WAIT_READY)
            error("session %ld after %ld observation(s): %s", ss->no, ss->nobs,
                  wait_reason(s, ss->ck.wait));
        else
            error("session %ld after %ld observation(s): bad stream on %s: %s", ss->no,
                  ss->nobs, s->out_path, mlbc_log_error(ss->rd));
        return -1;
    }
    return 0;
}

static int serve_session(server *s)
{
    session ss = { .no = s->sessions + 1, .ck = { s, s->fd_out, WAIT_READY } };
    cookie_io_functions_t io = { chan_read, NULL, NULL, NULL };
    FILE *in = fopencookie(&ss.ck, "r", io);
    if (!in) {
        error("fopencookie: %s", strerror(errno));
        return SESSION_FATAL;
    }
    int ok = !read_header(s, &ss, in) && !bind_model(s, &ss) && !answer_records(s, &ss);
    if (ok) {
        s->sessions++;
        s->observations += ss.nobs;
        if (s->verbose)
            note("session %ld: %ld observation(s), %ld context record(s)", ss.no, ss.nobs,
                 ss.nctx);
    }
    if (ss.r) mlbc_runner_free(ss.r);
    if (ss.rd) mlbc_log_close(ss.rd);
    fclose(in);
    free(ss.feat);
    free(ss.tensors);
    return ok ? SESSION_OK : SESSION_FATAL;
}

/* ---- main ---------------------------------------------------------------------------------- */

static server g;

/* Removes m's FIFO if this program made it and it is still there: a file put at the path
 * since (by anyone) is not ours to delete. */
static void remove_fifo(made_fifo *m)
{
    struct stat st;
    if (m->path && lstat(m->path, &st) == 0 && S_ISFIFO(st.st_mode) && st.st_dev == m->dev
        && st.st_ino == m->ino)
        unlink(m->path);
    m->path = NULL;
}

static void cleanup(void)
{
    remove_fifo(&g.fifo_in);
    remove_fifo(&g.fifo_out);
}

/* mkfifo path, mode 0600, remembered in m. An old FIFO of this user's (a run that was
 * killed) is replaced; anything else is refused and left alone: a regular file may be
 * someone's data, another user's FIFO is theirs. */
static int make_fifo(made_fifo *m, const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISFIFO(st.st_mode)) {
            error("%s exists and is not a FIFO (a compiler that found no FIFO writes a regular "
                  "file there); it is left as it is: remove it first if it is stale", path);
            return -1;
        }
        if (st.st_uid != geteuid()) {
            error("%s is a FIFO of uid %u, not this user's (%u); it is left as it is: use "
                  "another --channel", path, (unsigned)st.st_uid, (unsigned)geteuid());
            return -1;
        }
        if (unlink(path) < 0) {
            error("cannot remove the old FIFO %s: %s", path, strerror(errno));
            return -1;
        }
    }
    if (mkfifo(path, 0600) < 0 || lstat(path, &st) < 0) {
        error("cannot create the FIFO %s: %s", path, strerror(errno));
        return -1;
    }
    *m = (made_fifo){path, st.st_dev, st.st_ino};
    return 0;
}

static const char *need(int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) usage_error("option %s needs a value", argv[*i]);
    return argv[++*i];
}

static int to_int(const char *opt, const char *v, long lo, long hi)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || end == v || x < lo || x > hi)
        usage_error("%s: '%s' is not a number in %ld..%ld", opt, v, lo, hi);
    return (int)x;
}

/* Exits on bad usage (2) and after --help (0). */
static void parse_options(server *s, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            if (i + 1 >= argc) usage_error("'--' must be followed by a command");
            s->command = argv + i + 1;
            break;
        } else if (!strcmp(a, "--model")) s->model_path = need(argc, argv, &i);
        else if (!strcmp(a, "--symbol")) s->symbol = need(argc, argv, &i);
        else if (!strcmp(a, "--channel")) s->channel = need(argc, argv, &i);
        else if (!strcmp(a, "--log")) s->log_path = need(argc, argv, &i);
        else if (!strcmp(a, "--timeout"))
            s->timeout_ms = to_int(a, need(argc, argv, &i), 0, 86400000);
        else if (!strcmp(a, "--sessions"))
            s->max_sessions = to_int(a, need(argc, argv, &i), 1, INT_MAX);
        else if (!strcmp(a, "--feed-prefix")) s->ropt.feed_prefix = need(argc, argv, &i);
        else if (!strcmp(a, "--fetch-prefix")) s->ropt.fetch_prefix = need(argc, argv, &i);
        else if (!strcmp(a, "--model-selector")) s->ropt.model_selector = need(argc, argv, &i);
        else if (!strcmp(a, "--remote")) s->remote = need(argc, argv, &i);
        else if (!strcmp(a, "--listen")) s->listen = need(argc, argv, &i);
        else if (!strcmp(a, "--advice")) s->advice_name = need(argc, argv, &i);
        else if (!strcmp(a, "--token")) s->gopt.token = need(argc, argv, &i);
        else if (!strcmp(a, "--token-file")) s->gopt.token_file = need(argc, argv, &i);
        else if (!strcmp(a, "--tls-cert")) s->gopt.tls_cert = need(argc, argv, &i);
        else if (!strcmp(a, "--tls-key")) s->gopt.tls_key = need(argc, argv, &i);
        else if (!strcmp(a, "--tls-ca")) s->gopt.tls_ca = need(argc, argv, &i);
        else if (!strcmp(a, "--allow-remote")) s->gopt.allow_remote = 1;
        else if (!strcmp(a, "--insecure")) s->gopt.allow_insecure = 1;
        else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) s->verbose = 1;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            exit(0);
        } else usage_error("unknown option '%s'", a);
    }
    if (!s->model_path == !s->remote) usage_error("give --model or --remote (one of them)");
    if (s->listen && (s->remote || s->channel || s->log_path))
        usage_error("--listen serves --model over gRPC: no --remote, --channel or --log");
    if (s->advice_name && !s->listen) usage_error("--advice is for --listen");
    if (s->gopt.token && s->gopt.token_file) usage_error("give --token or --token-file");
    if (!s->gopt.token && !s->gopt.token_file && getenv("MLBC_GRPC_TOKEN") &&
        *getenv("MLBC_GRPC_TOKEN"))
        s->gopt.token = getenv("MLBC_GRPC_TOKEN");
    if (s->listen) return;
    if (!s->channel) usage_error("--channel is required");
    s->gopt.timeout_ms = s->timeout_ms;
    char err[512];
    if (s->remote && mlbc_grpc_check(s->remote, &s->gopt, err, sizeof err)) {
        error("%s", err);           /* now, not when the compiler's first session comes */
        exit(1);
    }
    if (snprintf(s->in_path, sizeof s->in_path, "%s.in", s->channel) >= (int)sizeof s->in_path ||
        snprintf(s->out_path, sizeof s->out_path, "%s.out", s->channel) >= (int)sizeof s->out_path)
        usage_error("--channel: name too long");
}

static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;        /* no SA_RESTART: waits return and look at g_signal */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* Creates BASE.in and BASE.out; cleanup removes what was made at exit. */
static int make_fifos(server *s)
{
    atexit(cleanup);
    if (make_fifo(&s->fifo_in, s->in_path) < 0) return -1;
    return make_fifo(&s->fifo_out, s->out_path);
}

/* The compiler has opened BASE.in (s->fd_in) and now opens BASE.out (s->fd_out, opened
 * non-blocking for reading) for writing: poll reports the header, or the compiler's close. */
static int serve_connection(server *s)
{
    short ev = 0;
    int w = wait_readable(s, s->fd_out, now_ms() + s->timeout_ms, 1, &ev);
    if (w == WAIT_READY && !(ev & POLLIN)) {
        /* The compiler opened and closed BASE.out without a header. */
        if (s->verbose) note("session %ld: the compiler closed the channel at once",
                             s->sessions + 1);
        s->sessions++;
        return SESSION_OK;
    }
    if (w == WAIT_READY) return serve_session(s);
    if (w == WAIT_CHILD_GONE) {
        if (s->verbose) note("the command exited before it opened %s", s->out_path);
    } else if (w == WAIT_TIMEOUT)
        error("the compiler opened %s but not %s within %d ms (--timeout)", s->in_path,
              s->out_path, s->timeout_ms);
    return w == WAIT_CHILD_GONE || w == WAIT_SIGNAL ? SESSION_END : SESSION_FATAL;
}

/* Waits for the compiler to open the channel, then serves it: one session. */
static int next_session(server *s)
{
    int w = open_inbound(s);
    if (w == WAIT_CHILD_GONE) return SESSION_END;
    if (w != WAIT_READY) {
        if (w == WAIT_TIMEOUT)
            error("no compiler opened %s within %d ms (--timeout)", s->in_path, s->timeout_ms);
        return w == WAIT_SIGNAL ? SESSION_END : SESSION_FATAL;
    }
    /* A non-blocking open for reading always succeeds, whether the writer is there or not. */
    s->fd_out = open(s->out_path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    char err[512];
    if (s->fd_out < 0 || mlbc_fifo_private(s->fd_out, s->out_path, err, sizeof err)) {
        if (s->fd_out < 0)
            error("cannot open %s: %s", s->out_path, strerror(errno));
        else
            error("%s", err);
        close(s->fd_out);
        close(s->fd_in);
        s->fd_in = s->fd_out = -1;
        return SESSION_FATAL;
    }
    int rc = serve_connection(s);
    close(s->fd_out);
    close(s->fd_in);
    s->fd_in = s->fd_out = -1;
    return rc;
}

/* Serves one session after another; returns 1 after a fatal error. */
static int serve_sessions(server *s)
{
    while (!s->max_sessions || s->sessions < s->max_sessions) {
        int rc = next_session(s);
        if (rc == SESSION_FATAL) return 1;
        if (rc == SESSION_END || g_signal) break;
    }
    return 0;
}

/* The command opened BASE.in (fd) once more, for a session beyond --sessions: did it send a
 * header (rather than close the channel at once)? */
static int unserved_session(server *s, int fd)
{
    int fo = open(s->out_path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    short ev = 0;
    int w = fo < 0 ? WAIT_ERROR : wait_readable(s, fo, now_ms() + s->timeout_ms, 1, &ev);
    close(fd);
    if (fo >= 0) close(fo);
    return w == WAIT_READY && (ev & POLLIN);
}

/* Ends the command: stops it after a signal or (failed) an error, else waits for it.
 * Returns -1 if it had to be stopped because it started a session nobody would answer. */
static int end_command(server *s, int failed)
{
    if (g_signal) {
        stop_child(s, g_signal);
    } else if (failed && s->child && !child_exited(s)) {
        note("stopping the command (LLVM would wait for advice forever)");
        stop_child(s, SIGTERM);
    }
    while (s->child && !child_exited(s)) {
        /* The command goes on without us. If it opens the channel once more (a session
         * beyond --sessions), nobody would answer: stop it rather than let it hang. */
        int fd = open(s->in_path, O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0) {
            if (!unserved_session(s, fd)) continue;
            error("the command started session %ld but --sessions is %ld; stopping it",
                  s->sessions + 1, s->max_sessions);
            stop_child(s, SIGTERM);
            return -1;
        }
        if (g_signal) {
            stop_child(s, g_signal);
            break;
        }
        sleep_ms(5);
    }
    return 0;
}

/* Completes the training log; returns failed, or 1 if the log could not be written. */
static int close_log(server *s, int failed)
{
    if (s->logger && mlbc_logger_close(s->logger) != 0) {
        error("writing %s failed", s->log_path);
        failed = 1;
    }
    if (s->log_file && fclose(s->log_file) != 0) {
        error("writing %s failed: %s", s->log_path, strerror(errno));
        failed = 1;
    }
    if (s->log_path && !s->logger && !failed)
        note("no session was served; %s was not written", s->log_path);
    return failed;
}

static int exit_status(const server *s, int failed)
{
    if (failed) return 1;
    if (g_signal) return 128 + g_signal;
    if (s->command) {
        if (WIFEXITED(s->child_status)) return WEXITSTATUS(s->child_status);
        if (WIFSIGNALED(s->child_status)) return 128 + WTERMSIG(s->child_status);
        return 1;
    }
    return 0;
}

/* --listen: a gRPC model server for the model until the command exits or a signal. */
static int serve_grpc(server *s)
{
    char err[512];
    mlbc_grpc_model_server *m = mlbc_grpc_serve_model(s->listen, s->desc, s->advice_name,
                                                      &s->ropt, &s->gopt, err, sizeof err);
    if (!m) {
        error("%s", err);
        return 1;
    }
    note("listening on %s, port %d", s->listen, mlbc_grpc_model_server_port(m));
    if (!s->gopt.token && !s->gopt.token_file && strncmp(s->listen, "unix:", 5))
        fprintf(stderr, PROG ": warning: no token: every user of this machine can connect "
                "to %s (give --token-file or $MLBC_GRPC_TOKEN, or listen on unix:PATH)\n",
                s->listen);
    fflush(stderr);
    if (s->command && start_command(s) < 0) {
        mlbc_grpc_model_server_free(m);
        return 127;
    }
    while (!g_signal && !(s->command && child_exited(s))) sleep_ms(20);
    if (g_signal) stop_child(s, g_signal);
    if (s->verbose)
        note("%ld call(s) answered, %ld stream(s)", mlbc_grpc_model_server_calls(m),
             mlbc_grpc_model_server_streams(m));
    mlbc_grpc_model_server_free(m);
    return exit_status(s, 0);
}

int main(int argc, char **argv)
{
    server *s = &g;
    s->fd_in = s->fd_out = -1;
    parse_options(s, argc, argv);
    if (s->model_path && load_desc(s) < 0) return 1;
    catch_signals();
    if (s->listen) {
        int rc = serve_grpc(s);
        mlbc_model_close(s->dl);
        return rc;
    }
    if (make_fifos(s) < 0) return 1;
    if (s->command && start_command(s) < 0) return 127;

    int failed = serve_sessions(s);
    if (end_command(s, failed) < 0) failed = 1;
    failed = close_log(s, failed);
    if (s->verbose)
        note("%ld session(s), %ld observation(s)", s->sessions, s->observations);
    cleanup();
    mlbc_model_close(s->dl);
    return exit_status(s, failed);
}
