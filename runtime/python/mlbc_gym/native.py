"""mlbc_gym's model server on mlbc's own C++ gRPC server (libmlbc_grpc.so, through ctypes):
the service, options and policy API of rpc.ModelServer, the policy called from the C++
server's threads (mlbc_grpc_serve_policy in mlbc_grpc.h). grpcio's own cost per call, about
250 us on the round-trip study's machine, is gone, and the server answers EvaluateStream too
(the C++ server gives each stream a thread of its own).

The library is MLBC_GRPC_LIB if set, else lib/mlbc/libmlbc_grpc.so in the build directory
of the source tree this package is in, else in the prefix it was installed into (make
install puts both there). Standard library only (ctypes); numpy if asked for.
"""
import atexit
import ctypes
import ipaddress
import os
import stat
import threading
from collections import OrderedDict

from .host import HostError, _advice_encoder
from .specs import ONNX_CODES, ONNX_TYPES, TYPES, TensorSpec, _np, spec as _spec

MAX_NAME, MAX_RANK = 128, 8             # mlbc_runtime.h: MLBC_SPEC_MAX_NAME, _MAX_RANK


class _Spec(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * MAX_NAME), ("type", ctypes.c_int),
                ("rank", ctypes.c_int), ("shape", ctypes.c_int64 * MAX_RANK)]


class _Decision(ctypes.Structure):
    _fields_ = [("context", ctypes.c_char_p), ("index", ctypes.c_int64),
                ("nfeatures", ctypes.c_int), ("specs", ctypes.POINTER(_Spec)),
                ("data", ctypes.POINTER(ctypes.c_void_p))]


class _Options(ctypes.Structure):
    _fields_ = [("role", ctypes.c_int), ("timeout_ms", ctypes.c_int), ("retries", ctypes.c_int),
                ("backoff_ms", ctypes.c_int), ("allow_remote", ctypes.c_int),
                ("context", ctypes.c_char_p), ("token", ctypes.c_char_p),
                ("tls_cert", ctypes.c_char_p), ("tls_key", ctypes.c_char_p),
                ("tls_ca", ctypes.c_char_p), ("token_file", ctypes.c_char_p),
                ("allow_insecure", ctypes.c_int), ("max_message", ctypes.c_long)]


_SPEC_BYTES = ctypes.sizeof(_Spec)
MAX_LAYOUTS = 64        # feature sets kept decoded (clients choose them: least recent dropped)
_POLICY = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_Decision),
                           ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
_lib = None
_lib_lock = threading.Lock()
_attached = threading.local()
_running = set()        # servers not stopped: their callbacks must outlive every call


@atexit.register
def _stop_all():
    """Servers still running stop before the interpreter goes, while their policies can
    still be called."""
    for s in list(_running):
        s.stop()


def _keep_thread_state():
    """The policy runs on the C++ server's threads, which Python did not start: ctypes gives
    such a thread a Python thread state for each callback and deletes it after: 7.7 us a
    call, against 0.17 us with the state kept (measured from a C thread here). One extra
    PyGILState_Ensure, never released, keeps the thread's state from the first callback on;
    the callbacks still take and release the GIL each time."""
    if not getattr(_attached, "done", False):
        ctypes.pythonapi.PyGILState_Ensure()
        _attached.done = True


def library_path():
    """Where libmlbc_grpc.so is looked for first (MLBC_GRPC_LIB, the source tree, the
    prefix); None if nowhere."""
    env = os.environ.get("MLBC_GRPC_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(here, "..", "..", "..", "build", "lib", "mlbc",
                               "libmlbc_grpc.so")]
    if os.sep + "lib" + os.sep + "python" in here:
        prefix = here[:here.index(os.sep + "lib" + os.sep + "python")]
        candidates.append(os.path.join(prefix, "lib", "mlbc", "libmlbc_grpc.so"))
    return next((os.path.normpath(c) for c in candidates if os.path.exists(c)), None)


def load():
    """The library with its signatures, loaded once; None if there is none. A library that
    MLBC_GRPC_LIB names but that does not load is a HostError."""
    global _lib
    with _lib_lock:
        if _lib is None:
            path = library_path()
            if path is None:
                return None
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                raise HostError("cannot load %s: %s" % (path, e))
            lib.mlbc_grpc_serve_policy.restype = ctypes.c_void_p
            lib.mlbc_grpc_serve_policy.argtypes = [
                ctypes.c_char_p, ctypes.POINTER(_Spec), _POLICY, ctypes.c_void_p,
                ctypes.POINTER(_Options), ctypes.c_char_p, ctypes.c_size_t]
            for f in ("port", "calls", "streams"):
                fn = getattr(lib, "mlbc_grpc_model_server_" + f)
                fn.restype = ctypes.c_int if f == "port" else ctypes.c_long
                fn.argtypes = [ctypes.c_void_p]
            lib.mlbc_grpc_model_server_free.restype = None
            lib.mlbc_grpc_model_server_free.argtypes = [ctypes.c_void_p]
            _lib = lib
        return _lib


# ---- access checks, rpc.py's too (standard library only, as this module) ------------------

MAX_TOKEN = 4096


def is_loopback(address):
    """127.0.0.0/8, [::1], localhost or a unix: socket."""
    if address.startswith("unix:"):
        return True
    host = address[1:address.find("]")] if address.startswith("[") else \
        address.rpartition(":")[0]
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_address(address, allow_remote=False, token=None, tls=False, allow_insecure=False):
    """Refuses a non-loopback address unless allow_remote: a training channel carries a
    compiler's internals and steers its decisions, so exposing it is never a default; and a
    token on one without TLS (in clear text on the network) unless allow_insecure."""
    if is_loopback(address):
        return
    if not allow_remote:
        raise HostError("%s is not a loopback address (127.0.0.0/8, [::1], localhost, "
                        "unix:PATH); pass allow_remote=True to use another one" % address)
    if token and not tls and not allow_insecure:
        raise HostError("%s is not a loopback address and there is no TLS: the token would "
                        "cross the network in clear text; give TLS (tls_cert/tls_key, "
                        "tls_ca) or pass allow_insecure=True" % address)


def check_token(token, where=""):
    """A token travels as metadata: one line of printable ASCII (gRPC refuses other bytes)."""
    if not (0 < len(token) <= MAX_TOKEN and all(" " <= c <= "~" for c in token)):
        raise HostError("the token%s must be 1 to %d characters of printable ASCII"
                        % (where, MAX_TOKEN))
    return token


def read_token_file(path):
    """The token in path, a regular file of this user that group and others can neither read
    nor write (as ssh keys: a secret there stays out of `ps`); its line end dropped."""
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            raw = f.read(MAX_TOKEN + 2) if stat.S_ISREG(st.st_mode) else b""
    except OSError as e:
        raise HostError("cannot read token_file %s: %s" % (path, e.strerror))
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o77:
        raise HostError("token_file %s must be a regular file of this user that group and "
                        "others can neither read nor write (chmod 600 %s)" % (path, path))
    raw = raw[:-1] if raw.endswith(b"\n") else raw
    raw = raw[:-1] if raw.endswith(b"\r") else raw
    return check_token(raw.decode("latin-1"), " in " + path)


def resolve_token(token=None, token_file=None):
    """The token of token= or token_file= (one of them), checked; None if neither."""
    if token is not None and token_file is not None:
        raise ValueError("give token or token_file, not both")
    if token_file is not None:
        return read_token_file(token_file)
    return check_token(token) if token is not None else None


def _c_spec(s):
    c = _Spec()
    name = s.name.encode()
    if len(name) >= MAX_NAME or len(s.shape) > MAX_RANK:
        raise ValueError("advice %r: name longer than %d bytes or rank above %d"
                         % (s.name, MAX_NAME - 1, MAX_RANK))
    c.name, c.type, c.rank = name, ONNX_CODES[s.type], len(s.shape)
    for i, d in enumerate(s.shape):
        c.shape[i] = d
    return c


def _path(p):
    return os.fsencode(p) if p is not None else None


class NativeModelServer:
    """rpc.ModelServer on the C++ server: answers Evaluate and EvaluateStream with
    policy(features, context, index), one decision at a time. Options, .port, .calls,
    .streams, .exception (what the policy raised last; that call failed with INTERNAL),
    stop() or a with block, as ModelServer. The C++ server checks the token before it reads
    a call; the feature sets' decoders are kept for MAX_LAYOUTS sets at most."""

    def __init__(self, policy, address="127.0.0.1:0", advice="int64_t", numpy=False,
                 token=None, tls_cert=None, tls_key=None, tls_ca=None, allow_remote=False,
                 lib=None, token_file=None, allow_insecure=False, max_message=None):
        token = resolve_token(token, token_file)
        check_address(address, allow_remote, token, tls_cert is not None, allow_insecure)
        self._lib = lib or load()
        if self._lib is None:
            raise HostError("no libmlbc_grpc.so (run make, or set MLBC_GRPC_LIB)")
        if (tls_cert is None) != (tls_key is None) or (tls_ca and not tls_cert):
            raise ValueError("a TLS server needs tls_cert and tls_key (tls_ca adds client "
                             "certificates)")
        if numpy and _np is None:
            raise RuntimeError("numpy is not installed")
        self.policy, self.numpy = policy, numpy
        self.advice = _spec(advice)
        self.encode = _advice_encoder(self.advice)
        self.exception = None
        self._counts = (0, 0)
        self._layouts = OrderedDict()   # the specs' bytes -> [(name, bytes, decode)], LRU
        self._callback = _POLICY(self._decide)      # alive as long as the server
        opt = _Options(allow_remote=1 if allow_remote else 0, token=_path(token),
                       tls_cert=_path(tls_cert), tls_key=_path(tls_key), tls_ca=_path(tls_ca),
                       allow_insecure=1 if allow_insecure else 0, max_message=max_message or 0)
        err = ctypes.create_string_buffer(512)
        self._server = self._lib.mlbc_grpc_serve_policy(
            address.encode(), ctypes.byref(_c_spec(self.advice)), self._callback, None,
            ctypes.byref(opt), err, len(err))
        if not self._server:
            raise HostError(err.value.decode(errors="replace"))
        _running.add(self)
        self.port = self._lib.mlbc_grpc_model_server_port(self._server)

    def _layout(self, d, key):
        """A feature set's names, sizes and decoders (raw bytes -> list or array), by the
        bytes of its C specs."""
        layout = []
        for i in range(d.nfeatures):
            s = d.specs[i]
            spec = TensorSpec(s.name.decode(errors="replace"), ONNX_TYPES[s.type],
                              s.shape[:s.rank])
            if self.numpy:
                dtype, shape = _np.dtype(TYPES[spec.type][2]), tuple(spec.shape)
                decode = lambda raw, dtype=dtype, shape=shape: \
                    _np.frombuffer(raw, dtype).reshape(shape)       # noqa: E731
            else:
                decode = spec.decode
            layout.append((spec.name, spec.nbytes, decode))
        if len(self._layouts) >= MAX_LAYOUTS:
            self._layouts.popitem(last=False)
        self._layouts[key] = layout
        return layout

    def _decide(self, user, d, out, err, errlen):
        """The C++ server's callback: nothing may escape into C (ctypes would print it and
        return garbage), so every failure is the message in err and -1. It runs between
        the server's own work, its Python cold in the caches: the fewer steps, the faster
        (a feature set is looked up by its specs' bytes, decoded once)."""
        try:
            _keep_thread_state()
            d = d.contents
            key = ctypes.string_at(d.specs, d.nfeatures * _SPEC_BYTES)
            layout = self._layouts.get(key)
            if layout is None:
                layout = self._layout(d, key)
            else:
                self._layouts.move_to_end(key)
            data = d.data
            feats = {name: decode(ctypes.string_at(data[i], nbytes))
                     for i, (name, nbytes, decode) in enumerate(layout)}
            raw = self.encode(self.policy(feats, (d.context or b"").decode(errors="replace"),
                                          d.index))
            ctypes.memmove(out, raw, len(raw))
            return 0
        except BaseException as e:
            self.exception = e
            msg = ("policy raised %s: %s" % (type(e).__name__, e)).encode(errors="replace")
            msg = msg[:max(0, errlen - 1)] + b"\0"
            ctypes.memmove(err, msg, min(len(msg), errlen))
            return -1

    def _counted(self):
        """(decisions answered, EvaluateStream calls accepted), read while the server runs
        and kept after stop()."""
        if self._server:
            self._counts = (self._lib.mlbc_grpc_model_server_calls(self._server),
                            self._lib.mlbc_grpc_model_server_streams(self._server))
        return self._counts

    calls = property(lambda self: self._counted()[0])
    streams = property(lambda self: self._counted()[1])

    def stop(self, grace=1.0):
        """Stops listening; calls in progress get a second (the C++ server's grace, which
        grace does not change)."""
        if self._server:
            self._counted()
            self._lib.mlbc_grpc_model_server_free(self._server)
            self._server = None
            _running.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
