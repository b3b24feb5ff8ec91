/*
 * Step 3 of placing a task with evictions (evict.c's banner): a whole
 * victim gang.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/actions-int.h"

#ifdef KB_TESTING
unsigned long kb__evict_whole_sorts;
#endif

/* Step 3: a whole victim gang.  Jobs cheapest first; each one the plugins
 * give up entirely and that frees room t fits is tried. */
struct kb__whole {
        struct kb_job *job;
        uint32_t ntasks;
};

static int whole_cmp(const void *a, const void *b)
{
        const struct kb__whole *x = a, *y = b;
        if (x->job->priority != y->job->priority)
                return x->job->priority < y->job->priority ? -1 : 1;
        if (x->ntasks != y->ntasks)
                return x->ntasks < y->ntasks ? -1 : 1;
        if (x->job->creation != y->job->creation)
                return x->job->creation > y->job->creation ? -1 : 1;
        int c = strcmp(x->job->name, y->job->name);
        if (c)
                return c;
        /* Same name in two namespaces: the session's order, as a stable
         * sort of the session's jobs gave before the order was kept. */
        return x->job->index < y->job->index ? -1 : x->job->index > y->job->index;
}

/* V's victim tasks into e->cand; 0 when one of its tasks on a node may not
 * be evicted for t by the action's rule, or none frees room t could use. */
static size_t whole_tasks(struct kb__evictor *e, const struct kb_task *t, struct kb_job *v)
{
        size_t k = 0;
        bool useful = false;
        kb__evictor_reserve(e, v->ntasks + 1);
        for (uint32_t i = 0; i < v->ntasks; i++) {
                struct kb_task *x = v->tasks[i];
                if (x->node < 0 || x->status == KB_TASK_RELEASING || x->status == KB_TASK_PIPELINED)
                        continue;
                if (!e->eligible(t, x))
                        return 0;
                e->cand[k++] = x;
        }
        size_t nn;
        struct kb_node_info *nodes = kb_session_nodes(e->s, &nn);
        for (size_t i = 0; i < k && !useful; i++) {
                struct kb_node_info *n = &nodes[e->cand[i]->node];
                if (kb_predicate(e->s, t, n))
                        continue;
                struct kb_res avail;
                kb_node_future_idle(n, &avail);
                for (size_t j = 0; j < k; j++)
                        if (e->cand[j]->node == (int32_t)n->index)
                                kb_res_add(&avail, e->cand[j]->resreq);
                useful = kb__fits(t->resreq, &avail);
        }
        return useful ? k : 0;
}

/*
 * Every job with placed tasks in e->whole, cheapest first.  The order is
 * kept between calls: only the placed counts change (evictions), so the
 * counts are refreshed and the order checked in one pass, and the jobs are
 * sorted again only when it broke.  Sorting all 5,100 jobs of W5 for every
 * preemptor gang was most of what place_whole cost.
 */
static void whole_order(struct kb__evictor *e)
{
        size_t njobs;
        struct kb_job **jobs = kb_session_jobs(e->s, &njobs);
        if (!e->whole) {
                e->whole = kb_xmalloc((njobs + 1) * sizeof(*e->whole));
                for (size_t i = 0; i < njobs; i++)
                        e->whole[i] = (struct kb__whole){jobs[i], kb_job_placed_count(jobs[i])};
                e->nwhole = njobs;
                COUNT(kb__evict_whole_sorts);
                qsort(e->whole, e->nwhole, sizeof(*e->whole), whole_cmp);
                return;
        }
        bool sorted = true;
        const struct kb__whole *prev = NULL;
        for (size_t i = 0; i < e->nwhole; i++) {
                struct kb__whole *w = &e->whole[i];
                w->ntasks = kb_job_placed_count(w->job);
                if (!w->ntasks)
                        continue;
                if (prev && whole_cmp(prev, w) > 0)
                        sorted = false;
                prev = w;
        }
        if (!sorted) {
                COUNT(kb__evict_whole_sorts);
                qsort(e->whole, e->nwhole, sizeof(*e->whole), whole_cmp);
        }
}

bool kb__evict_place_whole(struct kb__evictor *e, struct kb_task *t)
{
        whole_order(e);
        bool placed = false;
        for (size_t i = 0; i < e->nwhole && !placed; i++) {
                struct kb_job *v = e->whole[i].job;
                if (v == t->job || !e->whole[i].ntasks)
                        continue;
                size_t k = whole_tasks(e, t, v);
                if (!k || e->vote(e->s, t, e->cand, k, e->out) != k)
                        continue;
                size_t mark = kb_statement_mark(e->st);
                kb__evict_all(e, t, e->out, k);
                if (kb__evict_place_free(e, t, false)) {
                        placed = true;
                } else {
                        kb_statement_rollback(e->st, mark);
                        kb__evictor_forget(e);
                        t->job->evictions -= (uint32_t)k;
                }
        }
        return placed;
}
