/*
 * allocate: places the pending tasks of admitted jobs, gang by gang, as
 * Volcano master's actions/allocate (there is no namespace level since
 * Volcano v1.8):
 *
 *   queues in queue order, one job turn at a time: pop the first queue; an
 *   overused queue drops out for the rest of the action; else its first job
 *   in job order takes a turn, and the queue goes back into the heap so
 *   that shares re-order across all queues after every turn.
 *
 *   A turn walks the job's pending tasks (BestEffort ones are left to
 *   backfill) in task order, each one:
 *     - skipped when the queue cannot take it (allocatable);
 *     - skipped when a task of the same role (volcano.sh/task-spec) already
 *       fit nowhere in this session (Volcano's TaskHasFitErrors: one role,
 *       one spec);
 *     - placed on the best node (kb_select_node: nodes where it fits idle
 *       resources first, else ones where it fits future idle): Allocated on
 *       idle resources, Pipelined on future idle;
 *     - when it fits nowhere, the turn goes on only while the gang can still
 *       complete without this role (Volcano's NeedContinueAllocating, below),
 *       else it ends.
 *   The turn also ends once the job is ready, so that other jobs get a turn
 *   before it continues: a ready job with tasks left goes back into its
 *   queue (one that failed, or is only pipelined, does not).  The turn's statement commits when the
 * job is ready (all its binds leave together), is kept when the job is pipelined, else is
 *   discarded: no partial gang leaves the session.
 *
 * A gang whose PodGroup sets spec.networkTopology plays its turn within one
 * network topology domain, the lowest tier and tightest fit first
 * (actions/topology.c); when no domain takes it, a hard gang is left whole
 * and waits, a soft one plays its turn on every node.  A gang whose
 * PodGroup sets spec.subGroupPolicy plays it sub-group by sub-group
 * (actions/subgroups.c).
 *
 * Example: a gang of 3 (minMember 3) and two nodes with room for 2 tasks:
 * tasks 1 and 2 are allocated, task 3 fits nowhere; minMember equals the
 * task count, so the turn ends; the job is neither ready (2 < 3) nor
 * pipelined, so both allocations are undone and the nodes are free for the
 * next job.  With 5 replicas and minMember 3 instead, the turn goes on
 * after task 3 fails, and tasks 4 and 5 may still make the gang.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/actions-int.h"

static void allocate_execute(struct kb_session *s);

const struct kb_action kb_action_allocate = {
    .name = "allocate",
    .execute = allocate_execute,
};

static struct kb_heap *pending_tasks(struct kb__alloc *c, struct kb_job *j)
{
        struct kb__alloc_job *js = &c->jobs[j->index];
        if (!js->made) {
                js->made = true;
                kb_heap_init_tasks(&js->tasks, c->s);
                kb_heap_reserve(&js->tasks, j->ntasks);
                js->uniform = true;
                const struct kb_res *first = NULL;
                /* Requests differ only in the interned resources. */
                int nres = kb_res_count();
                for (uint32_t i = 0; i < j->ntasks; i++) {
                        struct kb_task *t = j->tasks[i];
                        if (t->status != KB_TASK_PENDING || t->best_effort)
                                continue;
                        kb_heap_push(&js->tasks, t);
                        if (!first)
                                first = t->resreq;
                        else if (js->uniform)
                                js->uniform = kb_res_eq_first(first, t->resreq, nres);
                }
        }
        return &js->tasks;
}

/*
 * A gang partly bound (a crash mid-dispatch, a bind that failed) holds room
 * and is useless until it completes, so kbatch does not let others take the
 * room it still needs (a difference from Volcano, where such a gang can be
 * starved forever): when its turn leaves it short, what it placed is held
 * for the rest of the session instead of undone — nothing of it binds, and
 * no other job gets that room.  The gang goes first among the jobs that are
 * not ready (gang's job order), so in the next session it takes freed room
 * first again, until it completes.  That holds only while it can complete
 * at all: if its missing tasks could not fit even were every other pod gone,
 * nothing is held and the condition says so, with numbers.
 */
/* NULL when j's missing tasks would fit the nodes if nothing but j ran,
 * else why not (first fit over the nodes' allocatable less what j holds;
 * the predicates still apply). */
static const char *never_completes(struct kb_session *s, const struct kb_job *j)
{
        size_t nn;
        struct kb_node_info *nodes = kb_session_nodes(s, &nn);
        uint32_t held = kb_job_placed_count(j) + j->count[KB_TASK_SUCCEEDED];
        if (held >= (uint32_t)j->min_available)
                return NULL;
        uint32_t need = (uint32_t)j->min_available - held, fit = 0, pending = 0;
        struct kb_res *room = kb_xmalloc((nn + 1) * sizeof(*room));
        for (size_t n = 0; n < nn; n++) {
                room[n] = nodes[n].allocatable;
                for (const struct kb_task *t = nodes[n].tasks; t; t = t->node_next)
                        if (t->job == j && t->status != KB_TASK_ALLOCATED)
                                kb_res_sub(&room[n], t->resreq);
        }
        for (uint32_t i = 0; i < j->ntasks && fit < need; i++) {
                const struct kb_task *t = j->tasks[i];
                if (t->status != KB_TASK_PENDING && t->status != KB_TASK_ALLOCATED)
                        continue;
                pending++;
                for (size_t n = 0; n < nn; n++)
                        if (kb_res_le(t->resreq, &room[n]) && !kb_predicate(s, t, &nodes[n])) {
                                kb_res_sub(&room[n], t->resreq);
                                fit++;
                                break;
                        }
        }
        free(room);
        if (fit >= need)
                return NULL;
        const struct kb_node_info *largest = NULL;
        for (size_t n = 0; n < nn; n++)
                if (!largest ||
                    nodes[n].allocatable.q[KB_RES_CPU] > largest->allocatable.q[KB_RES_CPU])
                        largest = &nodes[n];
        char msg[400], big[160] = "";
        if (largest)
                kb_res_format(&largest->allocatable, false, big, sizeof(big));
        snprintf(msg, sizeof(msg),
                 "the gang holds %u placed task(s) and needs %u more, but only %u of its %u "
                 "waiting task(s) would fit even if nothing else ran (%zu node(s), the largest "
                 "with %s): it can never complete",
                 kb_job_placed_count(j), need, fit, pending, nn, big[0] ? big : "nothing");
        return kb_session_intern(s, msg);
}

/* One turn of job j (Volcano's allocateResourcesForTasks, or for a gang
 * with a network topology allocateForJob); whether the job is ready (its
 * statement committed). */
static bool allocate_job(struct kb__alloc *c, struct kb_queue_info *q, struct kb_job *j,
                         struct kb_heap *tasks)
{
        struct kb_session *s = c->s;
        struct kb_statement *st = kb_statement_new(s);

        if (j->pg && j->pg->nsubgroups) {
                /* Sub-groups: never split past their bounds, never held
                 * partly placed; ready commits, pipelined is kept. */
                int rc = kb__allocate_subgroups(c, q, j, tasks, st);
                if (rc == 2) {
                        kb_statement_commit(st);
                        return true;
                }
                if (rc == 0)
                        kb_statement_discard(st);
                return false;
        }
        if (!kb_job_has_topology(j) ||
            kb__tier_name_unknown(s, j->pg->highest_tier, j->pg->highest_tier_name))
                kb__allocate_tasks(c, q, j, tasks, NULL, st);
        else if (!kb__allocate_in_domain(c, q, j, tasks, st)) {
                /* A hard gang waits rather than be split; a soft one
                 * falls back to every node. */
                if (j->pg->topology_mode == KB_TOPOLOGY_HARD) {
                        kb_statement_discard(st);
                        kb_job_unplaced(s, j);
                        return false;
                }
                kb__allocate_tasks(c, q, j, tasks, NULL, st);
        }
        if (kb_job_ready(s, j)) {
                kb_statement_commit(st);
                return true;
        }
        if (kb_job_pipelined(s, j))
                return false;
        if (kb_job_placed_count(j) > 0) {
                const char *never = never_completes(s, j);
                if (!never) {
                        char msg[200];
                        snprintf(msg, sizeof(msg),
                                 "the gang holds %u placed task(s) of minMember %d; room for the "
                                 "rest is kept for it as it frees up",
                                 kb_job_placed_count(j), (int)j->min_available);
                        j->partial = kb_session_intern(s, msg);
                        return false; /* the statement is kept: nothing leaves */
                }
                j->partial = never;
                j->partial_never = true;
        }
        kb_statement_discard(st);
        kb_job_unplaced(s, j);
        return false;
}

static void allocate_execute(struct kb_session *s)
{
        size_t njobs, nqueues;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        kb_session_queues(s, &nqueues);
        struct kb__alloc c = {.s = s, .jobs = kb_xcalloc(njobs + 1, sizeof(*c.jobs))};
        struct kb_heap *queue_jobs = kb_xcalloc(nqueues + 1, sizeof(*queue_jobs));
        bool *queued = kb_xcalloc(nqueues + 1, sizeof(*queued));
        struct kb_heap heap;

        kb_heap_init_queues(&heap, s);
        for (size_t q = 0; q < nqueues; q++)
                kb_heap_init_jobs(&queue_jobs[q], s);
        for (size_t i = 0; i < njobs; i++) {
                struct kb_job *j = jobs[i];
                if (!kb_job_admit(s, j))
                        continue;
                /* A job with no pending task (best-effort ones are
                 * backfill's) has nothing to place: its turn would change
                 * nothing, and queue and job order are total orders, so
                 * leaving it out keeps every other turn where it was.  (At
                 * W2 an idle session would otherwise sort 5,000 jobs.) */
                if (j->count[KB_TASK_PENDING] == j->pending_best_effort || kb_job_valid(s, j, NULL))
                        continue;
                kb_heap_push(&queue_jobs[j->queue->index], j);
                if (!queued[j->queue->index]) {
                        queued[j->queue->index] = true;
                        kb_heap_push(&heap, j->queue);
                }
        }

        while (!kb_heap_empty(&heap)) {
                struct kb_queue_info *q = kb_heap_pop(&heap);
                if (kb_overused(s, q))
                        continue;
                struct kb_heap *h = &queue_jobs[q->index];
                if (kb_heap_empty(h))
                        continue;
                struct kb_job *j = kb_heap_pop(h);
                struct kb_heap *tasks = pending_tasks(&c, j);
                /* A job that became ready with tasks left takes another
                 * turn later; one that failed or is only pipelined does
                 * not come back in this session (Volcano's allocateResources). */
                if (!kb_heap_empty(tasks) && allocate_job(&c, q, j, tasks) && !kb_heap_empty(tasks))
                        kb_heap_push(h, j);
                kb_heap_push(&heap, q);
        }

        /* Jobs left in a queue's heap never had a turn: their queue was
         * overused. */
        for (size_t q = 0; q < nqueues; q++) {
                struct kb_job *j;
                while ((j = kb_heap_pop(&queue_jobs[q])) != NULL) {
                        char msg[200];
                        const struct kb_queue_info *jq = j->queue;
                        if (jq->state != KB_QUEUE_OPEN) {
                                snprintf(msg, sizeof(msg), "queue %s is %s", jq->name,
                                         kb_queue_state_name(jq->state));
                                kb_job_explain_quota(s, j, KB_WHY_QUEUE_CLOSED, msg);
                                continue;
                        }
                        snprintf(msg, sizeof(msg),
                                 "queue %s is overused: it holds its whole deserved share",
                                 jq->name);
                        kb_job_explain_quota(s, j, KB_WHY_QUOTA, msg);
                }
                kb_heap_release(&queue_jobs[q]);
        }
        for (size_t i = 0; i < njobs; i++) {
                kb_heap_release(&c.jobs[i].tasks);
                free(c.jobs[i].failed);
        }
        kb_heap_release(&heap);
        free(queue_jobs);
        free(queued);
        free(c.jobs);
}
