/*
 * Status: PodGroup and Queue status and nominations (the PodScheduled
 * condition of pending pods is pending.c's).
 *
 * Each is written with a patch only when it differs from the object and
 * from what was last sent (the memo, keyed by object); a write that fails
 * for good forgets the memo, so the next session sends it again.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uthash.h>

#include "scheduler/scheduler-int.h"

/* What was last sent per object, and the memo generation (a count of
 * sessions dispatched) that last looked at it: an entry no session has
 * looked at for two generations belongs to an object that is gone, bound,
 * or no longer reported, and is swept, so the memo never outgrows what the
 * sessions report. */
struct kb__status_memo {
        UT_hash_handle hh;
        char *key;
        uint64_t hash;
        uint64_t gen;
        double sent; /* monotonic: when it was last written */
};

/* Status writes waiting in the client beyond which more are deferred to
 * the next session. */
#define STATUS_BACKLOG 2000

struct kb__invalid_seen {
        UT_hash_handle hh;
        char *key; /* "podgroup/ns/name", "queue//name" */
        bool visited;
};

/* ---- memo ------------------------------------------------------------------- */

bool kb__status_memo_same(struct kb_sched *s, const char *key, uint64_t h)
{
        struct kb__status_memo *m;
        HASH_FIND_STR(s->memo, key, m);
        if (m)
                m->gen = s->memo_gen;
        return m && m->hash == h;
}

void kb__status_memo_set(struct kb_sched *s, const char *key, uint64_t h)
{
        struct kb__status_memo *m;
        HASH_FIND_STR(s->memo, key, m);
        if (!m) {
                m = kb_xcalloc(1, sizeof(*m));
                m->key = kb_xstrdup(key);
                HASH_ADD_KEYPTR(hh, s->memo, m->key, strlen(m->key), m);
        }
        m->hash = h;
        m->gen = s->memo_gen;
        m->sent = kb_now_mono();
}

/* Seconds since key was last written, or -1 when the memo has no record
 * of it.  Asking keeps the record (a group whose status stands is still
 * reported, and its last write is what the queue-position refresh counts
 * from). */
static double memo_age(struct kb_sched *s, const char *key)
{
        struct kb__status_memo *m;
        HASH_FIND_STR(s->memo, key, m);
        if (!m)
                return -1;
        m->gen = s->memo_gen;
        return kb_now_mono() - m->sent;
}

void kb__status_sweep(struct kb_sched *s)
{
        struct kb__status_memo *m, *t;
        HASH_ITER(hh, s->memo, m, t)
        {
                if (m->gen + 2 > s->memo_gen)
                        continue;
                HASH_DEL(s->memo, m);
                free(m->key);
                free(m);
        }
        s->memo_gen++;
}

static void memo_forget(struct kb_sched *s, const char *key)
{
        struct kb__status_memo *m;
        HASH_FIND_STR(s->memo, key, m);
        if (m) {
                HASH_DEL(s->memo, m);
                free(m->key);
                free(m);
        }
}

void kb__status_release(struct kb_sched *s)
{
        struct kb__invalid_seen *v, *vt;
        HASH_ITER(hh, s->invalid_seen, v, vt)
        {
                HASH_DEL(s->invalid_seen, v);
                free(v->key);
                free(v);
        }
        struct kb__status_memo *m, *mt;
        HASH_ITER(hh, s->memo, m, mt)
        {
                HASH_DEL(s->memo, m);
                free(m->key);
                free(m);
        }
}

/* What a PodGroup status write announces once the server took it: the
 * gang scheduled (the Scheduled event and the job latency metric), or sent
 * back by its Inqueue timeout (the InqueueTimeout event).  Only then: a
 * write left to a later session or refused is computed again there, and
 * announcing it each time would count one transition twice. */
struct kb__status_after {
        char *ns, *name, *uid;
        double scheduled_creation; /* > 0: the gang was scheduled */
        char *scheduled_msg;
        char *inq_reason, *inq_msg; /* NULL: no timeout */
};

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

/* ---- PodGroup status -------------------------------------------------------------- */

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

/* A waiting gang's condition whose only change is its place in its queue
 * ("; 12th of 40 waiting in queue q") is rewritten at once while the gang
 * is, or was, among the first POSITION_PROMPT of its queue, and otherwise
 * at most every POSITION_REFRESH: with a thousand gangs waiting in one
 * queue, every gang admitted ahead of them, or arriving behind them, would
 * otherwise cost a thousand status writes.  (Kueue's queue visibility
 * likewise keeps only the head of a queue current.) */
#define POSITION_PROMPT  10
#define POSITION_REFRESH 30.0

static bool cond_same(const struct kb_condition *c, const char *status, const char *reason,
                      const char *message)
{
        return kb_streq(c->status, status) && kb_streq(c->reason ? c->reason : "", reason) &&
               kb_streq(c->message ? c->message : "", message);
}

/* Whether c says what st says but for a position ending that may wait (see
 * POSITION_PROMPT): then it stands as it is.  The refresh counts from the
 * group's last status write (age seconds ago, -1 when none is known), not
 * from the condition's lastTransitionTime, which moves only when its
 * status does. */
static bool cond_position_only(const struct kb_condition *c, const struct kb_pg_status *st,
                               double age)
{
        if (!c->message || !st->cond_message || !kb_streq(c->status, st->cond_status) ||
            !kb_streq(c->reason ? c->reason : "", st->cond_reason) || age < 0)
                return false;
        const char *pa, *pb;
        size_t na = kb_position_split(c->message, &pa);
        size_t nb = kb_position_split(st->cond_message, &pb);
        unsigned was;
        if (!pa || !pb || na != nb || memcmp(c->message, st->cond_message, na) != 0 ||
            sscanf(pa, "%u", &was) != 1 || was <= POSITION_PROMPT ||
            st->position <= POSITION_PROMPT)
                return false;
        return age < POSITION_REFRESH;
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

static void pg_status(struct kb_sched *s, const struct kb_pg_status *st)
{
        const struct kb_podgroup *pg = st->pg;
        const char *ns = kb_meta_ns(&pg->meta);
        const struct kb_podgroup *cur = kb_cache_get(s->cache, KB_KIND_PODGROUP, ns, pg->meta.name);
        if (!cur || !kb_streq(cur->meta.uid, pg->meta.uid))
                return; /* deleted or replaced meanwhile */
        const char *phase = kb_pg_phase_name(st->phase);
        char ts[40];
        kb_now_time(ts, sizeof(ts));
        /* Every session that finds the gang unschedulable says so, as
         * Volcano's RecordJobStatusEvent; repeats become one Event's count
         * and series.  Not while an admitted group has fewer pods than
         * minMember and none has run: that is the normal handshake of a
         * workload controller that creates its pods once the group is
         * admitted (Volcano's job controller), one by one, not a failure
         * to warn of; the condition says it (issue 23, point 7). */
        bool handshake = st->phase == KB_PG_INQUEUE && !st->running && !st->succeeded &&
                         !st->failed && kb_streq(st->cond_reason, KB_WHY_TASKS);
        if (st->cond_type && !strcmp(st->cond_type, "Unschedulable") &&
            kb_streq(st->cond_status, "True") && !handshake)
                kb__event(s, "PodGroup", "scheduling.volcano.sh/v1beta1", ns, pg->meta.name,
                          pg->meta.uid, "Warning", "Unschedulable",
                          st->cond_message ? st->cond_message : "");

        /* kube-apiserver refuses a pod naming no PriorityClass, but nothing
         * checks a PodGroup's: say so on it rather than let it count as the
         * default priority in silence (issue 23, point 7).  Repeats are one
         * Event's count. */
        if (st->unknown_priority_class) {
                char *msg = kb_xasprintf("spec.priorityClassName: no PriorityClass named %s; "
                                         "the group counts as the default priority",
                                         st->unknown_priority_class);
                kb__event(s, "PodGroup", "scheduling.volcano.sh/v1beta1", ns, pg->meta.name,
                          pg->meta.uid, "Warning", "UnknownPriorityClass", msg);
                free(msg);
        }

        /* The desired conditions: the current ones with the session's
         * replacing its type (Volcano's UpdatePodGroupCondition); Scheduled
         * turns a standing Unschedulable to False. */
        bool changed = !kb_streq(cur->phase, phase) || cur->running != st->running ||
                       cur->succeeded != st->succeeded || cur->failed != st->failed;
        struct kb_value *conds = kb_value_new(KB_VARRAY);
        bool have = false;
        /* The Inqueue timeout's clock (pkg/framework/inqueue.c): the
         * condition's lastTransitionTime is when the session admitted the
         * group or sent it back, which the next sessions read. */
        char inq_ts[40] = "";
        bool inq_new = false;
        if (st->inq_status) {
                const struct kb_condition *c = kb_pg_condition(cur, KB_INQUEUE_CONDITION);
                inq_new = !c || !kb_streq(c->status, st->inq_status) ||
                          !kb_streq(c->reason ? c->reason : "", st->inq_reason);
                kb_format_time(st->inq_since, inq_ts, sizeof(inq_ts));
                changed |= inq_new;
        }
        if (inq_new)
                kb_value_append(conds, kb__status_cond_json(KB_INQUEUE_CONDITION, st->inq_status,
                                                            st->inq_reason, st->inq_message, inq_ts,
                                                            NULL));
        /* The message the write carries: the session's, or the standing
         * one when only its queue position moved and may wait (the memo
         * must record what was written, not what was not). */
        const char *msg_kept = st->cond_message;
        bool sched_new = false;
        char *mkey = kb_xasprintf("pg/%s/%s", ns, pg->meta.name);
        double age = memo_age(s, mkey);
        for (size_t i = 0; i < cur->nconditions; i++) {
                const struct kb_condition *c = &cur->conditions[i];
                if (inq_new && kb_streq(c->type, KB_INQUEUE_CONDITION))
                        continue;
                if (st->cond_type && kb_streq(c->type, st->cond_type)) {
                        have = true;
                        if (!cond_same(c, st->cond_status, st->cond_reason, st->cond_message)) {
                                if (cond_position_only(c, st, age)) {
                                        msg_kept = c->message;
                                } else {
                                        changed = true;
                                        sched_new = !strcmp(st->cond_type, "Scheduled");
                                        char kept[40];
                                        kb_value_append(
                                            conds,
                                            kb__status_cond_json(
                                                c->type, st->cond_status, st->cond_reason,
                                                st->cond_message,
                                                kb__status_transition_time(c, st->cond_status, ts,
                                                                           kept, sizeof(kept)),
                                                NULL));
                                        continue;
                                }
                        }
                } else if (st->cond_type && !strcmp(st->cond_type, "Scheduled") &&
                           kb_streq(c->type, "Unschedulable") && kb_streq(c->status, "True")) {
                        changed = true;
                        kb_value_append(conds,
                                        kb__status_cond_json(c->type, "False", "Scheduled",
                                                             "the gang is scheduled", ts, NULL));
                        continue;
                }
                char lt[40] = "";
                if (c->last_transition)
                        kb_format_time(c->last_transition, lt, sizeof(lt));
                kb_value_append(conds, kb__status_cond_json(c->type, c->status ? c->status : "",
                                                            c->reason, c->message, lt[0] ? lt : ts,
                                                            c->transition_id));
        }
        if (st->cond_type && !have) {
                changed = true;
                sched_new = !strcmp(st->cond_type, "Scheduled");
                kb_value_append(conds,
                                kb__status_cond_json(st->cond_type, st->cond_status,
                                                     st->cond_reason, st->cond_message, ts, NULL));
        }
        if (!changed) {
                kb_value_free(conds);
                free(mkey);
                return;
        }
        struct kb_value *body = kb_value_new(KB_VOBJECT);
        struct kb_value *sv = kb_value_ensure_object(body, "status");
        kb_value_set(sv, "phase", kb_value_new_string(phase));
        kb_value_set(sv, "running", kb_value_new_int(st->running));
        kb_value_set(sv, "succeeded", kb_value_new_int(st->succeeded));
        kb_value_set(sv, "failed", kb_value_new_int(st->failed));
        kb_value_set(sv, "conditions", conds);
        /* The reservation plugin's expected start, which the message names
         * too (so a change to it is a change to the message); null removes
         * it (a merge patch). */
        if (st->expected_start > 0) {
                char es[40];
                kb_format_time(st->expected_start, es, sizeof(es));
                kb_value_set(sv, "expectedStartTime", kb_value_new_string(es));
        } else {
                kb_value_set(sv, "expectedStartTime", kb_value_new(KB_VNULL));
        }
        /* The memo ignores times, so an unchanged status is not re-sent
         * while the watch catches up. */
        struct kb_value *key_doc = kb_value_new(KB_VOBJECT);
        kb_value_set(key_doc, "phase", kb_value_new_string(phase));
        kb_value_set(key_doc, "r", kb_value_new_int(st->running));
        kb_value_set(key_doc, "s", kb_value_new_int(st->succeeded));
        kb_value_set(key_doc, "f", kb_value_new_int(st->failed));
        kb_value_set(key_doc, "t", kb_value_new_string(st->cond_type ? st->cond_type : ""));
        kb_value_set(key_doc, "c", kb_value_new_string(st->cond_status ? st->cond_status : ""));
        kb_value_set(key_doc, "m", kb_value_new_string(msg_kept ? msg_kept : ""));
        kb_value_set(key_doc, "v", kb_value_new_string(cur->meta.uid ? cur->meta.uid : ""));
        if (inq_new)
                kb_value_set(key_doc, "i", kb_value_new_string(st->inq_status));
        char *kj = kb_json_emit(key_doc, false);
        kb_value_free(key_doc);
        uint64_t h = kb_hash(kj, strlen(kj), KB_HASH_SEED);
        free(kj);
        /* Until discovery says how status is written, nothing is (the
         * next session tries again). */
        h ^= (uint64_t)s->pg_status_sub;
        if (s->pg_status_sub >= 0 && !kb__status_memo_same(s, mkey, h)) {
                kb__status_memo_set(s, mkey, h);
                char *path = kb_xasprintf(KB_GROUP_API "/namespaces/%s/podgroups/%s%s", ns,
                                          pg->meta.name, s->pg_status_sub ? "/status" : "");
                char *what = kb_xasprintf("podgroup %s/%s status", ns, pg->meta.name);
                struct kb__status_after *after = NULL;
                bool timed_out = inq_new && !strcmp(st->inq_status, "False");
                if (sched_new || timed_out) {
                        after = kb_xcalloc(1, sizeof(*after));
                        after->ns = kb_xstrdup(ns);
                        after->name = kb_xstrdup(pg->meta.name);
                        after->uid = pg->meta.uid ? kb_xstrdup(pg->meta.uid) : NULL;
                }
                if (sched_new) {
                        after->scheduled_creation = cur->meta.creation;
                        after->scheduled_msg = kb_xstrdup(st->cond_message && *st->cond_message
                                                              ? st->cond_message
                                                              : "pod group is ready");
                }
                if (timed_out) {
                        after->inq_reason = kb_xstrdup(st->inq_reason);
                        after->inq_msg = st->inq_message ? kb_xstrdup(st->inq_message) : NULL;
                }
                /* The conditions were merged with cur's: cur's version. */
                kb__status_fire(s, path, body, cur->meta.resource_version,
                                "application/merge-patch+json", what, mkey, after);
                body = NULL;
                free(what);
                free(path);
        }
        free(mkey);
        kb_value_free(body);
}

/* The session's status, with what it cannot know added to an Unschedulable
 * message: that a PodDisruptionBudget refused an eviction made for the
 * group (binds.c keeps those of the last minute).  The note goes before the
 * queue position, which stays last (see POSITION_PROMPT). */
void kb__pg_status(struct kb_sched *s, const struct kb_pg_status *st)
{
        char *note = NULL;
        if (st->name && st->cond_type && !strcmp(st->cond_type, "Unschedulable") &&
            kb_streq(st->cond_status, "True"))
                note = kb__evictions_refused(s, st->name);
        if (!note) {
                pg_status(s, st);
                return;
        }
        struct kb_pg_status noted = *st;
        const char *m = st->cond_message ? st->cond_message : "", *pos;
        size_t n = kb_position_split(m, &pos);
        char *msg = !*m   ? kb_xstrdup(note)
                    : pos ? kb_xasprintf("%.*s; %s; %s", (int)n, m, note, pos)
                          : kb_xasprintf("%s; %s", m, note);
        noted.cond_message = msg;
        pg_status(s, &noted);
        free(msg);
        free(note);
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
        struct kb__invalid_seen *seen;
        HASH_FIND_STR(s->invalid_seen, key, seen);
        if (!seen) {
                seen = kb_xcalloc(1, sizeof(*seen));
                seen->key = kb_xstrdup(key);
                HASH_ADD_KEYPTR(hh, s->invalid_seen, seen->key, strlen(seen->key), seen);
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

void kb__report_invalid(struct kb_sched *s)
{
        if (!s->invalid_seen && !kb_cache_invalid_gen(s->cache))
                return;
        struct invalid_pass ip = {.s = s};
        kb_now_time(ip.ts, sizeof(ip.ts));
        struct kb__invalid_seen *seen, *t;
        HASH_ITER(hh, s->invalid_seen, seen, t)
        seen->visited = false;
        kb_cache_invalid_each(s->cache, report_invalid, &ip);
        /* Fixed or deleted objects: forget them, so breaking one again is
         * reported again. */
        HASH_ITER(hh, s->invalid_seen, seen, t)
        {
                if (seen->visited)
                        continue;
                char *mkey = kb_xasprintf("invalid/%s", seen->key);
                memo_forget(s, mkey);
                free(mkey);
                HASH_DEL(s->invalid_seen, seen);
                free(seen->key);
                free(seen);
        }
}
