/* mlbc_grpc.h - the gRPC runner (libmlbc_grpc.a, C++ behind this C API): development mode
 * over runtime/mlbc.proto's services instead of named pipes. Link a program with
 * libmlbc_grpc.a, then libmlbc_rt.a, then `pkg-config --libs grpc++` and -lstdc++; programs
 * that do not call this need none of it.
 *
 * Two roles, one runner interface (mlbc_runtime.h: evaluate returns the advice or NULL):
 *  - MLBC_GRPC_CLIENT: evaluate sends the inputs as an Observation to a model server and
 *    returns its Advice: the decisions of a runner are the messages of one
 *    mlbc.Inference/EvaluateStream call (opened at the first), or, where the server has no
 *    EvaluateStream (e.g. mlbc_gym's grpcio engine), one mlbc.Inference/Evaluate call each.
 *  - MLBC_GRPC_SERVER: the runner listens, and evaluate publishes the Observation to a
 *    driver calling mlbc.Training/Step (e.g. mlbc_gym.drive), then waits for the advice the
 *    driver's next Step carries. Freeing the runner answers the driver's last Step "done".
 * mlbc_runner_grpc_bridge takes both roles over an ML-Compiler-Bridge application's own
 * service instead (below).
 *
 * Every call and every wait has a deadline (timeout_ms). An unreachable peer (the model
 * server absent or dead) is retried `retries` times with exponential backoff from
 * backoff_ms; then, as on any other error (deadline passed, refused credentials, bad
 * advice), the runner fails for good with a message (mlbc_runner_error) and evaluate
 * returns NULL at once from then on: the caller's fallback. Advice is bad if its element
 * type, its shape (dimensions of 1 aside) or its size is not the advice spec's.
 *
 * Addresses: "HOST:PORT", "[V6]:PORT" or "unix:PATH". Only loopback hosts (127.0.0.0/8,
 * ::1, localhost) and unix sockets are accepted unless allow_remote is set. A server may
 * give port 0 and read the port it got from mlbc_runner_grpc_port.
 *
 * Security: with token (or token_file), the client sends "authorization: Bearer TOKEN" and
 * the server refuses (UNAUTHENTICATED) any call without it as soon as its metadata arrive,
 * before reading its request. Without a token, a server on a loopback TCP port answers
 * every user of the machine; a server on "unix:PATH" creates PATH itself, mode 0600 (only
 * this user may connect), and refuses a PATH that exists. A token is refused on a
 * non-loopback address without TLS (it would cross the network in clear) unless
 * allow_insecure. token_file is read at once: one line of printable ASCII in a regular file
 * of this user that group and others may neither read nor write (chmod 600), so that the
 * secret stays out of `ps` (which shows a command line's token). With tls_cert and tls_key
 * the server speaks TLS; with tls_ca as well it requires client certificates signed by that
 * CA. A client with tls_ca speaks TLS and verifies the server against it (the server's
 * certificate must name the address's host), presenting tls_cert and tls_key if given. All
 * three are PEM files.
 *
 * Memory: a model server reads Observations of at most max_message bytes (0: 64 MiB; a
 * training server reads advice-sized Steps) and keeps the runners of the feature sets it
 * has seen bound within as many bytes of features (at most 64 sets; the least recently
 * used dropped first), whatever its clients send.
 */
#ifndef MLBC_GRPC_H
#define MLBC_GRPC_H

#include "mlbc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { MLBC_GRPC_CLIENT = 0, MLBC_GRPC_SERVER = 1 };

typedef struct mlbc_grpc_options {
    int role;                   /* MLBC_GRPC_CLIENT (default) or MLBC_GRPC_SERVER */
    int timeout_ms;             /* every call / wait for the peer; 0 means 10000 */
    int retries;                /* client: retries of an unreachable peer; 0: 3; < 0: none */
    int backoff_ms;             /* first retry delay, doubled per retry (at most 60 s);
                                   0 means 100 */
    int allow_remote;           /* non-zero: addresses other than loopback are accepted */
    const char *context;        /* the first context's name; NULL: "" */
    const char *token;          /* shared secret (metadata); NULL: none */
    const char *tls_cert;       /* PEM: the server's certificate chain, or the client's */
    const char *tls_key;        /* PEM: the private key of tls_cert */
    const char *tls_ca;         /* PEM: client: the CA of the server; server: of clients */
    const char *token_file;     /* the token from this file (see above); not with token.
                                   ($MLBC_GRPC_TOKEN is the tools' business, not read here) */
    int allow_insecure;         /* non-zero: a token may go in clear off loopback (no TLS) */
    long max_message;           /* model server: the largest Observation, bytes; 0: 64 MiB
                                   (a Bridge server: the largest request; 0: advice-sized) */
} mlbc_grpc_options;

/* A gRPC runner at address (see above); opt may be NULL (a loopback client, no security).
 * The server role binds at once (an error if it cannot); the client connects lazily, at the
 * first evaluate. NULL with a message in err on bad options, address or PEM files. */
mlbc_runner *mlbc_runner_grpc(const char *address, const mlbc_tensor_spec *features,
                              int nfeatures, const mlbc_tensor_spec *advice,
                              const mlbc_grpc_options *opt, char *err, size_t errlen);

/* A runner speaking an ML-Compiler-Bridge application service (the Bridge's gRPC runners
 * use stubs that protoc generates from each application's .proto). descriptors: a
 * FileDescriptorSet of that .proto (protoc --descriptor_set_out=FILE --include_imports
 * APP.proto); method: "Service/method" or "package.Service/method", or NULL for the first
 * method of the last file's first service; unary. The features go in one message, each in
 * the field of its name (a singular field takes a feature of one value, a repeated field
 * all its values; integers range-checked, a float feature only in a float or double
 * field); the advice is the other message's first field (exactly as many values as the
 * advice has; converted to its type, integers range-checked; that field in another wire
 * type is refused). opt as for mlbc_runner_grpc: deadlines, TLS, the token, and:
 *  - MLBC_GRPC_CLIENT (the Bridge's inference mode): each evaluate calls the method with
 *    the features in the request and takes the advice from the reply; retries.
 *  - MLBC_GRPC_SERVER (its training mode, the trainer calling, e.g. the Bridge's
 *    GrpcCompilerInterface in client mode): the runner serves the method, the advice in
 *    the request, the features in the reply. evaluate answers the trainer's waiting call
 *    with the features (waiting up to timeout_ms for one), then waits up to timeout_ms for
 *    its next call and returns that call's advice; the call waits for the next evaluate's
 *    features. The trainer's first call opens the episode: its request is not read. One
 *    call at a time: another one is refused (FAILED_PRECONDITION). A call the compiler
 *    leaves unanswered for timeout_ms ends DEADLINE_EXCEEDED (as a Step does); then, as
 *    when the trainer cancels it or goes away, the next evaluate fails at once, unless the
 *    trainer has called again (that call opens anew). Freeing the runner ends the waiting
 *    call OUT_OF_RANGE ("done: ..."): the trainer's end of the episode. A request that
 *    does not parse or advice that does not fit fails the runner for good (the call gets
 *    INVALID_ARGUMENT with the message); later calls get ABORTED. Requests of at most
 *    max_message bytes (0: advice-sized). The port, the unix: socket, TLS and the token
 *    as for the Training server.
 * NULL with a message in err when the set, the method or the binding does not fit. */
mlbc_runner *mlbc_runner_grpc_bridge(const char *address, const char *descriptors,
                                     const char *method, const mlbc_tensor_spec *features,
                                     int nfeatures, const mlbc_tensor_spec *advice,
                                     const mlbc_grpc_options *opt, char *err, size_t errlen);

/* 0 if opt (may be NULL) and address are fit for a runner or server (the address, the
 * token or its file, the PEM files: what mlbc_runner_grpc checks before it connects or
 * binds), else -1 with a message in err: a tool can refuse bad options at its start. */
int mlbc_grpc_check(const char *address, const mlbc_grpc_options *opt, char *err,
                    size_t errlen);

/* The port a server-role runner (mlbc_runner_grpc or _bridge) listens on (useful after
 * port 0); 0 for a unix: address, -1 for other runners. */
int mlbc_runner_grpc_port(const mlbc_runner *r);

/* A model server: answers mlbc.Inference/Evaluate and EvaluateStream (what a client-role
 * runner calls) with a model compiled by mlbc, one decision at a time. Each call's
 * features are bound by name to the model's inputs as mlbc_runner_release binds them
 * (ropt: prefixes, selector; may be NULL); a call whose features do not fit the model is
 * refused (FAILED_PRECONDITION). The advice is the model's result named advice (the fetch
 * prefix tried first), or its first result if advice is NULL. opt as above (role ignored;
 * may be NULL); model must outlive the server. NULL with a message in err if it cannot
 * listen. */
typedef struct mlbc_grpc_model_server mlbc_grpc_model_server;
mlbc_grpc_model_server *mlbc_grpc_serve_model(const char *address, const mlbc_model_desc *model,
                                              const char *advice,
                                              const mlbc_release_options *ropt,
                                              const mlbc_grpc_options *opt, char *err,
                                              size_t errlen);
int mlbc_grpc_model_server_port(const mlbc_grpc_model_server *s);   /* 0 for unix: */
/* The same server answering with a function instead of a compiled model (mlbc_gym's
 * serve_model runs a Python policy so): policy(user, d, out, err, errlen) writes the advice
 * (mlbc_spec_bytes(advice) bytes) for decision d into out and returns 0, or returns -1 with
 * a message in err (the call fails with INTERNAL). It is called one decision at a time, on
 * a server thread; d and its data are valid during the call only. */
typedef struct mlbc_grpc_decision {
    const char *context;
    int64_t index;
    int nfeatures;
    const mlbc_tensor_spec *specs;      /* checked: names, types, shapes, sizes */
    const void *const *data;            /* feature i: mlbc_spec_bytes(&specs[i]) bytes */
} mlbc_grpc_decision;
typedef int (*mlbc_grpc_policy)(void *user, const mlbc_grpc_decision *d, void *out, char *err,
                                size_t errlen);
mlbc_grpc_model_server *mlbc_grpc_serve_policy(const char *address,
                                               const mlbc_tensor_spec *advice,
                                               mlbc_grpc_policy policy, void *user,
                                               const mlbc_grpc_options *opt, char *err,
                                               size_t errlen);

long mlbc_grpc_model_server_calls(mlbc_grpc_model_server *s);      /* answered so far */
long mlbc_grpc_model_server_streams(mlbc_grpc_model_server *s);    /* EvaluateStream calls */
/* Stops listening (calls in progress get a second to finish) and frees the server. */
void mlbc_grpc_model_server_free(mlbc_grpc_model_server *s);

#ifdef __cplusplus
}
#endif
#endif
