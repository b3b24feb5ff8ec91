/*
 * Pending pods: the PodScheduled=False condition and the FailedScheduling
 * event on each pod of ours that a session left Pending, as kube-scheduler
 * marks a pod it cannot place:
 *
 *   - the pending pods of a gang the session found unschedulable, with the
 *     gang's blocker (its condition's message without the queue position);
 *   - the pending pods of a gang that is scheduled (minMember met) but
 *     could not place them all, with why they wait: "its gang is scheduled
 *     (minMember 4 met); this pod waits: queue q is overused: it holds its
 *     whole deserved share", as Volcano marks every pending task of a job
 *     Unschedulable with its reason (pkg/scheduler/cache/cache.go,
 *     RecordJobStatusEvent and TaskSchedulingReason);
 *   - the pods without a PodGroup the session left Pending.
 *
 * Each condition is written only when the pod would change (status.c's
 * memo), its lastTransitionTime kept while it stays False.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/scheduler-int.h"

/* A group with pending pods to mark, found by "ns/name" in a kb_map (the
 * walk goes over the snapshot's pods in order; the map is only asked). */
struct pg_idx {
        const struct kb_pg_status *st;
        /* Its condition's message without the queue position ending: a
         * pod's condition and event say why it waits, not where its group
         * stands (else every move of the queue would rewrite the condition
         * of every pending pod of every waiting gang). */
        const char *blocker;
};

/*
 * A FailedScheduling event on pod cur (as the cache has it now) and its
 * PodScheduled=False condition with reason Unschedulable (kube-scheduler's
 * handling of a pod it cannot place), the condition written only when the
 * pod would change: kube-scheduler's updatePod sends nothing when
 * UpdatePodCondition finds the condition equal.  The pod as the cache
 * holds it is compared first (a restarted scheduler rewrites nothing), then
 * what was last sent (the memo: the watch may not have brought the write
 * back yet).  lastTransitionTime stays the pod's while the status is False
 * already (transition_time).
 */
static void pod_unschedulable(struct kb_sched *s, const struct kb_pod *cur, const char *msg)
{
        const char *ns = kb_meta_ns(&cur->meta);
        const char *name = cur->meta.name;
        kb__event(s, "Pod", "v1", ns, name, cur->meta.uid, "Warning", "FailedScheduling", msg);
        uint64_t h = kb_hash(msg, strlen(msg), KB_HASH_SEED);
        char *mkey = kb_xasprintf("pod/%s/%s/%s", ns, name, cur->meta.uid ? cur->meta.uid : "");
        const struct kb_condition *c = cur->scheduled;
        if (c && kb_streq(c->status, "False") && kb_streq(c->reason, "Unschedulable") &&
            kb_streq(c->message ? c->message : "", msg)) {
                /* The pod says it already: what stands is what was sent. */
                kb__status_memo_set(s, mkey, h);
        } else if (!kb__status_memo_same(s, mkey, h)) {
                kb__status_memo_set(s, mkey, h);
                char ts[40], kept[40];
                kb_now_time(ts, sizeof(ts));
                struct kb_value *body = kb_value_new(KB_VOBJECT);
                struct kb_value *conds = kb_value_new(KB_VARRAY);
                struct kb_value *cj = kb__status_cond_json(
                    "PodScheduled", "False", "Unschedulable", msg,
                    kb__status_transition_time(c, "False", ts, kept, sizeof(kept)), NULL);
                kb_value_set(cj, "lastProbeTime", kb_value_new(KB_VNULL));
                kb_value_append(conds, cj);
                kb_value_set(kb_value_ensure_object(body, "status"), "conditions", conds);
                char *path = kb_xasprintf("/api/v1/namespaces/%s/pods/%s/status", ns, name);
                char *what = kb_xasprintf("pod %s/%s condition", ns, name);
                kb__status_fire(s, path, body, cur->meta.resource_version,
                                "application/strategic-merge-patch+json", what, mkey, NULL);
                free(what);
                free(path);
        }
        free(mkey);
}

/* FailedScheduling events and the PodScheduled=False condition on the
 * pending pods of every gang the session found unschedulable, and on the
 * pods without a group the session left Pending. */
void kb__pod_failures(struct kb_sched *s, const struct kb_cache_snap *snap,
                      const struct kb_result *r)
{
        struct kb_map idx;
        struct pg_idx *e;
        struct kb_pool pool;
        kb_map_init(&idx, KB_MAP_STR);
        kb_pool_init(&pool, 0);
        for (size_t i = 0; i < r->npodgroups; i++) {
                const struct kb_pg_status *st = &r->podgroups[i];
                bool waiting =
                    kb_streq(st->cond_type, "Unschedulable") && kb_streq(st->cond_status, "True");
                if (!waiting && !st->pending_message)
                        continue;
                e = kb_pool_alloc(&pool, sizeof(*e));
                e->st = st;
                const char *msg = waiting ? (st->cond_message ? st->cond_message : "")
                                          : st->pending_message,
                           *pos;
                size_t n = kb_position_split(msg, &pos);
                char *b = kb_pool_alloc(&pool, n + 1);
                memcpy(b, msg, n);
                e->blocker = b;
                /* Keyed by the result's "ns/name", which outlives the map;
                 * a name twice keeps the later, as uthash's find did. */
                *kb_map_put_str(&idx, st->name, strlen(st->name), NULL) = (uintptr_t)e;
        }
        if (!kb_map_count(&idx))
                goto out;
        for (size_t i = 0; i < snap->snap.npods; i++) {
                const struct kb_pod *p = snap->snap.pods[i];
                /* The group the session put it in: the one it names, else
                 * the one kbatch makes for its workload. */
                const char *group = p->group_name;
                if (!group && snap->snap.workload_podgroups)
                        group = p->workload_group;
                if (!group || (p->node_name && *p->node_name) || p->phase != KB_POD_PENDING ||
                    p->meta.deletion)
                        continue;
                bool ours = false;
                for (size_t k = 0; k < snap->snap.nscheduler_names; k++)
                        ours |= kb_streq(p->scheduler_name, snap->snap.scheduler_names[k]);
                if (!ours)
                        continue;
                const char *ns = kb_meta_ns(&p->meta);
                char *key = kb_pool_path(&pool, ns, group);
                const uint64_t *v = kb_map_get_str(&idx, key, strlen(key));
                if (!v)
                        continue;
                e = (struct pg_idx *)(uintptr_t)*v;
                /* The pod as it is now: bound or replaced meanwhile, it
                 * gets nothing. */
                const struct kb_pod *cur = kb_cache_get(s->cache, KB_KIND_POD, ns, p->meta.name);
                if (!cur || !kb_streq(cur->meta.uid, p->meta.uid) ||
                    (cur->node_name && *cur->node_name) ||
                    kb_cache_binding(s->cache, ns, p->meta.name))
                        continue;
                const char *msg = e->blocker;
                /* A group that is missing because kbatch could not decode
                 * it says why, not just "not found". */
                const struct kb_cache_invalid *inv =
                    e->st->pg ? NULL : kb_cache_invalid_get(s->cache, KB_KIND_PODGROUP, ns, group);
                if (inv)
                        msg = inv->message;
                pod_unschedulable(s, cur, msg);
        }
out:
        kb_map_release(&idx);
        kb_pool_release(&pool);
        /* Pods without a PodGroup, as kube-scheduler does for them. */
        for (size_t i = 0; i < r->nunschedulable; i++) {
                const struct kb_pod *p = r->unschedulable[i].pod;
                const char *ns = kb_meta_ns(&p->meta);
                const struct kb_pod *cur = kb_cache_get(s->cache, KB_KIND_POD, ns, p->meta.name);
                if (!cur || !kb_streq(cur->meta.uid, p->meta.uid) ||
                    (cur->node_name && *cur->node_name) || cur->meta.deletion ||
                    kb_cache_binding(s->cache, ns, p->meta.name))
                        continue;
                /* Waiting for the group kbatch is making for its workload
                 * (WaitingForPodGroup) is not a failure: the pod binds a
                 * session after the watch brings the group, and a
                 * condition and an event on each such pod would cost two
                 * writes per pod, the condition mostly refused (409) as
                 * the bind changes the pod first.  Volcano's scheduler
                 * likewise passes over a pod whose PodGroup its controller
                 * has not made yet (pkg/scheduler/cache/cache.go,
                 * Snapshot: a job without a PodGroup is skipped).  Only
                 * a group whose write failed, or that the watch has not
                 * shown 10 s after it was made, is reported. */
                if (snap->snap.workload_podgroups && (!p->group_name || !*p->group_name) &&
                    kb__workloads_making(s, ns, p->workload_group))
                        continue;
                pod_unschedulable(s, cur, r->unschedulable[i].message);
        }
}
