#!/usr/bin/env bash
# A Standard Workload Format trace (the Parallel Workloads Archive's; e.g.
# a Lublin-Feitelson model trace) as kbatch-sim --until-done input, on
# stdout: PROCS processors (default 256) as nodes of NODE_CPU cpu (default
# 8), and per job (SWF fields 2, 4, 5: submit time, run time, allocated
# processors) a PodGroup of that many one-cpu pods arriving at the submit
# time (from 2025-01-01) and running for the run time.  Jobs with no
# processors or wider than the machine are left out.
#
#   test/bench/swf.sh TRACE.swf >trace.yaml
#   bin/kbatch-sim --until-done --output json trace.yaml >out.json
set -euo pipefail
[ $# = 1 ] || { echo "usage: $0 TRACE.swf" >&2; exit 2; }
awk -v procs="${PROCS:-256}" -v cpu="${NODE_CPU:-8}" '
function stamp(t,   d, y, m, doy, mp, h) {
        # Days since 2025-01-01 to a civil date (Howard Hinnant'"'"'s algorithm).
        d = int(t / 86400) + 20089 + 719468
        era = int(d / 146097); doe = d - era * 146097
        yoe = int((doe - int(doe / 1460) + int(doe / 36524) - int(doe / 146096)) / 365)
        y = yoe + era * 400; doy = doe - (365 * yoe + int(yoe / 4) - int(yoe / 100))
        mp = int((5 * doy + 2) / 153); dd = doy - int((153 * mp + 2) / 5) + 1
        m = mp < 10 ? mp + 3 : mp - 9; if (m <= 2) y++
        h = t % 86400
        return sprintf("%04d-%02d-%02dT%02d:%02d:%02dZ", y, m, dd, int(h / 3600), int(h / 60) % 60, h % 60)
}
BEGIN {
        for (i = 1; i <= int(procs / cpu); i++)
                printf "apiVersion: v1\nkind: Node\nmetadata: {name: node-%04d}\n" \
                       "status: {allocatable: {cpu: \"%d\", memory: 64Gi, pods: \"110\"}}\n---\n", i, cpu
}
/^;/ || NF < 5 { next }
$5 > 0 && $5 <= procs {
        run = $4 > 0 ? $4 : 1
        name = sprintf("job-%05d", $1)
        printf "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
               "metadata: {name: %s, namespace: default, creationTimestamp: \"%s\"}\n" \
               "spec: {minMember: %d}\n---\n", name, stamp($2), $5
        printf "apiVersion: batch/v1\nkind: Job\n" \
               "metadata: {name: %s, namespace: default, creationTimestamp: \"%s\"}\n" \
               "spec:\n  parallelism: %d\n  template:\n    metadata:\n      annotations:\n" \
               "        scheduling.k8s.io/group-name: %s\n        kbatch.io/runtime: %ds\n" \
               "    spec:\n      schedulerName: kbatch\n      containers:\n" \
               "      - {name: w, resources: {requests: {cpu: \"1\"}}}\n---\n",
               name, stamp($2), $5, name, run
}' "$1"
