#!/usr/bin/env bash
# The shape of pkg/framework, checked on what was built:
#  - its files form layers: no file calls into a file that calls back into
#    it, directly or through others (the call graph between files, read off
#    the object files' defined and undefined symbols, has no cycle);
#  - no file is over 600 lines, and session.c (the lifecycle) is under 300.
# framework-int.h draws the layers.  Run by `make test` with BIN set.
set -euo pipefail
cd "$(dirname "$0")/../.."

OBJ="${BIN:?set BIN to the directory holding the programs}/../obj/pkg/framework"
[ -d "$OBJ" ] || OBJ=build/release/obj/pkg/framework
TMP="$(mktemp -d "${TMPDIR:-/tmp}/layers.XXXXXX")"
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

# Who defines what: "symbol file" lines.
for o in "${objs[@]}"; do
        f=$(basename "$o" .o)
        nm -g --defined-only "$o" | awk -v f="$f" 'NF == 3 { print $3, f }'
done | sort >"$TMP/defs"

# Edges "user provider", one per file pair.
for o in "${objs[@]}"; do
        f=$(basename "$o" .o)
        nm -u "$o" | awk '{ print $NF }' | sort -u | join - "$TMP/defs" |
                awk -v f="$f" '$2 != f { print f, $2 }'
done | sort -u >"$TMP/edges"

nedges=$(wc -l <"$TMP/edges")
if [ "$nedges" -lt 5 ]; then
        bad "too few calls between files ($nedges): the check would mean nothing"
fi
# Every file is a node, even one nobody calls.
for o in "${objs[@]}"; do
        f=$(basename "$o" .o)
        echo "$f $f"
done >>"$TMP/edges"
if tsort "$TMP/edges" >"$TMP/order" 2>"$TMP/loop"; then
        ok "no cycle among $(ls "$OBJ"/*.o | wc -l) files ($nedges calls between files)"
else
        bad "the files of pkg/framework call each other in a cycle:"
        sed 's/^/    /' "$TMP/loop"
        echo "    calls between files:"
        sed 's/^/      /' "$TMP/edges" | awk '$1 != $2'
fi

# A layer may not call upwards: session.c sits on top, model.c at the bottom.
if grep -q '^model ' "$TMP/edges" && grep '^model ' "$TMP/edges" | awk '$2 != "model"' | grep -q .; then
        bad "model.c calls into other framework files: $(grep '^model ' "$TMP/edges" | awk '$2 != "model" {print $2}' | tr '\n' ' ')"
else
        ok "model.c calls nothing above it"
fi
for f in statement select; do
        if grep -q "^$f session\$" "$TMP/edges"; then
                bad "$f.c calls back into session.c"
        else
                ok "$f.c does not call back into session.c"
        fi
done

long=0
for f in pkg/framework/*.[ch]; do
        n=$(wc -l <"$f")
        if [ "$n" -gt 600 ]; then
                bad "$f has $n lines (at most 600)"
                long=1
        fi
done
[ "$long" = 1 ] || ok "every file of pkg/framework has at most 600 lines"
n=$(wc -l <pkg/framework/session.c)
if [ "$n" -lt 300 ]; then ok "session.c has $n lines (under 300)"; else
        bad "session.c has $n lines (under 300 wanted)"; fi

echo "framework_layers: $pass passed, $fail failed"
[ "$fail" = 0 ]
