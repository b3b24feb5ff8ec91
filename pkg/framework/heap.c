/* A binary min-heap of pointers under a caller's comparison, and heaps in
 * the session's job, queue and task orders. */
#include <stdlib.h>

#include "framework/framework.h"

void kb_heap_init(struct kb_heap *h, kb_heap_cmp_fn cmp, void *ctx)
{
        h->v = NULL;
        h->n = h->cap = 0;
        h->cmp = cmp;
        h->ctx = ctx;
}

void kb_heap_release(struct kb_heap *h)
{
        free(h->v);
        h->v = NULL;
        h->n = h->cap = 0;
}

void kb_heap_push(struct kb_heap *h, void *item)
{
        KB_PUSH(h->v, h->n, h->cap, item);
        size_t i = h->n - 1;
        while (i > 0) {
                size_t parent = (i - 1) / 2;
                if (h->cmp(h->ctx, h->v[i], h->v[parent]) >= 0)
                        break;
                void *tmp = h->v[i];
                h->v[i] = h->v[parent];
                h->v[parent] = tmp;
                i = parent;
        }
}

void *kb_heap_pop(struct kb_heap *h)
{
        if (h->n == 0)
                return NULL;
        void *top = h->v[0];
        h->v[0] = h->v[--h->n];
        size_t i = 0;
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;
                if (l < h->n && h->cmp(h->ctx, h->v[l], h->v[m]) < 0)
                        m = l;
                if (r < h->n && h->cmp(h->ctx, h->v[r], h->v[m]) < 0)
                        m = r;
                if (m == i)
                        break;
                void *tmp = h->v[i];
                h->v[i] = h->v[m];
                h->v[m] = tmp;
                i = m;
        }
        return top;
}

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
