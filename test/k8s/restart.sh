#!/usr/bin/env bash
# Kills one component of a bed that test/k8s/up.sh DIR started, with
# SIGKILL, and starts it again with the same command line (kube-apiserver
# comes back on the same etcd, port and certificates), waiting until it
# serves again.
#
#   test/k8s/restart.sh DIR kube-apiserver|etcd|kube-controller-manager|kwok [--down-for SECONDS]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 2 ] || { echo "usage: test/k8s/restart.sh DIR COMPONENT [--down-for SECONDS]" >&2; exit 2; }
DIR=$(cd "$1" && pwd)
name=$2
down=${4:-0}
. "$HERE/lib.sh"
[ -s "$DIR/$name.cmd" ] || { echo "test/k8s: no $name in $DIR" >&2; exit 2; }
if k8s_alive "$name" "$DIR"; then
        pid=$(cat "$DIR/$name.pid")
        kill -KILL "$pid"
        while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
fi
sleep "$down"
mapfile -d '' cmd <"$DIR/$name.cmd"
echo "---- restarted by test/k8s/restart.sh at $(date -u +%FT%TZ)" >>"$DIR/$name.log"
k8s_start "$name" "$DIR" "${cmd[@]}"
case $name in
kube-apiserver)
        k8s_wait "$name" "$DIR" 90 curl -sf --cacert "$DIR/pki/ca.crt" \
                -H "Authorization: Bearer $(cat "$DIR/admin.token")" "$(cat "$DIR/url")/readyz" ;;
etcd)
        k8s_wait "$name" "$DIR" 30 "$DIR/bin/etcdctl" --endpoints "$(cat "$DIR/etcd.endpoint")" endpoint health ;;
*)
        sleep 1
        k8s_alive "$name" "$DIR" || { echo "test/k8s: $name exited at once; its log is $DIR/$name.log" >&2; exit 1; } ;;
esac
