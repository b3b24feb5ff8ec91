/*
 * reclaim: a queue below its deserved share takes room back from queues
 * above theirs, as Volcano master's actions/reclaim, with kbatch's
 * gang-aware choice of victims (actions/evict.c):
 *
 *   queues in queue order, one job per turn: pop a queue (an overused one
 *   drops out); its first starving job in job order; its pending tasks in
 *   task order, while the job starves and the queue may take the task
 *   (preemptive: proportion and capacity allow a queue only up to what it
 *   deserves), are placed — on free room first, else by evicting Running
 *   tasks of jobs in other queues whose spec.reclaimable is not false, as
 *   the plugins give them up (proportion and capacity: only while the
 *   victim's queue holds more than it deserves; gang: victim jobs keep
 *   minMember, or go whole; conformance).  The turn's statement commits
 *   when the job is pipelined as a whole, else it is discarded at once:
 *   nothing is evicted for a gang that does not fit.  The queue goes back
 *   after each turn.
 *
 * Volcano's reclaim takes one task per turn and keeps each job's statement
 * open across turns until the action ends; room a job evicted for could then
 * be given to another job in between and the first job's statement still be
 * discarded later.  kbatch gives a job its whole turn, like allocate.
 *
 * kbatch differs from Volcano in two ways the issue asks for: a job still
 * Pending because the enqueue action found no room for it reclaims too
 * (Volcano skips it, and such a queue can wait forever: Volcano issue
 * #4756), and becomes Inqueue when its gang is pipelined; and a node's idle
 * room counts toward what is reclaimed (Volcano pipelines only onto the
 * evicted tasks' room).  Tasks are compared in the resources they ask for
 * only.  A turn that evicts nothing for an admitted job is undone: free
 * room is allocate's to fill.
 *
 * Example: queues a and b (weight 1) on 8 cpu; a runs eight 1-cpu pods of
 * minMember-1 jobs, b has a 2-cpu pod pending.  Deserved: a 6, b 2.  b is
 * below its share (0 + 2 <= 2); a holds 8 > 6, so proportion gives up a's
 * pods until a is down to 6: the two cheapest on one node are evicted and
 * b's pod is pipelined there.
 */
#include <stdlib.h>

#include "actions/actions-int.h"

static void reclaim_execute(struct kb_session *s);

const struct kb_action kb_action_reclaim = {
    .name = "reclaim",
    .execute = reclaim_execute,
};

/* Volcano 1.15's name for its gang-aware reclaim. */
const struct kb_action kb_action_gangreclaim = {
    .name = "gangreclaim",
    .execute = reclaim_execute,
};

/* A Running task of another queue that lets its room be reclaimed. */
static bool other_queue(const struct kb_task *t, const struct kb_task *v)
{
        if (!kb__victim_status_ok(t, v, true) || !v->job->queue || v->job->queue == t->job->queue)
                return false;
        return v->job->queue->queue->reclaimable;
}

/* One job's turn; whether it placed anything. */
static bool reclaim_job(struct kb__evictor *e, struct kb_queue_info *q, struct kb_job *j)
{
        struct kb_session *s = e->s;
        struct kb_heap tasks;
        bool placed = false;
        kb_heap_init_tasks(&tasks, s);
        for (uint32_t i = 0; i < j->ntasks; i++)
                if (j->tasks[i]->status == KB_TASK_PENDING)
                        kb_heap_push(&tasks, j->tasks[i]);
        /* What earlier turns (preempt's, in this session) evicted for j
         * stays counted when this turn is discarded. */
        uint32_t evicted_before = j->evictions;
        const char *evicted_by = j->evicted_by;
        e->st = kb_statement_new(s);
        while (kb_job_starving(s, j) && !kb_heap_empty(&tasks)) {
                struct kb_task *t = kb_heap_pop(&tasks);
                if (kb__never_preempts(s, t))
                        continue;
                if (!kb_preemptive(s, q, t) || !kb__evict_place(e, t))
                        break;
                placed = true;
        }
        kb_heap_release(&tasks);
        /* A turn of an admitted job that evicted nothing placed it on room
         * that is free anyway: that is allocate's to place (and bind in
         * this session), not reclaim's to pipeline (Volcano's reclaim
         * pipelines only where it evicted; its capacity_test.go runs
         * "enqueue, reclaim, allocate" and expects the bind). */
        bool none_evicted = j->evictions == evicted_before && j->phase != KB_PG_PENDING;
        if (none_evicted || !kb_job_pipelined(s, j)) {
                kb_statement_discard(e->st);
                kb__evictor_forget(e);
                j->evictions = evicted_before;
                j->evicted_by = evicted_by;
                return false;
        }
        kb_statement_commit(e->st);
        /* A group that waited in enqueue is admitted. */
        if (j->phase == KB_PG_PENDING) {
                j->phase = KB_PG_INQUEUE;
                kb_job_enqueued(s, j);
        }
        return placed;
}

static void reclaim_execute(struct kb_session *s)
{
        size_t njobs, nqueues;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        kb_session_queues(s, &nqueues);
        bool waits_for_enqueue = kb_conf_has_action(kb_session_conf(s), "enqueue");
        struct kb_heap queues, *starving = kb_xcalloc(nqueues + 1, sizeof(*starving));
        bool *queued = kb_xcalloc(nqueues + 1, sizeof(*queued));
        struct kb__evictor e;

        kb_heap_init_queues(&queues, s);
        for (size_t q = 0; q < nqueues; q++)
                kb_heap_init_jobs(&starving[q], s);
        for (size_t i = 0; i < njobs; i++) {
                struct kb_job *j = jobs[i];
                /* As preempt, reclaim leaves gangs with a network
                 * topology alone: it would place them anywhere. */
                if ((j->phase == KB_PG_PENDING && (!waits_for_enqueue || j->inqueue_backoff)) ||
                    kb_job_valid(s, j, NULL) || !kb_job_starving(s, j) || kb_job_has_topology(j))
                        continue;
                size_t q = j->queue->index;
                if (!queued[q]) {
                        queued[q] = true;
                        kb_heap_push(&queues, j->queue);
                }
                kb_heap_push(&starving[q], j);
        }

        kb__evictor_init(&e, s, "reclaim");
        e.vote = kb_reclaimable;
        e.eligible = other_queue;
        while (!kb_heap_empty(&queues)) {
                struct kb_queue_info *q = kb_heap_pop(&queues);
                if (kb_overused(s, q) || kb_heap_empty(&starving[q->index]))
                        continue;
                reclaim_job(&e, q, kb_heap_pop(&starving[q->index]));
                kb_heap_push(&queues, q);
        }
        kb__evictor_release(&e);

        for (size_t q = 0; q < nqueues; q++)
                kb_heap_release(&starving[q]);
        kb_heap_release(&queues);
        free(starving);
        free(queued);
}
