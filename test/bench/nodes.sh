#!/usr/bin/env bash
# The session after some nodes changed (test/bench/nodes_bench.c): W2 with
# every gang running, on the model kept between sessions.
#   bash test/bench/nodes.sh [PCT [ROUNDS]]     (default 1% of nodes, 5 rounds)
# prints the median idle session and session after PCT% of the nodes
# changed, then each one's instructions (valgrind --tool=callgrind, when
# installed).  LIB=path/to/libkbatch.a measures another build (before and
# after); the default is this tree's release library, built if need be.
set -euo pipefail
cd "$(dirname "$0")/../.."
LIB=${LIB:-}
if [ -z "$LIB" ]; then
  make -s build/release/libkbatch.a
  LIB=build/release/libkbatch.a
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
${CC:-cc} -std=c11 -O2 -D_GNU_SOURCE -Ipkg -I. -o "$out/nodes_bench" test/bench/nodes_bench.c \
  "$LIB" -lcurl -lyajl -luv -lyaml -lmicrohttpd -lgnutls -lprotobuf-c -lpthread -lm
"$out/nodes_bench" "${1:-1}" "${2:-5}"
command -v valgrind >/dev/null || exit 0
for kind in idle nodes; do
  valgrind --tool=callgrind --collect-atstart=no --toggle-collect=measure \
    --callgrind-out-file="$out/$kind.cg" "$out/nodes_bench" "${1:-1}" 1 "$kind" >/dev/null 2>&1
  echo "$kind session: $(sed -n 's/^totals: \([0-9]*\).*/\1/p' "$out/$kind.cg") instructions"
done
