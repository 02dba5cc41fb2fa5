/* grpc.cc - the gRPC runner (mlbc_grpc.h): runtime/mlbc.proto's services behind the
 * runtime's runner interface, in C++ (gRPC's only complete API) behind a C API, built into
 * its own archive so that programs without gRPC need neither libstdc++ nor grpc++.
 *
 * Client role: a session's decisions are messages of one Inference/EvaluateStream call
 * (async API, so that each waits at most the deadline), or one Evaluate call each where the
 * server has no EvaluateStream; retried with backoff only while the peer is unreachable
 * (UNAVAILABLE); a stalled peer costs one deadline.
 * Server role: a sync gRPC server whose Training/Step handler meets evaluate at a monitor
 * (mutex + condition variable): evaluate publishes the observation and waits for the
 * advice; Step hands in the advice and waits for the next observation or the end.
 * Advice goes through proto.c's checks (proto_advice_unpack), as in the pipe framing.
 * Servers check the token in gRPC's core, on a call's metadata, before its request is read
 * (TokenCredentials); a unix: socket is made 0600 before anyone may connect (SocketFile).
 * An ML-Compiler-Bridge application service: both roles over messages built at run time
 * from the application's descriptor set (BridgeClient; BridgeServer, a generic callback
 * service whose calls meet evaluate at a monitor, as Step's do). */
#include <arpa/inet.h>
#include <fcntl.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <grpc/grpc_security.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "mlbc.grpc.pb.h"
#include "mlbc_grpc.h"

extern "C" {
#include "internal.h"
#include "proto.h"
}

namespace {

const int kDefaultTimeoutMs = 10000;
const int kDefaultRetries = 3;
const int kDefaultBackoffMs = 100;
const int kSliceMs = 50;            /* a Step handler's wait notices a cancelled call this fast */
const int kShutdownMs = 1000;       /* what freeing a server leaves the driver's last Step */
const size_t kMaxObservation = ((size_t)1 << 28) + ((size_t)1 << 20);
const long kDefaultMaxMessage = 64L << 20;      /* what a model server reads per message */
const size_t kMaxToken = 4096;

using Clock = std::chrono::steady_clock;

/* A server's unix socket, which it created and removes (if it is still there). */
struct SocketFile {
    std::string path;
    dev_t dev = 0;
    ino_t ino = 0;
    ~SocketFile()
    {
        struct stat st;
        if (!path.empty() && lstat(path.c_str(), &st) == 0 && st.st_dev == dev &&
            st.st_ino == ino)
            unlink(path.c_str());
    }
};

/* What both roles share: the settings, the Observation over the inputs, the advice. */
struct Impl {
    int role = MLBC_GRPC_CLIENT;
    std::string address, token, cert, key, ca;
    int timeout_ms = kDefaultTimeoutMs, retries = kDefaultRetries;
    int backoff_ms = kDefaultBackoffMs;
    long max_message = kDefaultMaxMessage;
    SocketFile socket;              /* a server's unix: socket */
    mlbc::Observation obs;          /* names, types and shapes set once; data per evaluate */
    std::unordered_map<std::string, int64_t> next_index;    /* per context name */
    std::string context;
    std::string advice;             /* the advice buffer evaluate returns */
    virtual const void *evaluate(mlbc_runner *) { return NULL; }   /* a runner's decision */
    virtual void stop() {}          /* before delete: a server ends its calls */
    virtual ~Impl() {}
};

/* A server's listening half: declared last among a server's bases, so that gRPC's server
 * goes before the service it calls. */
struct Listener {
    std::unique_ptr<grpc::Server> server;
    int port = -1;
};

std::string status_text(const grpc::Status &st)
{
    static const char *names[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
        "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
    int c = st.error_code();
    std::string s = c >= 0 && c <= 16 ? names[c] : "status " + std::to_string(c);
    return st.error_message().empty() ? s : s + ": " + st.error_message();
}

/* Only loopback unless asked: a training channel carries a compiler's internals and
 * steers its decisions, so exposing it is a choice, never a default. */
bool is_loopback(const std::string &addr)
{
    if (addr.rfind("unix:", 0) == 0)
        return true;
    std::string host;
    if (!addr.empty() && addr[0] == '[') {
        size_t e = addr.find(']');
        if (e == std::string::npos)
            return false;
        host = addr.substr(1, e - 1);
    } else {
        size_t c = addr.rfind(':');
        if (c == std::string::npos)
            return false;
        host = addr.substr(0, c);
    }
    in_addr a4;
    in6_addr a6;
    if (host == "localhost")
        return true;
    if (inet_pton(AF_INET, host.c_str(), &a4) == 1)
        return ntohl(a4.s_addr) >> 24 == 127;
    return inet_pton(AF_INET6, host.c_str(), &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

/* Reads a PEM file into out (nothing for a NULL path); false with err set if unreadable. */
bool read_pem(const char *what, const char *path, std::string *out, char *err, size_t errlen)
{
    if (!path)
        return true;
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    if (!f || ss.str().empty()) {
        set_err(err, errlen, "grpc: cannot read %s %s", what, path);
        return false;
    }
    *out = ss.str();
    return true;
}

/* A token travels as metadata: one line of printable ASCII (gRPC refuses other bytes). */
bool check_token(const std::string &t, const char *from, char *err, size_t errlen)
{
    bool ok = !t.empty() && t.size() <= kMaxToken;
    for (char c : t)
        ok = ok && c >= 0x20 && c < 0x7f;
    if (!ok)
        set_err(err, errlen, "grpc: the token%s must be 1 to %zu characters of printable "
                "ASCII", from, kMaxToken);
    return ok;
}

/* A secret in a file, as ssh keys are: only its owner (this user) may read or write it. */
const trust_rule kTokenFile = {
    "grpc: ", "token_file", S_IFREG, S_IRWXG | S_IRWXO,
    "a token others can read is no secret, one they can write is theirs: chmod 600 it"
};

/* The token in path (kTokenFile, checked on the descriptor; O_NONBLOCK, so that a FIFO at
 * the path is refused, not waited on). It stays out of `ps` and children's environments;
 * its line end is not part of it. False with err set. */
bool read_token_file(const char *path, std::string *out, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        set_err(err, errlen, "grpc: cannot read token_file %s: %s", path, strerror(errno));
        return false;
    }
    char buf[kMaxToken + 2];
    ssize_t n = check_ours(fd, path, &kTokenFile, err, errlen) ? -2 : read(fd, buf, sizeof buf);
    int e = errno;
    close(fd);
    if (n == -1)
        set_err(err, errlen, "grpc: cannot read token_file %s: %s", path, strerror(e));
    if (n < 0)
        return false;
    out->assign(buf, (size_t)n);
    if (!out->empty() && out->back() == '\n')
        out->pop_back();
    if (!out->empty() && out->back() == '\r')
        out->pop_back();
    std::string from = std::string(" in ") + path;
    return check_token(*out, from.c_str(), err, errlen);
}

/* A token, unless TLS hides it, stays on this machine unless the user says otherwise. */
bool token_safe(const Impl *p, const mlbc_grpc_options &o, char *err, size_t errlen)
{
    bool tls = o.role == MLBC_GRPC_SERVER ? o.tls_cert != NULL : o.tls_ca != NULL;
    if (p->token.empty() || tls || o.allow_insecure || is_loopback(p->address))
        return true;
    set_err(err, errlen, "grpc: %s is not a loopback address and there is no TLS: the token "
            "would cross the network in clear text; give TLS (tls_cert/tls_key, tls_ca) or "
            "set allow_insecure", p->address.c_str());
    return false;
}

/* The token from token or token_file (one of them), checked; false with err set. */
bool configure_token(Impl *p, const mlbc_grpc_options &o, char *err, size_t errlen)
{
    if (o.token && o.token_file) {
        set_err(err, errlen, "grpc: give token or token_file, not both");
        return false;
    }
    if (o.token_file)
        return read_token_file(o.token_file, &p->token, err, errlen) &&
               token_safe(p, o, err, errlen);
    if (!o.token)
        return true;
    p->token = o.token;
    return check_token(p->token, "", err, errlen) && token_safe(p, o, err, errlen);
}

/* The options, checked and with defaults, into impl; false with err set. */
bool configure(Impl *p, const char *address, const mlbc_grpc_options &o, char *err,
               size_t errlen)
{
    if (!address || !*address) {
        set_err(err, errlen, "grpc: no address");
        return false;
    }
    if (proto_check_host(err, errlen))
        return false;
    p->address = address;
    if (!o.allow_remote && !is_loopback(p->address)) {
        set_err(err, errlen, "grpc: %s is not a loopback address (127.0.0.0/8, [::1], "
                "localhost, unix:PATH); set allow_remote to use another one", address);
        return false;
    }
    if (o.role != MLBC_GRPC_CLIENT && o.role != MLBC_GRPC_SERVER) {
        set_err(err, errlen, "grpc: unknown role %d", o.role);
        return false;
    }
    if (o.role == MLBC_GRPC_SERVER && (!o.tls_cert != !o.tls_key || (o.tls_ca && !o.tls_cert))) {
        set_err(err, errlen, "grpc: a TLS server needs tls_cert and tls_key (tls_ca adds "
                "client certificates)");
        return false;
    }
    if (o.role == MLBC_GRPC_CLIENT && (!o.tls_cert != !o.tls_key || (o.tls_cert && !o.tls_ca))) {
        set_err(err, errlen, "grpc: a TLS client needs tls_ca (tls_cert and tls_key, both, "
                "add a client certificate)");
        return false;
    }
    p->role = o.role;
    if (o.timeout_ms > 0)
        p->timeout_ms = o.timeout_ms;
    p->retries = o.retries < 0 ? 0 : o.retries ? o.retries : kDefaultRetries;
    if (o.backoff_ms > 0)
        p->backoff_ms = o.backoff_ms;
    if (o.max_message < 0 || o.max_message > (long)kMaxObservation) {
        set_err(err, errlen, "grpc: max_message %ld is not in 0..%zu", o.max_message,
                kMaxObservation);
        return false;
    }
    if (o.max_message > 0)
        p->max_message = o.max_message;
    p->context = o.context ? o.context : "";
    return configure_token(p, o, err, errlen) &&
           read_pem("tls_cert", o.tls_cert, &p->cert, err, errlen) &&
           read_pem("tls_key", o.tls_key, &p->key, err, errlen) &&
           read_pem("tls_ca", o.tls_ca, &p->ca, err, errlen);
}

/* The Observation's fixed part: one tensor per input, named, typed and shaped. */
void init_observation(const mlbc_runner *r, Impl *p)
{
    for (int i = 0; i < r->ninputs; i++) {
        mlbc::Tensor *t = p->obs.add_features();
        t->set_name(r->specs[i].name);
        t->set_type(r->specs[i].type);
        for (int d = 0; d < r->specs[i].rank; d++)
            t->add_shape(r->specs[i].shape[d]);
    }
}

/* The inputs as they are now, the current context and its next index. */
void fill_observation(const mlbc_runner *r, Impl *p)
{
    p->obs.set_context(p->context);
    p->obs.set_index(p->next_index[p->context]++);
    for (int i = 0; i < r->ninputs; i++)
        p->obs.mutable_features(i)->set_data(r->inputs[i], mlbc_spec_bytes(&r->specs[i]));
}

/* proto.c's checks of an Advice (type, shape, size) into the advice buffer: 0, or -1. */
int take_advice(const mlbc_runner *r, Impl *p, const mlbc::Advice &a, char *err, size_t n)
{
    std::string msg;
    if (!a.SerializeToString(&msg)) {
        set_err(err, n, "the Advice message cannot be serialized");
        return -1;
    }
    return proto_advice_unpack(&r->advice, (const uint8_t *)msg.data(), msg.size(),
                               &p->advice[0], err, n);
}

int set_context(mlbc_runner *r, const char *name)
{
    static_cast<Impl *>(r->impl)->context = name;
    return 0;
}

/* ---- client role -------------------------------------------------------------------------- */

/* The delay before retry k (from 0): backoff_ms doubled k times, at most a minute. */
int retry_delay_ms(int backoff_ms, int k)
{
    int64_t d = (int64_t)backoff_ms << (k < 20 ? k : 20);
    return d > 60000 ? 60000 : (int)d;
}

using Stream = grpc::ClientAsyncReaderWriter<mlbc::Observation, mlbc::Advice>;

struct Client : Impl {
    std::unique_ptr<mlbc::Inference::Stub> stub;
    /* The session's EvaluateStream, opened at the first decision; one operation at a time
     * is in flight on it, its completion awaited on cq. */
    grpc::CompletionQueue cq;
    std::unique_ptr<grpc::ClientContext> sctx;
    std::unique_ptr<Stream> stream;
    bool unary = false;             /* the server has no EvaluateStream: Evaluate calls */
    const void *evaluate(mlbc_runner *r) override;
    ~Client() override;
};

std::chrono::system_clock::time_point deadline_in(int ms)
{
    return std::chrono::system_clock::now() + std::chrono::milliseconds(ms);
}

/* The shared token, if any, as the call's metadata. */
void add_token(const Impl *c, grpc::ClientContext *ctx)
{
    if (!c->token.empty())
        ctx->AddMetadata("authorization", "Bearer " + c->token);
}

/* Waits until deadline for the operation in flight on c's stream: 1 it succeeded, 0 it
 * failed (the call is over; Finish says why), -1 the deadline passed first. */
int wait_op(Client *c, std::chrono::system_clock::time_point deadline)
{
    void *tag;
    bool ok;
    grpc::CompletionQueue::NextStatus st = c->cq.AsyncNext(&tag, &ok, deadline);
    return st == grpc::CompletionQueue::TIMEOUT ? -1
         : st == grpc::CompletionQueue::GOT_EVENT && ok ? 1 : 0;
}

/* Cancels c's stream call and awaits the operation in flight, which that completes at once. */
void cancel_op(Client *c)
{
    c->sctx->TryCancel();
    wait_op(c, std::chrono::system_clock::time_point::max());
}

/* Ends c's stream and returns its status. pending: an operation is still in flight (it
 * timed out): the call is cancelled, which completes it at once. Otherwise the session is
 * over (half-close, then the server's status), cancelled too if the server does not end
 * the call within a second (or the timeout, if shorter). */
grpc::Status end_stream(Client *c, bool pending)
{
    grpc::Status st;
    if (!c->stream)
        return st;
    auto deadline = deadline_in(std::min(c->timeout_ms, kShutdownMs));
    if (!pending) {
        c->stream->WritesDone(c);
        pending = wait_op(c, deadline) < 0;
    }
    if (pending)
        cancel_op(c);
    c->stream->Finish(&st, c);
    if (wait_op(c, deadline) < 0)
        cancel_op(c);
    c->stream.reset();
    c->sctx.reset();
    return st;
}

Client::~Client()
{
    end_stream(this, false);
    cq.Shutdown();
    void *tag;
    bool ok;
    while (cq.Next(&tag, &ok)) {
    }
}

/* One decision on the stream, opened first if need be: OK with the advice in reply, or
 * the status that ended the stream (DEADLINE_EXCEEDED: no answer in time, cancelled). */
grpc::Status stream_decision(Client *c, mlbc::Advice *reply)
{
    auto deadline = deadline_in(c->timeout_ms);
    int k = 1;
    if (!c->stream) {
        c->sctx.reset(new grpc::ClientContext);
        add_token(c, c->sctx.get());
        c->stream = c->stub->AsyncEvaluateStream(c->sctx.get(), &c->cq, c);
        k = wait_op(c, deadline);
    }
    if (k == 1) {
        c->stream->Write(c->obs, c);
        k = wait_op(c, deadline);
    }
    if (k == 1) {
        c->stream->Read(reply, c);
        k = wait_op(c, deadline);
    }
    if (k == 1)
        return grpc::Status::OK;
    grpc::Status st = end_stream(c, k < 0);
    return k < 0 ? grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded") : st;
}

/* One decision: on the stream, else (UNIMPLEMENTED there: from now on) an Evaluate call. */
grpc::Status decide(Client *c, mlbc::Advice *reply)
{
    if (!c->unary) {
        grpc::Status st = stream_decision(c, reply);
        if (st.error_code() != grpc::StatusCode::UNIMPLEMENTED)
            return st;
        c->unary = true;
    }
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline_in(c->timeout_ms));
    add_token(c, &ctx);
    return c->stub->Evaluate(&ctx, c->obs, reply);
}

/* A client's channel: its security, our retries, replies of at most max_receive bytes. */
std::shared_ptr<grpc::Channel> client_channel(const Impl *c, size_t max_receive)
{
    grpc::ChannelArguments args;
    /* our retries, not gRPC's: their count and delays are what the options promise */
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, c->backoff_ms);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, c->backoff_ms);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, retry_delay_ms(c->backoff_ms, c->retries));
    args.SetMaxReceiveMessageSize((int)max_receive);
    std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
    if (!c->ca.empty()) {
        grpc::SslCredentialsOptions so;
        so.pem_root_certs = c->ca;
        so.pem_private_key = c->key;
        so.pem_cert_chain = c->cert;
        creds = grpc::SslCredentials(so);
    }
    return grpc::CreateCustomChannel(c->address, creds, args);
}

const void *Client::evaluate(mlbc_runner *r)
{
    Client *c = this;
    fill_observation(r, c);
    for (int attempt = 0;; attempt++) {
        mlbc::Advice reply;
        grpc::Status st = decide(c, &reply);
        if (st.ok()) {
            char err[200];
            if (take_advice(r, c, reply, err, sizeof err) == 0)
                return c->advice.data();
            runner_fail(r, "grpc %s: bad advice from the model server: %s",
                        c->address.c_str(), err);
            return NULL;
        }
        if (st.error_code() != grpc::StatusCode::UNAVAILABLE || attempt >= c->retries) {
            runner_fail(r, "grpc %s: Evaluate failed%s (%d attempt(s), %d ms deadline "
                        "each): %s", c->address.c_str(),
                        st.error_code() == grpc::StatusCode::UNAVAILABLE ?
                        ": no model server reachable" : "", attempt + 1, c->timeout_ms,
                        status_text(st).c_str());
            return NULL;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(retry_delay_ms(c->backoff_ms,
                                                                             attempt)));
    }
}

/* ---- servers: the training role and the model server ---------------------------------------- */

/* Whether the call's metadata hold the token (compared in constant time, so that its bytes
 * cannot be guessed one by one by timing): gRPC core's metadata processor, called on a
 * call's metadata before anything reads its request (state: "Bearer TOKEN"). */
void check_metadata(void *state, grpc_auth_context *, const grpc_metadata *md, size_t n,
                    grpc_process_auth_metadata_done_cb done, void *user_data)
{
    const std::string &want = *static_cast<const std::string *>(state);
    bool ok = false;
    for (size_t i = 0; i < n && !ok; i++) {
        const grpc_slice &k = md[i].key, &v = md[i].value;
        if (GRPC_SLICE_LENGTH(k) != 13 || memcmp(GRPC_SLICE_START_PTR(k), "authorization", 13) ||
            GRPC_SLICE_LENGTH(v) != want.size())
            continue;
        unsigned char diff = 0;
        for (size_t j = 0; j < want.size(); j++)
            diff |= (unsigned char)(GRPC_SLICE_START_PTR(v)[j] ^ want[j]);
        ok = diff == 0;
    }
    done(user_data, NULL, 0, NULL, 0, ok ? GRPC_STATUS_OK : GRPC_STATUS_UNAUTHENTICATED,
         ok ? NULL : "missing or wrong token");
}

/* Server credentials of gRPC's core, plain or TLS, with the token check: grpc++ takes a
 * metadata processor only with TLS (its plain credentials abort on one), the core on any. */
class TokenCredentials : public grpc::ServerCredentials {
  public:
    TokenCredentials(grpc_server_credentials *creds, const std::string &token) : creds_(creds)
    {
        if (token.empty() || !creds_)
            return;
        grpc_auth_metadata_processor proc = {check_metadata, [](void *state) {
            delete static_cast<std::string *>(state);
        }, new std::string("Bearer " + token)};
        grpc_server_credentials_set_auth_metadata_processor(creds_, proc);
    }
    ~TokenCredentials() override
    {
        if (creds_)
            grpc_server_credentials_release(creds_);
    }
    void SetAuthMetadataProcessor(const std::shared_ptr<grpc::AuthMetadataProcessor> &) override
    {
        throw std::logic_error("TokenCredentials has its own metadata processor");
    }

  private:
    int AddPortToServer(const std::string &addr, grpc_server *server) override
    {
        return grpc_server_add_http2_port(server, addr.c_str(), creds_);
    }
    grpc_server_credentials *creds_;
};

/* TLS (client certificates required with a CA) or plain, as configured, with the token. */
std::shared_ptr<grpc::ServerCredentials> server_credentials(const Impl *p)
{
    grpc_server_credentials *c;
    if (p->cert.empty()) {
        c = grpc_insecure_server_credentials_create();
    } else {
        grpc_ssl_pem_key_cert_pair pair = {p->key.c_str(), p->cert.c_str()};
        c = grpc_ssl_server_credentials_create_ex(
            p->ca.empty() ? NULL : p->ca.c_str(), &pair, 1,
            p->ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                          : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY, NULL);
    }
    return std::make_shared<TokenCredentials>(c, p->token);
}

/* The path of a unix: address ("unix:PATH" or "unix://ABSOLUTE"); "" for other ones. */
std::string socket_path(const std::string &addr)
{
    if (addr.compare(0, 5, "unix:"))
        return "";
    return addr.compare(5, 2, "//") ? addr.substr(5) : addr.substr(7);
}

/* A unix: server's binding, private and replacing nothing: gRPC binds inside BuildAndStart,
 * with the umask's mode, after removing any socket at the path. So it binds in a directory
 * of its own (0700) made beside the path; the socket, made 0600 there before anyone else
 * could reach it, is then linked to the path, which fails if anything is there. */
struct PrivateBind {
    std::string path, dir, temp;
    bool prepare(const std::string &address, char *err, size_t errlen)
    {
        path = socket_path(address);
        size_t slash = path.rfind('/');
        std::string tmpl = slash == std::string::npos ? "." : path.substr(0, slash);
        tmpl += "/.mlbc-grpc-XXXXXX";
        struct stat st;
        if (lstat(path.c_str(), &st) == 0 || errno != ENOENT) {
            set_err(err, errlen, "grpc: %s exists (or cannot be looked at): a unix socket is "
                    "made, never replaced; remove it if it is stale", path.c_str());
            return false;
        }
        if (!mkdtemp(&tmpl[0])) {
            set_err(err, errlen, "grpc: cannot make a directory beside %s: %s", path.c_str(),
                    strerror(errno));
            return false;
        }
        dir = tmpl;
        temp = dir + "/s";
        return true;
    }
    /* After the server started on "unix:" + temp: the socket at path, 0600; its identity
     * into sock. */
    bool publish(SocketFile *sock, char *err, size_t errlen)
    {
        struct stat st;
        bool ok = chmod(temp.c_str(), 0600) == 0 && link(temp.c_str(), path.c_str()) == 0;
        if (!ok) {
            set_err(err, errlen, "grpc: cannot make the socket %s: %s", path.c_str(),
                    strerror(errno));
        } else if (lstat(path.c_str(), &st) == 0) {
            sock->path = path;
            sock->dev = st.st_dev;
            sock->ino = st.st_ino;
        }
        return ok;
    }
    ~PrivateBind()
    {
        if (!dir.empty()) {
            unlink(temp.c_str());
            rmdir(dir.c_str());
        }
    }
};

/* Builds and starts l's server at p's address, its services registered by add, receiving
 * at most max_receive bytes per message; sets l->port (after port 0: the port got, which
 * p->address then names; 0 for unix:). False with err set. */
bool start_server(Impl *p, Listener *l, const std::function<void(grpc::ServerBuilder &)> &add,
                  size_t max_receive, char *err, size_t errlen)
{
    bool unix_socket = !p->address.compare(0, 5, "unix:");
    PrivateBind bind;
    if (unix_socket && !bind.prepare(p->address, err, errlen))
        return false;
    grpc::ServerBuilder b;
    b.AddListeningPort(unix_socket ? "unix:" + bind.temp : p->address, server_credentials(p),
                       &l->port);
    add(b);
    b.SetMaxReceiveMessageSize((int)max_receive);
    b.SetMaxSendMessageSize((int)kMaxObservation);
    b.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
    b.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 2);
    l->server = b.BuildAndStart();
    if (!l->server || l->port <= 0) {
        set_err(err, errlen, "grpc: cannot listen on %s (address in use, or not an address "
                "of this machine?)", p->address.c_str());
        return false;
    }
    size_t colon = p->address.rfind(':');
    if (unix_socket) {
        l->port = 0;                /* gRPC says 1 for a socket path: there is no port */
        return bind.publish(&p->socket, err, errlen);
    }
    if (p->address.substr(colon + 1) == "0")       /* errors name the port to dial */
        p->address = p->address.substr(0, colon + 1) + std::to_string(l->port);
    return true;
}

/* ---- server role -------------------------------------------------------------------------- */

struct Server : Impl, mlbc::Training::Service, Listener {
    mlbc_runner *r = nullptr;
    std::mutex mu;
    std::condition_variable cv;
    bool pending = false;           /* evaluate waits for advice on obs */
    bool delivered = false;         /* a Step has returned obs */
    bool answered = false;          /* a Step has put advice for obs */
    bool done = false;              /* the runner is being freed */
    bool gave_up = false;           /* evaluate timed out: the runner failed */

    grpc::Status Step(grpc::ServerContext *ctx, const mlbc::StepRequest *req,
                      mlbc::StepReply *reply) override;
    const void *evaluate(mlbc_runner *r) override;
    void stop() override;
};

grpc::Status Server::Step(grpc::ServerContext *ctx, const mlbc::StepRequest *req,
                          mlbc::StepReply *reply)
{
    std::unique_lock<std::mutex> lk(mu);
    if (gave_up)
        return grpc::Status(grpc::StatusCode::ABORTED, r->error);
    if (req->has_advice()) {
        if (!pending || !delivered || answered)
            return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                                "no observation is waiting for advice (Step without advice "
                                "fetches it)");
        char err[200];
        if (take_advice(r, this, req->advice(), err, sizeof err))
            return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, err);
        answered = true;
        cv.notify_all();
    }
    Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!(pending && !answered) && !done && !gave_up) {
        if (ctx->IsCancelled())
            return grpc::Status(grpc::StatusCode::CANCELLED, "the driver cancelled");
        if (Clock::now() >= deadline)
            return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "the compiler made no "
                                "observation within " + std::to_string(timeout_ms) + " ms");
        cv.wait_for(lk, std::chrono::milliseconds(kSliceMs));
    }
    if (gave_up)
        return grpc::Status(grpc::StatusCode::ABORTED, r->error);
    if (done) {
        reply->set_done(true);
        return grpc::Status::OK;
    }
    *reply->mutable_observation() = obs;
    delivered = true;
    return grpc::Status::OK;
}

const void *Server::evaluate(mlbc_runner *r)
{
    Server *s = this;
    std::unique_lock<std::mutex> lk(s->mu);
    fill_observation(r, s);
    s->pending = true;
    s->delivered = s->answered = false;
    s->cv.notify_all();
    Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(s->timeout_ms);
    if (!s->cv.wait_until(lk, deadline, [s] { return s->answered; })) {
        runner_fail(r, "grpc %s: no driver %s observation %lld (context \"%s\") within %d ms",
                    s->address.c_str(), s->delivered ? "answered" : "fetched",
                    (long long)s->obs.index(), s->obs.context().c_str(), s->timeout_ms);
        s->gave_up = true;
        s->cv.notify_all();
        return NULL;
    }
    s->pending = false;
    return s->advice.data();
}

/* The driver's last Step gets "done"; the server stops (its calls get a second). */
void Server::stop()
{
    if (!server)
        return;
    {
        std::lock_guard<std::mutex> lk(mu);
        done = true;
        cv.notify_all();
    }
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(kShutdownMs));
}

void destroy(mlbc_runner *r)
{
    Impl *p = static_cast<Impl *>(r->impl);
    p->stop();
    delete p;
    r->impl = NULL;
}

/* gRPC and the standard library report failures by exceptions: none may reach C. */
const void *evaluate(mlbc_runner *r)
{
    try {
        return static_cast<Impl *>(r->impl)->evaluate(r);
    } catch (const std::exception &e) {
        runner_fail(r, "grpc: %s", e.what());
    }
    return NULL;
}

const runner_ops grpc_ops = {evaluate, set_context, destroy, NULL};

mlbc_runner *make_runner(const char *address, const mlbc_tensor_spec *features, int n,
                         const mlbc_tensor_spec *advice, const mlbc_grpc_options &o,
                         char *err, size_t errlen)
{
    mlbc_runner *r = runner_new(&grpc_ops, features, n, advice, err, errlen);
    if (!r)
        return NULL;
    Impl *p = o.role == MLBC_GRPC_SERVER ? static_cast<Impl *>(new Server)
                                         : static_cast<Impl *>(new Client);
    r->impl = p;
    memset(r->bound, 1, (size_t)r->ninputs);
    p->advice.resize(mlbc_spec_bytes(advice) + 1);   /* + 1: a valid pointer when empty */
    bool ok = configure(p, address, o, err, errlen);
    if (ok && runner_own_unbound(r)) {
        set_err(err, errlen, "grpc: out of memory");
        ok = false;
    }
    if (ok)
        init_observation(r, p);
    if (ok && o.role == MLBC_GRPC_SERVER) {
        Server *s = static_cast<Server *>(p);
        s->r = r;
        /* a StepRequest is one advice tensor: refuse anything larger before it is parsed */
        ok = start_server(s, s, [s](grpc::ServerBuilder &b) { b.RegisterService(s); },
                          proto_advice_limit(advice) + 64, err, errlen);
    } else if (ok) {
        Client *c = static_cast<Client *>(p);
        c->stub = mlbc::Inference::NewStub(client_channel(c, proto_advice_limit(advice)));
    }
    if (!ok) {
        mlbc_runner_free(r);
        return NULL;
    }
    return r;
}

/* ---- an ML-Compiler-Bridge application service -------------------------------------------- */

/* The Bridge's gRPC runners are built on stubs protoc generates from each application's
 * .proto: a unary method whose request has the features as fields and whose reply has the
 * advice (inference mode), or the other way round (training mode). Here the service comes as
 * a FileDescriptorSet (protoc --descriptor_set_out --include_imports), its messages built at
 * run time (DynamicMessage), the method called with the generic stub or served by the
 * generic callback service. */
namespace pb = google::protobuf;

/* One value between a tensor and a message field. */
struct Num {
    bool real = false;          /* d holds it; else i (or u when big) */
    double d = 0;
    int64_t i = 0;
    uint64_t u = 0;
    bool big = false;           /* a uint64 above INT64_MAX */
};

Num tensor_num(int type, const void *data, int64_t k)
{
    const unsigned char *p = static_cast<const unsigned char *>(data);
    Num n;
    switch (type) {
    case MLBC_FLOAT: { float f; memcpy(&f, p + 4 * k, 4); n.real = true; n.d = f; break; }
    case MLBC_DOUBLE: memcpy(&n.d, p + 8 * k, 8); n.real = true; break;
    case MLBC_INT8: n.i = (int8_t)p[k]; break;
    case MLBC_UINT8: case MLBC_BOOL: n.i = p[k]; break;
    case MLBC_INT16: { int16_t v; memcpy(&v, p + 2 * k, 2); n.i = v; break; }
    case MLBC_UINT16: { uint16_t v; memcpy(&v, p + 2 * k, 2); n.i = v; break; }
    case MLBC_INT32: { int32_t v; memcpy(&v, p + 4 * k, 4); n.i = v; break; }
    case MLBC_UINT32: { uint32_t v; memcpy(&v, p + 4 * k, 4); n.i = v; break; }
    case MLBC_INT64: memcpy(&n.i, p + 8 * k, 8); break;
    default: memcpy(&n.u, p + 8 * k, 8); n.big = n.u > (uint64_t)INT64_MAX; n.i = (int64_t)n.u;
    }
    return n;
}

bool is_real(pb::FieldDescriptor::CppType t)
{
    return t == pb::FieldDescriptor::CPPTYPE_FLOAT || t == pb::FieldDescriptor::CPPTYPE_DOUBLE;
}

bool is_number(pb::FieldDescriptor::CppType t)
{
    return t != pb::FieldDescriptor::CPPTYPE_STRING && t != pb::FieldDescriptor::CPPTYPE_MESSAGE &&
           t != pb::FieldDescriptor::CPPTYPE_ENUM;
}

/* Whether integer n fits integer range [lo, hi] (hi of uint64: any non-negative). */
bool fits(const Num &n, int64_t lo, uint64_t hi)
{
    if (n.big)
        return hi == UINT64_MAX;
    return n.i >= lo && (n.i < 0 || (uint64_t)n.i <= hi);
}

/* Element k of field f of m as a Num (repeated: element k; else the value). */
Num field_num(const pb::Message &m, const pb::FieldDescriptor *f, int k)
{
    const pb::Reflection *r = m.GetReflection();
    bool rep = f->is_repeated();
    Num n;
    switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
        n.i = rep ? r->GetRepeatedInt32(m, f, k) : r->GetInt32(m, f); break;
    case pb::FieldDescriptor::CPPTYPE_INT64:
        n.i = rep ? r->GetRepeatedInt64(m, f, k) : r->GetInt64(m, f); break;
    case pb::FieldDescriptor::CPPTYPE_UINT32:
        n.i = rep ? r->GetRepeatedUInt32(m, f, k) : r->GetUInt32(m, f); break;
    case pb::FieldDescriptor::CPPTYPE_UINT64:
        n.u = rep ? r->GetRepeatedUInt64(m, f, k) : r->GetUInt64(m, f);
        n.big = n.u > (uint64_t)INT64_MAX;
        n.i = (int64_t)n.u;
        break;
    case pb::FieldDescriptor::CPPTYPE_BOOL:
        n.i = rep ? r->GetRepeatedBool(m, f, k) : r->GetBool(m, f); break;
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
        n.real = true;
        n.d = rep ? r->GetRepeatedFloat(m, f, k) : r->GetFloat(m, f);
        break;
    default:
        n.real = true;
        n.d = rep ? r->GetRepeatedDouble(m, f, k) : r->GetDouble(m, f);
    }
    return n;
}

/* n into field f of m (added when repeated): false when it does not fit the field. */
bool set_field(pb::Message *m, const pb::FieldDescriptor *f, const Num &n)
{
    const pb::Reflection *r = m->GetReflection();
    bool rep = f->is_repeated();
    switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
        rep ? r->AddFloat(m, f, n.real ? (float)n.d : n.big ? (float)n.u : (float)n.i)
            : r->SetFloat(m, f, n.real ? (float)n.d : n.big ? (float)n.u : (float)n.i);
        return true;
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
        rep ? r->AddDouble(m, f, n.real ? n.d : n.big ? (double)n.u : (double)n.i)
            : r->SetDouble(m, f, n.real ? n.d : n.big ? (double)n.u : (double)n.i);
        return true;
    case pb::FieldDescriptor::CPPTYPE_INT32:
        if (!fits(n, INT32_MIN, INT32_MAX))
            return false;
        rep ? r->AddInt32(m, f, (int32_t)n.i) : r->SetInt32(m, f, (int32_t)n.i);
        return true;
    case pb::FieldDescriptor::CPPTYPE_INT64:
        if (!fits(n, INT64_MIN, INT64_MAX))
            return false;
        rep ? r->AddInt64(m, f, n.i) : r->SetInt64(m, f, n.i);
        return true;
    case pb::FieldDescriptor::CPPTYPE_UINT32:
        if (!fits(n, 0, UINT32_MAX))
            return false;
        rep ? r->AddUInt32(m, f, (uint32_t)n.i) : r->SetUInt32(m, f, (uint32_t)n.i);
        return true;
    case pb::FieldDescriptor::CPPTYPE_UINT64:
        if (!fits(n, 0, UINT64_MAX))
            return false;
        rep ? r->AddUInt64(m, f, n.big ? n.u : (uint64_t)n.i)
            : r->SetUInt64(m, f, n.big ? n.u : (uint64_t)n.i);
        return true;
    default:                        /* bool */
        if (!fits(n, 0, 1))
            return false;
        rep ? r->AddBool(m, f, n.i != 0) : r->SetBool(m, f, n.i != 0);
        return true;
    }
}

/* n as element k of the advice (type t): false when it does not fit. */
bool set_advice_num(void *out, int t, int64_t k, const Num &n)
{
    unsigned char *p = static_cast<unsigned char *>(out);
    if (t == MLBC_FLOAT || t == MLBC_DOUBLE) {
        double d = n.real ? n.d : n.big ? (double)n.u : (double)n.i;
        if (t == MLBC_FLOAT) {
            float f = (float)d;
            memcpy(p + 4 * k, &f, 4);
        } else {
            memcpy(p + 8 * k, &d, 8);
        }
        return true;
    }
    static const struct { int type; int64_t lo; uint64_t hi; } range[] = {
        {MLBC_INT8, INT8_MIN, INT8_MAX}, {MLBC_UINT8, 0, UINT8_MAX}, {MLBC_BOOL, 0, 1},
        {MLBC_INT16, INT16_MIN, INT16_MAX}, {MLBC_UINT16, 0, UINT16_MAX},
        {MLBC_INT32, INT32_MIN, INT32_MAX}, {MLBC_UINT32, 0, UINT32_MAX},
        {MLBC_INT64, INT64_MIN, INT64_MAX}, {MLBC_UINT64, 0, UINT64_MAX}};
    for (const auto &g : range)
        if (g.type == t) {
            if (n.real || !fits(n, g.lo, g.hi))
                return false;
            uint64_t bits = n.big ? n.u : (uint64_t)n.i;
            size_t es = mlbc_type_size(t);
            if (es == 1) {
                p[k] = (unsigned char)bits;
            } else if (es == 2) {
                uint16_t v = (uint16_t)bits;
                memcpy(p + 2 * k, &v, 2);
            } else if (es == 4) {
                uint32_t v = (uint32_t)bits;
                memcpy(p + 4 * k, &v, 4);
            } else {
                memcpy(p + 8 * k, &bits, 8);
            }
            return true;
        }
    return false;
}

/* The application's method, its messages built at run time. The features go in one message's
 * fields by name, the advice in the other's first field: in the client role the request and
 * the reply, in the server role (the Bridge's training mode) the reply and the request. */
struct BridgeMethod {
    pb::DescriptorPool pool;
    std::vector<std::string> files;                 /* the set's, in its order */
    pb::DynamicMessageFactory factory{&pool};
    std::string path;                               /* "/package.Service/method" */
    std::unique_ptr<pb::Message> features_msg, advice_msg;
    std::vector<const pb::FieldDescriptor *> field; /* per feature */
    const pb::FieldDescriptor *advice_field = nullptr;
    size_t max_advice = 0;                          /* an advice message's bytes, at most */
};

struct BridgeClient : Impl, BridgeMethod {
    std::unique_ptr<grpc::GenericStub> stub;
    grpc::CompletionQueue cq;
    const void *evaluate(mlbc_runner *r) override;
    ~BridgeClient() override
    {
        cq.Shutdown();
        void *tag;
        bool ok;
        while (cq.Next(&tag, &ok)) {
        }
    }
};

/* The descriptor set's files into c's pool; false with a message naming the file. */
bool load_descriptors(BridgeMethod *c, const char *path, char *err, size_t errlen)
{
    if (!path) {
        set_err(err, errlen, "grpc: no descriptor set");
        return false;
    }
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    pb::FileDescriptorSet set;
    if (!in || !set.ParseFromString(ss.str()) || set.file_size() == 0) {
        set_err(err, errlen, "grpc: %s is not a FileDescriptorSet (make one with protoc "
                "--descriptor_set_out=FILE --include_imports APP.proto)", path);
        return false;
    }
    for (const pb::FileDescriptorProto &f : set.file()) {
        if (!c->pool.BuildFile(f)) {
            set_err(err, errlen, "grpc: %s: file %s of the set does not build (a missing "
                    "import? use --include_imports)", path, f.name().c_str());
            return false;
        }
        c->files.push_back(f.name());
    }
    return true;
}

/* The method: "Service/method" or "package.Service/method", or NULL: the first method of the
 * set's first service. Unary only, as the Bridge's runners call it. */
const pb::MethodDescriptor *find_method(const BridgeMethod *c, const char *path,
                                        const char *method, char *err, size_t errlen)
{
    const pb::MethodDescriptor *m = nullptr;
    for (size_t i = c->files.size(); i-- > 0 && !m;) {      /* the named file comes last */
        const pb::FileDescriptor *f = c->pool.FindFileByName(c->files[i]);
        for (int s = 0; f && s < f->service_count() && !m; s++) {
            const pb::ServiceDescriptor *sv = f->service(s);
            for (int k = 0; k < sv->method_count() && !m; k++) {
                std::string full = sv->full_name() + "/" + sv->method(k)->name();
                std::string shrt = sv->name() + "/" + sv->method(k)->name();
                if (!method || full == method || shrt == method)
                    m = sv->method(k);
            }
        }
    }
    if (!m)
        set_err(err, errlen, "grpc: %s has no %s%s", path, method ? "method " : "service",
                method ? method : "");
    else if (m->client_streaming() || m->server_streaming()) {
        set_err(err, errlen, "grpc: %s is a streaming method; the Bridge's runners call a "
                "unary one", m->full_name().c_str());
        m = nullptr;
    }
    return m;
}

/* Features to fields of one message by name, the advice from the other's first field (the
 * reply's and the request's for a server): false with a message naming what does not fit. */
bool bind_fields(BridgeMethod *c, const mlbc_runner *r, const pb::MethodDescriptor *m,
                 bool server, char *err, size_t errlen)
{
    const pb::Descriptor *fm = server ? m->output_type() : m->input_type();
    const pb::Descriptor *am = server ? m->input_type() : m->output_type();
    for (int i = 0; i < r->ninputs; i++) {
        const mlbc_tensor_spec &s = r->specs[i];
        const pb::FieldDescriptor *f = fm->FindFieldByName(s.name);
        bool real = s.type == MLBC_FLOAT || s.type == MLBC_DOUBLE;
        const char *why = !f ? "no field of that name"
            : !is_number(f->cpp_type()) ? "the field is not a number or a bool"
            : real && !is_real(f->cpp_type()) ? "a float feature for an integer field"
            : !f->is_repeated() && mlbc_spec_count(&s) != 1 ? "several values for a singular "
                                                               "field" : nullptr;
        if (why) {
            set_err(err, errlen, "grpc: feature '%s' does not fit %s: %s", s.name,
                    fm->full_name().c_str(), why);
            return false;
        }
        c->field.push_back(f);
    }
    bool real = r->advice.type == MLBC_FLOAT || r->advice.type == MLBC_DOUBLE;
    const pb::FieldDescriptor *f = am->field_count() ? am->field(0) : nullptr;
    const char *why = !f ? "it has no field"
        : !is_number(f->cpp_type()) ? "its first field is not a number or a bool"
        : !real && is_real(f->cpp_type()) ? "a real field for integer advice"
        : !f->is_repeated() && mlbc_spec_count(&r->advice) != 1 ? "a singular field for "
                                                                  "advice of several values"
        : nullptr;
    if (why) {
        set_err(err, errlen, "grpc: the advice does not fit %s: %s", am->full_name().c_str(),
                why);
        return false;
    }
    c->advice_field = f;
    c->path = "/" + m->service()->full_name() + "/" + m->name();
    c->features_msg.reset(c->factory.GetPrototype(fm)->New());
    c->advice_msg.reset(c->factory.GetPrototype(am)->New());
    c->max_advice = 64 + (size_t)mlbc_spec_count(&r->advice) * 11;    /* varints: 10 + tag */
    return true;
}

/* The features message from the inputs: "", or why a value does not fit its field. */
std::string fill_features(const mlbc_runner *r, BridgeMethod *c)
{
    c->features_msg->Clear();
    for (int i = 0; i < r->ninputs; i++)
        for (int64_t k = 0, n = mlbc_spec_count(&r->specs[i]); k < n; k++)
            if (!set_field(c->features_msg.get(), c->field[i],
                           tensor_num(r->specs[i].type, r->inputs[i], k))) {
                char why[300];
                set_err(why, sizeof why, "feature '%s' value %lld does not fit field %s",
                        r->specs[i].name, (long long)k, c->field[i]->full_name().c_str());
                return why;
            }
    return "";
}

/* The advice message in buf, its first field into out (the advice's bytes): 0, or -1 with a
 * message. That field in another wire type (kept as an unknown field by the parser) is
 * advice of another type, not a missing value. */
int take_bridge_advice(const mlbc_runner *r, BridgeMethod *c, const grpc::ByteBuffer &buf,
                       void *out, char *err, size_t errlen)
{
    std::vector<grpc::Slice> slices;
    std::string bytes;
    if (!buf.Dump(&slices).ok()) {
        set_err(err, errlen, "unreadable message");
        return -1;
    }
    for (const grpc::Slice &s : slices)
        bytes.append(reinterpret_cast<const char *>(s.begin()), s.size());
    pb::Message *m = c->advice_msg.get();
    const pb::FieldDescriptor *f = c->advice_field;
    m->Clear();
    if (!m->ParseFromString(bytes)) {
        set_err(err, errlen, "the message is not a %s", m->GetTypeName().c_str());
        return -1;
    }
    const pb::UnknownFieldSet &unknown = m->GetReflection()->GetUnknownFields(*m);
    for (int i = 0; i < unknown.field_count(); i++)
        if (unknown.field(i).number() == f->number()) {
            set_err(err, errlen, "%s comes in another wire type: not a %s",
                    f->full_name().c_str(), f->type_name());
            return -1;
        }
    int64_t n = f->is_repeated() ? m->GetReflection()->FieldSize(*m, f) : 1;
    if (n != mlbc_spec_count(&r->advice)) {
        set_err(err, errlen, "%s has %lld value(s), the advice %lld", f->full_name().c_str(),
                (long long)n, (long long)mlbc_spec_count(&r->advice));
        return -1;
    }
    for (int64_t k = 0; k < n; k++)
        if (!set_advice_num(out, r->advice.type, k, field_num(*m, f, (int)k))) {
            set_err(err, errlen, "%s value %lld does not fit the advice's type",
                    f->full_name().c_str(), (long long)k);
            return -1;
        }
    return 0;
}

/* One call: OK with the reply's bytes in out, or the status. */
grpc::Status bridge_call(BridgeClient *c, const grpc::ByteBuffer &req, grpc::ByteBuffer *out)
{
    grpc::ClientContext ctx;
    ctx.set_deadline(deadline_in(c->timeout_ms));
    add_token(c, &ctx);
    grpc::Status st;
    auto call = c->stub->PrepareUnaryCall(&ctx, c->path, req, &c->cq);
    call->StartCall();
    call->Finish(out, &st, c);
    void *tag;
    bool ok;
    if (c->cq.AsyncNext(&tag, &ok, deadline_in(c->timeout_ms + kShutdownMs)) !=
        grpc::CompletionQueue::GOT_EVENT) {
        ctx.TryCancel();
        c->cq.Next(&tag, &ok);
        return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded");
    }
    return st;
}

const void *BridgeClient::evaluate(mlbc_runner *r)
{
    std::string why = fill_features(r, this), msg;
    if (!why.empty()) {
        runner_fail(r, "grpc %s: %s", address.c_str(), why.c_str());
        return NULL;
    }
    features_msg->SerializeToString(&msg);
    grpc::Slice slice(msg);
    grpc::ByteBuffer req(&slice, 1);
    for (int attempt = 0;; attempt++) {
        grpc::ByteBuffer out;
        grpc::Status st = bridge_call(this, req, &out);
        if (st.ok()) {
            char err[200];
            if (take_bridge_advice(r, this, out, &advice[0], err, sizeof err) == 0)
                return advice.data();
            runner_fail(r, "grpc %s: bad reply to %s: %s", address.c_str(), path.c_str(), err);
            return NULL;
        }
        if (st.error_code() != grpc::StatusCode::UNAVAILABLE || attempt >= retries) {
            runner_fail(r, "grpc %s: %s failed (%d attempt(s), %d ms deadline each): %s",
                        address.c_str(), path.c_str(), attempt + 1, timeout_ms,
                        status_text(st).c_str());
            return NULL;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(retry_delay_ms(backoff_ms,
                                                                             attempt)));
    }
}

/* ---- the server role: the Bridge's training mode ----------------------------------------- */

/* In the Bridge's training mode (gRPCModelRunner as a server) the compiler serves the method
 * and the trainer calls it: a request carries advice, its reply the next observation. One
 * call at a time is the trainer's. evaluate answers the waiting call with the features, then
 * waits for the next call, returns its advice and leaves it waiting for the next evaluate;
 * the first call only opens the episode. The method is known at run time only, so calls come
 * to a generic callback service; a monitor (mu, cv) joins them to evaluate, as Step's does.
 * Finish is never called with mu held: gRPC may run a reaction inline, and they take mu. */
const char kBridgeDone[] = "done: the compiler has made its last decision";

struct BridgeServer;

/* One call of the trainer; it deletes itself when gRPC is done with it. */
struct BridgeCall : grpc::ServerGenericBidiReactor {
    BridgeServer *s;
    grpc::ByteBuffer in, out;
    bool ended = false;         /* (s->mu) whoever set it calls Finish, once */
    explicit BridgeCall(BridgeServer *server) : s(server) { StartRead(&in); }
    void OnReadDone(bool ok) override;
    void OnCancel() override;
    void OnDone() override { delete this; }
};

struct BridgeServer : Impl, BridgeMethod, grpc::CallbackGenericService, Listener {
    mlbc_runner *r = nullptr;
    std::mutex mu;
    std::condition_variable cv;
    BridgeCall *call = nullptr;     /* the trainer's call the compiler answers next */
    Clock::time_point due;          /* when the watchdog ends it unanswered */
    std::string gone;               /* why it ended unanswered */
    std::string failure;            /* the runner failed: calls end ABORTED with this */
    bool done = false;              /* the runner is being freed */
    int64_t answered = 0;           /* observations sent */
    std::thread watchdog;

    grpc::ServerGenericBidiReactor *CreateReactor(
        grpc::GenericCallbackServerContext *ctx) override;
    const void *evaluate(mlbc_runner *r) override;
    void stop() override;
    void watch();
    BridgeCall *take();
    bool await_call(std::unique_lock<std::mutex> &lk, const std::string &what);
    const void *fail(std::unique_lock<std::mutex> &lk, grpc::StatusCode code,
                     const std::string &msg);
};

grpc::ServerGenericBidiReactor *BridgeServer::CreateReactor(
    grpc::GenericCallbackServerContext *ctx)
{
    if (ctx->method() != path)
        return grpc::CallbackGenericService::CreateReactor(ctx);       /* UNIMPLEMENTED */
    return new BridgeCall(this);
}

/* Its request has come (ok), or the call ended without one. It waits for the compiler,
 * unless another call does or the runner failed or is done: then it ends at once, saying
 * which. */
void BridgeCall::OnReadDone(bool ok)
{
    grpc::Status st;
    {
        std::lock_guard<std::mutex> lk(s->mu);
        if (ended)
            return;
        if (ok && !s->done && s->failure.empty() && !s->call) {
            s->call = this;
            s->due = Clock::now() + std::chrono::milliseconds(s->timeout_ms);
            s->gone.clear();
            s->cv.notify_all();
            return;
        }
        st = !ok ? grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no request")
           : s->done ? grpc::Status(grpc::StatusCode::OUT_OF_RANGE, kBridgeDone)
           : !s->failure.empty() ? grpc::Status(grpc::StatusCode::ABORTED, s->failure)
           : grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "another call of the "
                          "trainer waits for the compiler: one call at a time");
        ended = true;
    }
    Finish(st);
}

/* The trainer cancelled, its deadline passed or its connection broke. */
void BridgeCall::OnCancel()
{
    {
        std::lock_guard<std::mutex> lk(s->mu);
        if (s->call == this) {
            s->call = nullptr;
            s->gone = "the trainer's call to " + s->path + " was cancelled (or the trainer "
                      "went away) before observation " + std::to_string(s->answered);
            s->cv.notify_all();
        }
        if (ended)
            return;
        ended = true;
    }
    Finish(grpc::Status::CANCELLED);
}

/* The waiting call, now the caller's to Finish (mu held). */
BridgeCall *BridgeServer::take()
{
    BridgeCall *c = call;
    call = nullptr;
    if (c)
        c->ended = true;
    return c;
}

/* Ends a call the compiler leaves unanswered for timeout_ms, as a Step waits at most that
 * long for an observation: a trainer without a deadline of its own (the Bridge's Python sets
 * none) learns that the compiler stalls. */
void BridgeServer::watch()
{
    std::unique_lock<std::mutex> lk(mu);
    while (!done) {
        if (!call) {
            cv.wait(lk);
            continue;
        }
        if (Clock::now() < due) {
            cv.wait_until(lk, due);
            continue;
        }
        std::string msg = "the compiler made no observation within " +
                          std::to_string(timeout_ms) + " ms";
        gone = msg + " of the trainer's call to " + path + " (it ended DEADLINE_EXCEEDED)";
        BridgeCall *c = take();
        lk.unlock();
        c->Finish(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, msg));
        lk.lock();
    }
}

/* The runner fails for good with msg; the waiting call, if any, ends with code and msg.
 * Releases mu (held by lk). NULL. */
const void *BridgeServer::fail(std::unique_lock<std::mutex> &lk, grpc::StatusCode code,
                               const std::string &msg)
{
    runner_fail(r, "%s", msg.c_str());
    failure = msg;
    BridgeCall *c = take();
    lk.unlock();
    if (c)
        c->Finish(grpc::Status(code, msg));
    return NULL;
}

/* Waits up to timeout_ms for a call of the trainer (what: the one awaited): true once one
 * waits, else the runner fails saying why (mu held by lk). */
bool BridgeServer::await_call(std::unique_lock<std::mutex> &lk, const std::string &what)
{
    cv.wait_until(lk, Clock::now() + std::chrono::milliseconds(timeout_ms),
                  [this] { return call || !gone.empty(); });
    if (call)
        return true;
    fail(lk, grpc::StatusCode::ABORTED, "grpc " + address + ": " + (gone.empty() ?
         "no call to " + path + " " + what + " within " + std::to_string(timeout_ms) + " ms"
         : gone));
    return false;
}

const void *BridgeServer::evaluate(mlbc_runner *r)
{
    std::string why = fill_features(r, this), bytes;
    features_msg->SerializeToString(&bytes);
    std::unique_lock<std::mutex> lk(mu);
    if (!why.empty())
        return fail(lk, grpc::StatusCode::ABORTED, "grpc " + address + ": " + why);
    std::string k = std::to_string(answered);
    if (!await_call(lk, "for observation " + k))
        return NULL;
    BridgeCall *c = take();
    answered++;
    lk.unlock();
    grpc::Slice slice(bytes);
    c->out = grpc::ByteBuffer(&slice, 1);
    c->StartWriteAndFinish(&c->out, grpc::WriteOptions(), grpc::Status::OK);
    lk.lock();
    if (!await_call(lk, "with advice for observation " + k))
        return NULL;
    char err[200];
    if (take_bridge_advice(r, this, call->in, &advice[0], err, sizeof err))
        return fail(lk, grpc::StatusCode::INVALID_ARGUMENT, "grpc " + address +
                    ": bad request to " + path + ": " + err);
    due = Clock::now() + std::chrono::milliseconds(timeout_ms);
    return advice.data();
}

/* The trainer's waiting call ends OUT_OF_RANGE (kBridgeDone): the episode is over. Then the
 * server stops (calls in progress get a second). */
void BridgeServer::stop()
{
    BridgeCall *c;
    {
        std::lock_guard<std::mutex> lk(mu);
        done = true;
        c = take();
        cv.notify_all();
    }
    if (watchdog.joinable())
        watchdog.join();
    if (c)
        c->Finish(grpc::Status(grpc::StatusCode::OUT_OF_RANGE, kBridgeDone));
    if (server)
        server->Shutdown(std::chrono::system_clock::now() +
                         std::chrono::milliseconds(kShutdownMs));
}

/* Listens (requests of at most max_message bytes, else advice-sized), and the watchdog. */
bool start_bridge_server(BridgeServer *s, mlbc_runner *r, const mlbc_grpc_options &o,
                         char *err, size_t errlen)
{
    s->r = r;
    size_t limit = o.max_message > 0 ? (size_t)o.max_message : s->max_advice;
    if (!start_server(s, s, [s](grpc::ServerBuilder &b) {
            b.RegisterCallbackGenericService(s);
        }, limit, err, errlen))
        return false;
    s->watchdog = std::thread([s] { s->watch(); });
    return true;
}

mlbc_runner *make_bridge_runner(const char *address, const char *descriptors,
                                const char *method, const mlbc_tensor_spec *features, int n,
                                const mlbc_tensor_spec *advice, const mlbc_grpc_options &o,
                                char *err, size_t errlen)
{
    mlbc_runner *r = runner_new(&grpc_ops, features, n, advice, err, errlen);
    if (!r)
        return NULL;
    bool serve = o.role == MLBC_GRPC_SERVER;
    BridgeServer *s = serve ? new BridgeServer : nullptr;
    BridgeClient *c = serve ? nullptr : new BridgeClient;
    Impl *p = serve ? static_cast<Impl *>(s) : c;
    BridgeMethod *m = serve ? static_cast<BridgeMethod *>(s) : c;
    r->impl = p;
    memset(r->bound, 1, (size_t)r->ninputs);
    p->advice.resize(mlbc_spec_bytes(advice) + 1);
    const pb::MethodDescriptor *md = nullptr;
    bool ok = configure(p, address, o, err, errlen) &&
              load_descriptors(m, descriptors, err, errlen) &&
              (md = find_method(m, descriptors, method, err, errlen)) &&
              bind_fields(m, r, md, serve, err, errlen);
    if (ok && runner_own_unbound(r)) {
        set_err(err, errlen, "grpc: out of memory");
        ok = false;
    }
    if (ok && serve)
        ok = start_bridge_server(s, r, o, err, errlen);
    else if (ok)
        c->stub.reset(new grpc::GenericStub(client_channel(c, c->max_advice)));
    if (!ok) {
        mlbc_runner_free(r);
        return NULL;
    }
    return r;
}

/* ---- model server ------------------------------------------------------------------------ */

const size_t kMaxBindings = 64;     /* distinct feature sets kept bound (LRU beyond) */
const int kMaxFeatures = 4096;

/* A release runner bound to a feature set, with the bytes of its features (what it may
 * hold: those the model does not use are buffers of the runner's own) and its last use. */
struct Binding {
    mlbc_runner *r;
    size_t bytes;
    uint64_t used;
};

struct ModelServer : Impl, mlbc::Inference::Service, Listener {
    const mlbc_model_desc *model = nullptr;
    mlbc_grpc_policy policy = nullptr;      /* instead of a model (mlbc_grpc_serve_policy) */
    void *user = nullptr;
    std::string feed, fetch, selector;      /* ropt's strings, owned */
    mlbc_release_options ropt = {};
    mlbc_tensor_spec advice_spec = {};
    std::mutex mu;                  /* one call at a time: the model contexts are not shared */
    std::map<std::string, Binding> runners;         /* release runners by feature set */
    size_t held = 0;                /* their bytes: at most max_message */
    uint64_t uses = 0;
    long calls = 0, streams = 0;

    grpc::Status Evaluate(grpc::ServerContext *ctx, const mlbc::Observation *req,
                          mlbc::Advice *reply) override;
    grpc::Status EvaluateStream(
        grpc::ServerContext *ctx,
        grpc::ServerReaderWriter<mlbc::Advice, mlbc::Observation> *stream) override;
    grpc::Status answer(const mlbc::Observation &req, mlbc::Advice *reply);
    grpc::Status ask_policy(const mlbc::Observation &req,
                            const std::vector<mlbc_tensor_spec> &specs, mlbc::Advice *reply);
    mlbc_runner *bind(const std::vector<mlbc_tensor_spec> &specs, const std::string &key,
                      char *err, size_t errlen);
    void make_room(size_t bytes);
    ~ModelServer()
    {
        if (server)
            server->Shutdown(std::chrono::system_clock::now() +
                             std::chrono::milliseconds(kShutdownMs));
        for (auto &kv : runners)
            mlbc_runner_free(kv.second.r);
    }
};

/* The request's features as checked specs (names, types, shapes, data sizes) and a key
 * naming the set; 0, or -1 with err set. */
int request_specs(const mlbc::Observation &req, std::vector<mlbc_tensor_spec> *specs,
                  std::string *key, char *err, size_t errlen)
{
    if (req.features_size() > kMaxFeatures) {
        set_err(err, errlen, "%d features (at most %d)", req.features_size(), kMaxFeatures);
        return -1;
    }
    for (const mlbc::Tensor &t : req.features()) {
        mlbc_tensor_spec s = {};
        if (t.name().size() >= sizeof s.name || t.name().find('\0') != std::string::npos ||
            t.shape_size() > MLBC_SPEC_MAX_RANK) {
            set_err(err, errlen, "feature %zu: name longer than %d bytes or with a NUL, or "
                    "rank above %d", specs->size(), (int)sizeof s.name - 1, MLBC_SPEC_MAX_RANK);
            return -1;
        }
        memcpy(s.name, t.name().data(), t.name().size());
        s.type = t.type();
        s.rank = t.shape_size();
        for (int d = 0; d < s.rank; d++)
            s.shape[d] = t.shape(d);
        if (spec_check(&s, err, errlen))
            return -1;
        if (mlbc_spec_bytes(&s) != t.data().size()) {
            set_err(err, errlen, "feature %s: %zu bytes of data for its %zu", s.name,
                    t.data().size(), mlbc_spec_bytes(&s));
            return -1;
        }
        specs->push_back(s);
        *key += t.name() + '\0' + std::to_string(s.type);
        for (int d = 0; d < s.rank; d++)
            *key += ',' + std::to_string(s.shape[d]);
        *key += ';';
    }
    return 0;
}

/* The advice tensor of spec s over data (mlbc_spec_bytes(&s) bytes) into reply. */
void set_advice(mlbc::Advice *reply, const mlbc_tensor_spec &s, const void *data)
{
    mlbc::Tensor *t = reply->mutable_advice();
    t->set_name(s.name);
    t->set_type(s.type);
    for (int d = 0; d < s.rank; d++)
        t->add_shape(s.shape[d]);
    t->set_data(data, mlbc_spec_bytes(&s));
}

/* Frees the least recently used runners until one of bytes more fits: clients choose the
 * feature sets, so what their runners hold is bounded here, not by their good manners. A
 * set's bytes come in one message, so that they fit in max_message once all are gone. */
void ModelServer::make_room(size_t bytes)
{
    while (!runners.empty() &&
           (runners.size() >= kMaxBindings || held + bytes > (size_t)max_message)) {
        auto lru = runners.begin();
        for (auto it = runners.begin(); it != runners.end(); ++it)
            if (it->second.used < lru->second.used)
                lru = it;
        mlbc_runner_free(lru->second.r);
        held -= lru->second.bytes;
        runners.erase(lru);
    }
}

/* The release runner for a feature set, bound by name as mlbc-serve binds a session. */
mlbc_runner *ModelServer::bind(const std::vector<mlbc_tensor_spec> &specs,
                               const std::string &key, char *err, size_t errlen)
{
    auto it = runners.find(key);
    if (it != runners.end()) {
        it->second.used = ++uses;
        return it->second.r;
    }
    if (mlbc_model_check(model, specs.data(), (int)specs.size(), &advice_spec, &ropt, err,
                         errlen))
        return NULL;
    size_t bytes = 0;
    for (const mlbc_tensor_spec &s : specs)
        bytes += mlbc_spec_bytes(&s);
    make_room(bytes);
    mlbc_runner *r = mlbc_runner_release(model, specs.data(), (int)specs.size(), &advice_spec,
                                         &ropt, err, errlen);
    if (r) {
        runners[key] = Binding{r, bytes, ++uses};
        held += bytes;
    }
    return r;
}

grpc::Status ModelServer::Evaluate(grpc::ServerContext *, const mlbc::Observation *req,
                                   mlbc::Advice *reply)
{
    return answer(*req, reply);
}

/* A session's decisions in order; the first one that fails ends the call with its status.
 * The stream has this handler's thread (the sync server adds threads as streams open). */
grpc::Status ModelServer::EvaluateStream(
    grpc::ServerContext *, grpc::ServerReaderWriter<mlbc::Advice, mlbc::Observation> *stream)
{
    {
        std::lock_guard<std::mutex> lk(mu);
        streams++;
    }
    mlbc::Observation req;
    while (stream->Read(&req)) {
        mlbc::Advice reply;
        grpc::Status st = answer(req, &reply);
        if (!st.ok())
            return st;
        if (!stream->Write(reply))
            break;
    }
    return grpc::Status::OK;
}

/* One decision, of the compiled model or the policy: the advice, or why not. */
grpc::Status ModelServer::answer(const mlbc::Observation &req, mlbc::Advice *reply)
{
    std::vector<mlbc_tensor_spec> specs;
    std::string key;
    char err[512];
    if (request_specs(req, &specs, &key, err, sizeof err))
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, err);
    std::lock_guard<std::mutex> lk(mu);
    if (policy)
        return ask_policy(req, specs, reply);
    mlbc_runner *r = bind(specs, key, err, sizeof err);
    if (!r)
        return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                            std::string("the model does not fit these features: ") + err);
    for (size_t i = 0; i < specs.size(); i++)
        if (void *buf = mlbc_runner_input(r, (int)i))
            memcpy(buf, req.features((int)i).data().data(), mlbc_spec_bytes(&specs[i]));
    mlbc_runner_set_context(r, req.context().c_str());
    const void *a = mlbc_runner_evaluate(r);
    if (!a)
        return grpc::Status(grpc::StatusCode::INTERNAL,
                            std::string("the model failed: ") + mlbc_runner_error(r));
    set_advice(reply, advice_spec, a);
    calls++;
    return grpc::Status::OK;
}

/* The callback's decision (mu held): the request's checked features, in its order. */
grpc::Status ModelServer::ask_policy(const mlbc::Observation &req,
                                     const std::vector<mlbc_tensor_spec> &specs,
                                     mlbc::Advice *reply)
{
    std::vector<const void *> data;
    for (const mlbc::Tensor &t : req.features())
        data.push_back(t.data().data());
    mlbc_grpc_decision d = {req.context().c_str(), req.index(), (int)specs.size(),
                            specs.data(), data.data()};
    std::string out(mlbc_spec_bytes(&advice_spec) + 1, '\0');     /* + 1: never empty */
    char err[512] = "";
    if (policy(user, &d, &out[0], err, sizeof err))
        return grpc::Status(grpc::StatusCode::INTERNAL,
                            std::string("the policy failed: ") + (*err ? err : "no reason given"));
    set_advice(reply, advice_spec, out.data());
    calls++;
    return grpc::Status::OK;
}

/* The advice: the model's result named advice (fetch prefix first), else its first. */
bool choose_advice(ModelServer *m, const char *advice, char *err, size_t errlen)
{
    const mlbc_model_desc *d = m->model;
    int k = d->num_results > 0 ? 0 : -1;
    if (advice) {
        std::string prefixed = m->fetch + advice;
        k = m->fetch.empty() ? -1 : d->lookup_result_index(prefixed.c_str());
        if (k < 0)
            k = d->lookup_result_index(advice);
    }
    if (k < 0) {
        set_err(err, errlen, "grpc: the model has no result %s", advice ? advice : "at all");
        return false;
    }
    if (d->results[k].rank > MLBC_SPEC_MAX_RANK) {
        set_err(err, errlen, "grpc: the model's result %s has rank %d (at most %d)",
                d->results[k].name, d->results[k].rank, MLBC_SPEC_MAX_RANK);
        return false;
    }
    const mlbc_tensor_desc &t = d->results[k];
    m->advice_spec = mlbc_spec(advice ? advice : t.name, t.dtype, t.rank, t.shape);
    return true;
}

/* A model server at address, made ready by setup (false: it failed, with err set), then
 * listening; NULL with err set if anything fails. */
mlbc_grpc_model_server *listen_model_server(const char *address, const mlbc_grpc_options *opt,
                                            const std::function<bool(ModelServer *)> &setup,
                                            char *err, size_t errlen)
{
    mlbc_grpc_options o = {};
    if (opt)
        o = *opt;
    o.role = MLBC_GRPC_SERVER;
    ModelServer *m = nullptr;
    try {
        m = new ModelServer;
        if (configure(m, address, o, err, errlen) && setup(m) &&
            start_server(m, m, [m](grpc::ServerBuilder &b) { b.RegisterService(m); },
                         (size_t)m->max_message, err, errlen))
            return reinterpret_cast<mlbc_grpc_model_server *>(m);
    } catch (const std::exception &e) {
        set_err(err, errlen, "grpc: %s", e.what());
    }
    delete m;
    return NULL;
}

}  // namespace

extern "C" mlbc_grpc_model_server *mlbc_grpc_serve_model(const char *address,
        const mlbc_model_desc *model, const char *advice, const mlbc_release_options *ropt,
        const mlbc_grpc_options *opt, char *err, size_t errlen)
{
    return listen_model_server(address, opt, [&](ModelServer *m) {
        m->model = model;
        if (ropt) {
            m->feed = ropt->feed_prefix ? ropt->feed_prefix : "";
            m->fetch = ropt->fetch_prefix ? ropt->fetch_prefix : "";
            m->selector = ropt->model_selector ? ropt->model_selector : "";
            m->ropt.feed_prefix = ropt->feed_prefix ? m->feed.c_str() : NULL;
            m->ropt.fetch_prefix = ropt->fetch_prefix ? m->fetch.c_str() : NULL;
            m->ropt.model_selector = ropt->model_selector ? m->selector.c_str() : NULL;
        }
        return choose_advice(m, advice, err, errlen);
    }, err, errlen);
}

extern "C" mlbc_grpc_model_server *mlbc_grpc_serve_policy(const char *address,
        const mlbc_tensor_spec *advice, mlbc_grpc_policy policy, void *user,
        const mlbc_grpc_options *opt, char *err, size_t errlen)
{
    return listen_model_server(address, opt, [&](ModelServer *m) {
        if (!advice || !policy) {
            set_err(err, errlen, "grpc: no advice spec or no policy");
            return false;
        }
        m->policy = policy;
        m->user = user;
        m->advice_spec = *advice;
        return spec_check(advice, err, errlen) == 0;
    }, err, errlen);
}

extern "C" int mlbc_grpc_model_server_port(const mlbc_grpc_model_server *s)
{
    return reinterpret_cast<const ModelServer *>(s)->port;
}

extern "C" long mlbc_grpc_model_server_calls(mlbc_grpc_model_server *s)
{
    ModelServer *m = reinterpret_cast<ModelServer *>(s);
    std::lock_guard<std::mutex> lk(m->mu);
    return m->calls;
}

extern "C" long mlbc_grpc_model_server_streams(mlbc_grpc_model_server *s)
{
    ModelServer *m = reinterpret_cast<ModelServer *>(s);
    std::lock_guard<std::mutex> lk(m->mu);
    return m->streams;
}

extern "C" void mlbc_grpc_model_server_free(mlbc_grpc_model_server *s)
{
    delete reinterpret_cast<ModelServer *>(s);
}

/* make()'s runner; an exception becomes a message in err */
template <class F> mlbc_runner *guarded(char *err, size_t errlen, F make)
{
    try {
        return make();
    } catch (const std::exception &e) {
        set_err(err, errlen, "grpc: %s", e.what());
    }
    return NULL;
}

extern "C" mlbc_runner *mlbc_runner_grpc(const char *address,
                                         const mlbc_tensor_spec *features, int nfeatures,
                                         const mlbc_tensor_spec *advice,
                                         const mlbc_grpc_options *opt, char *err,
                                         size_t errlen)
{
    mlbc_grpc_options o = opt ? *opt : mlbc_grpc_options{};
    return guarded(err, errlen, [&] {
        return make_runner(address, features, nfeatures, advice, o, err, errlen);
    });
}

extern "C" mlbc_runner *mlbc_runner_grpc_bridge(const char *address, const char *descriptors,
                                                const char *method,
                                                const mlbc_tensor_spec *features,
                                                int nfeatures, const mlbc_tensor_spec *advice,
                                                const mlbc_grpc_options *opt, char *err,
                                                size_t errlen)
{
    mlbc_grpc_options o = opt ? *opt : mlbc_grpc_options{};
    return guarded(err, errlen, [&] {
        return make_bridge_runner(address, descriptors, method, features, nfeatures, advice,
                                  o, err, errlen);
    });
}

extern "C" int mlbc_grpc_check(const char *address, const mlbc_grpc_options *opt, char *err,
                               size_t errlen)
{
    mlbc_grpc_options o = {};
    if (opt)
        o = *opt;
    try {
        Impl p;
        return configure(&p, address, o, err, errlen) ? 0 : -1;
    } catch (const std::exception &e) {
        set_err(err, errlen, "grpc: %s", e.what());
    }
    return -1;
}

extern "C" int mlbc_runner_grpc_port(const mlbc_runner *r)
{
    if (!r || r->ops != &grpc_ops)
        return -1;
    const Listener *l = dynamic_cast<const Listener *>(static_cast<const Impl *>(r->impl));
    return l ? l->port : -1;
}
