/*
 * The dispatcher: what a session decided goes back to the API server —
 * binds and evictions (binds.c), status (status.c), events (events.c) —
 * and the two things every session needs from the server first: whether
 * status subresources exist (discovery) and the default queue.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scheduler/scheduler-int.h"

void kb__dispatch_release(struct kb_sched *s)
{
        kb__binds_release(s);
        kb__status_release(s);
        kb__events_release(s);
}

/* ---- entry points --------------------------------------------------------------------- */

/* What the session read but did not evaluate: a Warning event on the
 * PodGroup, or on the pod that has none (repeats fold into one event's
 * count, like every event). */
static void dispatch_warning(struct kb_sched *s, const struct kb_warning *w)
{
        if (w->hn) {
                /* Cluster-scoped: the event lives in "default", as
                 * kube-controller-manager records them. */
                kb__event(s, "HyperNode", "topology.volcano.sh/v1alpha1", "default",
                          w->hn->meta.name, w->hn->meta.uid, "Warning", "Ignored", w->message);
                return;
        }
        const struct kb_meta *m = w->pg ? &w->pg->meta : w->pod ? &w->pod->meta : NULL;
        if (!m)
                return;
        kb__event(s, w->pg ? "PodGroup" : "Pod", w->pg ? "scheduling.volcano.sh/v1beta1" : "v1",
                  kb_meta_ns(m), m->name, m->uid, "Warning", w->reason ? w->reason : "Unsupported",
                  w->message);
}

void kb__dispatch_result(struct kb_sched *s, const struct kb_cache_snap *snap,
                         const struct kb_result *r)
{
        for (size_t i = 0; i < r->nbinds; i++)
                kb__dispatch_bind(s, &r->binds[i]);
        kb__binds_pump(s);
        for (size_t i = 0; i < r->nevictions; i++)
                kb__dispatch_eviction(s, &r->evictions[i]);
        for (size_t i = 0; i < r->nnominations; i++)
                kb__dispatch_nomination(s, &r->nominations[i]);
        for (size_t i = 0; i < r->npodgroups; i++)
                if (r->podgroups[i].pg)
                        kb__pg_status(s, &r->podgroups[i]);
        for (size_t i = 0; i < r->nqueues; i++)
                kb__queue_status(s, &r->queues[i]);
        for (size_t i = 0; i < r->nhypernodes; i++)
                kb__hypernode_status(s, &r->hypernodes[i]);
        kb__pod_failures(s, snap, r);
        for (size_t i = 0; i < r->nwarnings; i++)
                dispatch_warning(s, &r->warnings[i]);
        kb__status_sweep(s);
}

/* ---- discovery ------------------------------------------------------------------------ */

#define DISCOVERY_PERIOD 30.0

/* Whether the group's discovery document lists resource/status. */
static int has_status(const struct kb_value *doc, const char *resource)
{
        const struct kb_value *l = kb_value_get(doc, "resources");
        char *want = kb_xasprintf("%s/status", resource);
        int found = 0;
        for (size_t i = 0; kb_value_is(l, KB_VARRAY) && i < l->arr.n; i++)
                found |= kb_streq(kb_value_str(kb_value_get(l->arr.v[i], "name")), want);
        free(want);
        return found;
}

static void discovery_done(void *arg, const struct kb_kube_resp *r)
{
        struct kb_sched *s = arg;
        if (r->cancelled)
                return;
        s->discovery_inflight = false;
        s->discovered_at = kb_now_mono();
        struct kb_value *doc = NULL;
        if (r->status != 200 || kb_json_parse(r->body, r->len, &doc, NULL, 0) != 0) {
                /* Not known yet (the CRDs may be missing): status waits,
                 * and the next tick asks again. */
                KB_V(2, "discovery of " KB_GROUP_API ": %ld", r->status);
                s->discovered_at = 0;
                kb_value_free(doc);
                return;
        }
        signed char pg = (signed char)has_status(doc, "podgroups");
        signed char q = (signed char)has_status(doc, "queues");
        if (pg != s->pg_status_sub || q != s->queue_status_sub)
                KB_INFO("status of podgroups %s, of queues %s",
                        pg ? "through the status subresource" : "on the object (no subresource)",
                        q ? "through the status subresource" : "on the object (no subresource)");
        s->pg_status_sub = pg;
        s->queue_status_sub = q;
        kb_value_free(doc);
}

void kb__discover(struct kb_sched *s)
{
        if (s->discovery_inflight ||
            (s->discovered_at && kb_now_mono() - s->discovered_at < DISCOVERY_PERIOD))
                return;
        s->discovery_inflight = true;
        struct kb_kube_req req = {.method = "GET", .path = KB_GROUP_API};
        kb_kube_request(s->kube, &req, discovery_done, s);
}

static void default_queue_done(void *arg, const struct kb_kube_resp *r)
{
        struct kb_sched *s = arg;
        if (r->cancelled)
                return;
        if (r->status == 201 || r->status == 200 || r->status == 409) {
                /* Still requested: nothing more is sent until the watch
                 * shows it. */
                KB_INFO("default queue %s: %s; sessions wait for the watch to show it",
                        s->o->default_queue, r->status == 409 ? "exists" : "created");
        } else {
                KB_WARN("creating the default queue %s: %ld %.200s; sessions wait for it",
                        s->o->default_queue, r->status, r->status ? r->body : r->error);
                s->default_queue_requested = false;
                s->default_queue_failed = kb_now_mono();
        }
}

bool kb__ensure_default_queue(struct kb_sched *s)
{
        if (kb_cache_get(s->cache, KB_KIND_QUEUE, NULL, s->o->default_queue)) {
                if (!s->have_default_queue)
                        KB_V(1, "default queue %s is in the cache", s->o->default_queue);
                s->have_default_queue = true;
                s->default_queue_requested = false;
                return true;
        }
        if (s->have_default_queue) {
                KB_WARN("the default queue %s is gone: creating it again; sessions wait for it",
                        s->o->default_queue);
                s->have_default_queue = false;
                s->default_queue_requested = false;
        }
        if (s->default_queue_requested ||
            (s->default_queue_failed && kb_now_mono() - s->default_queue_failed < 5.0))
                return false;
        s->default_queue_requested = true;
        char *body = kb_xasprintf("{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":"
                                  "\"Queue\",\"metadata\":{\"name\":\"%s\"},\"spec\":{\"weight\":"
                                  "1,\"reclaimable\":true}}",
                                  s->o->default_queue);
        struct kb_kube_req req = {.method = "POST",
                                  .path = KB_GROUP_API "/queues",
                                  .body = body,
                                  .lane = KB_KUBE_LANE_STATUS};
        kb_kube_request(s->kube, &req, default_queue_done, s);
        free(body);
        return false;
}
