/* pipe.c - fuzz target: the pipe runner's reply parsing (runtime/pipe.c), each framing.
 * Byte 0 picks the framing (bits 0-1) and, in the Bridge's bitstream and JSON framings,
 * mlbc_runner_evaluate_bridge (bit 2: the count learned from the reply, at most the advice's
 * count), byte 1 the advice's type and shape; the rest is what the host
 * sends on BASE.in. The host opens BASE.out for reading before the runner opens it; a host
 * thread waits for the observation (the runner refuses bytes sent before it), writes the
 * reply (max_len keeps it within a pipe's buffer) and closes BASE.in, so a short reply ends
 * in EOF at once, never in the runner's timeout. A second evaluate meets any surplus.
 * The host thread lives for the whole campaign and takes one input after another: a thread
 * per input would grow ASan's thread registry by some hundred bytes each, and a 10-million
 * run past libFuzzer's RSS limit. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mlbc_runtime.h"

static char dir[] = "/tmp/mlbc-fuzz-pipe-XXXXXX", base[64], in_path[80], out_path[80];

static void remove_fifos(void)
{
    unlink(in_path);
    unlink(out_path);
    rmdir(dir);
}

static void make_fifos(void)
{
    if (!mkdtemp(dir))
        abort();
    snprintf(base, sizeof base, "%s/ch", dir);
    snprintf(in_path, sizeof in_path, "%s.in", base);
    snprintf(out_path, sizeof out_path, "%s.out", base);
    if (mkfifo(in_path, 0600) || mkfifo(out_path, 0600))
        abort();
    atexit(remove_fifos);
    signal(SIGPIPE, SIG_IGN);           /* the runner may close BASE.in before we write */
}

static mlbc_tensor_spec advice_spec(unsigned char b)
{
    static const int types[] = {MLBC_INT64, MLBC_FLOAT, MLBC_DOUBLE, MLBC_INT32, MLBC_UINT8};
    int64_t shape[2] = {1 + (b >> 3 & 3), 1 + (b >> 5 & 3)};
    return mlbc_spec("advice", types[(b & 7) % 5], (b >> 7) ? 2 : (b >> 3 & 1), shape);
}

typedef struct Host {
    int out_r, in_w;
    const uint8_t *reply;
    size_t len;
} Host;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static Host *job;                   /* the input being served; NULL once it is done */

/* Reads what the runner wrote so far (nonblocking). */
static void drain(int fd)
{
    char buf[4096];
    while (read(fd, buf, sizeof buf) > 0)
        ;
}

static void serve(Host *h)
{
    struct pollfd pfd = {h->out_r, POLLIN, 0};
    if (poll(&pfd, 1, 2000) > 0) {
        drain(h->out_r);
        if (write(h->in_w, h->reply, h->len) < 0) {
            /* the runner gave up first */
        }
    }
    close(h->in_w);
}

static void *host(void *arg)
{
    for (;;) {
        pthread_mutex_lock(&mu);
        while (!job)
            pthread_cond_wait(&cv, &mu);
        Host *h = job;
        pthread_mutex_unlock(&mu);
        serve(h);
        pthread_mutex_lock(&mu);
        job = NULL;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    return arg;
}

/* Hands h to the host thread (started at the first input). */
static void start_host(Host *h)
{
    static pthread_t t;
    if (!t && pthread_create(&t, NULL, host, NULL))
        abort();
    pthread_mutex_lock(&mu);
    job = h;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void wait_host(void)
{
    pthread_mutex_lock(&mu);
    while (job)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size <= 2)      /* no reply: the runner waits its timeout for a host to reopen */
        return 0;
    if (!*base)
        make_fifos();
    int64_t fshape[1] = {2};
    mlbc_tensor_spec features[2] = {mlbc_spec("f", MLBC_INT64, 1, fshape),
                                    mlbc_spec("g", MLBC_FLOAT, 0, NULL)};
    mlbc_tensor_spec advice = advice_spec(data[1]);
    mlbc_pipe_options opt = {data[0] % 4, 500, NULL};
    int out_r = open(out_path, O_RDONLY | O_NONBLOCK);
    char err[256];
    mlbc_runner *r = mlbc_runner_pipe(base, features, 2, &advice, &opt, err, sizeof err);
    if (r) {
        drain(out_r);                   /* the LLVM framing's header */
        Host h = {out_r, open(in_path, O_WRONLY | O_NONBLOCK), data + 2, size - 2};
        if (h.in_w < 0)
            abort();
        start_host(&h);
        int bridge = data[0] >> 2 & 1 && (opt.framing == MLBC_FRAMING_BRIDGE_BITSTREAM ||
                                          opt.framing == MLBC_FRAMING_BRIDGE_JSON);
        const void *in[2] = {mlbc_runner_input(r, 0), mlbc_runner_input(r, 1)};
        int64_t n;
        const void *a = bridge ? mlbc_runner_evaluate_bridge(r, features, in, 2, advice.type,
                                                             mlbc_spec_count(&advice), &n)
                               : mlbc_runner_evaluate(r);
        wait_host();
        if (a)
            mlbc_runner_evaluate(r);    /* surplus bytes, or EOF */
        if (getenv("MLBC_FUZZ_VERBOSE"))    /* to see how far a reproducer gets */
            fprintf(stderr, "pipe: %s, then: %s\n", a ? "advice" : "none", mlbc_runner_error(r));
        mlbc_runner_free(r);
    } else if (getenv("MLBC_FUZZ_VERBOSE")) {
        fprintf(stderr, "pipe: %s\n", err);
    }
    close(out_r);
    return 0;
}
