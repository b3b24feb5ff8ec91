#!/usr/bin/env bash
# The micro-benchmark of kb_map against uthash (test/bench/map_bench.c):
#   bash test/bench/map.sh [KEYS]     (default 100000)
# Builds the release library (make) and the benchmark beside it.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s build/release/libkbatch.a
out=build/release/bench
mkdir -p "$out"
${CC:-cc} -std=c11 -O2 -D_GNU_SOURCE -Ipkg -I. -o "$out/map_bench" test/bench/map_bench.c \
  build/release/libkbatch.a -lpthread
"$out/map_bench" "${1:-100000}"
