/*
 * Simulation, so a job manifest runs end to end with no kubelet and no
 * controller manager.  Runs on the simulation thread, one tick at a time,
 * with srv->mu held.
 *
 *  - Nodes: --nodes "4:cpu=8,memory=32Gi,pods=110,nvidia.com/gpu=8,label=k=v"
 *    creates Ready nodes node-1..node-4 (prefix=NAME changes "node").
 *  - Kubelet: a bound Pending pod becomes Running (conditions, podIP,
 *    startTime, containerStatuses); with annotation kbatch.io/sim-duration
 *    it then ends Succeeded after that long (Failed when
 *    kbatch.io/sim-exit-code is not 0).  A pod deleted with a grace period
 *    goes once the period is over.
 *  - Job controller: keeps min(parallelism, completions - succeeded) pods
 *    active, replaces failed ones up to backoffLimit, and sets Complete or
 *    Failed.
 */
#include "apiserver/apiserver-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

static struct kb_value *condition(const char *type, const char *status, const char *reason,
                                  const char *ts)
{
        struct kb_value *c = kb_value_new(KB_VOBJECT);
        kb_value_set(c, "type", kb_value_new_string(type));
        kb_value_set(c, "status", kb_value_new_string(status));
        kb_value_set(c, "lastProbeTime", kb_value_new(KB_VNULL));
        kb_value_set(c, "lastTransitionTime", kb_value_new_string(ts));
        if (reason)
                kb_value_set(c, "reason", kb_value_new_string(reason));
        return c;
}

int kb__sim_add_nodes(struct kb_apiserver *srv, const char *spec, char *err, size_t errlen)
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
                        if (!kb__is_dns_label(val)) {
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
                        struct kb_value *c = condition(pressure[i][0], "False", pressure[i][1], ts);
                        kb_value_set(c, "lastHeartbeatTime", kb_value_new_string(ts));
                        kb_value_del(c, "lastProbeTime");
                        kb_value_set(c, "message",
                                     kb_value_new_string("simulated by kbatch-apiserver"));
                        kb_value_append(conds, c);
                }
                struct kb_value *rc_ = condition("Ready", "True", "KubeletReady", ts);
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

/* ---- kubelet ------------------------------------------------------------------ */

/* "30s", "2m", "1h30m", "1.5s", or a plain number of seconds. */
static bool parse_duration(const char *s, double *out)
{
        double total = 0;
        const char *p = s;
        if (!s || !*s)
                return false;
        while (*p) {
                char *end;
                double v = strtod(p, &end);
                if (end == p || v < 0)
                        return false;
                p = end;
                double unit = 1;
                if (!strncmp(p, "ms", 2)) {
                        unit = 0.001;
                        p += 2;
                } else if (*p == 's') {
                        p++;
                } else if (*p == 'm') {
                        unit = 60;
                        p++;
                } else if (*p == 'h') {
                        unit = 3600;
                        p++;
                } else if (*p) {
                        return false;
                }
                total += v * unit;
        }
        *out = total;
        return true;
}

static void set_condition(struct kb_value *conds, struct kb_value *c)
{
        const char *type = kb_value_str(kb_value_get(c, "type"));
        for (size_t i = 0; i < conds->arr.n; i++) {
                if (kb_streq(kb_value_str(kb_value_get(conds->arr.v[i], "type")), type)) {
                        kb_value_free(conds->arr.v[i]);
                        conds->arr.v[i] = c;
                        return;
                }
        }
        kb_value_append(conds, c);
}

static struct kb_value *conds_of(struct kb_value *st)
{
        struct kb_value *conds = kb_value_get(st, "conditions");
        if (!kb_value_is(conds, KB_VARRAY)) {
                conds = kb_value_new(KB_VARRAY);
                kb_value_set(st, "conditions", conds);
        }
        return conds;
}

static const struct kb_value *find_node(struct kb_apiserver *srv, const char *name)
{
        struct kb_rtype *nodes = kb__type_find(srv, "", "v1", "nodes");
        struct kb_obj *o = kb__obj_find(nodes, NULL, name);
        return o ? o->doc->v : NULL;
}

static void pod_start(struct kb_apiserver *srv, struct kb_rtype *pods, const struct kb_value *old,
                      const struct kb_value *node)
{
        struct kb_value *pod = kb_value_clone(old);
        struct kb_value *st = kb_value_ensure_object(pod, "status");
        char ts[40], ip[32];
        kb_format_time(kb__now(), ts, sizeof(ts));
        unsigned k = ++srv->next_ip;
        snprintf(ip, sizeof(ip), "10.244.%u.%u", (k >> 8) & 0xff, k & 0xff);
        kb_value_set(st, "phase", kb_value_new_string("Running"));
        struct kb_value *conds = conds_of(st);
        const char *types[] = {"PodReadyToStartContainers", "Initialized", "Ready",
                               "ContainersReady", "PodScheduled"};
        for (size_t i = 0; i < KB_ARRAY_SIZE(types); i++)
                set_condition(conds, condition(types[i], "True", NULL, ts));
        const struct kb_value *addrs = kb_value_dig(node, "status", "addresses");
        for (size_t i = 0; kb_value_is(addrs, KB_VARRAY) && i < addrs->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_get(addrs->arr.v[i], "type")), "InternalIP"))
                        kb_value_set(st, "hostIP",
                                     kb_value_clone(kb_value_get(addrs->arr.v[i], "address")));
        kb_value_set(st, "podIP", kb_value_new_string(ip));
        struct kb_value *ips = kb_value_new(KB_VARRAY);
        struct kb_value *pip = kb_value_new(KB_VOBJECT);
        kb_value_set(pip, "ip", kb_value_new_string(ip));
        kb_value_append(ips, pip);
        kb_value_set(st, "podIPs", ips);
        kb_value_set(st, "startTime", kb_value_new_string(ts));
        struct kb_value *css = kb_value_new(KB_VARRAY);
        const struct kb_value *cs = kb_value_dig(pod, "spec", "containers");
        for (size_t i = 0; kb_value_is(cs, KB_VARRAY) && i < cs->arr.n; i++) {
                struct kb_value *s = kb_value_new(KB_VOBJECT);
                const struct kb_value *name = kb_value_get(cs->arr.v[i], "name");
                const struct kb_value *image = kb_value_get(cs->arr.v[i], "image");
                kb_value_set(s, "name", name ? kb_value_clone(name) : kb_value_new_string(""));
                kb_value_set(s, "image", image ? kb_value_clone(image) : kb_value_new_string(""));
                kb_value_set(s, "imageID", kb_value_new_string(""));
                char *cid = kb_xasprintf("sim://%016" PRIx64, kb__rand(srv));
                kb_value_set(s, "containerID", kb_value_new_string(cid));
                free(cid);
                kb_value_set(s, "ready", kb_value_new_bool(true));
                kb_value_set(s, "started", kb_value_new_bool(true));
                kb_value_set(s, "restartCount", kb_value_new_int(0));
                struct kb_value *state = kb_value_ensure_object(s, "state");
                kb_value_set(kb_value_ensure_object(state, "running"), "startedAt",
                             kb_value_new_string(ts));
                kb_value_append(css, s);
        }
        kb_value_set(st, "containerStatuses", css);
        struct kb_doc *d = kb__store_put(srv, pods, pod);
        kb__event_record(srv, pods, d->v, "Normal", "Started", "kubelet",
                         "Started the pod's containers (simulated)");
}

static void pod_finish(struct kb_apiserver *srv, struct kb_rtype *pods, const struct kb_value *old,
                       int exit_code)
{
        struct kb_value *pod = kb_value_clone(old);
        struct kb_value *st = kb_value_ensure_object(pod, "status");
        char ts[40];
        kb_format_time(kb__now(), ts, sizeof(ts));
        bool ok = exit_code == 0;
        kb_value_set(st, "phase", kb_value_new_string(ok ? "Succeeded" : "Failed"));
        struct kb_value *conds = conds_of(st);
        set_condition(conds, condition("Ready", "False", "PodCompleted", ts));
        set_condition(conds, condition("ContainersReady", "False", "PodCompleted", ts));
        set_condition(conds, condition("PodReadyToStartContainers", "False", NULL, ts));
        struct kb_value *css = kb_value_get(st, "containerStatuses");
        for (size_t i = 0; kb_value_is(css, KB_VARRAY) && i < css->arr.n; i++) {
                struct kb_value *s = css->arr.v[i];
                const char *started =
                    kb_value_str(kb_value_dig(s, "state", "running", "startedAt"));
                struct kb_value *term = kb_value_new(KB_VOBJECT);
                kb_value_set(term, "exitCode", kb_value_new_int(exit_code));
                kb_value_set(term, "reason", kb_value_new_string(ok ? "Completed" : "Error"));
                kb_value_set(term, "startedAt", kb_value_new_string(started ? started : ts));
                kb_value_set(term, "finishedAt", kb_value_new_string(ts));
                struct kb_value *state = kb_value_new(KB_VOBJECT);
                kb_value_set(state, "terminated", term);
                kb_value_set(s, "state", state);
                kb_value_set(s, "ready", kb_value_new_bool(false));
                kb_value_set(s, "started", kb_value_new_bool(false));
        }
        struct kb_doc *d = kb__store_put(srv, pods, pod);
        if (!ok)
                kb__event_record(srv, pods, d->v, "Warning", "Failed", "kubelet",
                                 "Container exited with code %d (simulated)", exit_code);
}

static void kubelet(struct kb_apiserver *srv, struct kb_rtype *pods, double now)
{
        struct kb_obj *o, *tmp;
        HASH_ITER(hh, pods->objs, o, tmp)
        {
                const struct kb_value *p = o->doc->v;
                const char *node = kb_value_str(kb_value_dig(p, "spec", "nodeName"));
                if (!node || !node[0] || kb_value_dig(p, "metadata", "deletionTimestamp"))
                        continue;
                const char *phase = kb_value_str(kb_value_dig(p, "status", "phase"));
                const struct kb_value *nd;
                if (!phase || !strcmp(phase, "Pending")) {
                        if ((nd = find_node(srv, node)))
                                pod_start(srv, pods, p, nd);
                        continue;
                }
                if (strcmp(phase, "Running"))
                        continue;
                const char *dur = kb_value_str(
                    kb_value_dig(p, "metadata", "annotations", "kbatch.io/sim-duration"));
                const char *start = kb_value_str(kb_value_dig(p, "status", "startTime"));
                double d, st;
                if (!dur || !parse_duration(dur, &d) || !start || kb_parse_time(start, &st))
                        continue;
                if (now < st + d)
                        continue;
                const char *code = kb_value_str(
                    kb_value_dig(p, "metadata", "annotations", "kbatch.io/sim-exit-code"));
                pod_finish(srv, pods, p, code ? atoi(code) : 0);
        }
}

/* Pods deleted with a grace period go once it is over. */
static void reap(struct kb_apiserver *srv, struct kb_rtype *pods, double now)
{
        struct kb_obj *o, *tmp;
        HASH_ITER(hh, pods->objs, o, tmp)
        {
                const char *ts = kb__meta_str(o->doc->v, "deletionTimestamp");
                const struct kb_value *fin = kb_value_dig(o->doc->v, "metadata", "finalizers");
                double t;
                if (!ts || (kb_value_is(fin, KB_VARRAY) && fin->arr.n) || kb_parse_time(ts, &t))
                        continue;
                if (now >= t)
                        kb__store_remove(srv, pods, o);
        }
}

/* ---- Job controller -------------------------------------------------------------- */

static bool owned_by(const struct kb_value *pod, const char *uid)
{
        const struct kb_value *refs = kb_value_dig(pod, "metadata", "ownerReferences");
        for (size_t i = 0; kb_value_is(refs, KB_VARRAY) && i < refs->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_get(refs->arr.v[i], "uid")), uid))
                        return true;
        return false;
}

static bool job_finished(const struct kb_value *job)
{
        const struct kb_value *conds = kb_value_dig(job, "status", "conditions");
        for (size_t i = 0; kb_value_is(conds, KB_VARRAY) && i < conds->arr.n; i++) {
                const char *t = kb_value_str(kb_value_get(conds->arr.v[i], "type"));
                if ((kb_streq(t, "Complete") || kb_streq(t, "Failed")) &&
                    kb_streq(kb_value_str(kb_value_get(conds->arr.v[i], "status")), "True"))
                        return true;
        }
        return false;
}

static void create_pod(struct kb_apiserver *srv, struct kb_rtype *jobs, struct kb_rtype *pods,
                       const struct kb_value *job)
{
        const struct kb_value *tmpl = kb_value_dig(job, "spec", "template");
        const char *ns = kb__meta_str(job, "namespace");
        const char *jname = kb__meta_str(job, "name");
        struct kb_value *pod = kb_value_new(KB_VOBJECT);
        kb_value_set(pod, "kind", kb_value_new_string("Pod"));
        kb_value_set(pod, "apiVersion", kb_value_new_string("v1"));
        struct kb_value *md = kb_value_ensure_object(pod, "metadata");
        char sfx[6];
        char *name;
        do {
                kb__name_suffix(srv, sfx);
                name = kb_xasprintf("%s-%s", jname, sfx);
                if (!kb__obj_find(pods, ns, name))
                        break;
                free(name);
        } while (1);
        kb_value_set(md, "name", kb_value_new_string(name));
        char *gen = kb_xasprintf("%s-", jname);
        kb_value_set(md, "generateName", kb_value_new_string(gen));
        free(gen);
        kb_value_set(md, "namespace", kb_value_new_string(ns));
        const struct kb_value *tl = kb_value_dig(tmpl, "metadata", "labels");
        const struct kb_value *ta = kb_value_dig(tmpl, "metadata", "annotations");
        if (tl)
                kb_value_set(md, "labels", kb_value_clone(tl));
        if (ta)
                kb_value_set(md, "annotations", kb_value_clone(ta));
        struct kb_value *refs = kb_value_new(KB_VARRAY);
        struct kb_value *ref = kb_value_new(KB_VOBJECT);
        kb_value_set(ref, "apiVersion", kb_value_new_string("batch/v1"));
        kb_value_set(ref, "kind", kb_value_new_string("Job"));
        kb_value_set(ref, "name", kb_value_new_string(jname));
        kb_value_set(ref, "uid", kb_value_new_string(kb__meta_str(job, "uid")));
        kb_value_set(ref, "controller", kb_value_new_bool(true));
        kb_value_set(ref, "blockOwnerDeletion", kb_value_new_bool(true));
        kb_value_append(refs, ref);
        kb_value_set(md, "ownerReferences", refs);
        const struct kb_value *spec = kb_value_get(tmpl, "spec");
        kb_value_set(pod, "spec", spec ? kb_value_clone(spec) : kb_value_new(KB_VOBJECT));
        kb__prepare_create(srv, pods, pod);
        kb__store_put(srv, pods, pod);
        kb__event_record(srv, jobs, job, "Normal", "SuccessfulCreate", "job-controller",
                         "Created pod: %s", name);
        free(name);
}

/*
 * Each tick counts every job's pods in one pass over the pods, indexed by
 * owner uid: asking every job to scan every pod was O(jobs x pods) per tick
 * and, at 1,000 jobs of 10 pods, took the whole CPU.
 */
struct owned {
        UT_hash_handle hh;
        int64_t active, ready, succeeded, failed;
        char uid[];
};

static struct owned *count_owned(struct kb_rtype *pods)
{
        struct owned *index = NULL, *e;
        struct kb_obj *o, *tmp;
        HASH_ITER(hh, pods->objs, o, tmp)
        {
                const struct kb_value *p = o->doc->v;
                const struct kb_value *refs = kb_value_dig(p, "metadata", "ownerReferences");
                for (size_t i = 0; kb_value_is(refs, KB_VARRAY) && i < refs->arr.n; i++) {
                        const char *uid = kb_value_str(kb_value_get(refs->arr.v[i], "uid"));
                        if (!uid)
                                continue;
                        HASH_FIND_STR(index, uid, e);
                        if (!e) {
                                size_t n = strlen(uid);
                                e = kb_xcalloc(1, sizeof(*e) + n + 1);
                                memcpy(e->uid, uid, n + 1);
                                HASH_ADD_STR(index, uid, e);
                        }
                        const char *phase = kb_value_str(kb_value_dig(p, "status", "phase"));
                        if (kb_streq(phase, "Succeeded"))
                                e->succeeded++;
                        else if (kb_streq(phase, "Failed"))
                                e->failed++;
                        else if (!kb_value_dig(p, "metadata", "deletionTimestamp")) {
                                e->active++;
                                e->ready += kb_streq(phase, "Running");
                        }
                }
        }
        return index;
}

static void job_sync(struct kb_apiserver *srv, struct kb_rtype *jobs, struct kb_rtype *pods,
                     const struct kb_value *job, struct owned *index)
{
        const char *uid = kb__meta_str(job, "uid");
        int64_t par = 1, comp = 1, backoff = 6, active = 0, succeeded = 0, failed = 0, ready = 0;
        bool has_comp = kb_value_int(kb_value_dig(job, "spec", "completions"), &comp) == 0;
        kb_value_int(kb_value_dig(job, "spec", "parallelism"), &par);
        kb_value_int(kb_value_dig(job, "spec", "backoffLimit"), &backoff);
        bool suspend = kb_value_bool(kb_value_dig(job, "spec", "suspend"), false);
        struct kb_obj *o, *tmp;
        struct owned *counts = NULL;
        if (uid)
                HASH_FIND_STR(index, uid, counts);
        if (counts) {
                active = counts->active;
                ready = counts->ready;
                succeeded = counts->succeeded;
                failed = counts->failed;
        }
        char ts[40];
        kb_format_time(kb__now(), ts, sizeof(ts));
        const char *finish = NULL, *reason = NULL, *message = NULL;
        if (failed > backoff) {
                finish = "Failed";
                reason = "BackoffLimitExceeded";
                message = "Job has reached the specified backoff limit";
        } else if ((has_comp && succeeded >= comp) || (!has_comp && succeeded > 0 && !active)) {
                finish = "Complete";
        }
        if (finish && kb_streq(finish, "Failed")) {
                HASH_ITER(hh, pods->objs, o, tmp)
                {
                        const char *phase =
                            kb_value_str(kb_value_dig(o->doc->v, "status", "phase"));
                        if (owned_by(o->doc->v, uid) && !kb_streq(phase, "Succeeded") &&
                            !kb_streq(phase, "Failed"))
                                kb__store_delete(srv, pods, o, 0);
                }
                active = ready = 0;
        }
        if (!finish && !suspend) {
                int64_t want = has_comp ? KB_MIN(par, comp - succeeded) : (succeeded ? 0 : par);
                for (int64_t i = active; i < want; i++) {
                        create_pod(srv, jobs, pods, job);
                        active++;
                }
        }
        struct kb_value *nj = kb_value_clone(job);
        struct kb_value *st = kb_value_ensure_object(nj, "status");
        if (!kb_value_get(st, "startTime") && !suspend)
                kb_value_set(st, "startTime", kb_value_new_string(ts));
        kb_value_set(st, "active", kb_value_new_int(active));
        kb_value_set(st, "ready", kb_value_new_int(ready));
        kb_value_set(st, "succeeded", kb_value_new_int(succeeded));
        kb_value_set(st, "failed", kb_value_new_int(failed));
        kb_value_set(st, "terminating", kb_value_new_int(0));
        if (!active)
                kb_value_del(st, "active");
        if (!failed)
                kb_value_del(st, "failed");
        if (!succeeded)
                kb_value_del(st, "succeeded");
        if (finish) {
                struct kb_value *conds = conds_of(st);
                if (!strcmp(finish, "Complete")) {
                        struct kb_value *c =
                            condition("SuccessCriteriaMet", "True", "CompletionsReached", ts);
                        kb_value_set(c, "lastProbeTime", kb_value_new_string(ts));
                        kb_value_set(
                            c, "message",
                            kb_value_new_string("Reached expected number of succeeded pods"));
                        set_condition(conds, c);
                        kb_value_set(st, "completionTime", kb_value_new_string(ts));
                }
                struct kb_value *c = condition(finish, "True", reason, ts);
                kb_value_set(c, "lastProbeTime", kb_value_new_string(ts));
                if (message)
                        kb_value_set(c, "message", kb_value_new_string(message));
                set_condition(conds, c);
        }
        if (kb_value_equal(nj, job)) {
                kb_value_free(nj);
                return;
        }
        struct kb_doc *d = kb__store_put(srv, jobs, nj);
        if (finish && !strcmp(finish, "Complete"))
                kb__event_record(srv, jobs, d->v, "Normal", "Completed", "job-controller",
                                 "Job completed");
        else if (finish)
                kb__event_record(srv, jobs, d->v, "Warning", "BackoffLimitExceeded",
                                 "job-controller", "Job has reached the specified backoff limit");
}

static void job_controller(struct kb_apiserver *srv, struct kb_rtype *jobs, struct kb_rtype *pods)
{
        /* Work from a list of keys: syncing a job stores a new document. */
        size_t n = HASH_COUNT(jobs->objs), k = 0;
        char **keys = kb_xcalloc(n + 1, sizeof(*keys));
        struct kb_obj *o, *tmp;
        struct owned *index = count_owned(pods), *e, *etmp;
        HASH_ITER(hh, jobs->objs, o, tmp)
        keys[k++] = kb_xstrdup(o->key);
        for (size_t i = 0; i < k; i++) {
                struct kb_obj *j = NULL;
                HASH_FIND_STR(jobs->objs, keys[i], j);
                if (j && !job_finished(j->doc->v) &&
                    !kb_value_dig(j->doc->v, "metadata", "deletionTimestamp"))
                        job_sync(srv, jobs, pods, j->doc->v, index);
                free(keys[i]);
        }
        free(keys);
        HASH_ITER(hh, index, e, etmp)
        {
                HASH_DEL(index, e);
                free(e);
        }
}

void kb__sim_tick(struct kb_apiserver *srv)
{
        struct kb_rtype *pods = kb__type_find(srv, "", "v1", "pods");
        struct kb_rtype *jobs = kb__type_find(srv, "batch", "v1", "jobs");
        double now = kb__now();
        reap(srv, pods, now);
        if (srv->opts.kubelet)
                kubelet(srv, pods, now);
        if (srv->opts.job_controller)
                job_controller(srv, jobs, pods);
}
