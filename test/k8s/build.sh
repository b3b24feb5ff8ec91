#!/usr/bin/env bash
# Builds the real Kubernetes test bed from the upstream Go modules that
# go.mod pins: kube-apiserver and kube-controller-manager (k8s.io/kubernetes),
# etcd and etcdctl (go.etcd.io/etcd), kwok (sigs.k8s.io/kwok); and kbload
# (cmd/kbload), the scale benchmark's load generator.
#
#   test/k8s/build.sh            builds what is missing, prints the folder
#                                holding the programs on its last line
#   test/k8s/build.sh --dir      prints that folder without building
#
# The programs go into a cache outside the source tree, one folder per
# go.mod/go.sum/build.sh/cmd content: $KBATCH_K8S_CACHE (default
# ${XDG_CACHE_HOME:-~/.cache}/kbatch/k8s)/<hash>. A clone, a CI run or a
# later session on the same machine reuses them; a change of go.mod builds
# anew. The first build on a fresh machine downloads about 400 MB of
# modules and compiles for several minutes on two cores.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS=-mod=readonly
hash=$(cat "$HERE/go.mod" "$HERE/go.sum" "$HERE/build.sh" "$HERE"/cmd/*/*.go | sha256sum | cut -c1-16)
CACHE=${KBATCH_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kbatch/k8s}
OUT=$CACHE/$hash
if [ "${1:-}" = --dir ]; then echo "$OUT"; exit 0; fi

# name=package, in build order (the smallest first, so a broken toolchain
# shows in seconds).
PROGS="etcd=go.etcd.io/etcd/server/v3
etcdctl=go.etcd.io/etcd/etcdctl/v3
kwok=sigs.k8s.io/kwok/cmd/kwok
kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver
kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager
kbload=./cmd/kbload"

# One build at a time per cache (two test runs may start together).
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
need=
for p in $PROGS; do [ -x "$OUT/${p%%=*}" ] || need="$need $p"; done
if [ -z "$need" ]; then touch "$OUT"; echo "$OUT"; exit 0; fi

command -v go >/dev/null || { echo "test/k8s: no go command on PATH" >&2; exit 1; }
mkdir -p "$OUT.tmp"
kver=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' "$HERE/go.mod")
minor=$(echo "$kver" | cut -d. -f2)
# What kube-apiserver reports as its version (without it: v0.0.0-master).
vpkg=k8s.io/component-base/version
ldk="-s -w -X $vpkg.gitVersion=$kver -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor -X $vpkg.gitTreeState=clean"
cd "$HERE"
echo "test/k8s: downloading modules (go mod download; about 400 MB the first time)" >&2
go mod download
for p in $need; do
        name=${p%%=*} pkg=${p#*=}
        start=$SECONDS
        echo "test/k8s: building $name ($pkg)" >&2
        flags="-s -w"
        case $pkg in k8s.io/kubernetes/*) flags=$ldk ;; esac
        # go build -v names each package as it compiles it: a dot per 50
        # packages shows progress; the log keeps everything for an error.
        set +e
        go build -v -trimpath -ldflags "$flags" -o "$OUT.tmp/$name" "$pkg" 2>&1 |
                tee "$OUT.tmp/$name.log" | awk 'NR % 50 == 0 { printf "." > "/dev/stderr" }'
        rc=${PIPESTATUS[0]}
        set -e
        echo >&2
        if [ "$rc" != 0 ] || [ ! -x "$OUT.tmp/$name" ]; then
                echo "test/k8s: building $name failed (go build exit $rc); the error:" >&2
                grep -v '^[a-zA-Z0-9._/~-]*$' "$OUT.tmp/$name.log" | tail -40 >&2
                exit 1
        fi
        echo "test/k8s: built $name in $((SECONDS - start)) s" >&2
done
mkdir -p "$OUT"
mv "$OUT.tmp"/* "$OUT"/ 2>/dev/null || true
rm -rf "$OUT.tmp" "$OUT"/*.log
# Builds of other go.mod versions that nothing used for a week go.
find "$CACHE" -mindepth 1 -maxdepth 1 -type d ! -name "$hash" -mtime +7 -exec rm -rf {} + 2>/dev/null || true
echo "$OUT"
