/*
 * PodGroup status: the phase, the counts and the conditions a session
 * found for a gang, patched onto its status when they differ from the
 * object and from what was last sent (status.c keeps that memo and sends
 * the write).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/scheduler-int.h"

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
        double age = kb__status_memo_age(s, mkey);
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
