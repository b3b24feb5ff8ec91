/* Heaps (kb_heap, pkg/base) in the session's job, queue and task orders. */

#include "framework/framework.h"

/* ---- heaps in the session's orders ------------------------------------------ */

static int job_cmp(void *s, const void *a, const void *b)
{
        return kb_job_order(s, a, b);
}

static int queue_cmp(void *s, const void *a, const void *b)
{
        return kb_queue_order(s, a, b);
}

static int task_cmp(void *s, const void *a, const void *b)
{
        return kb_task_order(s, a, b);
}

void kb_heap_init_jobs(struct kb_heap *h, struct kb_session *s)
{
        kb_heap_init(h, job_cmp, s);
}

void kb_heap_init_queues(struct kb_heap *h, struct kb_session *s)
{
        kb_heap_init(h, queue_cmp, s);
}

void kb_heap_init_tasks(struct kb_heap *h, struct kb_session *s)
{
        kb_heap_init(h, task_cmp, s);
}
