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
 * The framework keeps each job's allocated sum current through statements,
 * so shares are computed when compared rather than stored.  Volcano's drf
 * also orders namespaces and queues hierarchically (enableHierarchy) and
 * offers victims to preempt; kbatch does not do those yet.
 */
#include "framework/framework.h"

static void *drf_open(struct kb_session *s, const struct kb_value *args);

const struct kb_plugin kb_plugin_drf = {
    .name = "drf",
    .open = drf_open,
};

struct drf {
        const struct kb_res *total;
};

static double share(const struct drf *d, const struct kb_res *alloc)
{
        double best = 0;
        for (int i = 0; i < KB_RES_MAX; i++) {
                double t = (double)d->total->q[i], a = (double)alloc->q[i];
                double sh = t > 0 ? a / t : (a > 0 ? 1 : 0);
                if (sh > best)
                        best = sh;
        }
        return best;
}

static int job_order(void *arg, const struct kb_job *l, const struct kb_job *r)
{
        const struct drf *d = arg;
        double ls = share(d, &l->allocated), rs = share(d, &r->allocated);
        if (ls == rs)
                return 0;
        return ls < rs ? -1 : 1;
}

static void *drf_open(struct kb_session *s, const struct kb_value *args)
{
        (void)args;
        struct drf *d = kb_pool_alloc(kb_session_pool(s), sizeof(*d));
        d->total = kb_session_total(s);
        kb_on_job_order(s, job_order, d);
        return d;
}
