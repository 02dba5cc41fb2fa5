#!/bin/sh
# llvm_override.sh - mlbc policies as the embedded models of your own LLVM 19 build.
#
#   plugins/clang/llvm_override.sh [--build DIR] [--inliner POLICY] [--evict POLICY] OUTDIR
#
# For each policy given (ONNX or ONNX text) writes, into OUTDIR, the pair LLVM's CMake takes
# instead of a TensorFlow AOT model (docs/LLVM.md):
#   --inliner  InlinerSizeModel.h + InlinerSizeModel.o       (class llvm::InlinerSizeModel)
#   --evict    RegAllocEvictModel.h + RegAllocEvictModel.o   (class llvm::RegAllocEvictModel)
# Each header is mlbc's header (generated with --cxx-wrapper, -n NAME) followed by the alias
# `namespace llvm { using NAME = ::mlbc::NAME; }`; it is self-contained, because LLVM copies
# only this one file into its build tree. Also writes OUTDIR/tf-stub, a TENSORFLOW_AOT_PATH
# stand-in (include/ and an xla_aot_runtime_src/ that builds an empty tf_xla_runtime
# library: mlbc's code needs no runtime), and OUTDIR/cmake-flags.txt with the -D options.
# mlbc comes from DIR (default: build/ at the repository root, or $MLBC_BUILD); $CC builds
# the objects (default cc, -O2 -fPIC).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${MLBC_BUILD:-$root/build}
inliner=
evict=
usage() {
    echo "usage: $0 [--build DIR] [--inliner POLICY] [--evict POLICY] OUTDIR" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --build) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
    --inliner) [ $# -ge 2 ] || usage; inliner=$2; shift 2 ;;
    --evict) [ $# -ge 2 ] || usage; evict=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) usage ;;
    *) break ;;
    esac
done
[ $# -eq 1 ] || usage
[ -n "$inliner$evict" ] || { echo "$0: give --inliner and/or --evict" >&2; exit 2; }
out=$1
CC=${CC:-cc}
mlbc=$build/mlbc
[ -x "$mlbc" ] || { echo "$0: $mlbc is missing (make BUILD=$build)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)

# model NAME POLICY: OUT/NAME.h (mlbc's header + the llvm:: alias) and OUT/NAME.o
model() {
    name=$1
    policy=$2
    tmp=$out/.$name.gen
    mkdir -p "$tmp"
    "$mlbc" "$policy" -o "$tmp/$name.c" -n "$name" --cxx-wrapper
    "$CC" -O2 -fPIC -std=c99 -c "$tmp/$name.c" -o "$out/$name.o"
    {
        cat "$tmp/$name.h"
        cat <<EOF

/* Added by mlbc's plugins/clang/llvm_override.sh: the class name LLVM 19 expects of an
 * AOT-compiled model (MLInlineAdvisor.cpp / MLRegAllocEvictAdvisor.cpp). */
#ifdef __cplusplus
#ifndef MLBC_LLVM_ALIAS_$name
#define MLBC_LLVM_ALIAS_$name
namespace llvm {
using $name = ::mlbc::$name;
} /* namespace llvm */
#endif
#endif
EOF
    } >"$out/$name.h"
    rm -rf "$tmp"
}

flags="-DTENSORFLOW_AOT_PATH=$out/tf-stub"
if [ -n "$inliner" ]; then
    model InlinerSizeModel "$inliner"
    flags="$flags
-DLLVM_OVERRIDE_MODEL_HEADER_INLINERSIZEMODEL=$out/InlinerSizeModel.h
-DLLVM_OVERRIDE_MODEL_OBJECT_INLINERSIZEMODEL=$out/InlinerSizeModel.o"
else
    flags="$flags
-DLLVM_INLINER_MODEL_PATH=none"
fi
if [ -n "$evict" ]; then
    model RegAllocEvictModel "$evict"
    flags="$flags
-DLLVM_OVERRIDE_MODEL_HEADER_REGALLOCEVICTMODEL=$out/RegAllocEvictModel.h
-DLLVM_OVERRIDE_MODEL_OBJECT_REGALLOCEVICTMODEL=$out/RegAllocEvictModel.o"
else
    flags="$flags
-DLLVM_RAEVICT_MODEL_PATH=none"
fi

# TENSORFLOW_AOT_PATH stand-in: LLVM adds <path>/include to the include path and builds
# <path>/xla_aot_runtime_src, which must define the library target tf_xla_runtime.
mkdir -p "$out/tf-stub/include" "$out/tf-stub/xla_aot_runtime_src"
cat >"$out/tf-stub/xla_aot_runtime_src/CMakeLists.txt" <<'EOF'
# Written by mlbc's plugins/clang/llvm_override.sh. LLVM links every AOT model against
# tf_xla_runtime; models compiled by mlbc need no runtime, so the library is empty.
add_library(tf_xla_runtime STATIC mlbc_tf_xla_runtime_stub.cpp)
set_target_properties(tf_xla_runtime PROPERTIES POSITION_INDEPENDENT_CODE ON)
EOF
cat >"$out/tf-stub/xla_aot_runtime_src/mlbc_tf_xla_runtime_stub.cpp" <<'EOF'
// Empty on purpose: see CMakeLists.txt.
namespace mlbc_tf_xla_runtime_stub {
int unused = 0;
}
EOF
printf '%s\n' "$flags" >"$out/cmake-flags.txt"
