#!/usr/bin/env bash
# The scheduler's end-to-end tests against the real bed (make e2e-k8s, and
# make test after the kbatch-apiserver run).
#
#   test/k8s/suite.sh BIN TEST.sh...
#   test/k8s/suite.sh --prepare   only the checks and the bed's build below:
#                                 exit 0 ready, 3 skipped (said why), 1 failed
#                                 (make test runs the tests itself, in
#                                 parallel with the others: test/run.sh)
#
# KBATCH_K8S chooses:
#   (unset)   run when a Go new enough for test/k8s/go.mod is on PATH; else
#             say in one line that the suite was skipped and how to get Go
#   skip      skip on purpose, saying so
#   require   as unset, but no Go (or a bed that cannot be built) fails the
#             run: .ci/run sets it, so CI never skips silently
# A test that needs kbatch-apiserver (its fault injection, its own
# transport) says so and exits 77: counted as skipped, with its reason.
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${1:?usage: test/k8s/suite.sh BIN TEST.sh... | --prepare}
shift
skipped_rc=0
[ "$BIN" = --prepare ] && skipped_rc=3
mode=${KBATCH_K8S:-auto}
case $mode in auto | skip | require) ;; *) echo "KBATCH_K8S=$mode: want skip or require"; exit 2 ;; esac
if [ "$mode" = skip ]; then
        echo "e2e-k8s: skipped on purpose (KBATCH_K8S=skip): the tests ran against kbatch-apiserver only"
        exit $skipped_rc
fi
want=$(awk '$1 == "go" { print $2 }' "$HERE/go.mod")
have=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
if [ -z "$have" ] || [ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1)" != "$want" ]; then
        echo "e2e-k8s: skipped: the real-server suite needs Go >= $want on PATH (found: ${have:-none}); install it (https://go.dev/doc/install) and run make e2e-k8s"
        [ "$mode" = require ] && { echo "e2e-k8s: KBATCH_K8S=require: a skip is a failure"; exit 1; }
        exit $skipped_rc
fi
start=$SECONDS
echo "e2e-k8s: building the bed (test/k8s/build.sh; minutes the first time, cached after)"
if ! "$HERE/build.sh" >/dev/null; then
        echo "e2e-k8s: the bed could not be built (the error is above)"
        exit 1
fi
echo "e2e-k8s: bed ready in $((SECONDS - start)) s: $("$HERE/build.sh" --dir)"
[ "$BIN" = --prepare ] && exit 0
pass=0 fail=0 skip=0 skipped=""
for t in "$@"; do
        echo "== $t (real API server)"
        rc=0
        KBATCH_E2E_SERVER=k8s BIN=$BIN bash "$t" || rc=$?
        case $rc in
        0) pass=$((pass + 1)) ;;
        77) skip=$((skip + 1)); skipped="$skipped $(basename "$t" .sh)" ;;
        *) fail=$((fail + 1)); echo "FAILED (real API server): $t" ;;
        esac
done
[ -z "$skipped" ] || echo "e2e-k8s: skipped by their own say (see each one's reason above):$skipped"
echo "e2e-k8s: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
