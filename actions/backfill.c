/*
 * backfill: places BestEffort tasks (no requests) of admitted jobs, which
 * allocate leaves alone, as Volcano master's actions/backfill: queues in
 * queue order, each queue's jobs in job order, each job's pending
 * best-effort tasks in task order (pickUpPendingTasks).  Such a task needs
 * only the predicates and a free pod slot; it goes to the best-scored
 * feasible node.  Each job's placements commit together when the job is
 * ready — pending best-effort tasks count towards readiness, as in
 * Volcano, so in practice they commit as they fit — else they are undone.
 * Pending groups still waiting for enqueue and invalid jobs are skipped.
 *
 * Example: queues a (share 0.1) and b (share 0.5); b's job was created
 * first.  Queue a comes first, so a's best-effort pods take the free pod
 * slots before b's.
 */
#include <stdlib.h>

#include "framework/framework.h"

static void backfill_execute(struct kb_session *s);

const struct kb_action kb_action_backfill = {
    .name = "backfill",
    .execute = backfill_execute,
};

static bool has_best_effort(const struct kb_job *j)
{
        for (uint32_t k = 0; k < j->ntasks; k++)
                if (j->tasks[k]->status == KB_TASK_PENDING && j->tasks[k]->best_effort)
                        return true;
        return false;
}

static void backfill_job(struct kb_session *s, struct kb_job *j)
{
        struct kb_heap tasks;
        struct kb_statement *st = NULL;
        kb_heap_init_tasks(&tasks, s);
        for (uint32_t k = 0; k < j->ntasks; k++)
                if (j->tasks[k]->status == KB_TASK_PENDING && j->tasks[k]->best_effort)
                        kb_heap_push(&tasks, j->tasks[k]);
        while (!kb_heap_empty(&tasks)) {
                struct kb_task *t = kb_heap_pop(&tasks);
                const char *why = NULL;
                struct kb_node_info *n = kb_select_node(s, t, &why);
                if (!n) {
                        kb_task_fit_failed(t, why);
                        continue;
                }
                if (!st)
                        st = kb_statement_new(s);
                kb_statement_allocate(st, t, n);
        }
        kb_heap_release(&tasks);
        if (!st)
                return;
        if (kb_job_ready(s, j))
                kb_statement_commit(st);
        else
                kb_statement_discard(st);
}

static void backfill_execute(struct kb_session *s)
{
        size_t njobs, nqueues;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        kb_session_queues(s, &nqueues);
        struct kb_heap *queue_jobs = kb_xcalloc(nqueues + 1, sizeof(*queue_jobs));
        struct kb_heap queues;

        kb_heap_init_queues(&queues, s);
        for (size_t q = 0; q < nqueues; q++)
                kb_heap_init_jobs(&queue_jobs[q], s);
        for (size_t i = 0; i < njobs; i++) {
                struct kb_job *j = jobs[i];
                if (!kb_job_admit(s, j) || kb_job_valid(s, j, NULL) || !has_best_effort(j))
                        continue;
                if (kb_heap_empty(&queue_jobs[j->queue->index]))
                        kb_heap_push(&queues, j->queue);
                kb_heap_push(&queue_jobs[j->queue->index], j);
        }
        while (!kb_heap_empty(&queues)) {
                struct kb_queue_info *q = kb_heap_pop(&queues);
                struct kb_heap *h = &queue_jobs[q->index];
                while (!kb_heap_empty(h))
                        backfill_job(s, kb_heap_pop(h));
        }
        for (size_t q = 0; q < nqueues; q++)
                kb_heap_release(&queue_jobs[q]);
        kb_heap_release(&queues);
        free(queue_jobs);
}
