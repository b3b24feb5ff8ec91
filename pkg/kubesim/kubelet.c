/*
 * The simulated kubelet: a bound Pending pod becomes Running (conditions,
 * podIP, startTime, containerStatuses); with the annotation
 * kbatch.io/sim-duration it then ends Succeeded after that long (Failed
 * when kbatch.io/sim-exit-code is not 0).  A pod deleted with a grace
 * period goes once the period is over.
 */
#include "kubesim/kubesim-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

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
        struct kb_value *conds = kb__conds_of(st);
        const char *types[] = {"PodReadyToStartContainers", "Initialized", "Ready",
                               "ContainersReady", "PodScheduled"};
        for (size_t i = 0; i < KB_ARRAY_SIZE(types); i++)
                kb__set_condition(conds, kb__condition(types[i], "True", NULL, ts));
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
        struct kb_value *conds = kb__conds_of(st);
        kb__set_condition(conds, kb__condition("Ready", "False", "PodCompleted", ts));
        kb__set_condition(conds, kb__condition("ContainersReady", "False", "PodCompleted", ts));
        kb__set_condition(conds, kb__condition("PodReadyToStartContainers", "False", NULL, ts));
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

/*
 * One kubelet tick: start the bound Pending pods, end the pods whose
 * sim-duration is over.  The work comes from simindex.c, so a tick with
 * nothing to do costs nothing, however many pods there are.
 */
void kb__sim_kubelet(struct kb_apiserver *srv, struct kb_rtype *pods, double now)
{
        size_t n;
        char **keys = kb__sim_take_to_start(srv, &n);
        size_t started = 0;
        for (size_t i = 0; i < n; i++) {
                if (started == KB_SIM_TICK_BUDGET) {
                        kb__sim_requeue_start(srv, keys[i]);
                        continue;
                }
                struct kb_obj *o = NULL;
                HASH_FIND_STR(pods->objs, keys[i], o);
                if (!o || !kb__pod_wants_start(o->doc->v))
                        continue;
                const struct kb_value *nd =
                    find_node(srv, kb_value_str(kb_value_dig(o->doc->v, "spec", "nodeName")));
                if (nd) {
                        pod_start(srv, pods, o->doc->v, nd);
                        started++;
                }
        }
        kb__strv_free(keys, n);
        char *key;
        while ((key = kb__sim_next_finish(srv, now))) {
                struct kb_obj *o = NULL;
                HASH_FIND_STR(pods->objs, key, o);
                double at;
                if (o && kb__pod_finish_at(o->doc->v, &at) && at <= now) {
                        const char *code = kb_value_str(kb_value_dig(
                            o->doc->v, "metadata", "annotations", "kbatch.io/sim-exit-code"));
                        pod_finish(srv, pods, o->doc->v, code ? atoi(code) : 0);
                }
                free(key);
        }
}

/* Pods deleted with a grace period go once it is over. */
void kb__sim_reap(struct kb_apiserver *srv, struct kb_rtype *pods, double now)
{
        char *key;
        while ((key = kb__sim_next_reap(srv, now))) {
                struct kb_obj *o = NULL;
                HASH_FIND_STR(pods->objs, key, o);
                double at;
                if (o && kb__pod_reap_at(o->doc->v, &at) && at <= now)
                        kb__store_remove(srv, pods, o);
                free(key);
        }
}
