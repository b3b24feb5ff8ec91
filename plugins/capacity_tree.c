/*
 * capacity's queue attributes, built once per session: each queue's limits
 * (capability, real capability), what it deserves and is guaranteed, and
 * what its jobs hold, ask for and reserve.  plugins/capacity.c explains the
 * rules these serve; this file is the arithmetic of Volcano master's
 * buildQueueAttrs (flat) and buildHierarchicalQueueAttrs with
 * checkHierarchicalQueue (enableHierarchy: true).
 *
 * Amounts are doubles in the units of struct kb_res (millicores, bytes,
 * counts); INFINITY stands for "no limit".
 */
#include <math.h>
#include <string.h>

#include "framework/quota.h"
#include "plugins/plugins-int.h"

/* A queue's spec.capability: a resource it does not name has no limit, nor
 * does cpu or memory at 0 or below (Volcano's rule). */
static void spec_capability(const struct kb_queue *q, double *cap)
{
        kb_quota_vec(&q->capability, cap);
        if (cap[KB_RES_CPU] <= 0)
                cap[KB_RES_CPU] = INFINITY;
        if (cap[KB_RES_MEMORY] <= 0)
                cap[KB_RES_MEMORY] = INFINITY;
}

static void spec_attrs(struct kb__capq *a, const struct kb_queue_info *info)
{
        a->info = info;
        a->name = info->name;
        a->parent = -1;
        kb_quota_vec(&info->queue->deserved, a->deserved);
        kb_quota_vec(&info->queue->guarantee, a->guarantee);
        spec_capability(info->queue, a->capability);
}

/* Volcano's IsEmpty: nothing at or above the epsilon, pods aside. */
static bool vec_empty(const double *v)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                if (i != KB_RES_PODS && v[i] >= KB_QUOTA_EPS)
                        return false;
        return true;
}

void kb__capacity_share(struct kb__capq *a)
{
        if (vec_empty(a->deserved)) {
                a->share = 1;
                return;
        }
        double s = 0;
        for (int i = 0; i < KB_RES_MAX; i++) {
                if (a->deserved[i] < KB_QUOTA_EPS)
                        continue;
                double f = a->allocated[i] / a->deserved[i];
                if (f > s)
                        s = f;
        }
        a->share = s;
}

/*
 * What a job holds (tasks in allocated states) and reserves as an admitted
 * group (Volcano's GetInqueueResource: the part of minResources it does
 * not hold yet, for an Inqueue group, or a Running one holding at least
 * minMember tasks), and its elastic part (what it holds beyond
 * minResources), added to its queue and every ancestor.  A queue that is
 * not Open can place nothing, so the reservations of its jobs count
 * nowhere: they must not eat into the room of the queues beside it.
 * (Volcano also sums what queues request, for its metrics only.)
 */
static void job_attrs(struct kb__capacity *c, const struct kb_job *j)
{
        bool open = j->queue->state == KB_QUEUE_OPEN;
        struct kb_job_hold h;
        kb_job_hold(j, &h);
        for (int k = (int)j->queue->index; k >= 0; k = c->q[k].parent) {
                struct kb__capq *a = &c->q[k];
                for (int d = 0; d < KB_RES_MAX; d++) {
                        a->allocated[d] += h.held[d];
                        a->elastic[d] += h.elastic[d];
                        if (open)
                                a->inqueue[d] += h.reserved[d];
                }
        }
}

/* Without hierarchy: real capability = the cluster less every queue's
 * guarantee, plus the queue's own, within its capability; deserved =
 * spec.deserved within the real capability, at least the guarantee. */
static void build_flat(struct kb__capacity *c, const struct kb_queue_info *queues)
{
        kb__vec total, guarantees = {0};
        kb_quota_vec(kb_session_total(c->s), total);
        for (size_t q = 0; q < c->n; q++) {
                spec_attrs(&c->q[q], &queues[q]);
                for (int i = 0; i < KB_RES_MAX; i++)
                        guarantees[i] += c->q[q].guarantee[i];
        }
        for (size_t q = 0; q < c->n; q++) {
                struct kb__capq *a = &c->q[q];
                for (int i = 0; i < KB_RES_MAX; i++) {
                        double real = fmax(total[i] - guarantees[i], 0) + a->guarantee[i];
                        a->real_cap[i] = fmin(real, a->capability[i]);
                        a->deserved[i] =
                            fmax(fmin(a->deserved[i], a->real_cap[i]), a->guarantee[i]);
                }
        }
}

/* ---- the hierarchy ---------------------------------------------------------------- */

/* Links every queue to its parent (spec.parent, else the root) and marks
 * the queues that cannot be placed under the root: a parent that does not
 * exist, a cycle, or such a queue among their ancestors. */
static void link(struct kb__capacity *c)
{
        struct kb_pool *pool = kb_session_pool(c->s);
        int root = c->root;
        for (size_t q = 0; q < c->n; q++) {
                struct kb__capq *a = &c->q[q];
                if ((int)q == root)
                        continue;
                const char *pname = a->info->queue->parent ? a->info->queue->parent : "root";
                const struct kb_queue_info *p = kb_session_queue(c->s, pname);
                if (p)
                        a->parent = (int)p->index;
                else if (strcmp(pname, "root") == 0)
                        a->parent = root;
                else
                        a->broken = kb_pool_printf(pool, "queue %s: spec.parent: no queue named %s",
                                                   a->name, pname);
        }
        /* A cycle is a walk up that takes more steps than there are
         * queues; the walk stops at the root or at a queue whose parent is
         * missing. */
        const char **why = kb_pool_alloc(pool, (c->n + 1) * sizeof(*why));
        for (size_t q = 0; q < c->n; q++) {
                int k = (int)q;
                size_t steps = 0;
                while (k != root && !c->q[k].broken && steps <= c->n) {
                        k = c->q[k].parent;
                        steps++;
                }
                if (steps > c->n)
                        why[q] = kb_pool_printf(pool,
                                                "queue %s: spec.parent: its parents form a cycle "
                                                "that never reaches the root queue",
                                                c->q[q].name);
                else if (k != (int)q && c->q[k].broken)
                        why[q] = kb_pool_printf(pool,
                                                "queue %s: under queue %s, which has no "
                                                "place in the hierarchy (%s)",
                                                c->q[q].name, c->q[k].name, c->q[k].broken);
        }
        for (size_t q = 0; q < c->n; q++) {
                if (why[q] && !c->q[q].broken)
                        c->q[q].broken = why[q];
                if (c->q[q].broken)
                        c->q[q].parent = -1;
        }
        for (size_t q = 0; q < c->n; q++) {
                struct kb__capq *a = &c->q[q];
                if (a->parent < 0)
                        continue;
                c->q[a->parent].nchildren++;
                for (int k = a->parent; k >= 0; k = c->q[k].parent)
                        a->depth++;
        }
}

/* Hands p's limits down to its children (checkHierarchicalQueue): a child
 * deserves at least its guarantee; a resource its capability leaves open
 * takes p's capability; its real capability is what p's real capability
 * leaves beyond all the children's guarantees, plus its own guarantee,
 * within its capability.  The root is guaranteed and deserves what its
 * children are and do. */
static void hand_down(struct kb__capacity *c, int p)
{
        struct kb__capq *pa = &c->q[p];
        kb__vec guarantees = {0}, deserved = {0};
        for (size_t q = 0; q < c->n; q++) {
                struct kb__capq *a = &c->q[q];
                if (a->parent != p)
                        continue;
                for (int i = 0; i < KB_RES_MAX; i++) {
                        a->deserved[i] = fmax(a->deserved[i], a->guarantee[i]);
                        deserved[i] += a->deserved[i];
                        guarantees[i] += a->guarantee[i];
                        if (isinf(a->capability[i]))
                                a->capability[i] = pa->capability[i];
                }
        }
        if (p == c->root) {
                memcpy(pa->guarantee, guarantees, sizeof(kb__vec));
                memcpy(pa->deserved, deserved, sizeof(kb__vec));
        }
        for (size_t q = 0; q < c->n; q++) {
                struct kb__capq *a = &c->q[q];
                if (a->parent != p)
                        continue;
                for (int i = 0; i < KB_RES_MAX; i++) {
                        double real = fmax(pa->real_cap[i] - guarantees[i], 0) + a->guarantee[i];
                        a->real_cap[i] = fmin(real, a->capability[i]);
                }
        }
}

static void build_tree(struct kb__capacity *c, const struct kb_queue_info *queues, size_t nqueues)
{
        for (size_t q = 0; q < nqueues; q++)
                spec_attrs(&c->q[q], &queues[q]);
        const struct kb_queue_info *r = kb_session_queue(c->s, "root");
        if (r) {
                c->root = (int)r->index;
        } else {
                /* Volcano creates the root queue; a cluster without one
                 * gets an implicit root that limits nothing. */
                c->root = (int)nqueues;
                c->q[nqueues].name = "root";
                c->q[nqueues].parent = -1;
                for (int i = 0; i < KB_RES_MAX; i++)
                        c->q[nqueues].capability[i] = INFINITY;
        }
        /* A root whose capability names nothing but pods limits nothing
         * (Volcano: an empty root capability is infinite). */
        struct kb__capq *root = &c->q[c->root];
        bool names_some = false;
        for (int i = 0; i < KB_RES_MAX; i++)
                names_some |= i != KB_RES_PODS && !isinf(root->capability[i]);
        if (!names_some)
                for (int i = 0; i < KB_RES_MAX; i++)
                        root->capability[i] = INFINITY;
        memcpy(root->real_cap, root->capability, sizeof(kb__vec));
        link(c);
        int depth = 0;
        for (size_t q = 0; q < c->n; q++)
                depth = c->q[q].depth > depth ? c->q[q].depth : depth;
        for (int d = 0; d <= depth; d++)
                for (size_t q = 0; q < c->n; q++)
                        if (c->q[q].depth == d && c->q[q].nchildren > 0 && !c->q[q].broken)
                                hand_down(c, (int)q);
        /* A broken queue deserves at least its guarantee like any other. */
        for (size_t q = 0; q < c->n; q++)
                if (c->q[q].broken)
                        for (int i = 0; i < KB_RES_MAX; i++)
                                c->q[q].deserved[i] =
                                    fmax(c->q[q].deserved[i], c->q[q].guarantee[i]);
}

void kb__capacity_build(struct kb__capacity *c)
{
        size_t nqueues, njobs;
        const struct kb_queue_info *queues = kb_session_queues(c->s, &nqueues);
        struct kb_job **jobs = kb_session_jobs(c->s, &njobs);
        bool implicit_root = c->hierarchy && !kb_session_queue(c->s, "root");
        c->n = nqueues + implicit_root;
        c->q = kb_pool_alloc(kb_session_pool(c->s), (c->n + 1) * sizeof(*c->q));
        c->root = -1;
        if (c->hierarchy)
                build_tree(c, queues, nqueues);
        else
                build_flat(c, queues);
        for (size_t k = 0; k < njobs; k++)
                if (jobs[k]->queue)
                        job_attrs(c, jobs[k]);
        for (size_t q = 0; q < c->n; q++) {
                struct kb__capq *a = &c->q[q];
                a->refuse = a->broken;
                if (!a->refuse && a->nchildren > 0)
                        a->refuse = kb_pool_printf(kb_session_pool(c->s),
                                                   "queue %s has child queues: with capacity's "
                                                   "hierarchy, jobs go to the queues without "
                                                   "children",
                                                   a->name);
        }
        c->slot = kb_pool_alloc(kb_session_pool(c->s), (c->n + 1) * sizeof(*c->slot));
        for (size_t q = 0; q < c->n; q++) {
                kb__capacity_share(&c->q[q]);
                c->slot[q] = -1;
                if (c->q[q].depth > c->depth)
                        c->depth = c->q[q].depth;
        }
}
