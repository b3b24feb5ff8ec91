#!/usr/bin/env bash
# The shape of every module, checked on what was built.  A module is a
# folder under pkg/, actions/, plugins/, or one program's folder under cmd/.
#  - Its files form layers: no file calls into a file that calls back into
#    it, directly or through others (the call graph between the files of one
#    module, read off the object files' defined and undefined symbols, has no
#    cycle).  Calls between modules are not looked at here: one public header
#    per module draws those.
#  - No source file is over 600 lines, except a generated table (a file
#    that says "kb:generated-table" in its first 10 lines);
#    pkg/framework/session.c (the lifecycle) is under 300, and each
#    program's cmd/NAME/main.c at most 120.
# Known exceptions, each with the reason it is still open, are listed in
# EXCEPTIONS below; an exception that is no longer needed is reported as
# "stale" (without failing) so that it can be struck.  Run by `make test`
# with BIN set.
set -euo pipefail
cd "$(dirname "$0")/../.."

ROOT="${BIN:?set BIN to the directory holding the programs}/../obj"
[ -d "$ROOT/pkg" ] || ROOT=build/release/obj
TMP="$(mktemp -d "${TMPDIR:-/tmp}/layers.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

# What is still open, and who is closing it.  One line each:
#   cycle MODULE FILE   calls from or to FILE (* = every file) are left out
#                       of MODULE's cycle check
#   long  PATH          PATH may be over 600 lines
#   main  PATH          a program's main.c may be over 120 lines
# Strike a line once its area is fixed: the check then holds there too.
cat >"$TMP/exceptions" <<'EOF'
# None open today.
EOF

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
stale() { echo "note stale exception (strike it): $1"; }

# The calls between the given object files, "user provider" lines, one per
# file pair, files named without directory and .o: who defines what, then
# who needs what (nm -A names the object on each line).
edges() {
        local base='{ f = $1; sub(/:.*/, "", f); sub(/.*\//, "", f); sub(/\.o$/, "", f) }'
        nm -A -g --defined-only "$@" | awk "$base"' NF == 3 { print $3, f }' | sort -k1,1 >"$TMP/defs"
        nm -A -u "$@" | awk "$base"' { print $NF, f }' | sort -k1,1 | join - "$TMP/defs" |
                awk '$2 != $3 { print $2, $3 }' | sort -u
}

modules=()
for d in pkg/*/ actions/ plugins/ cmd/*/; do
        d=${d%/}
        ls "$d"/*.c >/dev/null 2>&1 && modules+=("$d")
done

total_edges=0
for m in "${modules[@]}"; do
        OBJ="$ROOT/$m"
        # The objects of today's sources: a build directory keeps the
        # objects of files since removed or moved.
        objs=()
        for c in "$m"/*.c; do
                o="$OBJ/$(basename "$c" .c).o"
                [ -e "$o" ] && objs+=("$o")
        done
        if [ "${#objs[@]}" = 0 ] || [ "${#objs[@]}" != "$(ls "$m"/*.c | wc -l)" ]; then
                bad "$m: not every source has its object under $OBJ (build first)"
                continue
        fi
        edges "${objs[@]}" >"$TMP/edges"
        n=$(wc -l <"$TMP/edges")
        total_edges=$((total_edges + n))
        # Every file is a node, even one nobody calls.
        for o in "${objs[@]}"; do
                f=$(basename "$o" .o)
                echo "$f $f"
        done >"$TMP/nodes"
        excused=$(awk -v m="$m" '$1 == "cycle" && $2 == m { print $3 }' "$TMP/exceptions")
        if [ -z "$excused" ]; then
                cat "$TMP/edges" "$TMP/nodes" >"$TMP/graph"
        else
                awk -v ex="$excused" 'BEGIN { n = split(ex, e, "\n"); for (i = 1; i <= n; i++) x[e[i]] = 1 }
                        !(("*" in x) || ($1 in x) || ($2 in x))' "$TMP/edges" >"$TMP/graph"
                cat "$TMP/nodes" >>"$TMP/graph"
                if cat "$TMP/edges" "$TMP/nodes" | tsort >/dev/null 2>&1; then
                        stale "cycle $m $(tr "\n" " " <<<"$excused")"
                fi
        fi
        if tsort "$TMP/graph" >/dev/null 2>"$TMP/loop"; then
                ok "$m: no cycle among ${#objs[@]} files ($n calls between files${excused:+; excepted: $(tr "\n" " " <<<"$excused")})"
        else
                bad "$m: its files call each other in a cycle:"
                grep -v 'input contains a loop' "$TMP/loop" | sed 's/^tsort: /    /'
                echo "    calls between files:"
                awk '$1 != $2 { print "      " $0 }' "$TMP/graph"
        fi
done
if [ "$total_edges" -lt 100 ]; then
        bad "too few calls between files ($total_edges): the check would mean nothing"
fi

# pkg/framework draws more: model.c at the bottom, session.c on top.
fw=()
for c in pkg/framework/*.c; do fw+=("$ROOT/pkg/framework/$(basename "$c" .c).o"); done
edges "${fw[@]}" >"$TMP/edges"
up=$(awk '$1 == "model" { printf "%s ", $2 }' "$TMP/edges")
if [ -n "$up" ]; then bad "model.c calls into other framework files: $up"; else
        ok "model.c calls nothing above it"; fi
for f in statement select; do
        if grep -q "^$f session\$" "$TMP/edges"; then
                bad "$f.c calls back into session.c"
        else
                ok "$f.c does not call back into session.c"
        fi
done

long=0
for m in "${modules[@]}"; do
        for f in "$m"/*.[ch]; do
                n=$(wc -l <"$f")
                excused=$(awk -v f="$f" '$1 == "long" && $2 == f' "$TMP/exceptions")
                if [ "$n" -le 600 ]; then
                        [ -z "$excused" ] || stale "long $f ($n lines)"
                        continue
                fi
                head -n 10 "$f" | grep -q 'kb:generated-table' && continue
                [ -n "$excused" ] && continue
                bad "$f has $n lines (at most 600)"
                long=1
        done
done
[ "$long" = 1 ] || ok "every file of ${#modules[@]} modules has at most 600 lines (but the exceptions)"
# A program's main parses its options into a struct in a function of its
# own, from a table, and leaves the rest to its modules.
short=1
for f in cmd/*/main.c; do
        n=$(wc -l <"$f")
        excused=$(awk -v f="$f" '$1 == "main" && $2 == f' "$TMP/exceptions")
        if [ "$n" -le 120 ]; then
                [ -z "$excused" ] || stale "main $f ($n lines)"
        elif [ -z "$excused" ]; then
                bad "$f has $n lines (at most 120)"
                short=0
        fi
done
[ "$short" = 0 ] || ok "every program's main.c has at most 120 lines (but the exceptions)"
n=$(wc -l <pkg/framework/session.c)
if [ "$n" -lt 300 ]; then ok "session.c has $n lines (under 300)"; else
        bad "session.c has $n lines (under 300 wanted)"; fi

# One map for every module (issue 22): a private hash table is base's
# kb_map.  uthash stays only where the order it keeps reaches an output,
# in the places below with the reason (docs/layout.md says the same).
cat >"$TMP/uthash" <<'EOF'
pkg/cache/*                a snapshot lists objects in insertion order, and sessions follow it
pkg/scheduler/workloads.c  the scheduler-plugins PodGroups' writes go out in watch order
pkg/apiserver/*            the namespace and CRD cascades delete in creation order, and watchers see DELETED in that order
pkg/kubesim/simindex.c     its sets hand out pods in the order they were written, and the kubelet starts them so
EOF
private=0
while read -r f; do
        allowed=0
        while read -r pat _; do
                # shellcheck disable=SC2254
                case "$f" in $pat) allowed=1 ;; esac
        done <"$TMP/uthash"
        if [ "$allowed" = 0 ]; then
                bad "$f uses uthash: a private table belongs on kb_map (or list the file here, with why)"
                private=1
        fi
done < <(grep -lE 'uthash\.h|UT_hash_handle' pkg/*/*.[ch] actions/*.[ch] plugins/*.[ch] cmd/*/*.[ch])
while read -r pat _; do
        # shellcheck disable=SC2086
        grep -lqE 'uthash\.h|UT_hash_handle' $pat || stale "uthash $pat (no longer uses it)"
done <"$TMP/uthash"
[ "$private" = 1 ] || ok "no private uthash table outside the $(wc -l <"$TMP/uthash") places that keep its order"

# An exception naming a module or file that is gone is stale too.
while read -r what where _; do
        case "$what" in
        cycle) [ -d "$where" ] || stale "cycle $where (no such module)" ;;
        long | main) [ -e "$where" ] || stale "$what $where (no such file)" ;;
        esac
done < <(grep -v '^#' "$TMP/exceptions")

echo "layers: $pass passed, $fail failed"
[ "$fail" = 0 ]
