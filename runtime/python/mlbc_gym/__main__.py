"""python3 -m mlbc_gym serve BASE [options] -- COMMAND...   |   python3 -m mlbc_gym dump LOG
   python3 -m mlbc_gym serve-grpc ADDRESS [options] [-- COMMAND...]  |  ... drive ADDRESS"""
import argparse
import importlib
import os
import subprocess
import sys
import time

from . import LogReader, serve


def _policy(args):
    if args.policy:
        mod, _, fn = args.policy.partition(":")
        if mod.endswith(".py"):
            import runpy
            return runpy.run_path(mod)[fn or "policy"]
        return getattr(importlib.import_module(mod), fn or "policy")
    value = float(args.constant) if "." in args.constant else int(args.constant)
    return lambda features, context, index: value


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m mlbc_gym")
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="answer a compiler over BASE.in/BASE.out")
    s.add_argument("base")
    s.add_argument("--policy", help="MODULE:FUNCTION or FILE.py:FUNCTION")
    s.add_argument("--constant", default="0", help="answer this value (default 0)")
    s.add_argument("--framing", default="llvm", choices=["llvm", "bitstream", "json", "protobuf"])
    s.add_argument("--advice", default="int64_t", help="advice type for the Bridge framings; "
                   "'bridge': each reply typed by the policy's value, as the Bridge's host does")
    s.add_argument("--record", help="save what the compiler sent to this file")
    s.add_argument("--timeout", type=float, help="kill the command after this many seconds")
    g = sub.add_parser("serve-grpc", help="a gRPC model server (until COMMAND exits, or ^C)")
    r = sub.add_parser("drive", help="step a compiler serving gRPC until it is done")
    for p in (g, r):
        p.add_argument("address", help="HOST:PORT (loopback unless --remote)")
        p.add_argument("--policy", help="MODULE:FUNCTION or FILE.py:FUNCTION")
        p.add_argument("--constant", default="0", help="answer this value (default 0)")
        p.add_argument("--advice", default="int64_t", help="advice type")
        p.add_argument("--token", help="shared secret (authorization metadata); visible in "
                       "ps: prefer --token-file or $MLBC_GRPC_TOKEN")
        p.add_argument("--token-file", help="the shared secret in a file only you may read "
                       "or write (chmod 600)")
        p.add_argument("--insecure", action="store_true",
                       help="allow a token without TLS on a non-loopback address")
        p.add_argument("--tls-cert", help="PEM: this side's certificate")
        p.add_argument("--tls-key", help="PEM: its private key")
        p.add_argument("--tls-ca", help="PEM: the CA of the peer's certificate")
        p.add_argument("--remote", action="store_true", help="allow a non-loopback address")
    r.add_argument("--timeout", type=float, default=10.0, help="seconds per Step")
    d = sub.add_parser("dump", help="print a training log or captured stream")
    d.add_argument("log")
    argv = list(sys.argv[1:] if argv is None else argv)
    cmd = []
    if "--" in argv:
        i = argv.index("--")
        argv, cmd = argv[:i], argv[i + 1:]
    args = ap.parse_args(argv)
    if args.cmd == "dump":
        with open(args.log, "rb") as f:
            r = LogReader(f)
            print("features: " + ", ".join("%s %s%s" % (t.name, t.type, t.shape)
                                            for t in r.features))
            for rec in r.records():
                if rec.kind == "observation":
                    print("observation %d: %s" % (rec.id, rec.features))
                elif rec.kind == "outcome":
                    print("outcome %d: %s" % (rec.id, rec.score))
                elif rec.kind == "context":
                    print("context %r" % rec.context)
                else:
                    print("header: %d features" % len(rec.features_spec))
        return 0
    if args.cmd in ("serve-grpc", "drive"):
        return _grpc(args, cmd)
    if not cmd:
        ap.error("serve needs a command after --")
    res = serve(args.base, _policy(args), command=cmd, framing=args.framing,
                advice=None if args.advice == "bridge" else args.advice, record=args.record,
                command_timeout=args.timeout)
    for sess in res.sessions:
        print("mlbc_gym: %r" % sess, file=sys.stderr)
    return res.returncode if res.returncode else (1 if res.errors else 0)


def _grpc(args, cmd):
    from . import rpc
    token = args.token
    if token is None and args.token_file is None:
        token = os.environ.get("MLBC_GRPC_TOKEN") or None
    opts = dict(advice=args.advice, token=token, token_file=args.token_file,
                tls_cert=args.tls_cert, tls_key=args.tls_key, tls_ca=args.tls_ca,
                allow_remote=args.remote, allow_insecure=args.insecure)
    if args.cmd == "serve-grpc" and token is None and args.token_file is None and \
            not args.address.startswith("unix:"):
        print("mlbc_gym: warning: no token: every user of this machine can connect to %s "
              "(give --token-file or $MLBC_GRPC_TOKEN, or serve on unix:PATH)" % args.address,
              file=sys.stderr)
    try:
        if args.cmd == "drive":
            n = rpc.drive(args.address, _policy(args), timeout=args.timeout, **opts)
            print("mlbc_gym: %d observations answered" % n, file=sys.stderr)
            return 0
        server = rpc.serve_model(_policy(args), args.address, **opts)
    except (rpc.HostError, ValueError) as e:
        print("mlbc_gym: %s" % e, file=sys.stderr)
        return 2 if args.cmd == "serve-grpc" else 1
    with server:
        print("mlbc_gym: serving on port %d" % server.port, file=sys.stderr, flush=True)
        try:
            if cmd:
                return subprocess.call(cmd)
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0
        finally:
            print("mlbc_gym: %d observations answered" % server.calls, file=sys.stderr)

if __name__ == "__main__":
    sys.exit(main())
