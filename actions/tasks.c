/*
 * The task loop of one job turn, shared by allocate's turns over every node
 * (allocate.c), within one network topology domain (topology.c) and per
 * sub-group (subgroups.c): pop the job's pending tasks in task order, skip
 * what the queue cannot take or a role that already fit nowhere, place the
 * rest on the best node, and stop once the job is ready or can no longer
 * complete (Volcano's allocateResourcesForTasks).  actions/allocate.c's
 * banner walks through it on an example.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/actions-int.h"

#ifdef KB_TESTING
unsigned long kb__alloc_queue_asks;
#endif

static bool role_failed(const struct kb__alloc_job *js, const char *role)
{
        for (size_t i = 0; i < js->nfailed; i++)
                if (strcmp(js->failed[i], role) == 0)
                        return true;
        return false;
}

static int32_t role_min(const struct kb_job *j, const char *role)
{
        for (size_t i = 0; j->pg && i < j->pg->nmin_task_member; i++)
                if (strcmp(j->pg->min_task_member[i].name, role) == 0)
                        return j->pg->min_task_member[i].min;
        return 0;
}

/*
 * Volcano's JobInfo.NeedContinueAllocating: after a task fit nowhere,
 * whether the job's other tasks can still make the gang.
 *  - minMember equal to the task count: every task must run; stop.
 *  - minMember below the sum of the per-role minimums (minTaskMember): the
 *    ready tasks plus the pending ones of roles that have not failed must
 *    reach minMember.
 *  - otherwise: every failed role with a minimum must already hold it
 *    (ready, succeeded or pending best-effort tasks of the role).
 */
static bool need_continue(const struct kb_job *j, const struct kb__alloc_job *js)
{
        if ((uint32_t)j->min_available == j->ntasks)
                return false;
        int64_t total = 0;
        for (size_t i = 0; j->pg && i < j->pg->nmin_task_member; i++)
                total += j->pg->min_task_member[i].min;
        if (j->min_available < total) {
                uint32_t left = 0;
                for (uint32_t i = 0; i < j->ntasks; i++)
                        left += j->tasks[i]->status == KB_TASK_PENDING &&
                                !role_failed(js, j->tasks[i]->role);
                return kb_job_ready_count(j) + left >= (uint32_t)j->min_available;
        }
        for (size_t f = 0; f < js->nfailed; f++) {
                int32_t min = role_min(j, js->failed[f]);
                if (min == 0)
                        continue;
                int32_t held = 0;
                for (uint32_t i = 0; i < j->ntasks; i++) {
                        const struct kb_task *t = j->tasks[i];
                        if (strcmp(t->role, js->failed[f]) != 0)
                                continue;
                        held += kb_task_status_allocated(t->status) ||
                                t->status == KB_TASK_SUCCEEDED ||
                                (t->status == KB_TASK_PENDING && t->best_effort);
                }
                if (held < min)
                        return false;
        }
        return true;
}

/* A task the queue's quota skipped: say why in the job's condition.  A
 * queue that is not Open takes nothing, whatever the nodes; otherwise, if
 * no node could take the task either, that is the better answer ("0/4
 * nodes are available: ..."); else the quota plugin's numbers
 * (kb_job_explain_quota, from its allocatable), or a plain sentence when
 * no plugin gave any. */
static void explain_quota(struct kb_session *s, const struct kb_queue_info *q, struct kb_job *j,
                          struct kb_task *t)
{
        if (j->fit_error || j->quota_checked)
                return;
        j->quota_checked = true;
        char msg[300];
        if (q->state != KB_QUEUE_OPEN) {
                snprintf(msg, sizeof(msg), "queue %s is %s", q->name,
                         kb_queue_state_name(q->state));
                j->quota_error = kb_session_intern(s, msg);
                j->quota_reason = KB_WHY_QUEUE_CLOSED;
                return;
        }
        const char *why = NULL;
        if (!kb_select_node(s, t, &why)) {
                kb_task_fit_failed(t, why);
                return;
        }
        snprintf(msg, sizeof(msg),
                 "queue %s has no room left for the gang within its deserved resources", q->name);
        kb_job_explain_quota(s, j, KB_WHY_QUOTA, msg);
}

void kb__allocate_tasks(struct kb__alloc *c, struct kb_queue_info *q, struct kb_job *j,
                        struct kb_heap *tasks, const struct kb_domain *d, struct kb_statement *st)
{
        struct kb_session *s = c->s;
        struct kb__alloc_job *js = &c->jobs[j->index];

        while (!kb_heap_empty(tasks)) {
                struct kb_task *t = kb_heap_pop(tasks);
                COUNT(kb__alloc_queue_asks);
                if (!kb_allocatable(s, q, t)) {
                        explain_quota(s, q, j, t);
                        /* The queue's answer depends on its state and the
                         * task's request alone (kb_allocatable_fn), and
                         * nothing changes before the next task: when the
                         * rest ask for the same, each would be refused the
                         * same way, and the first refusal is the one the
                         * job reports.  Not asking saves popping them one
                         * by one (a gang of hundreds refused by its queue
                         * every session, in a backlog). */
                        if (js->uniform)
                                kb_heap_clear(tasks);
                        continue;
                }
                if (*t->role && role_failed(js, t->role))
                        continue;
                const char *why = NULL;
                /* A gang with a network topology: nearest its placed
                 * tasks first (Volcano's network-topology-aware
                 * batchNodeOrderFn for the job's default sub-job, see
                 * kb_select_node_near). */
                struct kb_node_info *n =
                    kb_job_has_topology(j) ? kb_select_node_near(s, t, j->tasks, j->ntasks, d, &why)
                    : d                    ? kb_select_node_in(s, t, d)
                                           : kb_select_node(s, t, &why);
                if (!n) {
                        if (!d)
                                kb_task_fit_failed(t, why);
                        if (!role_failed(js, t->role))
                                KB_PUSH(js->failed, js->nfailed, js->capfailed, t->role);
                        if (need_continue(j, js))
                                continue;
                        break;
                }
                if (kb_res_le(t->resreq, &n->idle))
                        kb_statement_allocate(st, t, n);
                else
                        kb_statement_pipeline(st, t, n);
                if (kb_job_ready(s, j) && !kb_heap_empty(tasks))
                        break;
        }
}
