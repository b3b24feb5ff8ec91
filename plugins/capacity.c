/*
 * capacity: queue quotas as Volcano master's plugins/capacity, where each
 * queue says what it deserves (spec.deserved) instead of a weight.  The
 * other limits are proportion's: spec.capability caps a queue, and
 * spec.guarantee is kept for it alone.  A conf may name proportion too, as
 * in Volcano: both then vote, each on its own shares (conf.c warns).
 *
 *   real capability  what a queue may hold at most.  Flat (the default):
 *                    the cluster less every queue's guarantee, plus its own
 *                    guarantee, within its capability.  With
 *                    enableHierarchy: true, queues form a tree through
 *                    spec.parent under the queue "root" (an implicit root
 *                    that limits nothing when no such queue exists): a
 *                    child's capability takes its parent's for every
 *                    resource it leaves open, and its real capability is
 *                    what the parent's leaves beyond all the children's
 *                    guarantees, plus its own guarantee, within its
 *                    capability; the root's is its capability (none: no
 *                    limit), so only capabilities bound a tree.
 *   deserved         spec.deserved, at least the guarantee (flat: also
 *                    within the real capability); the root deserves the
 *                    sum of its children's.  Deserved is not a limit: a
 *                    queue borrows beyond it up to its real capability,
 *                    and what it borrowed is what reclaim takes back.
 *   share            the largest allocated/deserved over the resources the
 *                    queue deserves; 1 for a queue that deserves nothing.
 *
 * Example (hierarchy): 12 cpu; root -> eng (capability 8, deserved 8) ->
 * {train (deserved 6), infer (deserved 2, guarantee 2)}; root -> ops
 * (deserved 4).  eng's real capability is 8, ops' unlimited (the cluster
 * bounds it); under eng the guarantees sum to 2, so train may hold
 * 8 - 2 = 6, infer 6 + 2 = 8, and eng's 8 bounds the two together: with
 * train at 6, infer still finds 2.  Without hierarchy each queue stands
 * alone: train and ops may hold 12 - 2 = 10, infer 10 + 2 = 12, eng
 * min(10, 8) = 8.
 *
 *   queueOrder   the higher spec.priority first, then the lower share, then
 *                a queue that deserves something before one that does not.
 *                With hierarchy, a leaf before a parent, and two leaves by
 *                the two queues just below their lowest common ancestor.
 *   allocatable  an Open leaf takes a task when allocated + request stays
 *                within the real capability of the leaf and of every
 *                ancestor, in the resources the task requests (pods aside).
 *   overused     Volcano's capacity registers none; kbatch's skips a queue
 *                that could take no task anyway, not even by reclaim: the
 *                leaf's allocated has reached its real capability in every
 *                resource but pods (a resource without a limit is never
 *                reached, so a queue capped in cpu alone is never skipped:
 *                a task asking memory alone could still go).  A full
 *                ancestor does not count: the leaf may still reclaim from
 *                its siblings under it (Volcano's capacity_test.go, case3
 *                of the hierarchy tests), and allocatable refuses the rest.
 *   enqueueable  only an Open leaf admits; a group with minResources is
 *                admitted while minResources + allocated + reserved -
 *                elastic fits the real capability of the leaf and of every
 *                ancestor, in the resources the group names (reserved and
 *                elastic as proportion's); the message gives the numbers of
 *                the first queue that does not fit.
 *   enqueued     the group's minResources join the reservations of its leaf
 *                and every ancestor, once every plugin admitted it (Volcano
 *                charges them inside its vote).
 *   jobValid     (kbatch) a job in a queue with no place in the hierarchy,
 *                or in a parent queue, says so and waits; Volcano stops
 *                scheduling every queue instead.
 *   preemptive   an Open queue may take a task by eviction when allocated +
 *                request stays within its real capability and, in some
 *                requested resource, within its deserved; with hierarchy
 *                and ancestorReclaimLevel N, an ancestor up to N levels up
 *                (not the root) within its deserved is enough.
 *   reclaimable  candidates in Volcano's victim order (same queue: the
 *                job last in job order first; other queues: reverse queue
 *                order, with hierarchy the queue closest to the reclaimer
 *                first); one is a victim when it shares a requested
 *                resource with the reclaimer, its queue keeps its guarantee
 *                without it, and either it uses nothing its queue deserves
 *                (an immediate victim) or its queue holds more than it
 *                deserves in a resource the victim uses
 *                (GreaterPartlyWithRelevantDimensions); with
 *                ancestorReclaimLevel N, each ancestor of the victim's
 *                queue up to N levels up that the reclaimer does not share
 *                must pass the same test.  Each victim is taken off its
 *                queues' allocated before the next candidate.
 *
 * Event handlers keep allocated current on the leaf and every ancestor,
 * and the leaf's share; as in Volcano, an ancestor's share stays the one
 * computed at open for the rest of the session, so a queue's place in
 * allocate's heap changes only while it is out of the heap (a parent's
 * share moving with its children's allocations would re-order queues
 * still inside it and break the heap).  A queue that is not Open takes
 * nothing, and the reservations of its admitted groups count nowhere (in
 * its ancestors neither).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "framework/quota.h"
#include "plugins/plugins-int.h"

static void *capacity_open(struct kb_session *s, const struct kb_value *args);
static void capacity_close(struct kb_session *s, void *state);

static const char *const capacity_args[] = {"ancestorReclaimLevel", NULL};
static const char *const capacity_ignored[] = {"capacity.DynamicResourceAllocationEnable",
                                               "capacity.DRAConsumableCapacityEnable", NULL};

const struct kb_plugin kb_plugin_capacity = {
    .name = "capacity",
    .open = capacity_open,
    .close = capacity_close,
    .arguments = capacity_args,
    .ignored = capacity_ignored,
    .hierarchy = true,
};

#define EACH_UP(c, k, start) for (int k = (start); k >= 0; k = (c)->q[k].parent)

static struct kb__capq *attr_of(struct kb__capacity *c, const struct kb_queue_info *q)
{
        return &c->q[q->index];
}

static bool is_leaf(const struct kb__capacity *c, int q)
{
        return !c->hierarchy || c->q[q].nchildren == 0;
}

/* ---- queue order ------------------------------------------------------------ */

static bool deserves(const struct kb__capq *a)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if (i != KB_RES_PODS && a->deserved[i] >= KB_QUOTA_EPS)
                        return true;
        return false;
}

/* Volcano's compareShareWithDeserved. */
static int cmp_share(const struct kb__capq *l, const struct kb__capq *r)
{
        if (l->share != r->share)
                return l->share < r->share ? -1 : 1;
        bool ld = deserves(l), rd = deserves(r);
        return ld == rd ? 0 : ld ? -1 : 1;
}

/* Moves a and b up to the two queues just below their lowest common
 * ancestor (they stay as they are when they are siblings). */
static void diverge(const struct kb__capacity *c, int *a, int *b)
{
        int x = *a, y = *b;
        while (c->q[x].depth > c->q[y].depth)
                x = c->q[x].parent;
        while (c->q[y].depth > c->q[x].depth)
                y = c->q[y].parent;
        while (x != y && c->q[x].parent >= 0 && c->q[y].parent >= 0) {
                x = c->q[x].parent;
                y = c->q[y].parent;
        }
        if (x != y)
                return; /* no common ancestor: a broken queue */
        int below = c->q[x].depth + 1;
        while (c->q[*a].depth > below)
                *a = c->q[*a].parent;
        while (c->q[*b].depth > below)
                *b = c->q[*b].parent;
}

static int queue_order(void *arg, const struct kb_queue_info *l, const struct kb_queue_info *r)
{
        struct kb__capacity *c = arg;
        if (l->queue->priority != r->queue->priority)
                return l->queue->priority > r->queue->priority ? -1 : 1;
        int a = (int)l->index, b = (int)r->index;
        if (c->hierarchy) {
                bool la = is_leaf(c, a), lb = is_leaf(c, b);
                if (la != lb)
                        return la ? -1 : 1;
                if (la && a != b)
                        diverge(c, &a, &b);
        }
        return cmp_share(&c->q[a], &c->q[b]);
}

/* ---- allocate ------------------------------------------------------------------ */

/* Whether allocated + extra stays within the real capability in the
 * resources req asks for (pods aside), with no epsilon, as Volcano's
 * LessEqualWithDimensionAndResourcesName. */
static bool within(const struct kb__capq *a, const double *extra, const struct kb_res *req)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if (i != KB_RES_PODS && req->q[i] > 0 &&
                    a->allocated[i] + extra[i] > a->real_cap[i])
                        return false;
        return true;
}

static bool usable(const struct kb__capacity *c, const struct kb_queue_info *q)
{
        return q->state == KB_QUEUE_OPEN && !c->q[q->index].refuse;
}

/* Why queue k (q itself or an ancestor) refuses t: the first resource in
 * which it would go over its real capability (kb_quota_refusal). */
static void explain_refusal(struct kb__capacity *c, const struct kb_queue_info *q, int k,
                            const struct kb_task *t)
{
        const struct kb__capq *a = &c->q[k];
        if (t->job->quota_error) /* its first refusal is the one it reports */
                return;
        for (int i = 0; i < KB_RES_MAX; i++) {
                if (i == KB_RES_PODS || t->resreq->q[i] <= 0 ||
                    a->allocated[i] + (double)t->resreq->q[i] <= a->real_cap[i])
                        continue;
                char who[160];
                if (k == (int)q->index)
                        snprintf(who, sizeof(who), "queue %s", q->name);
                else
                        snprintf(who, sizeof(who), "queue %s (ancestor of %s)", a->name, q->name);
                kb_quota_refusal(c->s, t, who, i, a->deserved[i], a->allocated[i], a->real_cap[i],
                                 a->real_cap[i]);
                return;
        }
}

static bool allocatable(void *arg, const struct kb_queue_info *q, const struct kb_task *t)
{
        struct kb__capacity *c = arg;
        if (!usable(c, q))
                return false;
        kb__vec req;
        kb_quota_vec(t->resreq, req);
        EACH_UP (c, k, (int)q->index)
                if (!within(&c->q[k], req, t->resreq)) {
                        explain_refusal(c, q, k, t);
                        return false;
                }
        return true;
}

static bool overused(void *arg, const struct kb_queue_info *q)
{
        struct kb__capacity *c = arg;
        const struct kb__capq *a = &c->q[q->index];
        bool full = true;
        for (int i = 0; i < kb_res_count() && full; i++)
                full = i == KB_RES_PODS || a->allocated[i] >= a->real_cap[i];
        return full;
}

static const char *job_valid(void *arg, const struct kb_job *j, const char **reason)
{
        struct kb__capacity *c = arg;
        *reason = KB_WHY_QUEUE_INVALID;
        return j->queue ? attr_of(c, j->queue)->refuse : NULL;
}

/* ---- enqueue ------------------------------------------------------------------- */

/* Why min does not fit queue a (the job's leaf, or an ancestor of it), in
 * the numbers of the rule, into b; nothing when it fits. */
static void explain_short(struct kb_buf *b, const struct kb__capq *a, const double *min)
{
        for (int i = 0; i < KB_RES_MAX; i++) {
                if (i == KB_RES_PODS || min[i] <= 0 ||
                    min[i] + a->allocated[i] + a->inqueue[i] - a->elastic[i] <= a->real_cap[i])
                        continue;
                kb_quota_short(b, i, min[i], a->allocated[i], a->inqueue[i], a->elastic[i],
                               a->real_cap[i]);
        }
}

static int enqueueable(void *arg, const struct kb_job *j)
{
        struct kb__capacity *c = arg;
        const struct kb_queue_info *q = j->queue;
        if (!q)
                return 0;
        const char *reason;
        const char *invalid = job_valid(c, j, &reason);
        if (invalid) {
                kb_job_explain(c->s, j, reason, invalid);
                return -1;
        }
        if (q->state != KB_QUEUE_OPEN) {
                char why[256];
                snprintf(why, sizeof(why), "queue %s is %s", q->name,
                         kb_queue_state_name(q->state));
                kb_job_explain(c->s, j, KB_WHY_QUEUE_CLOSED, why);
                return -1;
        }
        if (!j->pg || !j->pg->has_min_resources)
                return 1;
        kb__vec min;
        kb_quota_vec(&j->pg->min_resources, min);
        struct kb_buf b;
        kb_buf_init(&b);
        int rc = 1;
        EACH_UP (c, k, (int)q->index) {
                explain_short(&b, &c->q[k], min);
                if (!b.len)
                        continue;
                const char *rel = k == (int)q->index           ? ""
                                  : k == c->q[q->index].parent ? ", parent of "
                                                               : ", ancestor of ";
                char *why = kb_xasprintf("queue resource quota insufficient: queue %s%s%s: %s",
                                         c->q[k].name, rel, *rel ? q->name : "", b.data);
                kb_job_explain(c->s, j, KB_WHY_QUOTA, why);
                free(why);
                rc = -1;
                break;
        }
        kb_buf_release(&b);
        return rc;
}

static void enqueued(void *arg, const struct kb_job *j)
{
        struct kb__capacity *c = arg;
        if (!j->queue || !j->pg || !j->pg->has_min_resources)
                return;
        EACH_UP (c, k, (int)j->queue->index)
                for (int i = 0; i < KB_RES_MAX; i++)
                        if (i != KB_RES_PODS)
                                c->q[k].inqueue[i] += (double)j->pg->min_resources.q[i];
}

/* ---- preempt and reclaim ------------------------------------------------------ */

/* Volcano's LessEqualPartlyWithDimensionZeroFiltered(used, deserved, req):
 * some resource req asks for (pods aside) in which used is within
 * deserved, leaving out those where both are nought. */
static bool partly_within(const double *used, const double *deserved, const struct kb_res *req)
{
        for (int i = 0; i < KB_RES_MAX; i++) {
                if (i == KB_RES_PODS || req->q[i] <= 0 ||
                    (used[i] < KB_QUOTA_EPS && deserved[i] < KB_QUOTA_EPS))
                        continue;
                if (used[i] < deserved[i] || fabs(used[i] - deserved[i]) < KB_QUOTA_EPS)
                        return true;
        }
        return false;
}

static bool preemptive(void *arg, const struct kb_queue_info *q, const struct kb_task *t)
{
        struct kb__capacity *c = arg;
        if (q->state != KB_QUEUE_OPEN || attr_of(c, q)->refuse)
                return false;
        const struct kb__capq *a = attr_of(c, q);
        kb__vec req, used;
        kb_quota_vec(t->resreq, req);
        if (!within(a, req, t->resreq))
                return false;
        for (int i = 0; i < KB_RES_MAX; i++)
                used[i] = a->allocated[i] + req[i];
        if (partly_within(used, a->deserved, t->resreq))
                return true;
        for (int64_t l = 1; c->hierarchy && l <= c->level; l++) {
                int k = kb__capacity_above(c, (int)q->index, l);
                if (k < 0 || k == c->root)
                        continue;
                for (int i = 0; i < KB_RES_MAX; i++)
                        used[i] = c->q[k].allocated[i] + req[i];
                if (partly_within(used, c->q[k].deserved, t->resreq))
                        return true;
        }
        return false;
}

/* ---- events and lifecycle ---------------------------------------------------------- */

/* Keeps allocated current on the task's queue and its ancestors, and the
 * queue's share (the ancestors' stay as at open: see the banner). */
static void account(struct kb__capacity *c, const struct kb_task *t, double sign)
{
        if (!t->job || !t->job->queue)
                return;
        EACH_UP (c, k, (int)t->job->queue->index)
                for (int i = 0; i < KB_RES_MAX; i++)
                        c->q[k].allocated[i] += sign * (double)t->resreq->q[i];
        kb__capacity_share(&c->q[t->job->queue->index]);
}

static void on_allocate(void *arg, const struct kb_task *t)
{
        account(arg, t, 1);
}

static void on_deallocate(void *arg, const struct kb_task *t)
{
        account(arg, t, -1);
}

static void *capacity_open(struct kb_session *s, const struct kb_value *args)
{
        struct kb__capacity *c = kb_pool_alloc(kb_session_pool(s), sizeof(*c));
        c->s = s;
        c->hierarchy = kb_session_hierarchy(s, "capacity");
        c->level = kb_args_int(args, "ancestorReclaimLevel", 0);
        if (c->level < 0) {
                KB_WARN("conf: capacity: ancestorReclaimLevel: must be >= 0, got %lld; using 0",
                        (long long)c->level);
                c->level = 0;
        }
        kb__capacity_build(c);
        /* Levels above the deepest queue's depth find no ancestor: the
         * loops over levels stop there. */
        if (c->level > c->depth)
                c->level = c->depth;

        kb_on_queue_order(s, queue_order, c);
        kb_on_overused(s, overused, c);
        kb_on_allocatable(s, allocatable, c);
        kb_on_job_valid(s, job_valid, c);
        kb_on_job_enqueueable(s, enqueueable, c);
        kb_on_job_enqueued(s, enqueued, c);
        kb_on_preemptive(s, preemptive, c);
        kb_on_reclaimable(s, kb__capacity_reclaimable, c);
        /* Volcano registers it with the hierarchy only. */
        if (c->hierarchy)
                kb_on_victim_queue_order(s, kb__capacity_victim_queue_order, c);
        kb_on_event(s, (struct kb_event_handler){on_allocate, on_deallocate}, c);
        return c;
}

/* Publishes deserved and share for the queue status. */
static void capacity_close(struct kb_session *s, void *state)
{
        struct kb__capacity *c = state;
        size_t n;
        struct kb_queue_info *queues = kb_session_queues(s, &n);
        /* The implicit root (index n, when no Queue is called root) is
         * nobody's status. */
        for (size_t q = 0; q < n; q++) {
                int p = c->q[q].parent;
                kb_queue_publish(&queues[q], c->q[q].deserved, c->q[q].share,
                                 p >= 0 && (size_t)p < n ? p : -1);
        }
}
