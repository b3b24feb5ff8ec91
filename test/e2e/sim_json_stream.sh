#!/usr/bin/env bash
# kbatch-sim --output json writes each session as it ends, not the whole
# run at the end (a long timed run held 1.66 GB that way; now its peak is
# what the table output's is).  Checked without timing: a reader takes the
# first bytes of the document from a pipe and then stops reading.  Every
# session here writes some 300 KB, more than a pipe holds, so kbatch-sim,
# streaming, blocks within its first sessions; --stats prints a line per
# session on stderr, and at most the first few may be there.  A kbatch-sim
# that built the document first would have run all the sessions by then.
. "$(dirname "$0")/lib/sim.sh"

SESSIONS=12
SPEC=nodes=2,node-cpu=4,groups=1200,group-size=4,pod-cpu=2
mkfifo "$TMP/pipe"
"$SIM" --synthetic "$SPEC" --sessions "$SESSIONS" --output json --stats \
        >"$TMP/pipe" 2>"$TMP/err" &
sim=$!
exec 3<"$TMP/pipe"
head -c 64 <&3 >"$TMP/first"
done_before=$(grep -c '^session [0-9]*:' "$TMP/err" || true)
cat <&3 >"$TMP/rest"
exec 3<&-
got=0
wait "$sim" || got=$?
if [ "$got" = 0 ]; then ok "the run ends (exit 0)"; else bad "exit $got"; sed 's/^/    /' "$TMP/err"; fi
if [ "$done_before" -le 3 ]; then
        ok "the first session is out before the run goes on ($done_before session(s) done)"
else
        bad "the document began only after $done_before of $SESSIONS sessions: the run is buffered"
fi
check "it starts the document" "$TMP/first" '{"sessions":[{"index":1,'
cat "$TMP/first" "$TMP/rest" >"$TMP/out"
# Still one JSON document, every session in it, in order.
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d) == ["sessions"], list(d)
assert [s["index"] for s in d["sessions"]] == list(range(1, int(sys.argv[2]) + 1))
assert len(d["sessions"][0]["podGroups"]) == 1200
' "$TMP/out" "$SESSIONS"; then ok "one JSON document with the $SESSIONS sessions"; else
        bad "the output is not the one document"; fi

# A timed run ends its document with the "simulation" report.
run "a timed run as JSON" 0 --synthetic nodes=2,node-cpu=4,groups=20,group-size=2,pod-cpu=2,interval=1m,runtime=5m \
        --until-done --output json
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d) == ["sessions", "simulation"], list(d)
assert d["sessions"] and d["simulation"]["stop"] == "Done", d["simulation"].keys()
assert len(d["simulation"]["podGroups"]) == 20
' "$TMP/out"; then ok "the timed document holds sessions, then the simulation"; else
        bad "the timed document"; head -c 600 "$TMP/out"; fi

echo "sim_json_stream: $pass passed, $fail failed"
[ "$fail" = 0 ]
