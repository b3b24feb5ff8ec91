#!/usr/bin/env bash
# Runs the tests for make test, make unit, make e2e and make e2e-k8s: one
# test per call, so that make -jN runs N of them at a time, then a summary.
#
#   test/run.sh one RESULT COMMAND...
#       runs COMMAND (a unit test binary, or bash test/e2e/NAME.sh) with its
#       output in RESULT.log and its own temporary folder RESULT.tmp (as
#       TMPDIR: every mktemp of the test lands there), and writes
#       "pass|fail|skip SECONDS CPU-SECONDS" to RESULT. Prints one line; a failure also
#       prints the last 60 lines of the log (all of it with V=1). Exits 0
#       whatever the test did, so that make goes on with the others.
#       RESULT is RESULTS/SUITE/NAME.
#   test/run.sh summary RESULTS START SUITE...
#       one line per suite (passed, failed, skipped, the sum of its tests'
#       wall and CPU times, the slowest three), the wall time since START (seconds
#       since the epoch), and the last line "N passed, M failed" over
#       all suites. Exits 1 when a test failed or a suite ran no test.
#
# A passing test shows nothing but its line: the errors and warnings that
# negative tests provoke on purpose stay in its log. A test exits 77 to say
# it was skipped (lib/scheduler.sh's needs_server); the last line of its
# log says why. KEEP_TMP=1 keeps a passing test's temporary folder (a
# failing one's is always kept, next to its log).
set -uo pipefail

one() {
        local res=$1
        shift
        local name=${res#*/results/} log=$res.log tmp=$res.tmp rc=0
        mkdir -p "$(dirname "$res")"
        rm -rf "$tmp" "$log" "$res"
        mkdir -p "$tmp"
        tmp=$(cd "$tmp" && pwd) # absolute: the test may cd
        # The wall time, and the CPU time of the test and of every process
        # it waited for (its servers and schedulers).
        local TIMEFORMAT='%R %U %S' secs cpu
        { time TMPDIR=$tmp "$@" >"$log" 2>&1 </dev/null; } 2>"$res.time" || rc=$?
        read -r secs cpu <<<"$(awk '{ printf "%.1f %.1f", $1, $2 + $3 }' "$res.time")"
        rm -f "$res.time"
        local verdict=fail
        case $rc in 0) verdict=pass ;; 77) verdict=skip ;; esac
        echo "$verdict $secs $cpu" >"$res"
        # What the test counted: an e2e script's "NAME: P passed, F failed",
        # cmocka's "[  PASSED  ] N test(s)".
        local what
        what=$(grep -Eo '[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
        [ -n "$what" ] || what=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\.$/\1 passed/p' "$log" | tail -1)
        case $verdict in
        pass)
                printf '  ok    %-34s %6s s  %s\n' "$name" "$secs" "${what:+($what)}"
                [ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"
                [ -z "${V:-}" ] || sed 's/^/        | /' "$log"
                ;;
        skip)
                printf '  skip  %-34s %6s s  %s\n' "$name" "$secs" "$(tail -1 "$log")"
                rm -rf "$tmp"
                ;;
        fail)
                printf '  FAIL  %-34s %6s s  exit %s; log: %s\n' "$name" "$secs" "$rc" "$log"
                if [ -n "${V:-}" ]; then sed 's/^/        | /' "$log"
                else tail -60 "$log" | sed 's/^/        | /'; fi
                ;;
        esac
        return 0
}

summary() {
        local results=$1 start=$2
        shift 2
        local suite f v s c tp=0 tf=0 ts=0 bad=0
        for suite in "$@"; do
                local p=0 fl=0 sk=0 sum=0 cpu=0 failed=""
                for f in "$results/$suite"/*; do
                        case $f in *.log | *.tmp | *"/*") continue ;; esac
                        [ -f "$f" ] || continue
                        read -r v s c <"$f"
                        sum=$(awk -v a="$sum" -v b="$s" 'BEGIN { print a + b }')
                        cpu=$(awk -v a="$cpu" -v b="${c:-0}" 'BEGIN { print a + b }')
                        case $v in
                        pass) p=$((p + 1)) ;;
                        skip) sk=$((sk + 1)) ;;
                        *) fl=$((fl + 1)); failed="$failed $(basename "$f")" ;;
                        esac
                done
                if [ $((p + fl + sk)) = 0 ]; then
                        echo "$suite: no test ran"
                        bad=1
                        continue
                fi
                local slow
                slow=$(for f in "$results/$suite"/*; do
                        case $f in *.log | *.tmp) continue ;; esac
                        [ -f "$f" ] && echo "$(cut -d' ' -f2 "$f") $(basename "$f")"
                done | sort -rn | head -3 | awk '{ printf "%s%s %s s", (NR > 1 ? ", " : ""), $2, $1 }')
                printf '%s: %d passed, %d failed, %d skipped; %s s of test time, %s s of CPU (slowest: %s)\n' \
                        "$suite" "$p" "$fl" "$sk" "$(printf '%.0f' "$sum")" "$(printf '%.0f' "$cpu")" "$slow"
                [ -z "$failed" ] || echo "$suite: FAILED:$failed (logs in $results/$suite/)"
                tp=$((tp + p)) tf=$((tf + fl)) ts=$((ts + sk))
        done
        local wall=$(($(date +%s) - start))
        echo "all suites: $((wall / 60)) min $((wall % 60)) s of wall time, the build included; $ts skipped"
        echo "$tp passed, $tf failed"
        [ "$tf" = 0 ] && [ "$bad" = 0 ]
}

cmd=${1:-}
shift || true
case $cmd in
one) one "$@" ;;
summary) summary "$@" ;;
*) echo "usage: test/run.sh one RESULT COMMAND... | summary RESULTS START SUITE..." >&2; exit 2 ;;
esac
