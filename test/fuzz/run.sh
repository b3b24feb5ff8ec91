#!/bin/bash
# Builds every test/fuzz/NAME_fuzz.c with libFuzzer (clang, ASan, UBSan)
# into build/fuzz and runs each for SECONDS (default 60) — each target
# gets that long, so a run takes about SECONDS times the number of targets.
#
#   run.sh [SECONDS] [NAME...]   only the named targets when some are given
#   run.sh 0 [NAME...]           build, then run each target once over its
#                                seeds and saved corpus (no new inputs)
#
# A crash leaves its input in build/fuzz/NAME-crashes and fails the run.
# Inputs that found new coverage accumulate in build/fuzz/NAME-corpus, so a
# later run starts where the last one stopped.
#
# The library (pkg/, actions/, plugins/) is compiled once into
# build/fuzz/lib, object by object, and every target links it: a target
# costs one compile and a link, not a compile of the whole tree.
set -eu
cd "$(dirname "$0")/../.."
SECS=${1:-60}
[ $# -gt 0 ] && shift
OUT=build/fuzz
mkdir -p "$OUT/lib"
if [ $# -gt 0 ]; then
        targets="$*"
        for t in $targets; do
                [ -f "test/fuzz/${t}_fuzz.c" ] || { echo "no fuzz target test/fuzz/${t}_fuzz.c"; exit 2; }
        done
else
        targets=$(ls test/fuzz/*_fuzz.c 2>/dev/null | xargs -n1 basename | sed 's/_fuzz\.c$//')
fi
[ -n "$targets" ] || { echo "no fuzz targets"; exit 0; }
FLAGS="-std=c11 -g -O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -DKB_TESTING -Ipkg -I. -I$OUT/gen"
# The targets are held to the project's warnings (the library is compiled
# by make with them already).
WARN="-Wall -Wextra -Wpedantic -Wstrict-prototypes -Werror -Wno-unused-parameter"
LIBS="-lcurl -lyajl -luv -lyaml -lmicrohttpd -lgnutls -lprotobuf-c -lpthread -lm"
lib=$OUT/lib/libkbatch-fuzz.a

# The protobuf definitions compile to C here, as the Makefile does.
mkdir -p "$OUT/gen"
for p in pkg/*/*.proto; do
        [ -e "$p" ] || continue
        gen=$OUT/gen/${p#pkg/}
        if [ ! -e "${gen%.proto}.pb-c.c" ] || [ "$p" -nt "${gen%.proto}.pb-c.c" ]; then
                protoc-c --proto_path=pkg --c_out="$OUT/gen" "$p"
        fi
done

# Objects are rebuilt when their source, or any header, is newer.
newest_h=$(ls -t pkg/*/*.h plugins/*.h $OUT/gen/*/*.pb-c.h 2>/dev/null | head -1)
objs=()
pids=()
for src in $(ls pkg/*/*.c actions/*.c plugins/*.c $OUT/gen/*/*.pb-c.c 2>/dev/null); do
        obj=$OUT/lib/$(echo "${src%.c}" | tr / _).o
        objs+=("$obj")
        if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ "$newest_h" -nt "$obj" ]; then
                clang $FLAGS -fsanitize=fuzzer-no-link -c "$src" -o "$obj" &
                pids+=($!)
                # Two at a time: the machines have two cores.
                if [ ${#pids[@]} -ge 2 ]; then wait "${pids[0]}"; pids=("${pids[@]:1}"); fi
        fi
done
for p in "${pids[@]}"; do wait "$p"; done
if [ ! -f "$lib" ] || [ -n "$(find "${objs[@]}" -newer "$lib" | head -1)" ]; then
        rm -f "$lib"
        ar rcs "$lib" "${objs[@]}"
fi

for t in $targets; do
        bin=$OUT/${t}_fuzz
        if [ ! -x "$bin" ] || [ "test/fuzz/${t}_fuzz.c" -nt "$bin" ] || [ "$lib" -nt "$bin" ]; then
                echo "== building $bin"
                clang $FLAGS $WARN -fsanitize=fuzzer -o "$bin" "test/fuzz/${t}_fuzz.c" "$lib" $LIBS
        fi
        corpus=$OUT/$t-corpus
        mkdir -p "$corpus" "$OUT/$t-crashes"
        if [ -d test/fuzz/seeds/$t ]; then cp -n test/fuzz/seeds/$t/* "$corpus"/ 2>/dev/null || true; fi
        if [ "$SECS" -gt 0 ]; then
                echo "== fuzzing $t for ${SECS}s"
                limit=(-max_total_time="$SECS")
        else
                echo "== $t over its corpus"
                limit=(-runs=0)
        fi
        ASAN_OPTIONS=detect_leaks=1 "$bin" "${limit[@]}" -max_len=4096 -timeout=10 \
                -rss_limit_mb=2048 -print_final_stats=0 -artifact_prefix="$OUT/$t-crashes/" \
                "$corpus" 2>"$OUT/$t.log" || { tail -60 "$OUT/$t.log"; echo "FAILED: fuzz $t"; exit 1; }
        tail -1 "$OUT/$t.log"
done
