"""What the ML-Compiler-Bridge's test/mlbridge-test.py answers to its ten messages (its
returned_data, with its ctypes for 64-bit values): policies for mlbc_gym with advice=None,
e.g. python3 -m mlbc_gym serve BASE --framing json --advice bridge
--policy tests/bridge/answers.py:json_policy -- COMMAND."""
import ctypes


def answers(fmt):
    """The ten answers for fmt "bytes" or "json" (the Bridge's test answers long and
    vec_long differently in the two)."""
    r = [12, 1234567891, 4.14, 1.123456789123456789, ord("b"), False, [12, 23, 34],
         [123456780, 123456781, 123456782], [1.11, 2.22, -3.33, 0],
         [1.12345678912345670, -1.12345678912345671]]
    longs = (1234567891, [123456780, 123456781, 123456782]) if fmt == "bytes" \
        else (12345, [6780, 6781, 6782])
    r[1] = ctypes.c_long(longs[0])
    r[3] = ctypes.c_double(1.123456789123456789)
    r[7] = [ctypes.c_long(v) for v in longs[1]]
    r[9] = [ctypes.c_double(1.12345678912345670), ctypes.c_double(-1.12345678912345671)]
    return r


def bytes_policy(features, context, index):
    return answers("bytes")[index]


def json_policy(features, context, index):
    return answers("json")[index]
