/*
 * preempt: a starving job evicts lower-priority work of its own queue, as
 * Volcano master's actions/preempt, with kbatch's gang-aware choice of
 * victims (actions/evict.c):
 *
 *   queues in queue order; in each queue,
 *   (a) between jobs: its starving jobs (Volcano's jobStarving: for a gang,
 *       ready plus pipelined below minMember) in job order, each in a
 *       statement of its own: its pending tasks in task order, while the
 *       job starves, are placed — on free room first, else by evicting Bound
 *       or Running tasks of other jobs of the same queue that the plugins
 *       give up (priority: strictly lower priority; gang: victim jobs keep
 *       minMember, or go whole; conformance: never kube-system or critical
 *       pods; drf: only jobs with a larger share); the statement commits
 *       only when the job is pipelined as a whole, else nothing is evicted;
 *   (b) within a job: the same queue's starving jobs again, each pending
 *       task (task order) evicting lower-priority tasks of its own job, one
 *       statement per task; the first task that cannot be placed ends the
 *       job's turn.
 *
 * Preemptor tasks are pipelined onto the room being freed: nothing of them
 * binds in this session, no later action places them elsewhere (they are
 * no longer Pending), and the daemon nominates them to the node; they bind
 * once the victims are gone.  A task whose pod (or PriorityClass) says
 * preemptionPolicy: Never evicts nothing.
 *
 * With the argument enableTopologyAwarePreemption: true (Volcano master's
 * topology-aware preemption, after kube-scheduler's DefaultPreemption),
 * a node whose filters refuse the task now is still a candidate when they
 * pass with its victims gone: victims are taken cheapest first until the
 * task fits and every filter (pod affinity and anti-affinity, topology
 * spread, host ports, node affinity) passes on the node so simulated, then
 * given back highest priority first while it still does; the node whose
 * victims break the fewest PodDisruptionBudgets, then have the lowest
 * highest pod priority, the lowest sum of priorities, the fewest victims,
 * the latest start, wins (evict.c).
 *
 * Example: queue q; job lo (priority 1, minMember 2) runs two 2-cpu pods on
 * a 4-cpu node; job hi (priority 10, minMember 1) has a 2-cpu pod pending.
 * hi starves; no room is free; the node's candidates are lo's two pods, but
 * gang keeps lo at minMember 2, so no part of lo may go; lo offered whole
 * is given up (priority 1 < 10): both pods are evicted and hi's pod is
 * pipelined onto the node.
 */
#include <stdio.h>
#include <stdlib.h>

#include "actions/actions-int.h"

static void preempt_execute(struct kb_session *s);
static int preempt_check(const struct kb_value *args, char *err, size_t errlen);

/* Volcano master's preempt arguments.  The three candidate limits bound
 * Volcano's sample of nodes in topology-aware preemption; kbatch looks at
 * every node, so they are read and change nothing. */
#define TOPOLOGY_AWARE "enableTopologyAwarePreemption"
static const char *const arguments[] = {TOPOLOGY_AWARE, "minCandidateNodesPercentage",
                                        "minCandidateNodesAbsolute", "maxCandidateNodesAbsolute",
                                        NULL};

const struct kb_action kb_action_preempt = {
    .name = "preempt",
    .execute = preempt_execute,
    .arguments = arguments,
    .check = preempt_check,
};

/* Volcano 1.15's name for its gang-aware preemption: kbatch's preempt is
 * gang-aware already. */
const struct kb_action kb_action_gangpreempt = {
    .name = "gangpreempt",
    .execute = preempt_execute,
    .arguments = arguments,
    .check = preempt_check,
};

static int preempt_check(const struct kb_value *args, char *err, size_t errlen)
{
        const struct kb_value *v = kb_value_get(args, TOPOLOGY_AWARE);
        if (v && v->type != KB_VBOOL) {
                snprintf(err, errlen, "%s: must be true or false, got %s", TOPOLOGY_AWARE,
                         kb_value_type_name(v->type));
                return KB_EBADCONF;
        }
        for (size_t i = 1; arguments[i]; i++) {
                v = kb_value_get(args, arguments[i]);
                if (v && v->type != KB_VNUMBER) {
                        snprintf(err, errlen, "%s: must be a number, got %s", arguments[i],
                                 kb_value_type_name(v->type));
                        return KB_EBADCONF;
                }
        }
        return 0;
}

/* (a): a task of another job of the same queue. */
static bool between_jobs(const struct kb_task *t, const struct kb_task *v)
{
        return kb__victim_status_ok(t, v, false) && v->job != t->job &&
               v->job->queue == t->job->queue;
}

/* (b): a task of the preemptor's own job. */
static bool within_job(const struct kb_task *t, const struct kb_task *v)
{
        return kb__victim_status_ok(t, v, false) && v->job == t->job;
}

static void pending_tasks(struct kb_heap *h, struct kb_session *s, const struct kb_job *j)
{
        kb_heap_init_tasks(h, s);
        for (uint32_t i = 0; i < j->ntasks; i++)
                if (j->tasks[i]->status == KB_TASK_PENDING)
                        kb_heap_push(h, j->tasks[i]);
}

static void between(struct kb__evictor *e, struct kb_job *j)
{
        struct kb_session *s = e->s;
        struct kb_heap tasks;
        pending_tasks(&tasks, s, j);
        e->eligible = between_jobs;
        /* Evictions an earlier turn made for j stay counted when this one
         * is discarded. */
        uint32_t before = j->evictions;
        const char *before_by = j->evicted_by;
        e->st = kb_statement_new(s);
        while (kb_job_starving(s, j) && !kb_heap_empty(&tasks)) {
                struct kb_task *t = kb_heap_pop(&tasks);
                if (!kb__never_preempts(s, t))
                        kb__evict_place(e, t);
        }
        if (kb_job_pipelined(s, j))
                kb_statement_commit(e->st);
        else {
                kb_statement_discard(e->st);
                kb__evictor_forget(e);
                j->evictions = before;
                j->evicted_by = before_by;
        }
        kb_heap_release(&tasks);
}

static void within(struct kb__evictor *e, struct kb_job *j)
{
        struct kb_session *s = e->s;
        struct kb_heap tasks;
        pending_tasks(&tasks, s, j);
        e->eligible = within_job;
        while (!kb_heap_empty(&tasks)) {
                struct kb_task *t = kb_heap_pop(&tasks);
                e->st = kb_statement_new(s);
                uint32_t before = j->evictions;
                if (kb__never_preempts(s, t) || !kb__evict_place(e, t)) {
                        kb_statement_discard(e->st);
                        kb__evictor_forget(e);
                        j->evictions = before;
                        break;
                }
                kb_statement_commit(e->st);
        }
        kb_heap_release(&tasks);
}

static void preempt_execute(struct kb_session *s)
{
        size_t njobs, nqueues;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        kb_session_queues(s, &nqueues);
        struct kb_heap queues, *starving = kb_xcalloc(nqueues + 1, sizeof(*starving));
        struct kb_job ***under = kb_xcalloc(nqueues + 1, sizeof(*under));
        size_t *nunder = kb_xcalloc(nqueues + 1, sizeof(*nunder)), *capunder;
        capunder = kb_xcalloc(nqueues + 1, sizeof(*capunder));
        struct kb__evictor e;

        kb_heap_init_queues(&queues, s);
        for (size_t q = 0; q < nqueues; q++)
                kb_heap_init_jobs(&starving[q], s);
        /* Volcano: jobs admitted (not Pending), valid, in a queue, starving. */
        for (size_t i = 0; i < njobs; i++) {
                struct kb_job *j = jobs[i];
                /* Volcano's preempt leaves gangs with a network topology
                 * alone: it would place them anywhere. */
                if (j->phase == KB_PG_PENDING || kb_job_valid(s, j, NULL) ||
                    !kb_job_starving(s, j) || kb_job_has_topology(j))
                        continue;
                size_t q = j->queue->index;
                if (!nunder[q])
                        kb_heap_push(&queues, j->queue);
                kb_heap_push(&starving[q], j);
                KB_PUSH(under[q], nunder[q], capunder[q], j);
        }

        kb__evictor_init(&e, s, "preempt");
        e.per_job = true;
        e.vote = kb_preemptable;
        e.allocatable = true;
        e.topology = kb_value_bool(kb_value_get(kb_session_action_args(s), TOPOLOGY_AWARE), false);
        while (!kb_heap_empty(&queues)) {
                struct kb_queue_info *q = kb_heap_pop(&queues);
                while (!kb_heap_empty(&starving[q->index]))
                        between(&e, kb_heap_pop(&starving[q->index]));
                for (size_t i = 0; i < nunder[q->index]; i++)
                        within(&e, under[q->index][i]);
        }
        kb__evictor_release(&e);

        for (size_t q = 0; q < nqueues; q++) {
                kb_heap_release(&starving[q]);
                free(under[q]);
        }
        kb_heap_release(&queues);
        free(starving);
        free(under);
        free(nunder);
        free(capunder);
}
