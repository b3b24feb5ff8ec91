#!/usr/bin/env bash
# Stops what test/k8s/up.sh DIR started, by the pids it wrote, in reverse
# order of start, and says which component had already died (and where its
# log is): a component gone before its time is a finding.
#
#   test/k8s/down.sh DIR [--quiet]
set -uo pipefail
[ $# -ge 1 ] || { echo "usage: test/k8s/down.sh DIR" >&2; exit 2; }
DIR=$1
quiet=${2:-}
rc=0
for name in kwok kube-controller-manager kube-apiserver etcd; do
        f=$DIR/$name.pid
        [ -s "$f" ] || continue
        pid=$(cat "$f")
        if ! kill -0 "$pid" 2>/dev/null; then
                if [ "$quiet" != --quiet ]; then
                        echo "test/k8s: $name (pid $pid) had died; its log is $DIR/$name.log, which ends:" >&2
                        tail -20 "$DIR/$name.log" >&2
                fi
                rc=1
        else
                kill -TERM "$pid" 2>/dev/null
                for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
                kill -KILL "$pid" 2>/dev/null
        fi
        rm -f "$f"
done
exit $rc
