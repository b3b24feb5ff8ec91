/*
 * A session that would repeat the last one: on a kept model, a session is
 * a function of the snapshot, the conf and the clock.  When the snapshot's
 * generation is the last session's (nothing changed: kb_snapshot.gen), the
 * conf is the same one (kb_conf.serial) and the clock has not reached a
 * point from which the last session's decisions could turn (each reader
 * of the clock names its turning points, kb_session_clock_until; a plain
 * kb_session_now holds at that clock alone), running would decide
 * exactly what the last session decided.  So the last result is kept (a
 * copy, in the model) and handed out again instead of running: a cluster
 * with a backlog of gangs that cannot start, and nothing happening, pays
 * for copying a result, not for allocate trying every gang again each
 * second.
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

static const char *dup(struct kb_pool *p, const char *s)
{
        return s ? kb_pool_strdup(p, s) : NULL;
}

static void *dup_mem(struct kb_pool *p, const void *v, size_t n, size_t size)
{
        void *copy = kb_pool_alloc(p, (n + 1) * size);
        if (n)
                memcpy(copy, v, n * size);
        return copy;
}

/* d: a copy of r's statuses, strings and all (r has no binds, no
 * evictions and no times), in d's own pool. */
static void result_copy(struct kb_result *d, const struct kb_result *r)
{
        memset(d, 0, sizeof(*d));
        kb_pool_init(&d->pool, 0);
        struct kb_pool *p = &d->pool;
        d->npodgroups = r->npodgroups;
        d->podgroups = dup_mem(p, r->podgroups, r->npodgroups, sizeof(*r->podgroups));
        for (size_t i = 0; i < d->npodgroups; i++) {
                struct kb_pg_status *st = &d->podgroups[i];
                st->name = dup(p, st->name);
                st->cond_type = dup(p, st->cond_type);
                st->cond_status = dup(p, st->cond_status);
                st->cond_reason = dup(p, st->cond_reason);
                st->cond_message = dup(p, st->cond_message);
                st->domain = dup(p, st->domain);
                st->pending_message = dup(p, st->pending_message);
                st->unknown_priority_class = dup(p, st->unknown_priority_class);
        }
        d->nqueues = r->nqueues;
        d->queues = dup_mem(p, r->queues, r->nqueues, sizeof(*r->queues));
        for (size_t i = 0; i < d->nqueues; i++)
                d->queues[i].name = dup(p, d->queues[i].name);
        d->nnominations = r->nnominations;
        d->nominations = dup_mem(p, r->nominations, r->nnominations, sizeof(*r->nominations));
        for (size_t i = 0; i < d->nnominations; i++)
                d->nominations[i].node = dup(p, d->nominations[i].node);
        /* Warnings are malloc'd (kb_result_release frees them). */
        d->nwarnings = d->capwarnings = r->nwarnings;
        d->warnings = kb_xmalloc((r->nwarnings + 1) * sizeof(*r->warnings));
        for (size_t i = 0; i < d->nwarnings; i++) {
                struct kb_warning *w = &d->warnings[i];
                *w = r->warnings[i];
                w->object = dup(p, w->object);
                w->message = dup(p, w->message);
                w->reason = dup(p, w->reason);
        }
        d->nhypernodes = r->nhypernodes;
        d->hypernodes = dup_mem(p, r->hypernodes, r->nhypernodes, sizeof(*r->hypernodes));
        d->nunschedulable = r->nunschedulable;
        d->unschedulable =
            dup_mem(p, r->unschedulable, r->nunschedulable, sizeof(*r->unschedulable));
        for (size_t i = 0; i < d->nunschedulable; i++)
                d->unschedulable[i].message = dup(p, d->unschedulable[i].message);
        d->backfilled = r->backfilled;
}

bool kb__repeat_result(struct kb_model *m, const struct kb_snapshot *snap,
                       const struct kb_conf *conf, struct kb_result *result)
{
        if (!m || !m->last_ok || !conf->serial || conf->serial != m->last_conf || !snap->gen ||
            snap->gen != m->last_gen || snap->gen != m->gen || !kb__model_same_input(m, snap))
                return false;
        /* Turning points are found looking forward: a clock that went
         * back runs. */
        if (!isinf(m->last_until) && (snap->now < m->last_now || snap->now >= m->last_until))
                return false;
        double t0 = kb_now_mono();
        result_copy(result, &m->last);
        result->repeated = true;
        m->nreused++;
        m->nrepeated++;
        result->duration = kb_now_mono() - t0;
        return true;
}

void kb__repeat_keep(struct kb_session *s)
{
        struct kb_model *m = s->model;
        const struct kb_result *r = s->result;
        kb_result_release(&m->last);
        m->last_ok = false;
        if (!s->executed || s->rc || s->clock_until <= s->snap->now || !s->conf->serial ||
            !s->snap->gen || m->gen != s->snap->gen || r->nbinds || r->nevictions)
                return;
        for (size_t i = 0; i < r->npodgroups; i++)
                if (r->podgroups[i].inq_status)
                        return;
        result_copy(&m->last, r);
        m->last_ok = true;
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
