/*
 * Simulated nodes: --nodes "4:cpu=8,memory=32Gi,pods=110,nvidia.com/gpu=8,label=k=v"
 * creates Ready nodes node-1..node-4 (prefix=NAME changes "node"), each
 * with a lease in kube-node-lease.
 */
#include "kubesim/kubesim-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

int kb_kubesim_add_nodes(struct kb_apiserver *srv, const char *spec, char *err, size_t errlen)
{
        char *copy = kb_xstrdup(spec);
        char *colon = strchr(copy, ':');
        struct kb_value *res = kb_value_new(KB_VOBJECT);
        struct kb_value *labels = kb_value_new(KB_VOBJECT);
        const char *prefix = "node";
        int rc = KB_EBADINPUT;
        long count = strtol(copy, NULL, 10);
        if (!colon || count <= 0 || count > 100000) {
                snprintf(err, errlen, "--nodes %s: want COUNT:cpu=N,memory=Q,...", spec);
                goto out;
        }
        char *save = NULL;
        for (char *t = strtok_r(colon + 1, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(t, '=');
                if (!eq) {
                        snprintf(err, errlen, "--nodes %s: %s: want name=value", spec, t);
                        goto out;
                }
                *eq = 0;
                const char *val = eq + 1;
                if (!strcmp(t, "label")) {
                        const char *leq = strchr(val, '=');
                        char *k = kb_xstrndup(val, leq ? (size_t)(leq - val) : strlen(val));
                        kb_value_set(labels, k, kb_value_new_string(leq ? leq + 1 : ""));
                        free(k);
                } else if (!strcmp(t, "prefix")) {
                        if (!kb_dns_label(val)) {
                                snprintf(err, errlen, "--nodes %s: prefix %s: not a DNS label",
                                         spec, val);
                                goto out;
                        }
                        prefix = val;
                } else {
                        int64_t q;
                        if (kb_quantity_parse(val, true, &q) || q < 0) {
                                snprintf(err, errlen, "--nodes %s: %s: bad quantity %s", spec, t,
                                         val);
                                goto out;
                        }
                        kb_value_set(res, t, kb_value_new_string(val));
                }
        }
        if (!kb_value_get(res, "pods"))
                kb_value_set(res, "pods", kb_value_new_string("110"));
        struct kb_rtype *nodes = kb__type_find(srv, "", "v1", "nodes");
        struct kb_rtype *leases = kb__type_find(srv, "coordination.k8s.io", "v1", "leases");
        char ts[40];
        kb_format_time(kb__now(), ts, sizeof(ts));
        long idx = 1;
        for (long made = 0; made < count; idx++) {
                char name[96];
                snprintf(name, sizeof(name), "%s-%ld", prefix, idx);
                if (kb__obj_find(nodes, NULL, name))
                        continue;
                made++;
                struct kb_value *n = kb_value_new(KB_VOBJECT);
                kb_value_set(n, "kind", kb_value_new_string("Node"));
                kb_value_set(n, "apiVersion", kb_value_new_string("v1"));
                struct kb_value *md = kb_value_ensure_object(n, "metadata");
                kb_value_set(md, "name", kb_value_new_string(name));
                struct kb_value *l = kb_value_ensure_object(md, "labels");
                kb_value_set(l, "kubernetes.io/arch", kb_value_new_string("amd64"));
                kb_value_set(l, "kubernetes.io/hostname", kb_value_new_string(name));
                kb_value_set(l, "kubernetes.io/os", kb_value_new_string("linux"));
                for (size_t i = 0; i < labels->obj.n; i++)
                        kb_value_set(l, labels->obj.m[i].key, kb_value_clone(labels->obj.m[i].val));
                kb_value_set(kb_value_ensure_object(md, "annotations"), "kbatch.io/simulated",
                             kb_value_new_string("true"));
                kb_value_set(n, "spec", kb_value_new(KB_VOBJECT));
                struct kb_value *st = kb_value_ensure_object(n, "status");
                kb_value_set(st, "capacity", kb_value_clone(res));
                kb_value_set(st, "allocatable", kb_value_clone(res));
                struct kb_value *conds = kb_value_new(KB_VARRAY);
                static const char *const pressure[][2] = {
                    {"MemoryPressure", "KubeletHasSufficientMemory"},
                    {"DiskPressure", "KubeletHasNoDiskPressure"},
                    {"PIDPressure", "KubeletHasSufficientPID"},
                };
                for (size_t i = 0; i < 3; i++) {
                        struct kb_value *c =
                            kb__condition(pressure[i][0], "False", pressure[i][1], ts);
                        kb_value_set(c, "lastHeartbeatTime", kb_value_new_string(ts));
                        kb_value_del(c, "lastProbeTime");
                        kb_value_set(c, "message",
                                     kb_value_new_string("simulated by kbatch-apiserver"));
                        kb_value_append(conds, c);
                }
                struct kb_value *rc_ = kb__condition("Ready", "True", "KubeletReady", ts);
                kb_value_set(rc_, "lastHeartbeatTime", kb_value_new_string(ts));
                kb_value_del(rc_, "lastProbeTime");
                kb_value_set(rc_, "message",
                             kb_value_new_string("kubelet is posting ready status (simulated)"));
                kb_value_append(conds, rc_);
                kb_value_set(st, "conditions", conds);
                struct kb_value *addrs = kb_value_new(KB_VARRAY);
                struct kb_value *a = kb_value_new(KB_VOBJECT);
                char ip[32];
                unsigned k = ++srv->next_ip;
                snprintf(ip, sizeof(ip), "10.0.%u.%u", (k >> 8) & 0xff, k & 0xff);
                kb_value_set(a, "type", kb_value_new_string("InternalIP"));
                kb_value_set(a, "address", kb_value_new_string(ip));
                kb_value_append(addrs, a);
                a = kb_value_new(KB_VOBJECT);
                kb_value_set(a, "type", kb_value_new_string("Hostname"));
                kb_value_set(a, "address", kb_value_new_string(name));
                kb_value_append(addrs, a);
                kb_value_set(st, "addresses", addrs);
                struct kb_value *ni = kb_value_ensure_object(st, "nodeInfo");
                kb_value_set(ni, "architecture", kb_value_new_string("amd64"));
                kb_value_set(ni, "operatingSystem", kb_value_new_string("linux"));
                kb_value_set(ni, "osImage", kb_value_new_string("kbatch simulated node"));
                kb_value_set(ni, "kernelVersion", kb_value_new_string("6.1.0-sim"));
                kb_value_set(ni, "containerRuntimeVersion", kb_value_new_string("sim://1.0"));
                kb_value_set(ni, "kubeletVersion", kb_value_new_string("v1.32.0"));
                kb_value_set(ni, "kubeProxyVersion", kb_value_new_string("v1.32.0"));
                kb_value_set(ni, "machineID", kb_value_new_string(""));
                kb_value_set(ni, "systemUUID", kb_value_new_string(""));
                kb_value_set(ni, "bootID", kb_value_new_string(""));
                kb__prepare_create(srv, nodes, n);
                kb__store_put(srv, nodes, n);

                struct kb_value *ls = kb_value_new(KB_VOBJECT);
                kb_value_set(ls, "kind", kb_value_new_string("Lease"));
                kb_value_set(ls, "apiVersion", kb_value_new_string("coordination.k8s.io/v1"));
                md = kb_value_ensure_object(ls, "metadata");
                kb_value_set(md, "name", kb_value_new_string(name));
                kb_value_set(md, "namespace", kb_value_new_string("kube-node-lease"));
                struct kb_value *lspec = kb_value_ensure_object(ls, "spec");
                kb_value_set(lspec, "holderIdentity", kb_value_new_string(name));
                kb_value_set(lspec, "leaseDurationSeconds", kb_value_new_int(40));
                /* A MicroTime: clients parse it with exactly six decimals. */
                char micro[48];
                snprintf(micro, sizeof(micro), "%.19s.000000Z", ts);
                kb_value_set(lspec, "renewTime", kb_value_new_string(micro));
                kb__prepare_create(srv, leases, ls);
                kb__store_put(srv, leases, ls);
        }
        rc = 0;
out:
        kb_value_free(res);
        kb_value_free(labels);
        free(copy);
        return rc;
}
