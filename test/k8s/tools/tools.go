//go:build tools

// Package tools names the programs test/k8s/build.sh builds, so that go.mod
// and go.sum pin every module they need.
package tools

import (
	_ "go.etcd.io/etcd/etcdctl/v3"
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "sigs.k8s.io/kwok/cmd/kwok"
)
