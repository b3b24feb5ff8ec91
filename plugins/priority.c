/*
 * priority: orders by priority, as Volcano's plugins/priority.  Jobs and
 * tasks, and a gang's sub-groups (by their tasks' highest), with the
 * higher priority value go first (a job's priority is its
 * PodGroup's priorityClassName value; a task's is its pod's spec.priority
 * or priorityClassName value; the globalDefault class otherwise, else 0).
 * A job is starving while some of its tasks are neither ready nor
 * pipelined.  Victims (preempt) are tasks of lower-priority jobs, or lower-
 * priority tasks of the preemptor's own job.
 */
#include "framework/framework.h"

static void *priority_open(struct kb_session *s, const struct kb_value *args);

const struct kb_plugin kb_plugin_priority = {
    .name = "priority",
    .open = priority_open,
};

static int job_order(void *arg, const struct kb_job *l, const struct kb_job *r)
{
        (void)arg;
        if (l->priority == r->priority)
                return 0;
        return l->priority > r->priority ? -1 : 1;
}

static int task_order(void *arg, const struct kb_task *l, const struct kb_task *r)
{
        (void)arg;
        if (l->priority == r->priority)
                return 0;
        return l->priority > r->priority ? -1 : 1;
}

/* Volcano's priority SubJobOrderFn: the sub-group whose highest task
 * priority is higher goes first. */
static int subgroup_order(void *arg, const struct kb_subgroup_info *l,
                          const struct kb_subgroup_info *r)
{
        (void)arg;
        if (l->priority == r->priority)
                return 0;
        return l->priority > r->priority ? -1 : 1;
}

static bool starving(void *arg, const struct kb_job *j)
{
        (void)arg;
        return kb_job_ready_count(j) + kb_job_waiting_count(j) < j->ntasks;
}

static int victims(void *arg, const struct kb_task *preemptor, struct kb_task *const *cand,
                   size_t n, struct kb_task **out)
{
        (void)arg;
        int k = 0;
        for (size_t i = 0; i < n; i++) {
                const struct kb_task *v = cand[i];
                if (v->job == preemptor->job ? v->priority < preemptor->priority
                                             : v->job->priority < preemptor->job->priority)
                        out[k++] = cand[i];
        }
        return k;
}

static void *priority_open(struct kb_session *s, const struct kb_value *args)
{
        (void)args;
        kb_on_job_order(s, job_order, NULL);
        kb_on_task_order(s, task_order, NULL);
        kb_on_subgroup_order(s, subgroup_order, NULL);
        kb_on_job_starving(s, starving, NULL);
        kb_on_preemptable(s, victims, NULL, 0);
        return NULL;
}
