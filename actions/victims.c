/*
 * What preempt and reclaim place with (evict.c's banner has the algorithm):
 * who must never evict, who may be a victim and in which order victims go,
 * and the primitives every step uses (the scratch arrays, the queue's
 * answer, step 1's room free or being freed, the evictions themselves).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/actions-int.h"

void kb__evictor_forget(struct kb__evictor *e)
{
        e->epoch++;
}

void kb__evictor_reserve(struct kb__evictor *e, size_t n)
{
        if (n <= e->cap)
                return;
        size_t cap = e->cap ? e->cap : 64;
        while (cap < n)
                cap *= 2;
        e->cand = kb_xrealloc(e->cand, cap * sizeof(*e->cand));
        e->out = kb_xrealloc(e->out, cap * sizeof(*e->out));
        e->best = kb_xrealloc(e->best, cap * sizeof(*e->best));
        e->pick = kb_xrealloc(e->pick, cap * sizeof(*e->pick));
        e->cap = cap;
}

/* ---- rules ------------------------------------------------------------------------ */

bool kb__never_preempts(struct kb_session *s, const struct kb_task *t)
{
        if (t->pod->preempt_never)
                return true;
        const char *name = t->pod->priority_class_name;
        const struct kb_snapshot *snap = kb_session_snapshot(s);
        for (size_t i = 0; name && *name && i < snap->npriorityclasses; i++)
                if (kb_streq(snap->priorityclasses[i]->meta.name, name))
                        return snap->priorityclasses[i]->preempt_never;
        return false;
}

bool kb__victim_status_ok(const struct kb_task *preemptor, const struct kb_task *v,
                          bool running_only)
{
        if (!v->job || v == preemptor)
                return false;
        if (v->status != KB_TASK_RUNNING && (running_only || v->status != KB_TASK_BOUND))
                return false;
        /* A best-effort preemptor evicts only best-effort tasks. */
        if (preemptor->best_effort && !v->best_effort)
                return false;
        return v->preemptable;
}

/* The session whose orders victim_cmp follows, and the preemptor's queue
 * (qsort has no context). */
static _Thread_local struct kb_session *order_session;
static _Thread_local const struct kb_queue_info *order_queue;

/* Cheapest first, as Volcano's BuildVictimsPriorityQueue orders victims:
 * what the session would place last goes first — across queues the queue
 * that comes last, then the job that comes last in job order (with the
 * priority plugin, the lowest priority), then the task that comes last in
 * task order (the lowest priority, the highest pod index, the most recently
 * created).  Across queues the plugins' victim queue order comes first
 * (capacity's hierarchy: the queue closer to the preemptor's). */
static int victim_cmp(const void *a, const void *b)
{
        struct kb_task *x = *(struct kb_task *const *)a, *y = *(struct kb_task *const *)b;
        struct kb_session *s = order_session;
        int c;
        if (x->job != y->job) {
                if (x->job->queue != y->job->queue && x->job->queue && y->job->queue &&
                    ((order_queue &&
                      (c = kb_victim_queue_order(s, x->job->queue, y->job->queue, order_queue))) ||
                     (c = kb_queue_order(s, y->job->queue, x->job->queue))))
                        return c;
                if ((c = kb_job_order(s, y->job, x->job)))
                        return c;
        }
        return kb_task_order(s, y, x);
}

void kb__sort_victims(struct kb_session *s, const struct kb_task *t, struct kb_task **v, size_t n)
{
        order_session = s;
        order_queue = t->job ? t->job->queue : NULL;
        qsort(v, n, sizeof(*v), victim_cmp);
        order_session = NULL;
        order_queue = NULL;
}

/* ---- placing --------------------------------------------------------------------- */

static const char *reason_for(struct kb__evictor *e, const struct kb_task *t)
{
        return kb_pool_printf(kb_session_pool(e->s),
                              "evicted by %s to make room for %s (podgroup %s)", e->action, t->name,
                              t->job->name);
}

bool kb__evict_queue_takes(struct kb__evictor *e, const struct kb_task *t)
{
        return !e->allocatable || kb_allocatable(e->s, t->job->queue, t);
}

/* Step 1: room free or being freed, as allocate chooses it; the queue's
 * answer is asked unless the caller knows it (queue_known). */
bool kb__evict_place_free(struct kb__evictor *e, struct kb_task *t, bool queue_known)
{
        const char *why = NULL;
        struct kb_node_info *n = kb_select_node(e->s, t, &why);
        if (!n || (!queue_known && !kb__evict_queue_takes(e, t)))
                return false;
        kb_statement_pipeline(e->st, t, n);
        return true;
}

void kb__evict_all(struct kb__evictor *e, const struct kb_task *t, struct kb_task *const *v,
                   size_t n)
{
        const char *reason = reason_for(e, t);
        for (size_t i = 0; i < n; i++)
                kb_statement_evict(e->st, v[i], e->action, reason, t->job);
        t->job->evictions += (uint32_t)n;
        t->job->evicted_by = e->action;
}
