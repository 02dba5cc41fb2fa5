#!/bin/sh
# build.sh - builds the clang-19 inlining plugin for one policy.
#
#   plugins/clang/build.sh [--build DIR] [-n NAME] [--cache DIR] [-v] POLICY.onnx OUT.so
#
# POLICY.onnx (or .onnxtxt) is compiled by DIR/mlbc (default: build/ at the repository root,
# or $MLBC_BUILD) with --cxx-wrapper; the generated C, the C++ class mlbc::NAME (default
# NAME: policy) in mlbc_inline_policy.cpp, the policy-independent mlbc_inline_plugin.cpp
# and DIR/libmlbc_rt.a (built with -fPIC) become OUT.so, loaded by
#   clang-19 -O2 -c x.c -fpass-plugin=OUT.so
# Intermediate files stay in OUT.so.d/. The policy-independent object (most of the build
# time) is kept in the --cache directory (default OUT.so.d/) and reused while it is newer
# than its source, so building plugins for many policies is cheap. Tools: $CC (default
# cc), $CXX (clang++-19), $LLVM_CONFIG (llvm-config-19).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${MLBC_BUILD:-$root/build}
name=policy
cache=
verbose=
usage() {
    echo "usage: $0 [--build DIR] [-n NAME] [--cache DIR] [-v] POLICY.onnx OUT.so" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    -n) [ $# -ge 2 ] || usage; name=$2; shift 2 ;;
    --cache) [ $# -ge 2 ] || usage; cache=$2; shift 2 ;;
    -v) verbose=1; shift ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) usage ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || usage
policy=$1
out=$2
case $name in
*[!A-Za-z0-9_]* | [0-9]* | '') echo "$0: -n $name: not a C identifier" >&2; exit 2 ;;
esac

CC=${CC:-cc}
CXX=${CXX:-clang++-19}
LLVM_CONFIG=${LLVM_CONFIG:-llvm-config-19}
mlbc=$build/mlbc
rtlib=$build/libmlbc_rt.a
for f in "$mlbc" "$rtlib"; do
    [ -e "$f" ] || { echo "$0: $f is missing (make BUILD=$build)" >&2; exit 1; }
done
command -v "$LLVM_CONFIG" >/dev/null 2>&1 ||
    { echo "$0: $LLVM_CONFIG not found (apt-get install llvm-19-dev)" >&2; exit 1; }

work=$out.d
cache=${cache:-$work}
mkdir -p "$work" "$cache"
run() {
    [ -z "$verbose" ] || echo "+ $*" >&2
    "$@"
}
cxxflags="$("$LLVM_CONFIG" --cxxflags) -O2 -fPIC -DNDEBUG -Wall -Wextra -Wno-unused-parameter"

run "$mlbc" "$policy" -o "$work/$name.c" -n "$name" --cxx-wrapper
run "$CC" -O2 -fPIC -std=c99 -c "$work/$name.c" -o "$work/_model.o"

# The policy-independent part: compiled once per cache directory (write, then rename).
core=$cache/mlbc_inline_plugin.o
if [ ! -e "$core" ] || [ -n "$(find "$here/mlbc_inline_plugin.cpp" \
    "$root/runtime/mlbc_runtime.h" "$root/runtime/mlbc_model_desc.h" -newer "$core")" ]; then
    # shellcheck disable=SC2086
    run "$CXX" $cxxflags -I"$root/runtime" -c "$here/mlbc_inline_plugin.cpp" -o "$core.$$"
    mv -f "$core.$$" "$core"
fi

# shellcheck disable=SC2086
run "$CXX" $cxxflags -I"$work" "-DMLBC_POLICY_NAME=$name" \
    -c "$here/mlbc_inline_policy.cpp" -o "$work/_policy.o"
# shellcheck disable=SC2046
run "$CXX" -shared -fPIC -o "$out.tmp" "$core" "$work/_policy.o" "$work/_model.o" \
    "$rtlib" -Wl,--exclude-libs,ALL -Wl,-z,defs $("$LLVM_CONFIG" --ldflags) \
    $("$LLVM_CONFIG" --libs) -lprotobuf-c -lm -lpthread -ldl
mv -f "$out.tmp" "$out"
