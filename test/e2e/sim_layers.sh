#!/usr/bin/env bash
# The shape of pkg/sim and kbatch-sim's main, checked on what was built
# (issue 22):
#  - pkg/sim's files form layers: no file calls into a file that calls back
#    into it, directly or through others (the call graph between files, read
#    off the object files' defined and undefined symbols, has no cycle);
#  - no file of pkg/sim is over 600 lines;
#  - cmd/kbatch-sim/main.c is at most 120 lines and looks options up by name
#    (no enum of option offsets).
# Run by `make test` with BIN set.
set -euo pipefail
cd "$(dirname "$0")/../.."

OBJ="${BIN:?set BIN to the directory holding the programs}/../obj/pkg/sim"
[ -d "$OBJ" ] || OBJ=build/release/obj/pkg/sim
TMP="$(mktemp -d "${TMPDIR:-/tmp}/simlayers.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

objs=("$OBJ"/*.o)
if [ ! -e "${objs[0]}" ]; then
        echo "no objects under $OBJ"
        exit 1
fi

for o in "${objs[@]}"; do
        f=$(basename "$o" .o)
        nm -g --defined-only "$o" | awk -v f="$f" 'NF == 3 { print $3, f }'
done | sort >"$TMP/defs"
for o in "${objs[@]}"; do
        f=$(basename "$o" .o)
        nm -u "$o" | awk '{ print $NF }' | sort -u | join - "$TMP/defs" |
                awk -v f="$f" '$2 != f { print f, $2 }'
done | sort -u >"$TMP/edges"
nedges=$(wc -l <"$TMP/edges")
if [ "$nedges" -lt 5 ]; then
        bad "too few calls between files ($nedges): the check would mean nothing"
fi
for o in "${objs[@]}"; do
        f=$(basename "$o" .o)
        echo "$f $f"
done >>"$TMP/edges"
if tsort "$TMP/edges" >"$TMP/order" 2>"$TMP/loop"; then
        ok "no cycle among ${#objs[@]} files of pkg/sim ($nedges calls between files)"
else
        bad "the files of pkg/sim call each other in a cycle:"
        sed 's/^/    /' "$TMP/loop"
        awk '$1 != $2 { print "      " $0 }' "$TMP/edges"
fi
# The timeline is the bottom layer of a timed run.
if awk '$1 == "timeline" && $2 != "timeline" && $2 != "cluster"' "$TMP/edges" | grep -q .; then
        bad "timeline.c calls up into: $(awk '$1 == "timeline" && $2 != "timeline" { print $2 }' "$TMP/edges" | tr '\n' ' ')"
else
        ok "timeline.c calls nothing above it"
fi

long=0
for f in pkg/sim/*.[ch]; do
        n=$(wc -l <"$f")
        if [ "$n" -gt 600 ]; then
                bad "$f has $n lines (at most 600)"
                long=1
        fi
done
[ "$long" = 1 ] || ok "every file of pkg/sim has at most 600 lines"

n=$(wc -l <cmd/kbatch-sim/main.c)
if [ "$n" -gt 120 ]; then
        bad "cmd/kbatch-sim/main.c has $n lines (at most 120)"
else
        ok "cmd/kbatch-sim/main.c has $n lines"
fi
if grep -q 'OPT_[A-Z]* = 256' cmd/kbatch-sim/*.c; then
        bad "kbatch-sim looks its options up by enum offset"
else
        ok "kbatch-sim looks its options up by name"
fi

echo "sim_layers: $pass passed, $fail failed"
[ "$fail" = 0 ]
