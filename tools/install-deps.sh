#!/bin/sh
# Install the Debian packages mlbc needs. Idempotent; silent when all are present.
set -e
PKGS="make gcc g++ protobuf-c-compiler libprotobuf-c-dev protobuf-compiler python3-protobuf flex bison libopenblas-dev libonnx-dev
python3-onnx python3-numpy clang-19 llvm-19-dev libclang-rt-19-dev gcc-12-plugin-dev
gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
cmake pkg-config man-db groff-base python3-pip python3-setuptools python3-wheel
libgrpc++-dev libprotobuf-dev protobuf-compiler-grpc python3-grpcio openssl
python3-distributed"
# make bench draws its plots with matplotlib and runs libtorch as a peer: `install-deps.sh
# bench` adds them
[ "$1" = bench ] && PKGS="$PKGS python3-matplotlib libtorch-dev"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing packages:$missing (run as root to install)" >&2
    exit 1
fi
echo "install-deps: installing$missing"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
