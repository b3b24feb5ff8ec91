/*
 * Status: Queue and HyperNode status, nominations, the objects kbatch
 * cannot decode, and what every status writer shares: the memo, the
 * conditions and the write (PodGroup status is pgstatus.c's, the
 * PodScheduled condition of pending pods pending.c's).
 *
 * Each is written with a patch only when it differs from the object and
 * from what was last sent (the memo, keyed by object); a write that fails
 * for good forgets the memo, so the next session sends it again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scheduler/scheduler-int.h"

/* What was last sent per object, and the memo generation (a count of
 * sessions dispatched) that last looked at it: an entry no session has
 * looked at for two generations belongs to an object that is gone, bound,
 * or no longer reported, and is swept, so the memo never outgrows what the
 * sessions report. */
struct kb__status_memo {
        char *key;
        uint64_t hash;
        uint64_t gen;
        double sent; /* monotonic: when it was last written */
};

/* Status writes waiting in the client beyond which more are deferred to
 * the next session. */
#define STATUS_BACKLOG 2000

struct kb__invalid_seen {
        char *key; /* "podgroup/ns/name", "queue//name" */
        bool visited;
};

/* ---- memo ------------------------------------------------------------------- */

static struct kb__status_memo *memo_of(struct kb_sched *s, const char *key)
{
        uint64_t *v = kb_map_get_str(kb__strmap(&s->memo), key, strlen(key));
        return v ? (struct kb__status_memo *)(uintptr_t)*v : NULL;
}

static void memo_free(struct kb_sched *s, struct kb__status_memo *m)
{
        kb_map_del_str(&s->memo, m->key, strlen(m->key));
        free(m->key);
        free(m);
}

/* The entries of map (whose values are pointers) that keep() refuses,
 * found first and freed after: the map takes no deletes while it is
 * walked, and the order they go in decides nothing. */
static void map_sweep(struct kb_sched *s, struct kb_map *map,
                      bool (*keep)(struct kb_sched *, void *),
                      void (*drop)(struct kb_sched *, void *))
{
        if (!kb_map_count(map))
                return;
        void **gone = kb_xmalloc(kb_map_count(map) * sizeof(*gone));
        size_t n = 0;
        for (size_t i = 0; i < map->cap; i++)
                if (map->slots[i].hash && !keep(s, (void *)(uintptr_t)map->slots[i].val))
                        gone[n++] = (void *)(uintptr_t)map->slots[i].val;
        for (size_t i = 0; i < n; i++)
                drop(s, gone[i]);
        free(gone);
}

bool kb__status_memo_same(struct kb_sched *s, const char *key, uint64_t h)
{
        struct kb__status_memo *m = memo_of(s, key);
        if (m)
                m->gen = s->memo_gen;
        return m && m->hash == h;
}

void kb__status_memo_set(struct kb_sched *s, const char *key, uint64_t h)
{
        struct kb__status_memo *m = memo_of(s, key);
        if (!m) {
                m = kb_xcalloc(1, sizeof(*m));
                m->key = kb_xstrdup(key);
                *kb_map_put_str(&s->memo, m->key, strlen(m->key), NULL) = (uintptr_t)m;
        }
        m->hash = h;
        m->gen = s->memo_gen;
        m->sent = kb_now_mono();
}

/* Seconds since key was last written, or -1 when the memo has no record
 * of it.  Asking keeps the record (a group whose status stands is still
 * reported, and its last write is what the queue-position refresh counts
 * from). */
double kb__status_memo_age(struct kb_sched *s, const char *key)
{
        struct kb__status_memo *m = memo_of(s, key);
        if (!m)
                return -1;
        m->gen = s->memo_gen;
        return kb_now_mono() - m->sent;
}

static bool memo_recent(struct kb_sched *s, void *m)
{
        return ((struct kb__status_memo *)m)->gen + 2 > s->memo_gen;
}

static bool keep_none(struct kb_sched *s, void *v)
{
        return false;
}

static void memo_drop(struct kb_sched *s, void *m)
{
        memo_free(s, m);
}

void kb__status_sweep(struct kb_sched *s)
{
        map_sweep(s, kb__strmap(&s->memo), memo_recent, memo_drop);
        s->memo_gen++;
}

static void memo_forget(struct kb_sched *s, const char *key)
{
        struct kb__status_memo *m = memo_of(s, key);
        if (m)
                memo_free(s, m);
}

static void seen_drop(struct kb_sched *s, void *v)
{
        struct kb__invalid_seen *seen = v;
        kb_map_del_str(&s->invalid_seen, seen->key, strlen(seen->key));
        free(seen->key);
        free(seen);
}

void kb__status_release(struct kb_sched *s)
{
        map_sweep(s, &s->invalid_seen, keep_none, seen_drop);
        kb_map_release(&s->invalid_seen);
        map_sweep(s, &s->memo, keep_none, memo_drop);
        kb_map_release(&s->memo);
}

static void after_free(struct kb__status_after *a)
{
        if (!a)
                return;
        free(a->ns);
        free(a->name);
        free(a->uid);
        free(a->scheduled_msg);
        free(a->inq_reason);
        free(a->inq_msg);
        free(a);
}

static void after_announce(struct kb_sched *s, const struct kb__status_after *a)
{
        if (a->scheduled_msg) {
                kb__metrics_job_scheduled(s, a->scheduled_creation);
                kb__event(s, "PodGroup", "scheduling.volcano.sh/v1beta1", a->ns, a->name, a->uid,
                          "Normal", "Scheduled", a->scheduled_msg);
        }
        if (a->inq_reason)
                kb__event(s, "PodGroup", "scheduling.volcano.sh/v1beta1", a->ns, a->name, a->uid,
                          "Warning", a->inq_reason, a->inq_msg ? a->inq_msg : "");
}

/* A status write whose answer only needs logging (and, on failure,
 * forgetting the memo so the next session writes again), and what it
 * announces when it succeeds. */
struct fire {
        struct kb_sched *s;
        char *what;
        char *memo_key;
        struct kb__status_after *after;
};

static void fire_done(void *arg, const struct kb_kube_resp *r)
{
        struct fire *f = arg;
        if (!r->cancelled && r->status >= 200 && r->status < 300 && f->after)
                after_announce(f->s, f->after);
        if (!r->cancelled && (r->status < 200 || r->status >= 300)) {
                if (r->status == 409)
                        KB_V(2,
                             "%s: the object changed since the session read it; the next "
                             "session writes again",
                             f->what);
                else
                        KB_WARN("%s: %ld %.200s", f->what, r->status,
                                r->status ? r->body : r->error);
                if (f->memo_key)
                        memo_forget(f->s, f->memo_key);
        }
        after_free(f->after);
        free(f->what);
        free(f->memo_key);
        free(f);
}

/*
 * Sends a status patch (body is taken over) carrying rv, the
 * resourceVersion of the object the desired status was computed against,
 * as a precondition: the server refuses it (409) once the object has
 * moved on.  So a write retried after a newer one went through (the first
 * failed, the client waits to retry it, the next session sends a newer
 * status which succeeds, then the retry arrives) can never put the older
 * status back; the 409 forgets the memo and the next session writes
 * again from what its cache then shows.
 */
void kb__status_fire(struct kb_sched *s, const char *path, struct kb_value *body, const char *rv,
                     const char *ctype, const char *what, const char *memo_key,
                     struct kb__status_after *after)
{
        /* Status is level-triggered: a write the lane has no room for now
         * is not queued without bound but left to the next session, which
         * computes it again (the memo forgets it). */
        if (kb_kube_waiting(s->kube, KB_KUBE_LANE_STATUS) >= STATUS_BACKLOG) {
                if (memo_key)
                        memo_forget(s, memo_key);
                kb_value_free(body);
                after_free(after);
                s->status_deferred++;
                return;
        }
        if (rv && *rv)
                kb_value_set(kb_value_ensure_object(body, "metadata"), "resourceVersion",
                             kb_value_new_string(rv));
        char *text = kb_json_emit(body, false);
        kb_value_free(body);
        struct fire *f = kb_xcalloc(1, sizeof(*f));
        f->s = s;
        f->what = kb_xstrdup(what);
        f->memo_key = memo_key ? kb_xstrdup(memo_key) : NULL;
        f->after = after;
        struct kb_kube_req req = {.method = "PATCH",
                                  .path = path,
                                  .body = text,
                                  .content_type = ctype,
                                  .lane = KB_KUBE_LANE_STATUS};
        kb_kube_request(s->kube, &req, fire_done, f);
        free(text);
}

/* ---- nominations -------------------------------------------------------------------- */

/* status.nominatedNodeName of a pipelined task, through the status
 * subresource, when the pod does not say it already. */
void kb__dispatch_nomination(struct kb_sched *s, const struct kb_nomination *nm)
{
        const struct kb_pod *p = nm->pod;
        const char *ns = kb_meta_ns(&p->meta);
        const struct kb_pod *cur = kb_cache_get(s->cache, KB_KIND_POD, ns, p->meta.name);
        if (!cur || !kb_streq(cur->meta.uid, p->meta.uid) || (cur->node_name && *cur->node_name) ||
            cur->meta.deletion || kb_streq(cur->nominated_node_name, nm->node))
                return;
        uint64_t h = kb_hash(nm->node, strlen(nm->node), KB_HASH_SEED);
        char *mkey =
            kb_xasprintf("nominate/%s/%s/%s", ns, p->meta.name, p->meta.uid ? p->meta.uid : "");
        if (!kb__status_memo_same(s, mkey, h)) {
                kb__status_memo_set(s, mkey, h);
                struct kb_value *body = kb_value_new(KB_VOBJECT);
                kb_value_set(kb_value_ensure_object(body, "status"), "nominatedNodeName",
                             kb_value_new_string(nm->node));
                char *path = kb_xasprintf("/api/v1/namespaces/%s/pods/%s/status", ns, p->meta.name);
                char *what = kb_xasprintf("pod %s/%s nominatedNodeName", ns, p->meta.name);
                KB_V(1, "nominating %s/%s to %s", ns, p->meta.name, nm->node);
                kb__status_fire(s, path, body, cur->meta.resource_version,
                                "application/merge-patch+json", what, mkey, NULL);
                free(what);
                free(path);
        }
        free(mkey);
}

/* ---- conditions ------------------------------------------------------------------ */

struct kb_value *kb__status_cond_json(const char *type, const char *status, const char *reason,
                                      const char *message, const char *ts, const char *tid)
{
        struct kb_value *c = kb_value_new(KB_VOBJECT);
        kb_value_set(c, "type", kb_value_new_string(type));
        kb_value_set(c, "status", kb_value_new_string(status));
        if (tid)
                kb_value_set(c, "transitionID", kb_value_new_string(tid));
        kb_value_set(c, "lastTransitionTime", kb_value_new_string(ts));
        kb_value_set(c, "reason", kb_value_new_string(reason ? reason : ""));
        kb_value_set(c, "message", kb_value_new_string(message ? message : ""));
        return c;
}

/* The lastTransitionTime a condition of status written over c (NULL: none)
 * carries: c's while its status stands, now (now_ts) when it flips or is
 * new.  As Kubernetes' UpdatePodCondition (pkg/api/v1/pod/util.go) keeps
 * it for kube-scheduler's PodScheduled, and as a condition's
 * lastTransitionTime is defined ("the last time the condition transitioned
 * from one status to another").  Volcano's job updater
 * (pkg/scheduler/framework/job_updater.go, isPodGroupConditionsUpdated)
 * likewise ignores lastTransitionTime when it decides whether a PodGroup's
 * conditions changed, though its gang plugin stamps a new one whenever it
 * writes; kbatch keeps it while the status stands (README, Differences). */
const char *kb__status_transition_time(const struct kb_condition *c, const char *status,
                                       const char *now_ts, char *buf, size_t n)
{
        if (!c || !c->last_transition || !kb_streq(c->status, status))
                return now_ts;
        kb_format_time(c->last_transition, buf, n);
        return buf;
}

/* ---- Queue status ------------------------------------------------------------------ */

/*
 * The queue's BelowDeserved condition: a queue below its deserved share
 * whose waiting pods are all in scheduled gangs gets nothing back, since
 * only a gang below its minMember reclaims (Volcano master's rule; README,
 * "Differences from Volcano").  Said where the user looks at the queue:
 * its status (kubectl describe queue) and kubectl kbatch queues.  NULL
 * (the condition dropped) when it does not hold.
 */
static struct kb_value *below_deserved(const struct kb_queue_status *qs)
{
        if (qs->unreclaimed <= 0)
                return kb_value_new(KB_VNULL);
        int below = -1;
        for (int i = 0; i < kb_res_count() && below < 0; i++)
                if (i != KB_RES_PODS && qs->allocated.q[i] < qs->deserved.q[i])
                        below = i;
        if (below < 0)
                return kb_value_new(KB_VNULL);
        char held[64], deserved[64];
        kb_quantity_format(qs->allocated.q[below], kb_res_is_milli(below), kb_res_is_bytes(below),
                           held, sizeof(held));
        kb_quantity_format(qs->deserved.q[below], kb_res_is_milli(below), kb_res_is_bytes(below),
                           deserved, sizeof(deserved));
        char *msg = kb_xasprintf("holds %s %s of %s deserved; %d pod(s) wait in gangs already at "
                                 "their minMember, and only a gang below its minMember reclaims "
                                 "(as in Volcano master)",
                                 kb_res_name(below), held, deserved, (int)qs->unreclaimed);
        struct kb_value *list = kb_value_new(KB_VARRAY);
        struct kb_value *c = kb_value_new(KB_VOBJECT);
        kb_value_set(c, "type", kb_value_new_string("BelowDeserved"));
        kb_value_set(c, "status", kb_value_new_string("True"));
        kb_value_set(c, "reason", kb_value_new_string("OnlyStarvingGangsReclaim"));
        kb_value_set(c, "message", kb_value_new_string(msg));
        free(msg);
        kb_value_append(list, c);
        return list;
}

void kb__queue_status(struct kb_sched *s, const struct kb_queue_status *qs)
{
        struct kb_value *body = kb_value_new(KB_VOBJECT);
        struct kb_value *sv = kb_value_ensure_object(body, "status");
        if (qs->state_changed) /* else the user's, never echoed back stale */
                kb_value_set(sv, "state", kb_value_new_string(kb_queue_state_name(qs->state)));
        kb_value_set(sv, "pending", kb_value_new_int(qs->pending));
        kb_value_set(sv, "inqueue", kb_value_new_int(qs->inqueue));
        kb_value_set(sv, "running", kb_value_new_int(qs->running));
        kb_value_set(sv, "unknown", kb_value_new_int(qs->unknown));
        kb_value_set(sv, "completed", kb_value_new_int(qs->completed));
        kb_value_set(sv, "conditions", below_deserved(qs));
        /* A resource at 0 is null: the merge patch drops what was there. */
        const struct kb_res *sums[] = {&qs->allocated, &qs->deserved};
        for (int k = 0; k < 2; k++) {
                struct kb_value *o = kb_value_ensure_object(sv, k ? "deserved" : "allocated");
                for (int i = 0; i < kb_res_count(); i++) {
                        if (i == KB_RES_PODS)
                                continue;
                        char buf[64];
                        kb_quantity_format(sums[k]->q[i], kb_res_is_milli(i), kb_res_is_bytes(i),
                                           buf, sizeof(buf));
                        kb_value_set(o, kb_res_name(i),
                                     sums[k]->q[i] ? kb_value_new_string(buf)
                                                   : kb_value_new(KB_VNULL));
                }
        }
        char *text = kb_json_emit(body, false);
        uint64_t h = kb_hash(text, strlen(text), KB_HASH_SEED) ^ (uint64_t)s->queue_status_sub;
        free(text);
        char *mkey = kb_xasprintf("queue/%s", qs->name);
        const struct kb_queue *cur = kb_cache_get(s->cache, KB_KIND_QUEUE, NULL, qs->name);
        if (cur && s->queue_status_sub >= 0 && !kb__status_memo_same(s, mkey, h)) {
                kb__status_memo_set(s, mkey, h);
                char *path = kb_xasprintf(KB_GROUP_API "/queues/%s%s", qs->name,
                                          s->queue_status_sub ? "/status" : "");
                char *what = kb_xasprintf("queue %s status", qs->name);
                kb__status_fire(s, path, body, cur->meta.resource_version,
                                "application/merge-patch+json", what, mkey, NULL);
                body = NULL;
                free(what);
                free(path);
        }
        kb_value_free(body);
        free(mkey);
}

/* ---- HyperNode status ---------------------------------------------------------------- */

#define KB_TOPOLOGY_API "/apis/topology.volcano.sh/v1alpha1"

/* status.nodeCount as the session resolved it, as Volcano's HyperNode
 * controller keeps it (kubectl get hypernodes shows it), when it differs. */
void kb__hypernode_status(struct kb_sched *s, const struct kb_hn_status *hs)
{
        if (hs->hn->node_count == hs->node_count)
                return;
        const struct kb_hypernode *cur =
            kb_cache_get(s->cache, KB_KIND_HYPERNODE, NULL, hs->hn->meta.name);
        if (!cur || !kb_streq(cur->meta.uid, hs->hn->meta.uid))
                return; /* deleted or replaced meanwhile */
        char *mkey = kb_xasprintf("hypernode/%s", hs->hn->meta.name);
        uint64_t h = (uint64_t)hs->node_count + 1;
        if (!kb__status_memo_same(s, mkey, h)) {
                kb__status_memo_set(s, mkey, h);
                struct kb_value *body = kb_value_new(KB_VOBJECT);
                kb_value_set(kb_value_ensure_object(body, "status"), "nodeCount",
                             kb_value_new_int(hs->node_count));
                char *path =
                    kb_xasprintf(KB_TOPOLOGY_API "/hypernodes/%s/status", hs->hn->meta.name);
                char *what = kb_xasprintf("hypernode %s status", hs->hn->meta.name);
                kb__status_fire(s, path, body, cur->meta.resource_version,
                                "application/merge-patch+json", what, mkey, NULL);
                free(what);
                free(path);
        }
        free(mkey);
}

/* ---- objects kbatch cannot decode ---------------------------------------------------- */

struct invalid_pass {
        struct kb_sched *s;
        char ts[40];
};

/* A Warning event and a condition naming the field, once per object and
 * message (the memo, keyed "invalid/..."; a failed write forgets it, so
 * the next pass writes again): an object the CRD accepts but kbatch
 * rejects never vanishes silently.  A PodGroup says Unschedulable (reason
 * InvalidSpec), as that is what its users look at; a Queue, whose status
 * has no conditions of its own in Volcano's API, gets an Invalid
 * condition. */
static void report_invalid(void *arg, const struct kb_cache_invalid *inv)
{
        struct invalid_pass *ip = arg;
        struct kb_sched *s = ip->s;
        bool pg = inv->kind == KB_KIND_PODGROUP;
        if (!pg && inv->kind != KB_KIND_QUEUE)
                return;
        signed char sub = pg ? s->pg_status_sub : s->queue_status_sub;
        if (sub < 0)
                return; /* discovery has not answered yet */
        char *key =
            kb_xasprintf("%s/%s/%s", pg ? "podgroup" : "queue", inv->ns ? inv->ns : "", inv->name);
        uint64_t *found = kb_map_get_str(kb__strmap(&s->invalid_seen), key, strlen(key));
        struct kb__invalid_seen *seen = found ? (struct kb__invalid_seen *)(uintptr_t)*found : NULL;
        if (!seen) {
                seen = kb_xcalloc(1, sizeof(*seen));
                seen->key = kb_xstrdup(key);
                *kb_map_put_str(&s->invalid_seen, seen->key, strlen(seen->key), NULL) =
                    (uintptr_t)seen;
        }
        seen->visited = true;
        char *hkey = kb_xasprintf("%s\x1f%s", inv->uid ? inv->uid : "", inv->message);
        uint64_t h = kb_hash(hkey, strlen(hkey), KB_HASH_SEED);
        free(hkey);
        char *mkey = kb_xasprintf("invalid/%s", key);
        free(key);
        if (kb__status_memo_same(s, mkey, h)) {
                free(mkey);
                return;
        }
        kb__status_memo_set(s, mkey, h);
        char *msg = kb_xasprintf("%s; kbatch ignores this %s until it is fixed", inv->message,
                                 pg ? "PodGroup" : "Queue");
        KB_WARN("%s", msg);
        kb__event(s, pg ? "PodGroup" : "Queue", "scheduling.volcano.sh/v1beta1", inv->ns, inv->name,
                  inv->uid, "Warning", "InvalidSpec", msg);
        struct kb_value *body = kb_value_new(KB_VOBJECT);
        struct kb_value *conds = kb_value_new(KB_VARRAY);
        kb_value_append(conds, kb__status_cond_json(pg ? "Unschedulable" : "Invalid", "True",
                                                    "InvalidSpec", msg, ip->ts, NULL));
        kb_value_set(kb_value_ensure_object(body, "status"), "conditions", conds);
        char *path =
            pg ? kb_xasprintf(KB_GROUP_API "/namespaces/%s/podgroups/%s%s", inv->ns, inv->name,
                              sub ? "/status" : "")
               : kb_xasprintf(KB_GROUP_API "/queues/%s%s", inv->name, sub ? "/status" : "");
        char *what = kb_xasprintf("%s %s%s%s condition", pg ? "podgroup" : "queue",
                                  inv->ns ? inv->ns : "", inv->ns ? "/" : "", inv->name);
        kb__status_fire(s, path, body, inv->resource_version, "application/merge-patch+json", what,
                        mkey, NULL);
        free(what);
        free(path);
        free(msg);
        free(mkey);
}

static bool seen_visited(struct kb_sched *s, void *v)
{
        return ((struct kb__invalid_seen *)v)->visited;
}

static void seen_forget(struct kb_sched *s, void *v)
{
        char *mkey = kb_xasprintf("invalid/%s", ((struct kb__invalid_seen *)v)->key);
        memo_forget(s, mkey);
        free(mkey);
        seen_drop(s, v);
}

void kb__report_invalid(struct kb_sched *s)
{
        struct kb_map *seen = kb__strmap(&s->invalid_seen);
        if (!kb_map_count(seen) && !kb_cache_invalid_gen(s->cache))
                return;
        struct invalid_pass ip = {.s = s};
        kb_now_time(ip.ts, sizeof(ip.ts));
        for (size_t i = 0; i < seen->cap; i++)
                if (seen->slots[i].hash)
                        ((struct kb__invalid_seen *)(uintptr_t)seen->slots[i].val)->visited = false;
        kb_cache_invalid_each(s->cache, report_invalid, &ip);
        /* Fixed or deleted objects: forget them, so breaking one again is
         * reported again. */
        map_sweep(s, seen, seen_visited, seen_forget);
}
