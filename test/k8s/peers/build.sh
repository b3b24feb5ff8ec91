#!/usr/bin/env bash
# Builds the peers that test/bench/peers.sh measures kbatch against, from
# their upstream Go modules at pinned versions, beside the bed:
#
#   kube-scheduler  k8s.io/kubernetes/cmd/kube-scheduler, the same release
#                   as the bed's kube-apiserver (test/k8s/go.mod: its
#                   go.sum already holds everything it needs)
#   kbpeers         test/k8s/peers/kbpeers, the benchmark's pod maker,
#                   bind watcher and end-state check
#   volcano-scheduler
#                   volcano.sh/volcano cmd/scheduler at $VOLCANO_VERSION,
#                   in a module of its own (its k8s.io requirements are not
#                   the bed's), with that release's CRDs and its helm
#                   chart's scheduler conf copied beside it
#
#   test/k8s/peers/build.sh        builds what is missing; prints the folder
#                                  on its last line
#
# A peer that cannot be built leaves NAME.error in that folder, with the
# go command's own words, and the others are built all the same:
# peers.sh reports it "not built". A failed fetch of the Volcano module is
# remembered for a day rather than asked for again on every run.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
K8S=$(cd "$HERE/.." && pwd)
VOLCANO_VERSION=${VOLCANO_VERSION:-v1.14.0}
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
hash=$(cat "$K8S/go.mod" "$K8S/go.sum" "$HERE/build.sh" "$HERE"/kbpeers/*.go | sha256sum | cut -c1-16)
CACHE=${KBATCH_PEERS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kbatch/peers}
OUT=$CACHE/$hash
mkdir -p "$CACHE" "$OUT"
exec 9>"$CACHE/.lock"
flock 9
command -v go >/dev/null || { echo "test/k8s/peers: no go command on PATH" >&2; exit 1; }

kver=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' "$K8S/go.mod")
echo "$kver" >"$OUT/kube-scheduler.version"
vpkg=k8s.io/component-base/version
ldk="-s -w -X $vpkg.gitVersion=$kver -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$(echo "$kver" | cut -d. -f2) -X $vpkg.gitTreeState=clean"
build() { # NAME PACKAGE LDFLAGS, in the bed's module
        [ -x "$OUT/$1" ] && return 0
        local start=$SECONDS
        echo "test/k8s/peers: building $1 ($2)" >&2
        if (cd "$K8S" && GOFLAGS=-mod=readonly go build -trimpath -ldflags "$3" -o "$OUT/$1.tmp" "$2") >"$OUT/$1.log" 2>&1; then
                mv "$OUT/$1.tmp" "$OUT/$1"
                rm -f "$OUT/$1.log" "$OUT/$1.error"
                echo "test/k8s/peers: built $1 in $((SECONDS - start)) s" >&2
        else
                mv "$OUT/$1.log" "$OUT/$1.error"
                echo "test/k8s/peers: building $1 failed:" >&2
                tail -20 "$OUT/$1.error" >&2
        fi
}
build kbpeers ./peers/kbpeers "-s -w"
build kube-scheduler k8s.io/kubernetes/cmd/kube-scheduler "$ldk"

# ---- Volcano's scheduler ----------------------------------------------------
# Untested end to end here: the module proxy this project reaches refuses
# volcano.sh/volcano (403 "This module version is not available", for its
# version list and for every version asked: v1.12.2, v1.13.0, v1.14.0, and
# as github.com/volcano-sh/volcano). What follows is what would build it.
V=$OUT/volcano-$VOLCANO_VERSION
echo "$VOLCANO_VERSION" >"$OUT/volcano-scheduler.version"
if [ ! -x "$V/volcano-scheduler" ] && ! { [ -f "$V.error" ] && [ -n "$(find "$V.error" -mmin -1440)" ]; }; then
        rm -rf "$V" "$V.error"
        mkdir -p "$V/mod"
        echo "test/k8s/peers: fetching volcano.sh/volcano@$VOLCANO_VERSION" >&2
        set +e
        (
                set -e
                cd "$V/mod"
                go mod init kbatch.test/peers/volcano
                # Volcano's go.mod carries the replaces its k8s.io modules
                # need; a module requiring it does not inherit them, so
                # they are copied over.
                go mod download -json "volcano.sh/volcano@$VOLCANO_VERSION" >dl.json ||
                        { sed -n 's/^\t"Error": //p' dl.json; exit 1; }
                dir=$(python3 -c 'import json,sys; print(json.load(open("dl.json"))["Dir"])')
                go mod edit -require "volcano.sh/volcano@$VOLCANO_VERSION"
                sed -n '/^replace (/,/^)/p; /^replace [^(]/p' "$dir/go.mod" >>go.mod
                GOFLAGS=-mod=mod go mod tidy -e >/dev/null 2>&1 || true
                GOFLAGS=-mod=mod go get "volcano.sh/volcano/cmd/scheduler@$VOLCANO_VERSION"
                GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o "$V/volcano-scheduler" volcano.sh/volcano/cmd/scheduler
                mkdir -p "$V/crds"
                find "$dir/config/crd" -path '*bases*' -name '*.yaml' -exec cp {} "$V/crds/" \;
                cp "$dir/installer/helm/chart/volcano/config/volcano-scheduler.conf" "$V/volcano-scheduler.conf"
        ) >"$V.log" 2>&1
        rc=$?
        set -e
        if [ $rc != 0 ] || [ ! -x "$V/volcano-scheduler" ]; then
                mv "$V.log" "$V.error"
                echo "test/k8s/peers: Volcano's scheduler not built:" >&2
                grep -v '^go: finding\|^go: downloading' "$V.error" | tail -5 >&2
        else
                rm -f "$V.log"
                echo "test/k8s/peers: built volcano-scheduler $VOLCANO_VERSION" >&2
        fi
fi
if [ -x "$V/volcano-scheduler" ]; then
        ln -sfn "$V/volcano-scheduler" "$OUT/volcano-scheduler"
        ln -sfn "$V/crds" "$OUT/volcano-crds"
        ln -sfn "$V/volcano-scheduler.conf" "$OUT/volcano-scheduler.conf"
        rm -f "$OUT/volcano-scheduler.error"
else
        cp "$V.error" "$OUT/volcano-scheduler.error"
fi
find "$CACHE" -mindepth 1 -maxdepth 1 -type d ! -name "$hash" -mtime +7 -exec rm -rf {} + 2>/dev/null || true
echo "$OUT"
