"""A misbehaving "compiler" on an LLVM interactive channel, for mlbc-serve's no-hang tests.

    fake_compiler.py MODE BASE
    partial   header, context, then half an observation; exits
    in-only   opens BASE.in for reading, never BASE.out; exits
    silent    one full observation, reads the advice, then sleeps 30 s
    garbage   a header that is not JSON; exits
    ok        three observations of the inliner's 38 features; prints the advice received
Opens the channel as LLVM does: BASE.in for reading first, then BASE.out for writing.
"""
import json
import os
import struct
import sys
import time

NAMES = ("sroa_savings sroa_losses load_elimination call_penalty call_argument_setup "
         "load_relative_intrinsic lowered_call_arg_setup indirect_call_penalty "
         "jump_table_penalty case_cluster_penalty switch_default_dest_penalty switch_penalty "
         "unsimplified_common_instructions num_loops dead_blocks simplified_instructions "
         "constant_args constant_offset_ptr_args callsite_cost cold_cc_penalty "
         "last_call_to_static_bonus is_multiple_blocks nested_inlines "
         "nested_inline_cost_estimate threshold callee_basic_block_count callsite_height "
         "node_count nr_ctant_params cost_estimate edge_count caller_users "
         "caller_conditionally_executed_blocks caller_basic_block_count "
         "callee_conditionally_executed_blocks callee_users is_callee_avail_external "
         "is_caller_avail_external").split()


def header():
    spec = lambda n: {"name": n, "type": "int64_t", "port": 0, "shape": [1]}
    return (json.dumps({"features": [spec(n) for n in NAMES],
                        "advice": spec("inlining_decision")}, separators=(",", ":"))
            + "\n").encode()


def main():
    mode, base = sys.argv[1], sys.argv[2]
    fin = os.open(base + ".in", os.O_RDONLY)
    if mode == "in-only":
        return 0
    fout = os.open(base + ".out", os.O_WRONLY)
    if mode == "garbage":
        os.write(fout, b"this is not a header\n")
        return 0
    os.write(fout, header() + b'{"context":""}\n')
    if mode == "partial":
        os.write(fout, b'{"observation":0}\n' + b"\x01" * 100)
        return 0
    n = 1 if mode == "silent" else 3
    for i in range(n):
        os.write(fout, b'{"observation":%d}\n' % i + struct.pack("=38q", *range(i, i + 38))
                 + b"\n")
        got = b""
        while len(got) < 8:
            b = os.read(fin, 8 - len(got))
            if not b:
                print("EOF on advice", file=sys.stderr)
                return 3
            got += b
        print(struct.unpack("=q", got)[0])
    if mode == "silent":
        time.sleep(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
