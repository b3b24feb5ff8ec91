/*
 * drf: dominant resource fairness between jobs, as Volcano's plugins/drf.
 * A job's share is the largest, over resources (pods too, as in Volcano),
 * of what it has allocated divided by the cluster's total; the job with the
 * lower share goes first.
 *
 * Example: a cluster of 10 cpu and 100Gi.  Job A holds 2 cpu and 10Gi
 * (shares 0.2 and 0.1: dominant 0.2), job B 1 cpu and 40Gi (0.1 and 0.4:
 * dominant 0.4).  A goes first.
 *
 * The framework keeps each job's allocated sum current through statements;
 * a job's share is remembered with the sum it was computed from, and
 * computed again only when the sum differs (a comparison of 16 numbers
 * instead of 16 quotients: job order compares jobs far more often than
 * their sums change).
 *
 * Victims (preemptable), as Volcano: the preemptor job's share with the
 * preemptor task added; each candidate's job share with that candidate (and
 * the job's candidates before it) taken away; a candidate is a victim while
 * the preemptor's share stays below the victim job's, or equal to it within
 * 1e-6.  (Equal tasks cannot swap back and forth this way: after a move the
 * shares differ by two tasks the other way round.)
 *
 * With enableHierarchy: true, queues are ordered, and reclaim victims
 * chosen, by hierarchical drf (plugins/hdrf.c, Volcano's hdrf).
 */
#include <math.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

static void *drf_open(struct kb_session *s, const struct kb_value *args);
static void drf_close(struct kb_session *s, void *state);

const struct kb_plugin kb_plugin_drf = {
    .name = "drf",
    .open = drf_open,
    .close = drf_close,
    .hierarchy = true,
};

struct drf {
        struct kb__hdrf *tree; /* with enableHierarchy, else NULL */
        const struct kb_res *total;
        /* Per job index: what the job would hold after the candidates
         * taken so far in one call, and whether it was set. */
        struct kb_res *left;
        bool *seen;
        /* Per job index: the share of the allocated sum kept beside it. */
        uint32_t *shared_gen; /* per job: allocated_gen + 1 as shared[] was computed, 0 never */
        double *shared;
};

static double share(const struct drf *d, const struct kb_res *alloc)
{
        double best = 0;
        /* Only interned resources are ever allocated (a sum of requests):
         * every other slot's share is 0. */
        int nres = kb_res_count();
        for (int i = 0; i < nres; i++) {
                double t = (double)d->total->q[i], a = (double)alloc->q[i];
                double sh = t > 0 ? a / t : (a > 0 ? 1 : 0);
                if (sh > best)
                        best = sh;
        }
        return best;
}

/* j's share, computed again only when its allocated sum changed (its
 * allocated_gen: asked per comparison of the job heaps). */
static double job_share(const struct drf *d, const struct kb_job *j)
{
        uint32_t *seen = &d->shared_gen[j->index];
        if (*seen != j->allocated_gen + 1) {
                *seen = j->allocated_gen + 1;
                d->shared[j->index] = share(d, &j->allocated);
        }
        return d->shared[j->index];
}

static int job_order(void *arg, const struct kb_job *l, const struct kb_job *r)
{
        const struct drf *d = arg;
        double ls = job_share(d, l), rs = job_share(d, r);
        if (ls == rs)
                return 0;
        return ls < rs ? -1 : 1;
}

static int victims(void *arg, const struct kb_task *preemptor, struct kb_task *const *cand,
                   size_t n, struct kb_task **out)
{
        struct drf *d = arg;
        struct kb_res mine = preemptor->job->allocated;
        kb_res_add(&mine, preemptor->resreq);
        double ls = share(d, &mine);
        int k = 0;
        for (size_t i = 0; i < n; i++) {
                const struct kb_job *j = cand[i]->job;
                if (!j)
                        continue;
                if (!d->seen[j->index]) {
                        d->seen[j->index] = true;
                        d->left[j->index] = j->allocated;
                }
                kb_res_sub(&d->left[j->index], cand[i]->resreq);
                double rs = share(d, &d->left[j->index]);
                if (ls < rs || fabs(ls - rs) <= 1e-6)
                        out[k++] = cand[i];
        }
        for (size_t i = 0; i < n; i++)
                if (cand[i]->job)
                        d->seen[cand[i]->job->index] = false;
        return k;
}

static void on_allocate(void *arg, const struct kb_task *t)
{
        kb__hdrf_account(arg, t, 1);
}

static void on_deallocate(void *arg, const struct kb_task *t)
{
        kb__hdrf_account(arg, t, -1);
}

static void *drf_open(struct kb_session *s, const struct kb_value *args)
{
        (void)args;
        struct drf *d = kb_pool_alloc(kb_session_pool(s), sizeof(*d));
        d->tree = NULL;
        if (kb_session_hierarchy(s, "drf")) {
                d->tree = kb__hdrf_open(s);
                kb_on_queue_order(s, kb__hdrf_queue_order, d->tree);
                kb_on_reclaimable(s, kb__hdrf_reclaimable, d->tree);
                kb_on_event(s, (struct kb_event_handler){on_allocate, on_deallocate}, d->tree);
        }
        size_t njobs;
        kb_session_jobs(s, &njobs);
        d->total = kb_session_total(s);
        d->left = kb_pool_alloc(kb_session_pool(s), (njobs + 1) * sizeof(*d->left));
        d->seen = kb_pool_alloc(kb_session_pool(s), (njobs + 1) * sizeof(*d->seen));
        d->shared_gen = kb_pool_alloc(kb_session_pool(s), (njobs + 1) * sizeof(*d->shared_gen));
        d->shared = kb_pool_alloc(kb_session_pool(s), (njobs + 1) * sizeof(*d->shared));
        memset(d->shared_gen, 0, (njobs + 1) * sizeof(*d->shared_gen));
        memset(d->shared, 0, (njobs + 1) * sizeof(*d->shared));
        kb_on_job_order(s, job_order, d);
        kb_on_preemptable(s, victims, d, 0);
        return d;
}

static void drf_close(struct kb_session *s, void *state)
{
        (void)s;
        struct drf *d = state;
        kb__hdrf_close(d->tree);
}
