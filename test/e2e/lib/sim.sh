# Helpers for the kbatch-sim e2e tests (sourced, not run).
#
#   SIM                      $BIN/kbatch-sim
#   TMP                      a temp directory, removed on exit
#   run NAME WANT ARGS...    runs kbatch-sim, keeping stdout and stderr in
#                            $TMP/out and $TMP/err, and checks the exit status
#   check NAME FILE TEXT     FILE has a line holding the fixed string TEXT
#   ok NAME, bad NAME        count a pass or a failure
set -euo pipefail

SIM="${BIN:?set BIN to the directory holding kbatch-sim}/kbatch-sim"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/$(basename "$0" .sh).XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }

run() {
        local name="$1" want="$2" got=0
        shift 2
        "$SIM" "$@" >"$TMP/out" 2>"$TMP/err" || got=$?
        if [ "$got" = "$want" ]; then ok "$name (exit $got)"; else
                bad "$name: exit $got, want $want"; sed 's/^/    /' "$TMP/err"; fi
}

check() {
        if grep -qF -- "$3" "$2"; then ok "$1"; else
                bad "$1: no \"$3\" in $(basename "$2")"; sed 's/^/    /' "$2" | head -40; fi
}
