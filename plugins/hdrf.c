/*
 * drf's hierarchical fairness (enableHierarchy: true), as Volcano v1.7.0's
 * plugins/drf (hierarchicalNode, updateHierarchicalShare, compareQueues);
 * Volcano master's drf.go still has it.  plugins/drf.c is the glue.
 *
 * Queues sit in a tree by the annotations volcano.sh/hierarchy
 * ("root/eng/dev") and volcano.sh/hierarchy-weights ("100/50/50": a weight
 * per level, the first, the root's, unused); a queue without both takes
 * its place from spec.parent (root when unset) with its spec.weight, as
 * master's BuildEffectiveQueueHierarchy does.  Every job hangs under its
 * queue's node as a leaf of weight 1.  Each node has an allocation and a
 * dominant share (the largest allocated/total over the cluster's
 * resources, pods left out as v1.7.0 counts them):
 *
 *   leaf      the job's allocated (Allocated, Bound, Running tasks, and
 *             those the session placed or pipelined); saturated when, in
 *             a resource it holds, it holds all it asks for (its tasks'
 *             total request) or the cluster has none of it left.
 *   inner     its non-empty children rescaled to the smallest dominant
 *             share among those not saturated (mdr): a child with share s
 *             adds allocated * mdr / s, a saturated one its allocated as
 *             is; saturated when every child is (one without children is).
 *
 * Queue order walks the two queues' paths from the root: at the first
 * level where they differ, the node not saturated goes first, then the
 * lower share / weight; equal all the way: no opinion.  Reclaimable (hdrf
 * only): with the reclaimer's task added to its job, a candidate is a
 * victim when, its task taken from its job, the reclaimer's queue still
 * comes first.
 *
 * Example (Volcano's hdrf_test.go, "rescaling"): 10 cpu, 10G; root ->
 * sci (50) -> pg1 (tasks of 1 cpu, 1G); root -> eng (50) -> {dev (50) ->
 * pg21 (1 cpu), prod (50) -> pg22 (1G)}.  With pg21 holding 2 cpu and
 * pg22 2G, dev and prod each have share 0.2, so eng = 0.2 cpu + 0.2 mem,
 * share 0.2: eng's share counts dev and prod rescaled, not summed as
 * dominant shares.  sci with pg1 at 2 cpu and 2G also has 0.2: the two
 * subtrees tie and each ends with half the cluster: pg1 5 cpu 5G, pg21 5
 * cpu, pg22 5G.
 *
 * The tree is recomputed when asked after a change (Volcano recomputes it
 * on every change); nodes live in one array, so a candidate's what-if is
 * a copy of it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "framework/quota.h"
#include "plugins/plugins-int.h"

#define MIN_RESOURCE 0.1 /* Volcano's minResource */

struct hnode {
        int parent;
        int child, sibling; /* first child, next sibling; -1 */
        const char *name;   /* path segment, or the job's name */
        int job;            /* job index for a leaf, else -1 */
        double weight;
        double share;
        bool saturated;
        kb__vec alloc;
};

struct kb__hdrf {
        struct kb_session *s;
        kb__vec total;       /* cluster total, pods left out */
        kb__vec total_alloc; /* what the jobs hold */
        struct hnode *n;
        size_t nn, cap;
        /* Per job index: its leaf, what it holds and asks for. */
        int *leaf;
        kb__vec *job_alloc, *job_request;
        /* Per queue index: its path (segments after the root), -1 when the
         * tree has no node for it (no job). */
        const char ***path;
        double **weights;
        int *depth;
        bool dirty; /* an allocation changed since the tree was computed */
        /* what-if scratch (reclaimable) */
        struct hnode *base, *work;
        kb__vec base_total, work_total;
};

/* ---- shares ------------------------------------------------------------------------ */

static double share_of(const struct kb__hdrf *h, const double *alloc)
{
        double best = 0;
        for (int i = 0; i < KB_RES_MAX; i++) {
                if (h->total[i] < MIN_RESOURCE)
                        continue;
                double s = alloc[i] / h->total[i];
                if (s > best)
                        best = s;
        }
        return best;
}

/* Volcano's resourceSaturated, over the resources alloc holds. */
static bool leaf_saturated(const struct kb__hdrf *h, const double *total_alloc, const double *alloc,
                           const double *request)
{
        for (int i = 0; i < KB_RES_MAX; i++) {
                if (i == KB_RES_PODS || alloc[i] < MIN_RESOURCE)
                        continue;
                if (request[i] != 0 && alloc[i] >= request[i])
                        return true;
                bool demanding = h->total[i] >= MIN_RESOURCE && total_alloc[i] < h->total[i];
                if (!demanding && request[i] != 0)
                        return true;
        }
        return false;
}

static void update(const struct kb__hdrf *h, struct hnode *n, int k, const double *total_alloc)
{
        struct hnode *x = &n[k];
        if (x->job >= 0) {
                memcpy(x->alloc, h->job_alloc[x->job], sizeof(kb__vec));
                x->share = share_of(h, x->alloc);
                x->saturated = leaf_saturated(h, total_alloc, x->alloc, h->job_request[x->job]);
                return;
        }
        double mdr = 1;
        for (int c = x->child; c >= 0; c = n[c].sibling) {
                update(h, n, c, total_alloc);
                if (n[c].share != 0 && !n[c].saturated && n[c].share < mdr)
                        mdr = n[c].share;
        }
        bool saturated = true;
        memset(x->alloc, 0, sizeof(kb__vec));
        for (int c = x->child; c >= 0; c = n[c].sibling) {
                saturated &= n[c].saturated;
                if (n[c].share == 0)
                        continue;
                double f = n[c].saturated ? 1 : mdr / n[c].share;
                for (int i = 0; i < KB_RES_MAX; i++)
                        x->alloc[i] += n[c].alloc[i] * f;
        }
        x->share = share_of(h, x->alloc);
        x->saturated = saturated;
}

/* ---- the tree ------------------------------------------------------------------------ */

static int add_node(struct kb__hdrf *h, int parent, const char *name, int job, double weight)
{
        if (h->nn == h->cap) {
                h->cap = h->cap ? 2 * h->cap : 16;
                h->n = kb_xrealloc(h->n, h->cap * sizeof(*h->n));
        }
        int k = (int)h->nn++;
        struct hnode *x = &h->n[k];
        memset(x, 0, sizeof(*x));
        x->parent = parent;
        x->child = x->sibling = -1;
        x->name = name;
        x->job = job;
        x->weight = weight;
        if (parent >= 0) {
                x->sibling = h->n[parent].child;
                h->n[parent].child = k;
        }
        return k;
}

static int find_child(const struct kb__hdrf *h, int parent, const char *name)
{
        for (int c = h->n[parent].child; c >= 0; c = h->n[c].sibling)
                if (h->n[c].job < 0 && strcmp(h->n[c].name, name) == 0)
                        return c;
        return -1;
}

/* A level's weight as Volcano parses it: not a number, or below 1: 1. */
static double parse_weight(const char *text, size_t len)
{
        char buf[64];
        if (len >= sizeof(buf))
                return 1;
        memcpy(buf, text, len);
        buf[len] = '\0';
        char *end;
        double w = strtod(buf, &end);
        if (end == buf || *end || !(w >= 1))
                return 1;
        return w;
}

/* Splits text at '/' into pool strings; their number. */
static int split(struct kb_pool *pool, const char *text, const char ***out)
{
        int n = 1;
        for (const char *p = text; *p; p++)
                n += *p == '/';
        const char **v = kb_pool_alloc(pool, (size_t)n * sizeof(*v));
        int k = 0;
        const char *start = text;
        for (const char *p = text;; p++) {
                if (*p == '/' || !*p) {
                        char *seg = kb_pool_alloc(pool, (size_t)(p - start) + 1);
                        memcpy(seg, start, (size_t)(p - start));
                        seg[p - start] = '\0';
                        v[k++] = seg;
                        start = p + 1;
                }
                if (!*p)
                        break;
        }
        *out = v;
        return n;
}

/* q's path and weights (master's BuildEffectiveQueueHierarchy): from its
 * annotations when it has both; the root's is empty; any other queue's is
 * its parent's (spec.parent, else the root) and then its own name and
 * spec.weight.  state: 0 not seen, 1 being built, 2 built; a cycle, or a
 * parent that does not exist, puts the queue right under the root. */
static void queue_path(struct kb__hdrf *h, const struct kb_queue_info *queues, size_t q,
                       char *state)
{
        if (state[q] == 2)
                return;
        struct kb_pool *pool = kb_session_pool(h->s);
        const struct kb_meta *m = &queues[q].queue->meta;
        const char *hier = kb_meta_annotation(m, "volcano.sh/hierarchy");
        const char *wts = kb_meta_annotation(m, "volcano.sh/hierarchy-weights");
        if (hier && *hier && wts && *wts) {
                const char **segs, **ws;
                int n = split(pool, hier, &segs), nw = split(pool, wts, &ws);
                h->depth[q] = n - 1;
                h->path[q] = segs + 1;
                h->weights[q] = kb_pool_alloc(pool, (size_t)n * sizeof(double));
                for (int i = 1; i < n; i++)
                        h->weights[q][i - 1] = i < nw ? parse_weight(ws[i], strlen(ws[i])) : 1;
                state[q] = 2;
                return;
        }
        if (strcmp(queues[q].name, "root") == 0) {
                h->depth[q] = 0;
                h->path[q] = NULL;
                h->weights[q] = NULL;
                state[q] = 2;
                return;
        }
        const char *pname = queues[q].queue->parent;
        const struct kb_queue_info *pq = kb_session_queue(h->s, pname && *pname ? pname : "root");
        int pdepth = 0;
        state[q] = 1;
        if (pq && state[pq->index] != 1) {
                queue_path(h, queues, pq->index, state);
                pdepth = h->depth[pq->index];
        } else {
                pq = NULL;
        }
        h->depth[q] = pdepth + 1;
        h->path[q] = kb_pool_alloc(pool, (size_t)(pdepth + 1) * sizeof(char *));
        h->weights[q] = kb_pool_alloc(pool, (size_t)(pdepth + 1) * sizeof(double));
        for (int i = 0; i < pdepth; i++) {
                h->path[q][i] = h->path[pq->index][i];
                h->weights[q][i] = h->weights[pq->index][i];
        }
        h->path[q][pdepth] = queues[q].name;
        h->weights[q][pdepth] = queues[q].weight >= 1 ? queues[q].weight : 1;
        state[q] = 2;
}

/* The node at the end of q's path, made when missing (the first weight
 * given for a node stays, as in Volcano). */
static int queue_node(struct kb__hdrf *h, size_t q)
{
        int k = 0;
        for (int i = 0; i < h->depth[q]; i++) {
                int c = find_child(h, k, h->path[q][i]);
                k = c >= 0 ? c : add_node(h, k, h->path[q][i], -1, h->weights[q][i]);
        }
        return k;
}

struct kb__hdrf *kb__hdrf_open(struct kb_session *s)
{
        struct kb_pool *pool = kb_session_pool(s);
        struct kb__hdrf *h = kb_pool_alloc(pool, sizeof(*h));
        memset(h, 0, sizeof(*h));
        h->s = s;
        kb_quota_vec(kb_session_total(s), h->total);
        h->total[KB_RES_PODS] = 0;
        size_t nq, nj;
        const struct kb_queue_info *queues = kb_session_queues(s, &nq);
        struct kb_job **jobs = kb_session_jobs(s, &nj);
        h->path = kb_pool_alloc(pool, (nq + 1) * sizeof(*h->path));
        h->weights = kb_pool_alloc(pool, (nq + 1) * sizeof(*h->weights));
        h->depth = kb_pool_alloc(pool, (nq + 1) * sizeof(*h->depth));
        char *state = kb_xcalloc(nq + 1, 1);
        for (size_t q = 0; q < nq; q++)
                queue_path(h, queues, q, state);
        free(state);
        h->leaf = kb_pool_alloc(pool, (nj + 1) * sizeof(*h->leaf));
        h->job_alloc = kb_pool_alloc(pool, (nj + 1) * sizeof(*h->job_alloc));
        h->job_request = kb_pool_alloc(pool, (nj + 1) * sizeof(*h->job_request));
        add_node(h, -1, "root", -1, 1);
        for (size_t i = 0; i < nj; i++) {
                const struct kb_job *j = jobs[i];
                h->leaf[j->index] = -1;
                memset(h->job_alloc[j->index], 0, sizeof(kb__vec));
                kb_quota_vec(&j->total_request, h->job_request[j->index]);
                h->job_request[j->index][KB_RES_PODS] = 0;
                for (uint32_t t = 0; t < j->ntasks; t++)
                        if (kb_task_status_allocated(j->tasks[t]->status))
                                for (int r = 0; r < KB_RES_MAX; r++)
                                        if (r != KB_RES_PODS)
                                                h->job_alloc[j->index][r] +=
                                                    (double)j->tasks[t]->resreq->q[r];
                for (int r = 0; r < KB_RES_MAX; r++)
                        h->total_alloc[r] += h->job_alloc[j->index][r];
                if (!j->queue)
                        continue;
                int parent = queue_node(h, j->queue->index);
                h->leaf[j->index] = add_node(h, parent, j->name, (int)j->index, 1);
        }
        update(h, h->n, 0, h->total_alloc);
        size_t bytes = (h->nn + 1) * sizeof(struct hnode);
        h->base = kb_pool_alloc(pool, bytes);
        h->work = kb_pool_alloc(pool, bytes);
        return h;
}

void kb__hdrf_close(struct kb__hdrf *h)
{
        if (h)
                free(h->n);
}

void kb__hdrf_account(struct kb__hdrf *h, const struct kb_task *t, double sign)
{
        if (!t->job)
                return;
        for (int r = 0; r < KB_RES_MAX; r++) {
                if (r == KB_RES_PODS)
                        continue;
                h->job_alloc[t->job->index][r] += sign * (double)t->resreq->q[r];
                h->total_alloc[r] += sign * (double)t->resreq->q[r];
        }
        h->dirty = true;
}

/* The tree as the allocations stand, recomputed only when one changed
 * since: a job's turn in allocate places several tasks, and the tree is
 * asked about once per turn (Volcano recomputes it on every event). */
static void refresh(struct kb__hdrf *h)
{
        if (!h->dirty)
                return;
        update(h, h->n, 0, h->total_alloc);
        h->dirty = false;
}

/* ---- queue order ----------------------------------------------------------------------- */

/* The node of q's path at level i (0: the root), or -1. */
static int node_at(const struct kb__hdrf *h, const struct hnode *n, size_t q, int i)
{
        int k = 0;
        for (int l = 0; l < i && k >= 0; l++) {
                int c = n[k].child;
                while (c >= 0 && (n[c].job >= 0 || strcmp(n[c].name, h->path[q][l]) != 0))
                        c = n[c].sibling;
                k = c;
        }
        return k;
}

/* Volcano's compareQueues on tree n: < 0 when l goes first. */
static double compare(const struct kb__hdrf *h, const struct hnode *n, size_t l, size_t r)
{
        int depth = (h->depth[l] < h->depth[r] ? h->depth[l] : h->depth[r]) + 1;
        for (int i = 0; i < depth; i++) {
                int a = node_at(h, n, l, i), b = node_at(h, n, r, i);
                if (a < 0 || b < 0)
                        return 0;
                if (!n[a].saturated && n[b].saturated)
                        return -1;
                if (n[a].saturated && !n[b].saturated)
                        return 1;
                double x = n[a].share / n[a].weight, y = n[b].share / n[b].weight;
                if (x != y)
                        return x - y;
        }
        return 0;
}

int kb__hdrf_queue_order(void *arg, const struct kb_queue_info *l, const struct kb_queue_info *r)
{
        struct kb__hdrf *h = arg;
        refresh(h);
        double c = compare(h, h->n, l->index, r->index);
        return c < 0 ? -1 : c > 0 ? 1 : 0;
}

/* ---- reclaim --------------------------------------------------------------------------- */

/* Adds sign * t's request to its job in h's job_alloc and into total. */
static void move(struct kb__hdrf *h, const struct kb_task *t, double sign, double *total)
{
        for (int r = 0; r < KB_RES_MAX; r++) {
                if (r == KB_RES_PODS)
                        continue;
                h->job_alloc[t->job->index][r] += sign * (double)t->resreq->q[r];
                total[r] += sign * (double)t->resreq->q[r];
        }
}

int kb__hdrf_reclaimable(void *arg, const struct kb_task *reclaimer, struct kb_task *const *cand,
                         size_t n, struct kb_task **out)
{
        struct kb__hdrf *h = arg;
        const struct kb_job *lj = reclaimer->job;
        if (!lj || !lj->queue || h->leaf[lj->index] < 0)
                return 0;
        refresh(h);
        size_t bytes = h->nn * sizeof(struct hnode);
        /* The tree with the reclaimer's task given to its job; job_alloc
         * is changed in place and restored before returning. */
        memcpy(h->base_total, h->total_alloc, sizeof(kb__vec));
        move(h, reclaimer, 1, h->base_total);
        memcpy(h->base, h->n, bytes);
        update(h, h->base, 0, h->base_total);
        int k = 0;
        for (size_t i = 0; i < n; i++) {
                const struct kb_task *v = cand[i];
                if (!v->job || !v->job->queue || h->leaf[v->job->index] < 0)
                        continue;
                memcpy(h->work, h->base, bytes);
                memcpy(h->work_total, h->base_total, sizeof(kb__vec));
                move(h, v, -1, h->work_total);
                update(h, h->work, 0, h->work_total);
                double c = compare(h, h->work, lj->queue->index, v->job->queue->index);
                move(h, v, 1, h->work_total);
                if (c < 0)
                        out[k++] = cand[i];
        }
        kb__vec scratch = {0};
        move(h, reclaimer, -1, scratch);
        return k;
}
