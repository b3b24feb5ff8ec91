/*
 * Placing a task with evictions: the algorithm preempt and reclaim share.
 *
 * Volcano's preempt walks nodes in score order and evicts on the first node
 * where the plugins' victims make room; its reclaim walks nodes in list
 * order.  kbatch looks for the cheapest way instead, in three steps:
 *
 *   1. No eviction: room free now, or being freed (future idle), as
 *      allocate would choose it.  The task is pipelined there.
 *   2. Parts of gangs, per node: the node's eligible tasks, cheapest first
 *      (Volcano's victim order: what the session would place last — the
 *      lowest job priority, the lowest task priority, the most recently
 *      created — goes first), go to the plugins' vote (priority, gang,
 *      conformance, drf, proportion...); the shortest prefix of the victims
 *      that makes the task fit the node's future idle room (and, for
 *      preempt, its queue take it: a queue at its capability needs room
 *      freed in the queue too) is what that node costs.  The node with the
 *      fewest victims wins, then the lowest victim priority, then the most
 *      recent victims, then node order.  The gang plugin keeps every victim
 *      job at minMember here.
 *      Topology-aware preemption (e->topology) changes this step as
 *      kube-scheduler's DefaultPreemption: a node whose filters fail now is
 *      a candidate when they pass with its candidates gone; the prefix must
 *      also pass every filter on the node so simulated (the victims evicted
 *      in the statement, then rolled back); victims it does not need after
 *      all are given back, highest priority first; and nodes rank by
 *      budgets broken, highest victim pod priority, sum of priorities,
 *      count, latest start.
 *   3. Whole gangs: victim jobs, cheapest first (priority, size, age), each
 *      offered whole to the vote (the gang plugin lets a job go whole); the
 *      first one the plugins give up entirely and whose room lets the task
 *      fit is evicted, and the task placed as in step 1.
 *
 * Every task is pipelined, never allocated: the job's statement is kept
 * only when the whole gang is pipelined (the caller's rule), and its tasks
 * bind in a later session, once the victims are gone.
 *
 * Example: two 4-cpu nodes full of 1-cpu pods: n1 holds four of gang L1
 * (priority 1, minMember 4), n2 two of L2 (priority 1, minMember 1) and two
 * of L3 (priority 5, minMember 1).  A 2-cpu task of priority 10: step 1
 * finds no room; step 2: on n1 the gang plugin refuses to cut L1 below 4, on
 * n2 the cheapest prefix is L2's two pods (priority 1 before L3's 5): n2,
 * two victims.  Had L2 been minMember 2, step 3 would evict L2 whole.
 *
 * Memos per node remember that a node gave nothing — for a job's placement
 * class, or for any preemptor of a queue because no candidate there could
 * go without cutting a gang — while the node has not changed and nothing
 * was undone (kb__evictor_forget), so that a gang of 32 does not look at
 * 5,000 full nodes again for every task, nor every gang after it.
 *
 * The files: evict.c the evictor and the entry (kb__evict_place), parts.c
 * step 2, whole.c step 3, victims.c the rules (who may evict, who may go,
 * in which order) and what every step places with (step 1 among them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/actions-int.h"

void kb__evictor_init(struct kb__evictor *e, struct kb_session *s, const char *action)
{
        size_t nn;
        memset(e, 0, sizeof(*e));
        e->s = s;
        e->action = action;
        size_t njobs, ntasks = 0;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        kb_session_nodes(s, &nn);
        e->memo = kb_xcalloc(nn + 1, sizeof(*e->memo));
        e->own = kb_xcalloc(nn + 1, sizeof(*e->own));
        for (size_t i = 0; i < njobs; i++)
                for (uint32_t k = 0; k < jobs[i]->ntasks; k++)
                        if (jobs[i]->tasks[k]->index >= ntasks)
                                ntasks = jobs[i]->tasks[k]->index + 1;
        e->picked = kb_xcalloc(ntasks + 1, sizeof(*e->picked));
        e->taken = kb_xcalloc(njobs + 1, sizeof(*e->taken));
        e->skip = kb_xcalloc(njobs + 1, sizeof(*e->skip));
        e->pdb_left = kb_xcalloc(kb_session_snapshot(s)->npdbs + 1, sizeof(*e->pdb_left));
}

void kb__evictor_release(struct kb__evictor *e)
{
        free(e->memo);
        free(e->own);
        free(e->whole);
        free(e->bounds);
        free(e->picked);
        free(e->taken);
        free(e->skip);
        free(e->pdb_left);
        free(e->pick);
        free(e->cand);
        free(e->out);
        free(e->best);
        memset(e, 0, sizeof(*e));
}

/* Marks the nodes where t's job has tasks (the per-job memo's key). */
static void mark_own(struct kb__evictor *e, const struct kb_task *t)
{
        if (!e->per_job)
                return;
        if (++e->own_stamp == 0) {
                size_t nn;
                kb_session_nodes(e->s, &nn);
                memset(e->own, 0, (nn + 1) * sizeof(*e->own));
                e->own_stamp = 1;
        }
        for (uint32_t i = 0; i < t->job->ntasks; i++)
                if (t->job->tasks[i]->node >= 0)
                        e->own[t->job->tasks[i]->node] = e->own_stamp;
}

bool kb__evict_place(struct kb__evictor *e, struct kb_task *t)
{
        /* Asked once here: free room alone never does for a short queue. */
        e->queue_short = !kb__evict_queue_takes(e, t);
        mark_own(e, t);
        return (!e->queue_short && kb__evict_place_free(e, t, true)) ||
               kb__evict_place_parts(e, t) || kb__evict_place_whole(e, t);
}
