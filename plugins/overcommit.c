/*
 * overcommit: admits groups while the cluster, over-committed by a factor,
 * has room for their minResources, as Volcano's plugins/overcommit.
 *
 *   idle    = total allocatable * overcommit-factor - used by every pod
 *   inqueue = minResources of groups already admitted (Inqueue), plus the
 *             part of a Running group's minResources not yet allocated
 *             when the group holds at least minMember tasks
 * A group with minResources is admitted when inqueue + its minResources fit
 * idle in every resource it asks for (pods aside); once every plugin
 * admitted it (jobEnqueued), inqueue grows by them.
 * Argument: overcommit-factor (default 1.2; below 1 is taken as 1.2, as
 * Volcano does).
 */
#include <stdio.h>

#include "framework/framework.h"

static void *overcommit_open(struct kb_session *s, const struct kb_value *args);

static const char *const arguments[] = {"overcommit-factor", NULL};
static const char *const ignored[] = {"overcommit-factor.*", NULL};

const struct kb_plugin kb_plugin_overcommit = {
    .name = "overcommit",
    .open = overcommit_open,
    .arguments = arguments,
    .ignored = ignored,
};

struct overcommit {
        struct kb_session *s;
        double idle[KB_RES_MAX];
        double inqueue[KB_RES_MAX];
};

static int enqueueable(void *arg, const struct kb_job *j)
{
        struct overcommit *o = arg;
        if (!j->pg || !j->pg->has_min_resources)
                return 1;
        const struct kb_res *min = &j->pg->min_resources;
        for (int i = 0; i < KB_RES_MAX; i++) {
                if (i == KB_RES_PODS || min->q[i] <= 0)
                        continue;
                if (o->inqueue[i] + (double)min->q[i] > o->idle[i]) {
                        char why[400], need[48], idle[48], res[48];
                        bool milli = kb_res_is_milli(i), bin = kb_res_is_bytes(i);
                        kb_quantity_human((double)min->q[i], milli, bin, need, sizeof(need));
                        kb_quantity_human(o->idle[i], milli, bin, idle, sizeof(idle));
                        kb_quantity_human(o->inqueue[i], milli, bin, res, sizeof(res));
                        snprintf(why, sizeof(why),
                                 "resource in cluster is overused: not enough %s for the "
                                 "group's minResources: it needs %s, the cluster has %s idle "
                                 "(overcommitted) of which %s is reserved for admitted groups",
                                 kb_res_name(i), need, idle, res);
                        kb_job_explain(o->s, j, KB_WHY_RESOURCES, why);
                        return -1;
                }
        }
        return 1;
}

static void enqueued(void *arg, const struct kb_job *j)
{
        struct overcommit *o = arg;
        if (!j->pg || !j->pg->has_min_resources)
                return;
        for (int i = 0; i < KB_RES_MAX; i++)
                o->inqueue[i] += (double)j->pg->min_resources.q[i];
}

/* Tasks holding room: Volcano's CalculateAllocatedTaskNum. */
static uint32_t held(const struct kb_job *j)
{
        return j->count[KB_TASK_ALLOCATED] + j->count[KB_TASK_BINDING] + j->count[KB_TASK_BOUND] +
               j->count[KB_TASK_RUNNING];
}

static void *overcommit_open(struct kb_session *s, const struct kb_value *args)
{
        struct overcommit *o = kb_pool_alloc(kb_session_pool(s), sizeof(*o));
        double factor = kb_args_double(args, "overcommit-factor", 1.2);
        size_t nnodes, njobs;
        struct kb_node_info *nodes = kb_session_nodes(s, &nnodes);
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        if (factor < 1.0) {
                KB_WARN("conf: overcommit-factor %g is below 1; using 1.2", factor);
                factor = 1.2;
        }
        o->s = s;
        for (size_t n = 0; n < nnodes; n++)
                for (int i = 0; i < KB_RES_MAX; i++)
                        o->idle[i] +=
                            (double)nodes[n].allocatable.q[i] * factor - (double)nodes[n].used.q[i];
        for (size_t k = 0; k < njobs; k++) {
                const struct kb_job *j = jobs[k];
                if (!j->pg || !j->pg->has_min_resources)
                        continue;
                const struct kb_res *min = &j->pg->min_resources;
                if (j->phase == KB_PG_INQUEUE) {
                        for (int i = 0; i < KB_RES_MAX; i++)
                                o->inqueue[i] += (double)min->q[i];
                } else if (j->phase == KB_PG_RUNNING && held(j) >= (uint32_t)j->min_available) {
                        for (int i = 0; i < KB_RES_MAX; i++) {
                                int64_t rest = min->q[i] - j->allocated.q[i];
                                if (rest > 0)
                                        o->inqueue[i] += (double)rest;
                        }
                }
        }
        kb_on_job_enqueueable(s, enqueueable, o);
        kb_on_job_enqueued(s, enqueued, o);
        return o;
}
