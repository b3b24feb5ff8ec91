/*
 * A session that would repeat the last one: on a kept model, a session is
 * a function of the snapshot, the conf and the clock.  When the snapshot's
 * generation is the last session's (nothing changed: kb_snapshot.gen), the
 * conf is the same one (kb_conf.serial) and the clock has not reached a
 * point from which the last session's decisions could turn (each reader
 * of the clock names its turning points, kb_session_clock_until; a plain
 * kb_session_now holds at that clock alone), running would decide
 * exactly what the last session decided.  So the last result is kept
 * (its lists shared with the caller's copy by counted references:
 * result.c) and handed out again instead of running: a cluster with a
 * backlog of gangs that cannot start, and nothing happening, pays for a
 * reference, not for allocate trying every gang again each second.
 *
 * Kept only when the last session bound and evicted nothing and changed
 * no Inqueue condition (whose time is the session's now): a session that
 * decided something is followed by the changes its decisions make, and
 * its result is not what an unchanged cluster asks to see again.  Test
 * builds run the session anyway every KB_MODEL_CHECK-th repeat and compare
 * (session.c, kb__repeat_check).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

bool kb__repeat_result(struct kb_model *m, const struct kb_snapshot *snap,
                       const struct kb_conf *conf, struct kb_result *result)
{
        if (!m || !m->last || !conf->serial || conf->serial != m->last_conf || !snap->gen ||
            snap->gen != m->last_gen || snap->gen != m->gen || !kb__model_same_input(m, snap))
                return false;
        /* Turning points are found looking forward: a clock that went
         * back runs. */
        if (!isinf(m->last_until) && (snap->now < m->last_now || snap->now >= m->last_until))
                return false;
        double t0 = kb_now_mono();
        kb__result_from_hold(result, m->last);
        result->repeated = true;
        m->nreused++;
        m->nrepeated++;
        result->duration = kb_now_mono() - t0;
        return true;
}

void kb__repeat_keep(struct kb_session *s)
{
        struct kb_model *m = s->model;
        struct kb_result *r = s->result;
        kb__result_unhold(m->last);
        m->last = NULL;
        if (!s->executed || s->rc || s->clock_until <= s->snap->now || !s->conf->serial ||
            !s->snap->gen || m->gen != s->snap->gen || r->nbinds || r->nevictions)
                return;
        for (size_t i = 0; i < r->npodgroups; i++)
                if (r->podgroups[i].inq_status)
                        return;
        m->last = kb__result_hold(r);
        m->last_gen = s->snap->gen;
        m->last_conf = s->conf->serial;
        m->last_now = s->snap->now;
        m->last_until = s->clock_until;
}

/* ---- the check (test builds) ------------------------------------------------------ */

#ifdef KB_TESTING
#define DIFF(what, ...)                                                                            \
        do {                                                                                       \
                fprintf(stderr, "repeated session result differs from running: " what "\n",        \
                        __VA_ARGS__);                                                              \
                abort();                                                                           \
        } while (0)

static const char *or_none(const char *s)
{
        return s ? s : "(none)";
}

#define SAME_STR(a, b, what, name)                                                                 \
        do {                                                                                       \
                if (!kb_streq(a, b))                                                               \
                        DIFF("%s %s: %s, running %s", name, what, or_none(a), or_none(b));         \
        } while (0)

static void check_pg(const struct kb_pg_status *a, const struct kb_pg_status *b)
{
        const char *n = b->name;
        SAME_STR(a->name, b->name, "name", "podgroup");
        if (a->pg != b->pg || a->phase != b->phase || a->running != b->running ||
            a->succeeded != b->succeeded || a->failed != b->failed || a->pending != b->pending)
                DIFF("podgroup %s: object, phase or counts", n);
        SAME_STR(a->cond_type, b->cond_type, "condition type", n);
        SAME_STR(a->cond_status, b->cond_status, "condition status", n);
        SAME_STR(a->cond_reason, b->cond_reason, "condition reason", n);
        SAME_STR(a->cond_message, b->cond_message, "condition message", n);
        if (a->position != b->position || a->waiting != b->waiting)
                DIFF("podgroup %s: position %u of %u, running %u of %u", n, a->position, a->waiting,
                     b->position, b->waiting);
        if (a->expected_start != b->expected_start || a->domain_tier != b->domain_tier)
                DIFF("podgroup %s: expected start or domain tier", n);
        SAME_STR(a->domain, b->domain, "domain", n);
        SAME_STR(a->inq_status, b->inq_status, "Inqueue condition", n);
        SAME_STR(a->pending_message, b->pending_message, "pending message", n);
        SAME_STR(a->unknown_priority_class, b->unknown_priority_class, "priority class", n);
}

static void check_queue(const struct kb_queue_status *a, const struct kb_queue_status *b)
{
        const char *n = b->name;
        SAME_STR(a->name, b->name, "name", "queue");
        if (a->state != b->state || a->state_changed != b->state_changed ||
            a->pending != b->pending || a->inqueue != b->inqueue || a->running != b->running ||
            a->unknown != b->unknown || a->completed != b->completed ||
            a->unreclaimed != b->unreclaimed || a->share != b->share)
                DIFF("queue %s: state, counts or share", n);
        if (memcmp(&a->allocated, &b->allocated, sizeof(a->allocated)) != 0 ||
            memcmp(&a->deserved, &b->deserved, sizeof(a->deserved)) != 0 ||
            memcmp(&a->capability, &b->capability, sizeof(a->capability)) != 0)
                DIFF("queue %s: allocated, deserved or capability", n);
}

void kb__repeat_check(const struct kb_result *a, const struct kb_result *b)
{
        if (a->nbinds != b->nbinds || a->nevictions != b->nevictions)
                DIFF("%zu binds and %zu evictions, running %zu and %zu", a->nbinds, a->nevictions,
                     b->nbinds, b->nevictions);
        if (a->npodgroups != b->npodgroups || a->nqueues != b->nqueues ||
            a->nnominations != b->nnominations || a->nwarnings != b->nwarnings ||
            a->nhypernodes != b->nhypernodes || a->nunschedulable != b->nunschedulable)
                DIFF("%s", "the number of statuses, nominations, warnings or lone pods");
        for (size_t i = 0; i < a->npodgroups; i++)
                check_pg(&a->podgroups[i], &b->podgroups[i]);
        for (size_t i = 0; i < a->nqueues; i++)
                check_queue(&a->queues[i], &b->queues[i]);
        for (size_t i = 0; i < a->nnominations; i++)
                if (a->nominations[i].pod != b->nominations[i].pod ||
                    !kb_streq(a->nominations[i].node, b->nominations[i].node))
                        DIFF("nomination %zu", i);
        for (size_t i = 0; i < a->nwarnings; i++) {
                const struct kb_warning *x = &a->warnings[i], *y = &b->warnings[i];
                if (x->pg != y->pg || x->pod != y->pod || x->hn != y->hn)
                        DIFF("warning %zu: object", i);
                SAME_STR(x->object, y->object, "object", "warning");
                SAME_STR(x->message, y->message, "message", y->object);
                SAME_STR(x->reason, y->reason, "reason", y->object);
        }
        for (size_t i = 0; i < a->nhypernodes; i++)
                if (a->hypernodes[i].hn != b->hypernodes[i].hn ||
                    a->hypernodes[i].node_count != b->hypernodes[i].node_count)
                        DIFF("hypernode status %zu", i);
        for (size_t i = 0; i < a->nunschedulable; i++) {
                if (a->unschedulable[i].pod != b->unschedulable[i].pod)
                        DIFF("lone pod %zu", i);
                SAME_STR(a->unschedulable[i].message, b->unschedulable[i].message, "message",
                         "lone pod");
        }
        if (a->backfilled != b->backfilled)
                DIFF("backfilled %u, running %u", a->backfilled, b->backfilled);
}
#endif
