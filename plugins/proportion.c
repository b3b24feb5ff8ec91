/*
 * proportion: queue quotas, as Volcano's plugins/proportion.
 *
 * Deserved shares by weighted water-filling.  Every queue that has jobs
 * starts with nothing; each round hands out what remains of the cluster in
 * proportion to the weights of the queues not yet satisfied, then caps each
 * queue's deserved by its real capability (capability, and the cluster less
 * other queues' guarantees) and by what it requests, and floors it at its
 * guarantee.  A queue is satisfied when its request fits its deserved, or
 * when a round gives it nothing more; rounds stop when nothing remains or
 * nothing changed.
 *
 * Example: 12 cpu; queue a (weight 1) requests 2 cpu, queue b (weight 2)
 * requests 20.  Round 1: a gets 12*1/3 = 4, capped at its request 2
 * (satisfied); b gets 8.  Remaining 12-2-8 = 2.  Round 2: only b, gets all
 * 2: b deserves 10, a 2.
 *
 *   overused     deserved <= allocated in every resource: allocate skips
 *                the queue;
 *   allocatable  a task fits when allocated + request <= deserved in the
 *                resources the task requests;
 *   queueOrder   the lower share (max over resources of allocated /
 *                deserved) first;
 *   enqueueable  a closed (or closing) queue admits nothing; otherwise a
 *                group with minResources is admitted while minResources +
 *                allocated + admitted-but-not-running minResources fit the
 *                queue's real capability.
 *
 * Pods are not a quota resource (Volcano keeps them apart as MaxTaskNum).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"

static void *proportion_open(struct kb_session *s, const struct kb_value *args);
static void proportion_close(struct kb_session *s, void *state);

const struct kb_plugin kb_plugin_proportion = {
    .name = "proportion",
    .open = proportion_open,
    .close = proportion_close,
};

typedef double vec[KB_RES_MAX];

struct attr {
        bool active; /* the queue has jobs */
        int32_t weight;
        vec deserved, allocated, request, inqueue, guarantee, real_cap;
        double share;
};

struct proportion {
        struct kb_session *s;
        struct attr *attrs; /* per queue index */
        size_t nqueues;
};

static void to_vec(const struct kb_res *r, double *v)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                v[i] = r->q[i] == KB_RES_UNLIMITED ? INFINITY : (double)r->q[i];
        v[KB_RES_PODS] = 0;
}

/* Volcano's Share(l, r): l/r, with 0/0 = 0 and x/0 = 1. */
static double frac(double l, double r)
{
        if (r == 0)
                return l == 0 ? 0 : 1;
        return l / r;
}

static void update_share(struct attr *a)
{
        double s = 0;
        for (int i = 0; i < KB_RES_MAX; i++) {
                if (i == KB_RES_PODS)
                        continue;
                double f = frac(a->allocated[i], a->deserved[i]);
                if (f > s)
                        s = f;
        }
        a->share = s;
}

static void compute_deserved(struct proportion *p, const struct kb_res *total_res)
{
        vec total, remaining, total_guarantee = {0};
        to_vec(total_res, total);
        for (size_t q = 0; q < p->nqueues; q++)
                if (p->attrs[q].active)
                        for (int i = 0; i < KB_RES_MAX; i++)
                                total_guarantee[i] += p->attrs[q].guarantee[i];
        for (size_t q = 0; q < p->nqueues; q++) {
                struct attr *a = &p->attrs[q];
                for (int i = 0; i < KB_RES_MAX; i++) {
                        double real = total[i] - total_guarantee[i] + a->guarantee[i];
                        a->real_cap[i] = fmin(real, a->real_cap[i]);
                }
        }
        memcpy(remaining, total, sizeof(vec));
        bool *meet = kb_xcalloc(p->nqueues + 1, sizeof(bool));
        for (;;) {
                int64_t total_weight = 0;
                for (size_t q = 0; q < p->nqueues; q++)
                        if (p->attrs[q].active && !meet[q])
                                total_weight += p->attrs[q].weight;
                if (total_weight == 0)
                        break;
                vec old_remaining, increased = {0}, decreased = {0};
                memcpy(old_remaining, remaining, sizeof(vec));
                for (size_t q = 0; q < p->nqueues; q++) {
                        struct attr *a = &p->attrs[q];
                        if (!a->active || meet[q])
                                continue;
                        vec old;
                        memcpy(old, a->deserved, sizeof(vec));
                        bool fits = true, same = true;
                        for (int i = 0; i < KB_RES_MAX; i++) {
                                if (i == KB_RES_PODS)
                                        continue;
                                double d = a->deserved[i] +
                                           remaining[i] * (double)a->weight / (double)total_weight;
                                d = fmin(d, a->real_cap[i]);
                                d = fmin(d, a->request[i]);
                                d = fmax(d, a->guarantee[i]);
                                a->deserved[i] = d;
                                if (a->request[i] > d)
                                        fits = false;
                                if (d != old[i])
                                        same = false;
                                if (d > old[i])
                                        increased[i] += d - old[i];
                                else
                                        decreased[i] += old[i] - d;
                        }
                        update_share(a);
                        if (fits || same)
                                meet[q] = true;
                }
                bool empty = true, unchanged = true;
                for (int i = 0; i < KB_RES_MAX; i++) {
                        remaining[i] = remaining[i] - increased[i] + decreased[i];
                        if (remaining[i] > 0)
                                empty = false;
                        if (remaining[i] != old_remaining[i])
                                unchanged = false;
                }
                if (empty || unchanged)
                        break;
        }
        free(meet);
}

static bool overused(void *arg, const struct kb_queue_info *q)
{
        const struct proportion *p = arg;
        const struct attr *a = &p->attrs[q->index];
        for (int i = 0; i < KB_RES_MAX; i++)
                if (i != KB_RES_PODS && a->deserved[i] > a->allocated[i])
                        return false;
        return true;
}

static bool allocatable(void *arg, const struct kb_queue_info *q, const struct kb_task *t)
{
        const struct proportion *p = arg;
        const struct attr *a = &p->attrs[q->index];
        for (int i = 0; i < KB_RES_MAX; i++) {
                if (i == KB_RES_PODS || t->resreq.q[i] == 0)
                        continue;
                if (a->allocated[i] + (double)t->resreq.q[i] > a->deserved[i])
                        return false;
        }
        return true;
}

static int queue_order(void *arg, const struct kb_queue_info *l, const struct kb_queue_info *r)
{
        const struct proportion *p = arg;
        double ls = p->attrs[l->index].share, rs = p->attrs[r->index].share;
        if (ls == rs)
                return 0;
        return ls < rs ? -1 : 1;
}

static int enqueueable(void *arg, const struct kb_job *j)
{
        struct proportion *p = arg;
        const struct kb_queue_info *q = j->queue;
        struct attr *a = &p->attrs[q->index];
        if (q->state != KB_QUEUE_OPEN) {
                char why[256];
                snprintf(why, sizeof(why), "queue %s is %s", q->name,
                         kb_queue_state_name(q->state));
                kb_job_explain(p->s, j, why);
                return -1;
        }
        if (!j->pg || !j->pg->has_min_resources)
                return 1;
        vec min;
        to_vec(&j->pg->min_resources, min);
        for (int i = 0; i < KB_RES_MAX; i++) {
                if (i == KB_RES_PODS)
                        continue;
                /* Scalar resources the group does not ask for are not
                 * compared (Volcano drops them from the capability). */
                if (i > KB_RES_MEMORY && min[i] == 0)
                        continue;
                if (min[i] + a->allocated[i] + a->inqueue[i] > a->real_cap[i]) {
                        char why[256];
                        snprintf(why, sizeof(why),
                                 "queue resource quota insufficient: queue %s cannot fit the "
                                 "group's minResources %s",
                                 q->name, kb_res_name(i));
                        kb_job_explain(p->s, j, why);
                        return -1;
                }
        }
        for (int i = 0; i < KB_RES_MAX; i++)
                a->inqueue[i] += min[i];
        return 1;
}

/* Keeps the queue's allocated sum and share current as tasks come and go. */
static void account(struct proportion *p, const struct kb_task *t, double sign)
{
        if (!t->job->queue)
                return;
        struct attr *a = &p->attrs[t->job->queue->index];
        for (int i = 0; i < KB_RES_MAX; i++)
                if (i != KB_RES_PODS)
                        a->allocated[i] += sign * (double)t->resreq.q[i];
        update_share(a);
}

static void on_allocate(void *arg, const struct kb_task *t)
{
        account(arg, t, 1);
}

static void on_deallocate(void *arg, const struct kb_task *t)
{
        account(arg, t, -1);
}

static void *proportion_open(struct kb_session *s, const struct kb_value *args)
{
        (void)args;
        struct proportion *p = kb_pool_alloc(kb_session_pool(s), sizeof(*p));
        struct kb_queue_info *queues = kb_session_queues(s, &p->nqueues);
        size_t njobs;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        p->s = s;
        p->attrs = kb_pool_alloc(kb_session_pool(s), (p->nqueues + 1) * sizeof(*p->attrs));
        for (size_t q = 0; q < p->nqueues; q++) {
                struct attr *a = &p->attrs[q];
                const struct kb_queue *queue = queues[q].queue;
                a->weight = queues[q].weight > 0 ? queues[q].weight : 1;
                to_vec(&queue->guarantee, a->guarantee);
                if (queue->has_capability) {
                        to_vec(&queue->capability, a->real_cap);
                        /* Volcano: a capability without cpu or memory does
                         * not cap them. */
                        if (a->real_cap[KB_RES_CPU] <= 0)
                                a->real_cap[KB_RES_CPU] = INFINITY;
                        if (a->real_cap[KB_RES_MEMORY] <= 0)
                                a->real_cap[KB_RES_MEMORY] = INFINITY;
                } else {
                        for (int i = 0; i < KB_RES_MAX; i++)
                                a->real_cap[i] = INFINITY;
                }
        }
        for (size_t k = 0; k < njobs; k++) {
                const struct kb_job *j = jobs[k];
                if (!j->queue)
                        continue;
                struct attr *a = &p->attrs[j->queue->index];
                a->active = true;
                for (uint32_t i = 0; i < j->ntasks; i++) {
                        const struct kb_task *t = j->tasks[i];
                        bool alloc = kb_task_status_allocated(t->status);
                        if (!alloc && t->status != KB_TASK_PENDING)
                                continue;
                        for (int d = 0; d < KB_RES_MAX; d++) {
                                if (d == KB_RES_PODS)
                                        continue;
                                a->request[d] += (double)t->resreq.q[d];
                                if (alloc)
                                        a->allocated[d] += (double)t->resreq.q[d];
                        }
                }
                if (j->phase == KB_PG_INQUEUE && j->pg && j->pg->has_min_resources) {
                        vec min;
                        to_vec(&j->pg->min_resources, min);
                        for (int d = 0; d < KB_RES_MAX; d++)
                                a->inqueue[d] += min[d];
                }
        }
        compute_deserved(p, kb_session_total(s));
        for (size_t q = 0; q < p->nqueues; q++)
                update_share(&p->attrs[q]);

        kb_on_queue_order(s, queue_order, p);
        kb_on_overused(s, overused, p);
        kb_on_allocatable(s, allocatable, p);
        kb_on_job_enqueueable(s, enqueueable, p);
        kb_on_event(s, on_allocate, on_deallocate, p);
        return p;
}

/* Publishes deserved and share for the queue status. */
static void proportion_close(struct kb_session *s, void *state)
{
        struct proportion *p = state;
        size_t n;
        struct kb_queue_info *queues = kb_session_queues(s, &n);
        for (size_t q = 0; q < n; q++) {
                for (int i = 0; i < KB_RES_MAX; i++) {
                        double d = p->attrs[q].deserved[i];
                        queues[q].deserved.q[i] = isfinite(d) ? (int64_t)d : 0;
                }
                queues[q].share = p->attrs[q].share;
        }
}
