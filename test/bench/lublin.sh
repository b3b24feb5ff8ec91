#!/usr/bin/env bash
# A whole SWF trace (Lublin's 256-processor log in docs/PERFORMANCE.md)
# under greedy, EASY and conservative backfilling: kbatch's built-in conf
# (test/bench/conf.sh), and it with the reservation plugin at depth 1 and
# at depth all (resolution 60 s, the plugin's default).  One row each:
# sessions, wall time, mean wait, mean bounded slowdown, the longest wait
# of wide gangs (half the machine or more) and utilisation, from
# kbatch-sim's table report.  Not part of make bench: each run takes
# minutes.
#
#   test/bench/lublin.sh TRACE.swf [CONF...]     CONF: greedy easy conservative
set -euo pipefail
cd "$(dirname "$0")/../.."
SIM=${SIM:-bin/kbatch-sim}
trace=${1:?usage: test/bench/lublin.sh TRACE.swf [greedy|easy|conservative ...]}
shift
confs=("$@")
[ ${#confs[@]} -gt 0 ] || confs=(greedy easy conservative)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. test/bench/conf.sh
conf >"$tmp/greedy.conf"
{ cat "$tmp/greedy.conf"; printf '  - name: reservation\n    arguments: {depth: 1}\n'; } >"$tmp/easy.conf"
{ cat "$tmp/greedy.conf"; printf '  - name: reservation\n    arguments: {depth: all}\n'; } \
  >"$tmp/conservative.conf"
printf '| %-12s | %-8s | %-8s | %-10s | %-16s | %-20s | %-11s |\n' conf sessions wall \
  "mean wait" "bounded slowdown" "longest wide wait" utilisation
printf '|%s|%s|%s|%s|%s|%s|%s|\n' -------------- ---------- ---------- ------------ \
  ------------------ ---------------------- -------------
for c in "${confs[@]}"; do
  [ -f "$tmp/$c.conf" ] || { echo "lublin: no conf $c (greedy, easy, conservative)" >&2; exit 2; }
  "$SIM" --swf "$trace" --until-done --output table --scheduler-conf "$tmp/$c.conf" \
    >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  sessions=$(sed -n 's/^Simulated .* in \([0-9]*\) session(s) (\([0-9.]*\)s).*/\1/p' "$tmp/out")
  wall=$(sed -n 's/^Simulated .* in \([0-9]*\) session(s) (\([0-9.]*\)s).*/\2/p' "$tmp/out")
  wait=$(sed -n 's/^Finished gangs: .* wait mean [^(]*(\([0-9.]*s\)).*/\1/p' "$tmp/out")
  bsld=$(sed -n 's/^ *mean bounded slowdown \([0-9.]*\).*/\1/p' "$tmp/out")
  wide=$(sed -n 's/^ *wide gangs .*longest wait [^(]*(\([0-9]*s\)).*/\1/p' "$tmp/out")
  util=$(awk '$1 == "cpu" { print $2; exit }' "$tmp/out")
  printf '| %-12s | %-8s | %-8s | %-10s | %-16s | %-20s | %-11s |\n' "$c" "$sessions" \
    "${wall}s" "$wait" "$bsld" "$wide" "$util"
done
