/*
 * gang: all-or-nothing for PodGroups, as Volcano's plugins/gang.
 *
 *   jobValid     a group needs at least minMember valid tasks (pending,
 *                pipelined, allocated, bound, running or succeeded), and,
 *                per role, its minTaskMember;
 *   jobReady     ready tasks (allocated, binding, bound, running,
 *                succeeded) plus pending best-effort ones reach minMember,
 *                and every role its minTaskMember;
 *   jobPipelined the same counting pipelined tasks too (permit or reject);
 *   jobOrder     jobs not yet ready go before ready ones, and among those a
 *                gang partly bound (some tasks on nodes) goes first, so that
 *                it completes before others take the room it needs (kbatch;
 *                Volcano orders only by readiness);
 *   subgroupOrder a gang's sub-groups not yet ready go first (Volcano's
 *                SubJobOrderFn);
 *   jobStarving  ready plus pipelined tasks below minMember;
 *   victims      (preempt/reclaim) a task while its job keeps more than
 *                minMember ready tasks, counted down in the candidates'
 *                order (Volcano); and every running task of a job offered
 *                whole (kbatch: a gang evicted whole leaves nothing behind
 *                holding room, where one cut below minMember would);
 *   close        for every job not ready, the Unschedulable condition
 *                naming what it waits for, with the numbers, and its
 *                place among the waiting jobs of its queue ("its minMember
 *                16 pods do not all fit the free room: 0/17 nodes are
 *                available: 17 Insufficient cpu.; 2nd of 5 waiting in
 *                queue q", reason NotEnoughResources;
 *                README "Why is my job pending" lists them all); Scheduled
 *                for a ready one.  Volcano's message is "N/M tasks in gang
 *                unschedulable: <why>", with N counted against minMember
 *                and M the job's tasks (so "3/2" happens).
 *
 * minTaskMember is checked only when minMember covers the sum of the
 * per-role minimums (Volcano: when MinAvailable >= TaskMinAvailableTotal).
 * With spec.subGroupPolicy, jobValid, jobReady and jobPipelined also need
 * every entry's minSubGroups of its sub-groups there, ready or pipelined
 * (Volcano's CheckSubJobValid, CheckSubJobReady, CheckSubJobPipelined;
 * pkg/framework/subgroups.c); jobOrder, jobStarving and close count
 * minMember as Volcano's IsReady / IsStarving do.
 */
#include <stdio.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

static void *gang_open(struct kb_session *s, const struct kb_value *args);

const struct kb_plugin kb_plugin_gang = {
    .name = "gang",
    .open = gang_open,
    .close = kb__gang_close, /* gang_close.c: the conditions */
};

struct gang {
        struct kb_session *s;
        /* Per job index, built on first use: its sub-groups. */
        struct kb_subgroup_layout **layout;
        /* Per job index, zero between calls: candidates offered, victims
         * taken. */
        uint32_t *offered, *taken;
};

static inline bool has_subgroups(const struct kb_job *j)
{
        return j->pg && j->pg->nsubgroups;
}

/* Whether j's sub-groups meet every policy's minSubGroups (Volcano's
 * CheckSubJobValid, CheckSubJobReady, CheckSubJobPipelined); the unmet
 * policy's index in *unmet and its count in *have otherwise. */
static bool subgroups_ok(struct gang *g, const struct kb_job *j, enum kb_subgroup_count which,
                         long *unmet, int32_t *have)
{
        if (!g->layout[j->index])
                g->layout[j->index] = kb_subgroup_layout(kb_session_pool(g->s), j);
        long p = kb_subgroups_unmet(j, g->layout[j->index], which, have);
        if (unmet)
                *unmet = p;
        return p < 0;
}

static const char *gang_valid(void *arg, const struct kb_job *j, const char **reason)
{
        struct gang *g = arg;
        *reason = KB_WHY_TASKS;
        if (!kb__gang_roles_ok(j, KB__COUNT_VALID)) {
                *reason = KB_WHY_ROLE_TASKS;
                return "Not enough valid pods of each task for gang-scheduling";
        }
        /* counts(COUNT_VALID) over the tasks, from the job's counters. */
        uint32_t valid = j->count[KB_TASK_PENDING] + j->count[KB_TASK_PIPELINED] +
                         j->count[KB_TASK_ALLOCATED] + j->count[KB_TASK_BINDING] +
                         j->count[KB_TASK_BOUND] + j->count[KB_TASK_RUNNING] +
                         j->count[KB_TASK_SUCCEEDED];
        if (valid < (uint32_t)j->min_available) {
                /* Volcano's words and numbers, and why when nothing exists. */
                char why[160];
                snprintf(why, sizeof(why),
                         "Not enough valid tasks for gang-scheduling, valid: %u, min: %d%s", valid,
                         (int)j->min_available, j->ntasks == 0 ? " (no pods yet)" : "");
                return kb_session_intern(g->s, why);
        }
        return NULL;
}

static bool gang_ready(void *arg, const struct kb_job *j)
{
        (void)arg;
        return kb__gang_roles_ok(j, KB__COUNT_READY) && kb__gang_is_ready(j);
}

static int gang_pipelined(void *arg, const struct kb_job *j)
{
        (void)arg;
        return kb__gang_roles_ok(j, KB__COUNT_PIPELINED) && kb__gang_is_pipelined(j) ? 1 : -1;
}

/* The same with sub-groups, registered instead when a job of the session
 * has any (so that the others pay nothing).  Volcano's validJobFn checks
 * the roles, then CheckSubJobValid, then the count. */
static const char *gang_valid_sg(void *arg, const struct kb_job *j, const char **reason)
{
        struct gang *g = arg;
        long p;
        int32_t have = 0;
        if (has_subgroups(j) && kb__gang_roles_ok(j, KB__COUNT_VALID) &&
            !subgroups_ok(g, j, KB_SUBGROUPS_VALID, &p, &have)) {
                /* Volcano's words (gang.go, validJobFn), then which policy. */
                char why[400];
                *reason = KB_WHY_ROLE_TASKS;
                snprintf(why, sizeof(why),
                         "Not enough valid subGroups of each task for gang-scheduling: "
                         "spec.subGroupPolicy[%ld] (%s): minSubGroups is %d but the gang's pods "
                         "form %d sub-group(s) of it",
                         p, j->pg->subgroups[p].name, (int)j->pg->subgroups[p].min_groups,
                         (int)have);
                return kb_session_intern(g->s, why);
        }
        return gang_valid(arg, j, reason);
}

static bool gang_ready_sg(void *arg, const struct kb_job *j)
{
        return gang_ready(arg, j) &&
               (!has_subgroups(j) || subgroups_ok(arg, j, KB_SUBGROUPS_READY, NULL, NULL));
}

static int gang_pipelined_sg(void *arg, const struct kb_job *j)
{
        int v = gang_pipelined(arg, j);
        return v > 0 && has_subgroups(j) &&
                       !subgroups_ok(arg, j, KB_SUBGROUPS_PIPELINED, NULL, NULL)
                   ? -1
                   : v;
}

/* 0 a partly bound gang, 1 another job not ready, 2 a ready job. */
static int rank(const struct kb_job *j)
{
        if (kb__gang_is_ready(j))
                return 2;
        return kb_job_placed_count(j) > 0 ? 0 : 1;
}

static int gang_job_order(void *arg, const struct kb_job *l, const struct kb_job *r)
{
        (void)arg;
        int lr = rank(l), rr = rank(r);
        return lr == rr ? 0 : lr < rr ? -1 : 1;
}

/* Volcano's gang SubJobOrderFn: sub-groups not yet ready go first. */
static int gang_subgroup_order(void *arg, const struct kb_subgroup_info *l,
                               const struct kb_subgroup_info *r)
{
        (void)arg;
        return l->ready == r->ready ? 0 : l->ready ? 1 : -1;
}

static bool gang_starving(void *arg, const struct kb_job *j)
{
        (void)arg;
        return kb_job_waiting_count(j) + kb_job_ready_count(j) < (uint32_t)j->min_available;
}

/* Victims: see the banner.  O(n) with the per-job scratch counters. */
static int gang_victims(void *arg, const struct kb_task *preemptor, struct kb_task *const *cand,
                        size_t n, struct kb_task **out)
{
        struct gang *g = arg;
        int k = 0;
        for (size_t i = 0; i < n; i++)
                if (cand[i]->job)
                        g->offered[cand[i]->job->index]++;
        for (size_t i = 0; i < n; i++) {
                const struct kb_job *j = cand[i]->job;
                if (!j)
                        continue; /* another scheduler's pod: Volcano skips it */
                uint32_t *taken = &g->taken[j->index];
                /* Whole: every placed task of another job is offered. */
                bool whole = j != preemptor->job && g->offered[j->index] >= kb_job_placed_count(j);
                if (whole || kb_job_ready_count(j) - *taken > (uint32_t)j->min_available) {
                        out[k++] = cand[i];
                        (*taken)++;
                }
        }
        for (size_t i = 0; i < n; i++)
                if (cand[i]->job)
                        g->offered[cand[i]->job->index] = g->taken[cand[i]->job->index] = 0;
        return k;
}

static void *gang_open(struct kb_session *s, const struct kb_value *args)
{
        (void)args;
        struct gang *g = kb_pool_alloc(kb_session_pool(s), sizeof(*g));
        size_t njobs;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        g->s = s;
        g->offered = kb_pool_alloc(kb_session_pool(s), (njobs + 1) * sizeof(*g->offered));
        g->taken = kb_pool_alloc(kb_session_pool(s), (njobs + 1) * sizeof(*g->taken));
        g->layout = kb_pool_alloc(kb_session_pool(s), (njobs + 1) * sizeof(*g->layout));
        bool sg = false;
        for (size_t i = 0; i < njobs && !sg; i++)
                sg = has_subgroups(jobs[i]);
        kb_on_job_valid(s, sg ? gang_valid_sg : gang_valid, g);
        kb_on_job_ready(s, sg ? gang_ready_sg : gang_ready, g);
        kb_on_job_pipelined(s, sg ? gang_pipelined_sg : gang_pipelined, g);
        kb_on_job_order(s, gang_job_order, g);
        kb_on_subgroup_order(s, gang_subgroup_order, g);
        kb_on_job_starving(s, gang_starving, g);
        kb_on_preemptable(s, gang_victims, g, 0);
        kb_on_reclaimable(s, gang_victims, g);
        return g;
}
