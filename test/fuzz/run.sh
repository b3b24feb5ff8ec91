#!/bin/bash
# Builds every test/fuzz/NAME_fuzz.c with libFuzzer (clang, ASan, UBSan)
# into build/fuzz and runs each for its share of SECONDS (default 60).
# A crash leaves its input in build/fuzz/NAME-crashes and fails the run.
set -eu
cd "$(dirname "$0")/../.."
SECONDS_TOTAL=${1:-60}
OUT=build/fuzz
mkdir -p "$OUT"
targets=$(ls test/fuzz/*_fuzz.c 2>/dev/null | xargs -n1 basename | sed 's/_fuzz\.c$//')
[ -n "$targets" ] || { echo "no fuzz targets"; exit 0; }
count=$(echo "$targets" | wc -w)
share=$(( SECONDS_TOTAL / count )); [ "$share" -ge 1 ] || share=1
CFLAGS="-std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -DKB_TESTING -Ipkg -I. -I$OUT/gen"
LIBS="-lcurl -lyajl -luv -lyaml -lmicrohttpd -lgnutls -lprotobuf-c -lpthread -lm"
# The protobuf definitions compile to C here, as the Makefile does.
mkdir -p "$OUT/gen"
for p in pkg/*/*.proto; do
        [ -e "$p" ] || continue
        gen=$OUT/gen/${p#pkg/}
        if [ ! -e "${gen%.proto}.pb-c.c" ] || [ "$p" -nt "${gen%.proto}.pb-c.c" ]; then
                protoc-c --proto_path=pkg --c_out="$OUT/gen" "$p"
        fi
done
for t in $targets; do
        bin=$OUT/${t}_fuzz
        srcs="$(ls pkg/*/*.c actions/*.c plugins/*.c) $(ls $OUT/gen/*/*.pb-c.c 2>/dev/null)"
        if [ ! -x "$bin" ] || [ -n "$(find pkg actions plugins test/fuzz/${t}_fuzz.c -newer "$bin" \( -name '*.[ch]' -o -name '*.proto' \) | head -1)" ]; then
                echo "== building $bin"
                clang $CFLAGS -o "$bin" test/fuzz/${t}_fuzz.c $srcs $LIBS
        fi
        corpus=$OUT/$t-corpus
        mkdir -p "$corpus" "$OUT/$t-crashes"
        if [ -d test/fuzz/seeds/$t ]; then cp -n test/fuzz/seeds/$t/* "$corpus"/ 2>/dev/null || true; fi
        echo "== fuzzing $t for ${share}s"
        ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$share" -max_len=4096 -timeout=10 \
                -rss_limit_mb=2048 -print_final_stats=0 -artifact_prefix="$OUT/$t-crashes/" \
                "$corpus" 2>"$OUT/$t.log" || { tail -60 "$OUT/$t.log"; echo "FAILED: fuzz $t"; exit 1; }
        tail -1 "$OUT/$t.log"
done
