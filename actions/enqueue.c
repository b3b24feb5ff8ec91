/*
 * enqueue: admits Pending PodGroups (phase Inqueue) when their queue and the
 * plugins allow, as Volcano's actions/enqueue: queues are visited in queue
 * order, one job at a time, each queue put back until its pending jobs are
 * done, so admission interleaves across queues.  The enqueueable votes decide
 * (proportion: queue state and capability; overcommit: cluster room); once
 * every vote admitted a group, the plugins hear of it (jobEnqueued) and
 * charge what it reserves, so a group that one plugin rejects reserves
 * nothing anywhere.
 *
 * Volcano admits a group without minResources without asking the plugins;
 * kbatch asks them too, so that a closed queue admits nothing new even
 * where no admission webhook guards it (the plugins permit a group without
 * minResources on every other ground).
 *
 * A group the Inqueue timeout sent back to Pending (pkg/framework/
 * inqueue.c) is not admitted again until its backoff ends (kbatch).
 * Arguments: inqueueTimeout (10m), inqueueBackoff (1m).
 */
#include <stdio.h>
#include <stdlib.h>

#include "framework/framework.h"

static void enqueue_execute(struct kb_session *s);

static const char *const arguments[] = {"inqueueTimeout", "inqueueBackoff", NULL};

const struct kb_action kb_action_enqueue = {
    .name = "enqueue",
    .execute = enqueue_execute,
    .arguments = arguments,
    .check = kb_inqueue_check,
};

/* Why j, sent back by its Inqueue timeout, waits for its backoff. */
static void explain_backoff(struct kb_session *s, const struct kb_job *j)
{
        char left[48], msg[300];
        double now = kb_session_now(s);
        kb_duration_format((int64_t)((j->inqueue_backoff - now) * 1e9), left, sizeof(left));
        if (j->inqueue_expired) {
                char t[48];
                kb_duration_format((int64_t)(j->inqueue_expired * 1e9), t, sizeof(t));
                snprintf(msg, sizeof(msg),
                         "not ready within %s of its admission to queue %s: sent back to Pending, "
                         "its reservation freed; admitted again in %s at the soonest",
                         t, j->queue->name, left);
        } else {
                snprintf(msg, sizeof(msg),
                         "sent back to Pending by its Inqueue timeout; admitted again in %s at "
                         "the soonest",
                         left);
        }
        kb_job_explain(s, j, KB_WHY_BACKOFF, msg);
}

static void enqueue_execute(struct kb_session *s)
{
        size_t njobs, nqueues;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        kb_session_queues(s, &nqueues);
        struct kb_heap queues;
        struct kb_heap *pending = kb_xcalloc(nqueues + 1, sizeof(*pending));
        bool *queued = kb_xcalloc(nqueues + 1, sizeof(*queued));

        kb_heap_init_queues(&queues, s);
        for (size_t i = 0; i < nqueues; i++)
                kb_heap_init_jobs(&pending[i], s);
        for (size_t i = 0; i < njobs; i++) {
                struct kb_job *j = jobs[i];
                if (!j->queue)
                        continue;
                if (!queued[j->queue->index]) {
                        queued[j->queue->index] = true;
                        kb_heap_push(&queues, j->queue);
                }
                if (j->phase != KB_PG_PENDING || j->invalid)
                        continue;
                if (j->inqueue_backoff && j->inqueue_backoff > kb_session_now(s))
                        explain_backoff(s, j);
                else
                        kb_heap_push(&pending[j->queue->index], j);
        }
        while (!kb_heap_empty(&queues)) {
                struct kb_queue_info *q = kb_heap_pop(&queues);
                struct kb_heap *h = &pending[q->index];
                if (kb_heap_empty(h))
                        continue;
                struct kb_job *j = kb_heap_pop(h);
                if (kb_job_enqueueable(s, j)) {
                        kb_job_enqueued(s, j);
                        j->phase = KB_PG_INQUEUE;
                } else {
                        kb_job_explain(s, j, KB_WHY_RESOURCES, "not admitted to its queue");
                }
                kb_heap_push(&queues, q);
        }
        for (size_t i = 0; i < nqueues; i++)
                kb_heap_release(&pending[i]);
        kb_heap_release(&queues);
        free(pending);
        free(queued);
}
