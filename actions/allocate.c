/*
 * allocate: places the pending tasks of admitted jobs, gang by gang, as
 * Volcano's actions/allocate:
 *
 *   namespaces in namespace order; in a namespace, the queue that comes
 *   first in queue order among those not overused; in that queue, the job
 *   that comes first in job order; its pending tasks (BestEffort ones are
 *   left to backfill) in task order, each one:
 *     - skipped when the queue cannot take it (allocatable),
 *     - placed on the best feasible node (kb_select_node): Allocated when
 *       it fits the node's idle resources, else Pipelined on future-idle
 *       ones,
 *     - and the job stops at its first task that fits nowhere.
 *   When the job becomes ready with tasks left, it goes back into its queue
 *   so that other jobs get a turn (shares are re-ordered) before it
 *   continues.
 *   The job's statement commits when the job is ready (all its binds leave
 *   together), is kept when the job is pipelined, else is discarded: no
 *   partial gang leaves the session.
 *
 * Example: a gang of 3 (minMember 3) and two nodes with room for 2 tasks:
 * tasks 1 and 2 are allocated, task 3 fits nowhere, the job is neither
 * ready (2 < 3) nor pipelined, so both allocations are undone and the
 * nodes are free for the next job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"

static void allocate_execute(struct kb_session *s);

const struct kb_action kb_action_allocate = {
    .name = "allocate",
    .execute = allocate_execute,
};

struct ns_entry {
        const char *name;
        struct kb_heap *jobs; /* per queue index, heaps of jobs */
        bool *removed;        /* per queue index: dropped as overused */
};

struct ctx {
        struct kb_session *s;
        struct ns_entry *ns;
        size_t nns, capns;
        size_t nqueues;
        struct kb_heap **tasks; /* per job index, created on first visit */
};

static int ns_cmp(void *c, const void *a, const void *b)
{
        const struct ctx *x = c;
        return kb_namespace_order(x->s, ((const struct ns_entry *)a)->name,
                                  ((const struct ns_entry *)b)->name);
}

static int job_cmp(void *s, const void *a, const void *b)
{
        return kb_job_order(s, a, b);
}

static int task_cmp(void *s, const void *a, const void *b)
{
        return kb_task_order(s, a, b);
}

static struct ns_entry *ns_of(struct ctx *c, const char *name)
{
        for (size_t i = 0; i < c->nns; i++)
                if (strcmp(c->ns[i].name, name) == 0)
                        return &c->ns[i];
        struct ns_entry e = {name, kb_xcalloc(c->nqueues + 1, sizeof(struct kb_heap)),
                             kb_xcalloc(c->nqueues + 1, sizeof(bool))};
        for (size_t q = 0; q < c->nqueues; q++)
                kb_heap_init(&e.jobs[q], job_cmp, c->s);
        KB_PUSH(c->ns, c->nns, c->capns, e);
        return &c->ns[c->nns - 1];
}

static bool has_pending_work(const struct kb_job *j)
{
        for (uint32_t i = 0; i < j->ntasks; i++)
                if (j->tasks[i]->status == KB_TASK_PENDING && !j->tasks[i]->best_effort)
                        return true;
        return false;
}

static struct kb_heap *pending_tasks(struct ctx *c, struct kb_job *j)
{
        if (!c->tasks[j->index]) {
                struct kb_heap *h = kb_xmalloc(sizeof(*h));
                kb_heap_init(h, task_cmp, c->s);
                for (uint32_t i = 0; i < j->ntasks; i++) {
                        struct kb_task *t = j->tasks[i];
                        if (t->status == KB_TASK_PENDING && !t->best_effort)
                                kb_heap_push(h, t);
                }
                c->tasks[j->index] = h;
        }
        return c->tasks[j->index];
}

/* One turn of job j: returns after the job is ready with tasks left (it
 * goes back to its queue), or its tasks ran out, or one fit nowhere. */
static void allocate_job(struct ctx *c, struct kb_queue_info *q, struct kb_job *j,
                         struct kb_heap *jobs)
{
        struct kb_session *s = c->s;
        struct kb_heap *tasks = pending_tasks(c, j);
        struct kb_statement *st = kb_statement_new(s);

        j->touched = true;
        while (!kb_heap_empty(tasks)) {
                struct kb_task *t = kb_heap_pop(tasks);
                const char *why = NULL;
                struct kb_node_info *n;
                if (!kb_allocatable(s, q, t)) {
                        /* Skipped for the queue's quota.  Say why: if no node
                         * could take the task either, that is the better
                         * answer ("0/4 nodes are available: ..."). */
                        if (!j->fit_error) {
                                n = kb_select_node(s, t, &why);
                                char msg[300];
                                snprintf(msg, sizeof(msg),
                                         "queue %s has no room left for the gang within its "
                                         "deserved resources",
                                         q->name);
                                j->fit_error = n ? kb_session_intern(s, msg) : why;
                        }
                        continue;
                }
                n = kb_select_node(s, t, &why);
                if (!n) {
                        t->fit_error = why;
                        if (!j->fit_error)
                                j->fit_error = why;
                        break;
                }
                if (kb_res_le(&t->resreq, &n->idle))
                        kb_statement_allocate(st, t, n);
                else
                        kb_statement_pipeline(st, t, n);
                if (kb_job_ready(s, j) && !kb_heap_empty(tasks)) {
                        kb_heap_push(jobs, j);
                        break;
                }
        }
        if (kb_job_ready(s, j))
                kb_statement_commit(st);
        else if (!kb_job_pipelined(s, j))
                kb_statement_discard(st);
}

static void allocate_execute(struct kb_session *s)
{
        size_t njobs;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        struct ctx c = {.s = s};
        struct kb_queue_info *queues = kb_session_queues(s, &c.nqueues);
        bool gate = kb_conf_has_action(kb_session_conf(s), "enqueue");
        struct kb_heap namespaces;

        c.tasks = kb_xcalloc(njobs + 1, sizeof(*c.tasks));
        for (size_t i = 0; i < njobs; i++) {
                struct kb_job *j = jobs[i];
                /* Without enqueue in the conf, Pending groups count as Inqueue. */
                if (gate && j->phase == KB_PG_PENDING)
                        continue;
                if (!j->queue || kb_job_valid(s, j) || !has_pending_work(j))
                        continue;
                struct ns_entry *ns = ns_of(&c, j->namespace);
                kb_heap_push(&ns->jobs[j->queue->index], j);
        }
        kb_heap_init(&namespaces, ns_cmp, &c);
        for (size_t i = 0; i < c.nns; i++)
                kb_heap_push(&namespaces, &c.ns[i]);

        while (!kb_heap_empty(&namespaces)) {
                struct ns_entry *ns = kb_heap_pop(&namespaces);
                struct kb_queue_info *best = NULL;
                for (size_t qi = 0; qi < c.nqueues; qi++) {
                        if (ns->removed[qi] || kb_heap_empty(&ns->jobs[qi]))
                                continue;
                        if (kb_overused(s, &queues[qi])) {
                                ns->removed[qi] = true;
                                continue;
                        }
                        if (!best || kb_queue_order(s, &queues[qi], best) < 0)
                                best = &queues[qi];
                }
                if (!best)
                        continue; /* nothing left in this namespace */
                struct kb_heap *h = &ns->jobs[best->index];
                allocate_job(&c, best, kb_heap_pop(h), h);
                kb_heap_push(&namespaces, ns);
        }

        for (size_t i = 0; i < c.nns; i++) {
                for (size_t q = 0; q < c.nqueues; q++)
                        kb_heap_release(&c.ns[i].jobs[q]);
                free(c.ns[i].jobs);
                free(c.ns[i].removed);
        }
        free(c.ns);
        for (size_t i = 0; i < njobs; i++) {
                if (c.tasks[i])
                        kb_heap_release(c.tasks[i]);
                free(c.tasks[i]);
        }
        free(c.tasks);
        kb_heap_release(&namespaces);
}
