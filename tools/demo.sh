#!/bin/sh
# make demo: compile the example inliner policy to C, build a driver, run it.
set -e
BUILD=${1:-build}
OUT=$BUILD/demo
mkdir -p "$OUT"
echo "== mlbc models/inliner.onnx -o $OUT/inliner.c"
"$BUILD/mlbc" models/inliner.onnx -o "$OUT/inliner.c"
"$BUILD/mlbc" models/inliner.onnx --info
echo "== cc -O2 inliner_demo.c inliner.c"
cc -std=c99 -O2 -Wall -Wextra -pedantic -I"$OUT" tools/demo/inliner_demo.c "$OUT/inliner.c" \
    -o "$OUT/inliner_demo" -lm
echo "== run"
"$OUT/inliner_demo"
