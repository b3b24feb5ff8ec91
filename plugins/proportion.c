/*
 * proportion: queue quotas, as Volcano master's plugins/proportion.
 *
 * Every resource counts, pods too: a task asks for one pod, a node offers
 * its pod limit, and a queue's request, allocation and deserved share have
 * a pods dimension like cpu and memory (Volcano adds pods:1 to every
 * task's request).  Only the per-task and per-group quota checks leave
 * pods out, as Volcano's comparisons ignore that dimension.
 *
 * Deserved shares by weighted water-filling.  Every queue that has jobs
 * starts with nothing; each round hands out what remains of the cluster in
 * proportion to the weights of the queues not yet satisfied, then caps each
 * queue's deserved by its real capability and by what it requests, and
 * floors it at its guarantee.  A queue is satisfied when its request fits
 * its deserved, or when a round changed nothing for it; rounds stop when
 * nothing remains (pods aside) or nothing changed.
 *
 *   real capability  the cluster less every queue's guarantee (never
 *                    below 0), plus the queue's own guarantee, capped by
 *                    its capability (a capability of 0 cpu or memory caps
 *                    nothing, as in Volcano)
 *
 * Example: 12 cpu; queue a (weight 1) requests 2 cpu, queue b (weight 2)
 * requests 20.  Round 1: a gets 12*1/3 = 4, capped at its request 2
 * (satisfied); b gets 8.  Remaining 12-2-8 = 2.  Round 2: only b, gets all
 * 2: b deserves 10, a 2.
 *
 *   queueOrder   the higher spec.priority first, then the lower share (the
 *                largest allocated/deserved over the resources deserved);
 *   overused     allocated reaches deserved in every resource: allocate
 *                skips the queue;
 *   allocatable  an open queue takes a task when allocated + request stays
 *                within deserved in the resources the task requests;
 *   enqueueable  a closed (or closing) queue admits nothing; a group with
 *                minResources is admitted while minResources + allocated +
 *                reserved - elastic fits the real capability in the
 *                resources the group names, where
 *                  reserved = what admitted groups do not hold yet: the
 *                             unheld part of minResources of Inqueue
 *                             groups, and of Running ones that hold at
 *                             least minMember tasks;
 *                  elastic  = what groups hold beyond their minResources
 *                             (all of it for a group without them);
 *   enqueued     the admitted group's minResources join reserved.  Volcano
 *                charges them inside its vote, so a group that a later
 *                plugin rejects still holds room; kbatch charges them only
 *                once every plugin admitted the group;
 *   preemptive   as allocatable: a queue reclaims only within its deserved;
 *   reclaimable  a candidate is a victim while its queue holds more than
 *                it deserves in some resource, counted down as victims are
 *                taken in the candidates' order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "framework/quota.h"

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
        vec deserved, allocated, request, inqueue, elastic, guarantee, real_cap;
        double share;
};

struct proportion {
        struct kb_session *s;
        struct attr *attrs; /* per queue index */
        size_t nqueues;
        /* reclaimable's scratch, per queue index: what the queue would
         * hold after the victims taken so far in one call. */
        vec *left;
        bool *seen;
};

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
        int nres = kb_res_count(); /* the others are zero */
        for (int i = 0; i < nres; i++) {
                if (a->deserved[i] < KB_QUOTA_EPS)
                        continue;
                double f = frac(a->allocated[i], a->deserved[i]);
                if (f > s)
                        s = f;
        }
        a->share = s;
}

/* Whether some resource other than pods remains (Volcano's IsEmpty). */
static bool remains(const vec r)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if (i != KB_RES_PODS && r[i] >= KB_QUOTA_EPS)
                        return true;
        return false;
}

static void compute_deserved(struct proportion *p)
{
        vec remaining;
        kb_quota_vec(kb_session_total(p->s), remaining);
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
                        bool fits = true, same = true;
                        for (int i = 0; i < KB_RES_MAX; i++) {
                                double old = a->deserved[i];
                                double d =
                                    old + remaining[i] * (double)a->weight / (double)total_weight;
                                d = fmin(d, a->real_cap[i]);
                                d = fmin(d, a->request[i]);
                                d = fmax(d, a->guarantee[i]);
                                a->deserved[i] = d;
                                if (!(a->request[i] < d + KB_QUOTA_EPS))
                                        fits = false;
                                if (d != old)
                                        same = false;
                                if (d > old)
                                        increased[i] += d - old;
                                else
                                        decreased[i] += old - d;
                        }
                        update_share(a);
                        if (fits || same)
                                meet[q] = true;
                }
                bool unchanged = true;
                for (int i = 0; i < KB_RES_MAX; i++) {
                        remaining[i] = fmax(remaining[i] + decreased[i] - increased[i], 0);
                        if (remaining[i] != old_remaining[i])
                                unchanged = false;
                }
                if (!remains(remaining) || unchanged)
                        break;
        }
        free(meet);
}

static bool overused(void *arg, const struct kb_queue_info *q)
{
        const struct attr *a = &((const struct proportion *)arg)->attrs[q->index];
        for (int i = 0; i < KB_RES_MAX; i++)
                if (!(a->deserved[i] < a->allocated[i] + KB_QUOTA_EPS))
                        return false;
        return true;
}

static bool allocatable(void *arg, const struct kb_queue_info *q, const struct kb_task *t)
{
        struct proportion *p = arg;
        const struct attr *a = &p->attrs[q->index];
        if (q->state != KB_QUEUE_OPEN)
                return false;
        for (int i = 0; i < KB_RES_MAX; i++) {
                if (i == KB_RES_PODS || t->resreq->q[i] <= 0)
                        continue;
                if (a->allocated[i] + (double)t->resreq->q[i] > a->deserved[i]) {
                        /* The job's first refusal is the one it reports
                         * (kb_quota_refusal): later ones, one per task
                         * allocate goes on to try, cost nothing. */
                        if (t->job->quota_error)
                                return false;
                        char who[160];
                        snprintf(who, sizeof(who), "queue %s", q->name);
                        const struct kb_queue *spec = q->queue;
                        kb_quota_refusal(
                            p->s, t, who, i, a->deserved[i], a->allocated[i],
                            spec && spec->has_capability ? (double)spec->capability.q[i] : INFINITY,
                            a->real_cap[i]);
                        return false;
                }
        }
        return true;
}

static int queue_order(void *arg, const struct kb_queue_info *l, const struct kb_queue_info *r)
{
        const struct proportion *p = arg;
        if (l->queue->priority != r->queue->priority)
                return l->queue->priority > r->queue->priority ? -1 : 1;
        double ls = p->attrs[l->index].share, rs = p->attrs[r->index].share;
        if (ls == rs)
                return 0;
        return ls < rs ? -1 : 1;
}

static int enqueueable(void *arg, const struct kb_job *j)
{
        struct proportion *p = arg;
        const struct kb_queue_info *q = j->queue;
        const struct attr *a = &p->attrs[q->index];
        if (q->state != KB_QUEUE_OPEN) {
                char why[256];
                snprintf(why, sizeof(why), "queue %s is %s", q->name,
                         kb_queue_state_name(q->state));
                kb_job_explain(p->s, j, KB_WHY_QUEUE_CLOSED, why);
                return -1;
        }
        if (!j->pg || !j->pg->has_min_resources)
                return 1;
        vec min;
        kb_quota_vec(&j->pg->min_resources, min);
        struct kb_buf b;
        kb_buf_init(&b);
        for (int i = 0; i < KB_RES_MAX; i++) {
                if (i == KB_RES_PODS || min[i] <= 0)
                        continue;
                if (min[i] + a->allocated[i] + a->inqueue[i] - a->elastic[i] > a->real_cap[i])
                        kb_quota_short(&b, i, min[i], a->allocated[i], a->inqueue[i], a->elastic[i],
                                       a->real_cap[i]);
        }
        if (b.len) {
                char *why = kb_xasprintf("queue resource quota insufficient: queue %s: %s", q->name,
                                         b.data);
                kb_job_explain(p->s, j, KB_WHY_QUOTA, why);
                free(why);
        }
        bool ok = b.len == 0;
        kb_buf_release(&b);
        return ok ? 1 : -1;
}

static void enqueued(void *arg, const struct kb_job *j)
{
        struct proportion *p = arg;
        if (!j->queue || !j->pg || !j->pg->has_min_resources)
                return;
        struct attr *a = &p->attrs[j->queue->index];
        for (int i = 0; i < KB_RES_MAX; i++)
                if (i != KB_RES_PODS)
                        a->inqueue[i] += (double)j->pg->min_resources.q[i];
}

static int reclaimable(void *arg, const struct kb_task *reclaimer, struct kb_task *const *cand,
                       size_t n, struct kb_task **out)
{
        struct proportion *p = arg;
        (void)reclaimer;
        int k = 0;
        for (size_t i = 0; i < n; i++) {
                const struct kb_job *j = cand[i]->job;
                if (!j || !j->queue)
                        continue;
                size_t q = j->queue->index;
                if (!p->seen[q]) {
                        p->seen[q] = true;
                        memcpy(p->left[q], p->attrs[q].allocated, sizeof(vec));
                }
                bool above = false;
                for (int d = 0; d < KB_RES_MAX && !above; d++)
                        above = !(p->left[q][d] < p->attrs[q].deserved[d] + KB_QUOTA_EPS);
                if (!above)
                        continue;
                out[k++] = cand[i];
                for (int d = 0; d < KB_RES_MAX; d++)
                        p->left[q][d] -= (double)cand[i]->resreq->q[d];
        }
        for (size_t i = 0; i < n; i++)
                if (cand[i]->job && cand[i]->job->queue)
                        p->seen[cand[i]->job->queue->index] = false;
        return k;
}

/* Keeps the queue's allocated sum and share current as tasks come and go. */
static void account(struct proportion *p, const struct kb_task *t, double sign)
{
        if (!t->job || !t->job->queue)
                return;
        struct attr *a = &p->attrs[t->job->queue->index];
        /* Only interned resources can be non-zero (once per allocated
         * task: a million of them at W8). */
        int nres = kb_res_count();
        for (int i = 0; i < nres; i++)
                a->allocated[i] += sign * (double)t->resreq->q[i];
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

static void queue_attrs(struct proportion *p, const struct kb_queue_info *queues)
{
        vec total, total_guarantee = {0};
        kb_quota_vec(kb_session_total(p->s), total);
        for (size_t q = 0; q < p->nqueues; q++) {
                vec g;
                kb_quota_vec(&queues[q].queue->guarantee, g);
                for (int i = 0; i < KB_RES_MAX; i++)
                        total_guarantee[i] += g[i];
        }
        for (size_t q = 0; q < p->nqueues; q++) {
                struct attr *a = &p->attrs[q];
                const struct kb_queue *queue = queues[q].queue;
                vec cap;
                a->weight = queues[q].weight;
                kb_quota_vec(&queue->guarantee, a->guarantee);
                kb_quota_vec(&queue->capability, cap);
                if (queue->has_capability) {
                        if (cap[KB_RES_CPU] <= 0)
                                cap[KB_RES_CPU] = INFINITY;
                        if (cap[KB_RES_MEMORY] <= 0)
                                cap[KB_RES_MEMORY] = INFINITY;
                }
                for (int i = 0; i < KB_RES_MAX; i++) {
                        double real = fmax(total[i] - total_guarantee[i], 0) + a->guarantee[i];
                        a->real_cap[i] = queue->has_capability ? fmin(real, cap[i]) : real;
                }
        }
}

/* What a job holds and asks for, and what it reserves as an admitted
 * group (kb_job_hold). */
static void job_attrs(struct proportion *p, const struct kb_job *j)
{
        struct attr *a = &p->attrs[j->queue->index];
        struct kb_job_hold h;
        kb_job_hold(j, &h);
        a->active = true;
        /* A queue that is not Open places nothing: its pending demand must
         * not shrink the others' shares (Volcano counts it). */
        bool open = j->queue->state == KB_QUEUE_OPEN;
        for (int d = 0; open && d < KB_RES_MAX; d++)
                a->request[d] += (double)j->pending_request.q[d];
        for (int d = 0; d < KB_RES_MAX; d++) {
                a->request[d] += h.held[d];
                a->allocated[d] += h.held[d];
                a->elastic[d] += h.elastic[d];
                a->inqueue[d] += h.reserved[d];
        }
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
        p->left = kb_pool_alloc(kb_session_pool(s), (p->nqueues + 1) * sizeof(*p->left));
        p->seen = kb_pool_alloc(kb_session_pool(s), (p->nqueues + 1) * sizeof(*p->seen));
        queue_attrs(p, queues);
        for (size_t k = 0; k < njobs; k++)
                if (jobs[k]->queue)
                        job_attrs(p, jobs[k]);
        compute_deserved(p);
        for (size_t q = 0; q < p->nqueues; q++)
                update_share(&p->attrs[q]);

        kb_on_queue_order(s, queue_order, p);
        kb_on_overused(s, overused, p);
        kb_on_allocatable(s, allocatable, p);
        kb_on_preemptive(s, allocatable, p);
        kb_on_reclaimable(s, reclaimable, p);
        kb_on_job_enqueueable(s, enqueueable, p);
        kb_on_job_enqueued(s, enqueued, p);
        kb_on_event(s, (struct kb_event_handler){on_allocate, on_deallocate}, p);
        return p;
}

/* Publishes deserved and share for the queue status. */
static void proportion_close(struct kb_session *s, void *state)
{
        struct proportion *p = state;
        size_t n;
        struct kb_queue_info *queues = kb_session_queues(s, &n);
        for (size_t q = 0; q < n; q++)
                kb_queue_publish(&queues[q], p->attrs[q].deserved, p->attrs[q].share, -1);
}
