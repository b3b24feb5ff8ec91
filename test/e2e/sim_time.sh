#!/usr/bin/env bash
# kbatch-sim --until-done on examples/sim/trace-teams.yaml, whose makespan,
# waits and utilisation are worked out by hand in the file's comment: the
# JSON ("simulation"), the table, the CSV files and the SVG; then runs that
# cannot finish (a gang that never fits, the time limit) and bad input.
# Run by `make test` with BIN set to the directory holding kbatch-sim.
. "$(dirname "$0")/lib/sim.sh"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TRACE="$ROOT/examples/sim/trace-teams.yaml"

# ---- the trace, as JSON ------------------------------------------------------------

run "trace json" 0 --until-done --output json "$TRACE"
if command -v python3 >/dev/null 2>&1; then
        if python3 - "$TMP/out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
sim = doc["simulation"]
# The hand derivation in the trace's comment.
assert sim["stop"] == "Done", sim["stop"]
assert sim["makespanSeconds"] == 3600, sim["makespanSeconds"]
assert sim["start"] == "2025-01-06T08:00:00Z", sim["start"]
assert sim["averageUtilization"]["cpu"] == 0.6875, sim["averageUtilization"]
assert sim["peakUtilization"]["cpu"] == 1, sim["peakUtilization"]
q = {x["name"]: x for x in sim["queues"]}
assert q["team-a"]["waitSeconds"] == {"p50": 300, "p95": 1200, "max": 1200, "mean": 500}, q["team-a"]["waitSeconds"]
assert q["team-b"]["waitSeconds"] == {"p50": 300, "p95": 1500, "max": 1500, "mean": 900}, q["team-b"]["waitSeconds"]
assert q["team-a"]["gangs"] == 3 and q["team-a"]["finished"] == 3
# team-a holds 8 of 16 cpu until 0:30, 4 until 0:40, none until 0:55,
# 16 until 1:00: (0.5*1800 + 0.25*600 + 1*300)/3600 = 0.375.
assert q["team-a"]["averageShare"]["cpu"] == 0.375, q["team-a"]["averageShare"]
g = {x["podGroup"]: x for x in sim["podGroups"]}
want = {  # arrival, start, end, wait (seconds)
    "default/a-train": (0, 0, 1800, 0),
    "default/b-sweep": (300, 1800, 3000, 1500),
    "default/a-eval": (600, 1800, 2400, 1200),
    "default/b-tune": (2100, 2400, 3300, 300),
    "default/a-big": (3000, 3300, 3600, 300),
}
for name, (arr, start, end, wait) in want.items():
    x = g[name]
    got = (x["arrivalTime"], x["startTime"], x["endTime"], x["waitSeconds"])
    assert got == (arr, start, end, wait), (name, got)
# Utilisation: 8 of 16 cpu from 0, 16 from 0:30, 4 from 0:50, 16 from
# 0:55, none from 1:00.
u = [(p["time"], p["cpu"]) for p in sim["utilization"]]
assert u == [(0, 0.5), (1800, 1), (3000, 0.25), (3300, 1), (3600, 0)], u
# The session stream: those that changed something, with their time.
s = doc["sessions"]
assert all("time" in x for x in s)
assert s[0]["index"] == 1 and s[0]["time"] == 0
assert sorted(b["pod"] for b in s[0]["binds"]) == ["default/a-train-%d" % i for i in range(4)]
# Sessions: at 0 (a-train binds, nothing waits), 0:05 and 0:05:01 (b-sweep
# admitted, then nothing), 0:10 and 0:10:01 (a-eval likewise), 0:30 (two
# binds, nothing waits), 0:35 and 0:35:01, 0:40 (b-tune binds), 0:50 and
# 0:50:01 (a-big admitted), 0:55 (a-big binds) and 1:00 (a-big Completed).
assert sim["sessions"] == 13, sim["sessions"]
times = [x["time"] for x in s]
assert times == [0, 300, 600, 1800, 2100, 2400, 3000, 3300, 3600], times
PY
        then ok "trace json: makespan, waits, utilisation, gangs as derived by hand"; else
                bad "trace json"; head -c 3000 "$TMP/out"; echo; fi
else
        for key in '"makespanSeconds":3600' '"stop":"Done"' '"utilization":[' '"waitSeconds":{"p50":300,"p95":1200,"max":1200,"mean":500}' \
                '"startTime":1800' '"endTime":3600'; do
                check "trace json has $key" "$TMP/out" "$key"
        done
fi

# ---- the table, the CSV, the picture ---------------------------------------------

run "trace table" 0 --until-done --output table --csv "$TMP/run.csv" --plot "$TMP/run.svg" "$TRACE"
check "table: the summary line" "$TMP/out" "every gang finished; makespan 1:00:00"
check "table: cpu utilisation" "$TMP/out" "cpu        69%       100%"
check "table: team-a waits" "$TMP/out" "team-a    3       3          5m         20m        20m"
check "table: b-sweep's times" "$TMP/out" "default/b-sweep   team-b   6      0:05:00   0:30:00   0:50:00   25m"
check "csv: b-sweep" "$TMP/run-gangs.csv" "default/b-sweep,podgroup,team-b,6,6,300.000,1800.000,3000.000,1500.000,0,"
check "csv: team-b's waits" "$TMP/run-queues.csv" "team-b,2,2,2,300.000,1500.000,1500.000,900.000"
check "csv: the timeline header" "$TMP/run-timeline.csv" "time_seconds,utilization cpu,utilization memory"
check "csv: the timeline at 0:50" "$TMP/run-timeline.csv" "3000.000,0.2500,"
check "svg: an SVG document" "$TMP/run.svg" '<svg xmlns="http://www.w3.org/2000/svg"'
# The picture shows waiting (issue 23): a panel of gangs waiting per queue,
# with each queue's waits (team-b's b-sweep waits 25 minutes), a panel of
# their pending demand (team-b's b-sweep asks 12 of 16 cpu), and one small
# panel per queue of held against deserved, the deserved dashes drawn on
# top so they show where the two are equal.
check "svg: a panel of gangs waiting" "$TMP/run.svg" "Gangs waiting (arrived, not started), per queue"
check "svg: team-b's waits in its legend" "$TMP/run.svg" "team-b: wait p95 0:25:00, max 0:25:00"
check "svg: team-a's waits in its legend" "$TMP/run.svg" "team-a: wait p95 0:20:00, max 0:20:00"
check "svg: pending demand per queue" "$TMP/run.svg" "team-b: peak 75%"
check "svg: the run's waits in the heading" "$TMP/run.svg" "5 gang(s) finished; wait p95 0:25:00, max 0:25:00"
check "svg: a small panel per queue" "$TMP/run.svg" "average: held 38%, deserved 44%"
n=$(grep -c 'stroke="#111111"' "$TMP/run.svg" || true)
if [ "$n" = 2 ]; then ok "svg: a deserved line per queue, drawn over what it holds"
else bad "svg: $n deserved lines, want 2 (team-a, team-b)"; fi
if python3 - "$TMP/run.svg" <<'PY'
import re, sys
svg = open(sys.argv[1]).read()
# Each small panel draws the held fill before the deserved dashes.
fills = [m.start() for m in re.finditer(r'<polygon fill="#', svg)]
dashes = [m.start() for m in re.finditer(r'stroke="#111111"', svg)]
assert len(fills) == 2 and all(f < d for f, d in zip(fills, dashes)), (fills, dashes)
PY
then ok "svg: deserved dashes on top of the held fill"; else bad "svg: drawing order"; fi
check "svg: utilisation per resource" "$TMP/run.svg" "cpu (average 69%)"
if grep -q 'href\|<script\|<image' "$TMP/run.svg"; then
        bad "svg: refers to something outside itself"
else
        ok "svg: self-contained"
fi
if command -v rsvg-convert >/dev/null 2>&1; then
        if rsvg-convert "$TMP/run.svg" -o "$TMP/run.png" 2>"$TMP/rsvg.err"; then
                ok "svg: rsvg-convert renders it"
        else
                bad "svg: rsvg-convert: $(cat "$TMP/rsvg.err")"
        fi
fi

# ---- --progress and --summary (issue 23) ------------------------------------------

# stderr is a file here: no progress unless asked.
run "no progress when stderr is no terminal" 0 --until-done --output json "$TRACE"
if grep -q "simulated" "$TMP/err"; then bad "progress on a file unasked"; else ok "no progress unasked"; fi
run "--progress" 0 --until-done --progress --output json "$TRACE"
check "--progress: the last line" "$TMP/err" "kbatch-sim: simulated 1:00:00, 13 session(s), 5 of 5 gang(s) finished"
check "--progress: the first session" "$TMP/err" "kbatch-sim: simulated 0:00:00, 1 session(s), 0 of 5 gang(s) finished"
if grep -q $'\r' "$TMP/err"; then bad "--progress: carriage returns in a file"; else ok "--progress: whole lines in a file"; fi
run "--progress=false" 0 --until-done --progress=false --output json "$TRACE"
if grep -q "simulated" "$TMP/err"; then bad "--progress=false still shows progress"; else ok "--progress=false"; fi
run "--progress=maybe" 2 --until-done --progress=maybe "$TRACE"
check "--progress: a bad value is named" "$TMP/err" '--progress: want true or false, got "maybe"'

run "--summary table" 0 --until-done --summary --output table "$TRACE"
check "--summary: the queues" "$TMP/out" "team-a    3       3          5m         20m        20m"
if grep -q "Gangs by arrival\|default/b-sweep" "$TMP/out"; then bad "--summary: a table of gangs"
else ok "--summary: no table of gangs"; fi
run "--summary json" 0 --until-done --summary --output json "$TRACE"
if python3 - "$TMP/out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
sim = doc["simulation"]
assert doc["sessions"] == [], doc["sessions"]
assert "podGroups" not in sim and "pods" not in sim, list(sim)
assert sim["finishedGangs"]["finished"] == 5, sim["finishedGangs"]
assert {q["name"] for q in sim["queues"]} == {"default", "team-a", "team-b"}
PY
then ok "--summary json: figures, no gang lists, no sessions"; else bad "--summary json"; fi

# ---- runs that cannot finish -----------------------------------------------------

# cluster.yaml's too-big (6 pods of 6 cpu) never fits: the run stops once
# nothing else can change, names it, and exits 0.
run "a gang that never fits" 0 --until-done --output json "$ROOT/examples/sim/cluster.yaml"
check "stderr says gangs cannot run" "$TMP/err" "nothing left can change with 1 gang(s) unfinished"
check "its reason is in the JSON" "$TMP/out" '"podGroup":"default/too-big","queue":"team-b","pods":6,"minMember":6,"arrivalTime":0,"startTime":null,"endTime":null,"waitSeconds":null'
check "a Job without a PodGroup gets one" "$TMP/out" '"podGroup":"default/podgroup-job-sweep","queue":"default","pods":3,"minMember":1'
run "the same without workload PodGroups" 0 --until-done --workload-podgroups=false --output json "$ROOT/examples/sim/cluster.yaml"
check "pods without a PodGroup are gangs of their own" "$TMP/out" '"pod":"default/sweep-0","queue":"default"'

# At 0:45 b-sweep and b-tune run and a-big has not arrived: three gangs
# unfinished; the next session would be at 0:50.
# A run cut off there is no result to read as one: a warning and exit 3.
run "--time-limit" 3 --until-done --time-limit 45m --output json "$TRACE"
check "the time limit says so" "$TMP/err" "kbatch-sim: warning: stopped at --time-limit with 3 gang(s) unfinished"
check "stop is TimeLimit" "$TMP/out" '"stop":"TimeLimit"'

# The default limit fits the input: a pod declaring 800h, longer than the
# default 720h, runs to its end when every pod declares its runtime (Done,
# makespan 800h = 2,880,000 s); with one more pod that declares none (so
# runs the default 1h), the 720h limit stands and the run stops there.
cat >"$TMP/long.yaml" <<'EOF'
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}
---
apiVersion: v1
kind: Pod
metadata: {name: long, annotations: {kbatch.io/runtime: 800h}}
spec:
  schedulerName: kbatch
  containers: [{name: c, resources: {requests: {cpu: '1'}}}]
EOF
run "every runtime declared: no limit" 0 --until-done --output json "$TMP/long.yaml"
check "the 800h pod finishes" "$TMP/out" '"stop":"Done"'
check "its makespan is 800h" "$TMP/out" '"makespanSeconds":2880000'
cat "$TMP/long.yaml" >"$TMP/long2.yaml"
cat >>"$TMP/long2.yaml" <<'EOF'
---
apiVersion: v1
kind: Pod
metadata: {name: short}
spec:
  schedulerName: kbatch
  containers: [{name: c, resources: {requests: {cpu: '1'}}}]
EOF
run "a pod without a runtime: the 720h limit" 3 --until-done --output json "$TMP/long2.yaml"
check "it stops at the limit" "$TMP/out" '"stop":"TimeLimit"'

# ---- bad input ------------------------------------------------------------------------

run "--plot without --until-done" 2 --plot "$TMP/x.svg" "$TRACE"
check "--plot needs --until-done" "$TMP/err" "--plot: figures over time need --until-done"
run "--default-runtime 5x" 2 --until-done --default-runtime 5x "$TRACE"
check "--default-runtime names the unit" "$TMP/err" \
        'kbatch-sim: --default-runtime: unknown unit "x" in duration "5x"'
run "--schedule-period 0s" 2 --until-done --schedule-period 0s "$TRACE"
check "--schedule-period wants a positive period" "$TMP/err" "--schedule-period: want at least 1ms"
sed 's/kbatch.io\/runtime: 15m/kbatch.io\/runtime: 15 min/' "$TRACE" >"$TMP/badrt.yaml"
run "a bad runtime annotation" 2 --until-done "$TMP/badrt.yaml"
check "it names the pod and the annotation" "$TMP/err" \
        'pod default/b-tune-0: annotation kbatch.io/runtime: unknown unit " min" in duration "15 min"'

echo "sim_time: $pass passed, $fail failed"
[ "$fail" = 0 ]
