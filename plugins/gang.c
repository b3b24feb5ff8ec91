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
 */
#include <stdio.h>
#include <string.h>

#include "framework/framework.h"

static void *gang_open(struct kb_session *s, const struct kb_value *args);
static void gang_close(struct kb_session *s, void *state);

const struct kb_plugin kb_plugin_gang = {
    .name = "gang",
    .open = gang_open,
    .close = gang_close,
};

enum role_count { COUNT_VALID, COUNT_READY, COUNT_PIPELINED };

/* Volcano's per-role counts (JobInfo.CheckTaskValid, CheckTaskReady and
 * CheckTaskPipelined): a pending best-effort task counts as ready, since it
 * needs no room. */
static bool counts(enum role_count which, const struct kb_task *t)
{
        enum kb_task_status st = t->status;
        bool ready = kb_task_status_allocated(st) || st == KB_TASK_SUCCEEDED ||
                     (st == KB_TASK_PENDING && t->best_effort);
        switch (which) {
        case COUNT_VALID:
                return ready || st == KB_TASK_PIPELINED || st == KB_TASK_PENDING;
        case COUNT_READY:
                return ready;
        case COUNT_PIPELINED:
                return ready || st == KB_TASK_PIPELINED;
        }
        return false;
}

/* Whether every role with a minTaskMember has enough tasks counted. */
static bool roles_ok(const struct kb_job *j, enum role_count which)
{
        const struct kb_podgroup *pg = j->pg;
        if (!pg || pg->nmin_task_member == 0)
                return true;
        int64_t total = 0;
        for (size_t r = 0; r < pg->nmin_task_member; r++)
                total += pg->min_task_member[r].min;
        if (j->min_available < total)
                return true;
        for (size_t r = 0; r < pg->nmin_task_member; r++) {
                const struct kb_task_member *m = &pg->min_task_member[r];
                int32_t n = 0;
                if (m->min == 0)
                        continue;
                for (uint32_t i = 0; i < j->ntasks; i++)
                        if (strcmp(j->tasks[i]->role, m->name) == 0 && counts(which, j->tasks[i]))
                                n++;
                if (n < m->min)
                        return false;
        }
        return true;
}

static bool is_ready(const struct kb_job *j)
{
        return kb_job_ready_count(j) + j->pending_best_effort >= (uint32_t)j->min_available;
}

static bool is_pipelined(const struct kb_job *j)
{
        return kb_job_waiting_count(j) + kb_job_ready_count(j) + j->pending_best_effort >=
               (uint32_t)j->min_available;
}

struct gang {
        struct kb_session *s;
        /* Per job index, zero between calls: candidates offered, victims
         * taken. */
        uint32_t *offered, *taken;
};

static const char *gang_valid(void *arg, const struct kb_job *j, const char **reason)
{
        struct gang *g = arg;
        *reason = KB_WHY_TASKS;
        if (!roles_ok(j, COUNT_VALID)) {
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
        return roles_ok(j, COUNT_READY) && is_ready(j);
}

static int gang_pipelined(void *arg, const struct kb_job *j)
{
        (void)arg;
        return roles_ok(j, COUNT_PIPELINED) && is_pipelined(j) ? 1 : -1;
}

/* 0 a partly bound gang, 1 another job not ready, 2 a ready job. */
static int rank(const struct kb_job *j)
{
        if (is_ready(j))
                return 2;
        return kb_job_placed_count(j) > 0 ? 0 : 1;
}

static int gang_job_order(void *arg, const struct kb_job *l, const struct kb_job *r)
{
        (void)arg;
        int lr = rank(l), rr = rank(r);
        return lr == rr ? 0 : lr < rr ? -1 : 1;
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
        kb_session_jobs(s, &njobs);
        g->s = s;
        g->offered = kb_pool_alloc(kb_session_pool(s), (njobs + 1) * sizeof(*g->offered));
        g->taken = kb_pool_alloc(kb_session_pool(s), (njobs + 1) * sizeof(*g->taken));
        kb_on_job_valid(s, gang_valid, g);
        kb_on_job_ready(s, gang_ready, g);
        kb_on_job_pipelined(s, gang_pipelined, g);
        kb_on_job_order(s, gang_job_order, g);
        kb_on_job_starving(s, gang_starving, g);
        kb_on_preemptable(s, gang_victims, g, 0);
        kb_on_reclaimable(s, gang_victims, g);
        return g;
}

/* "1st", "2nd", "3rd", "4th", "11th", "21st". */
static const char *ordinal_suffix(uint32_t n)
{
        if (n % 100 >= 11 && n % 100 <= 13)
                return "th";
        switch (n % 10) {
        case 1:
                return "st";
        case 2:
                return "nd";
        case 3:
                return "rd";
        default:
                return "th";
        }
}

/* The cluster's largest node allocatable per resource, and the sum, for
 * "can never fit" (computed once per session, at close). */
struct cluster_room {
        bool done;
        struct kb_res largest, total;
        size_t nodes;
};

static void cluster_room(struct kb_session *s, struct cluster_room *c)
{
        if (c->done)
                return;
        c->done = true;
        struct kb_node_info *nodes = kb_session_nodes(s, &c->nodes);
        for (size_t n = 0; n < c->nodes; n++)
                for (int i = 0; i < KB_RES_MAX; i++) {
                        int64_t a = nodes[n].allocatable.q[i];
                        if (a > c->largest.q[i])
                                c->largest.q[i] = a;
                        c->total.q[i] += a;
                }
}

/* Why j can never be placed, whatever else runs: a task asks more than any
 * node has allocatable in some resource, or minMember tasks more than the
 * whole cluster.  NULL when it might fit (the test is by resource; the
 * fit error then says the rest). */
static const char *never_fits(struct kb_session *s, const struct kb_job *j, struct cluster_room *c,
                              struct kb_buf *b)
{
        cluster_room(s, c);
        char n[48], h[48];
        const struct kb_task *t = j->fit_task;
        int i = t ? kb_res_first_short(&t->resreq, &c->largest) : -1;
        if (i >= 0) {
                kb_res_human(i, (double)t->resreq.q[i], n, sizeof(n));
                kb_res_human(i, (double)c->largest.q[i], h, sizeof(h));
                kb_buf_printf(b,
                              "can never fit: pod %s asks %s %s, more than any node has (the "
                              "largest of %zu: %s)",
                              t->pod->meta.name, kb_res_name(i), n, c->nodes, h);
                return b->data;
        }
        struct kb_res need, gang, own;
        kb_job_need(j, &need, &gang, &own);
        i = kb_res_first_short(&gang, &c->total);
        if (i >= 0) {
                kb_res_human(i, (double)gang.q[i], n, sizeof(n));
                kb_res_human(i, (double)c->total.q[i], h, sizeof(h));
                if (i == KB_RES_PODS)
                        kb_buf_printf(b,
                                      "can never fit: its minMember %d task(s) need %s pod "
                                      "slot(s), the whole cluster has %s (%zu node(s))",
                                      (int)j->min_available, n, h, c->nodes);
                else
                        kb_buf_printf(b,
                                      "can never fit: its minMember %d task(s) ask %s %s, more "
                                      "than the whole cluster has (%zu node(s): %s)",
                                      (int)j->min_available, kb_res_name(i), n, c->nodes, h);
                return b->data;
        }
        return NULL;
}

/*
 * Why a group enqueue refused can never be admitted, whatever else runs:
 * its minResources ask more than its queue's capability, or more than the
 * whole cluster has allocatable.  NULL when it might be admitted later.
 * Checked at admission, before any pod exists (Volcano's job controller
 * creates them once the group is admitted), so a gang that can never fit
 * says NeverFits with the numbers rather than "resource in cluster is
 * overused" as if it were temporary (issue 23, point 5).
 */
static const char *never_admitted(struct kb_session *s, const struct kb_job *j,
                                  struct cluster_room *c, struct kb_buf *b)
{
        if (!j->pg || !j->pg->has_min_resources)
                return NULL;
        const struct kb_res *min = &j->pg->min_resources;
        char n[48], h[48];
        const struct kb_queue *q = j->queue ? j->queue->queue : NULL;
        int i = q && q->has_capability ? kb_res_first_short(min, &q->capability) : -1;
        if (i >= 0 && i != KB_RES_PODS) {
                kb_res_human(i, (double)min->q[i], n, sizeof(n));
                kb_res_human(i, (double)q->capability.q[i], h, sizeof(h));
                kb_buf_printf(b,
                              "queue %s can never hold the gang: its minResources ask %s %s, the "
                              "queue's capability is %s",
                              j->queue->name, kb_res_name(i), n, h);
                return b->data;
        }
        cluster_room(s, c);
        i = kb_res_first_short(min, &c->total);
        if (i >= 0 && i != KB_RES_PODS) {
                kb_res_human(i, (double)min->q[i], n, sizeof(n));
                kb_res_human(i, (double)c->total.q[i], h, sizeof(h));
                kb_buf_printf(b,
                              "can never fit: its minResources ask %s %s, more than the whole "
                              "cluster has (%zu node(s): %s)",
                              kb_res_name(i), n, c->nodes, h);
                return b->data;
        }
        return NULL;
}

/* A role's minTaskMember, or -1 when the role has none. */
static int32_t role_min(const struct kb_job *j, const char *role)
{
        const struct kb_podgroup *pg = j->pg;
        for (size_t r = 0; pg && *role && r < pg->nmin_task_member; r++)
                if (!strcmp(pg->min_task_member[r].name, role))
                        return pg->min_task_member[r].min;
        return -1;
}

/*
 * "its minMember 16 pods do not all fit the free room: <fit error>" (the
 * fit error alone for a gang of one, as kube-scheduler says it), or, when
 * minMember was reached but a role falls short, the role's; a fit error
 * that is the gang's as a whole (fit_task NULL) as it is.
 *
 * How many of the gang's pods its turn placed before one fit no node is
 * not said: that count is a trial, undone when the gang is not ready, and
 * it depends on what turns before it held for this session only (a
 * pipelined gang, a partly bound one), so it can differ from one session
 * to the next while nothing in the cluster changes; a message that moved
 * with it would rewrite the condition of the group and of every one of its
 * pending pods each time.  What decides the wait is that minMember pods do
 * not fit together, and why the first that did not fit fits no node.
 */
static void placement(const struct kb_job *j, struct kb_buf *b)
{
        const struct kb_task *t = j->fit_task;
        if (!t) {
                /* Not one task's fit error: the gang's as a whole (no
                 * network topology domain holds it). */
                kb_buf_adds(b, j->fit_error);
                return;
        }
        int32_t rmin = role_min(j, t->role);
        if (j->fit_placed >= (uint32_t)j->min_available && rmin >= 0) {
                kb_buf_printf(b,
                              "minMember %d is met, but role %s's minTaskMember %d pod(s) do not "
                              "all fit the free room: %s",
                              (int)j->min_available, t->role, (int)rmin, j->fit_error);
                return;
        }
        if (j->min_available <= 1) {
                kb_buf_adds(b, j->fit_error);
                return;
        }
        kb_buf_printf(b, "its minMember %d pods do not all fit the free room: %s",
                      (int)j->min_available, j->fit_error);
}

/*
 * Why a job that is not ready waits, most specific first, and the
 * condition reason for it (KB_WHY_*): the job cannot be considered at all;
 * this session evicts for it; it is partly bound; its queue can never hold
 * it; it can never fit the nodes; a task fit no node ("its minMember 16
 * pods do not all fit the free room: 0/17 nodes are available: 17
 * Insufficient cpu."); the queue's quota
 * refused it; enqueue did not admit it; tasks wait on terminating pods;
 * else Volcano's summary by task status.
 */
static const char *why_waiting(struct kb_session *s, const struct kb_job *j,
                               struct cluster_room *room, struct kb_buf *b, const char **reason)
{
        /* A group enqueue left Pending: the enqueue verdict (capability,
         * deserved share, cluster room, never fits) wins over the gang's
         * count, since the group's pods may well not exist before it is
         * admitted (Volcano's job controller, pkg/controllers/job/
         * job_controller_actions.go syncJob, creates them only once the
         * PodGroup left Pending), and "no pods yet" would hide the blocker
         * (issue 23, point 2). */
        if (j->phase == KB_PG_PENDING && j->enqueue_why && !j->invalid) {
                if (never_admitted(s, j, room, b)) {
                        *reason = KB_WHY_NEVER;
                        return b->data;
                }
                *reason = j->enqueue_reason ? j->enqueue_reason : KB_WHY_RESOURCES;
                return j->enqueue_why;
        }
        const char *invalid = kb_job_valid(s, j, reason);
        if (invalid)
                return invalid;
        *reason = KB_WHY_RESOURCES;
        if (j->evictions) {
                *reason = KB_WHY_EVICTING;
                kb_buf_printf(b,
                              "%u task(s) of other jobs are being evicted (%s) to make room; %u "
                              "pipelined task(s) wait for them",
                              j->evictions, j->evicted_by, kb_job_waiting_count(j));
                return b->data;
        }
        if (j->partial) {
                if (j->partial_never)
                        *reason = KB_WHY_NEVER;
                if (!j->fit_error)
                        return j->partial;
                kb_buf_printf(b, "%s (%s)", j->partial, j->fit_error);
                return b->data;
        }
        if ((j->fit_error || j->quota_error) && never_fits(s, j, room, b)) {
                *reason = KB_WHY_NEVER;
                return b->data;
        }
        if (j->quota_error && kb_streq(j->quota_reason, KB_WHY_NEVER)) {
                *reason = KB_WHY_NEVER;
                return j->quota_error;
        }
        if (j->expected && j->expected_start > 0)
                return j->expected; /* the reservation plugin's time */
        if (j->fit_error) {
                placement(j, b);
                if (j->expected)
                        kb_buf_printf(b, "; %s", j->expected);
                return b->data;
        }
        /* A queue that is not Open takes no task, whichever quota plugin
         * says so (proportion drops it as overused before asking). */
        if (j->queue && j->queue->state != KB_QUEUE_OPEN) {
                *reason = KB_WHY_QUEUE_CLOSED;
                kb_buf_printf(b, "queue %s is %s", j->queue->name,
                              kb_queue_state_name(j->queue->state));
                return b->data;
        }
        if (j->quota_error) {
                *reason = j->quota_reason ? j->quota_reason : KB_WHY_QUOTA;
                return j->quota_error;
        }
        if (j->phase == KB_PG_PENDING) {
                if (j->enqueue_why) {
                        *reason = j->enqueue_reason ? j->enqueue_reason : KB_WHY_RESOURCES;
                        return j->enqueue_why;
                }
                return "pod group is Pending, not yet admitted to its queue";
        }
        /* Volcano's summary: the job's tasks by status. */
        kb_buf_adds(b, "pod group is not ready");
        for (int st = 0; st < KB_TASK_NSTATUS; st++)
                if (j->count[st])
                        kb_buf_printf(b, ", %u %s", j->count[st],
                                      kb_task_status_name((enum kb_task_status)st));
        /* kbatch: what pipelined tasks wait for (the victims of an earlier
         * session's evictions, or other pods, terminating). */
        if (kb_job_waiting_count(j)) {
                *reason = KB_WHY_PIPELINED;
                kb_buf_printf(b, "; %u pipelined task(s) wait for room that terminating pods free",
                              kb_job_waiting_count(j));
        }
        return b->data;
}

static void gang_close(struct kb_session *s, void *state)
{
        (void)state;
        size_t njobs;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        struct kb_buf b, msg;
        struct cluster_room room = {0};
        kb_buf_init(&b);
        kb_buf_init(&msg);
        for (size_t i = 0; i < njobs; i++) {
                struct kb_job *j = jobs[i];
                /* An invalid job never runs, whatever it counts as ready
                 * (pending best-effort tasks count): Volcano drops it from
                 * the session with its validity reason, so never call it
                 * Scheduled. */
                if (!kb_job_valid(s, j, NULL) && is_ready(j) && roles_ok(j, COUNT_READY)) {
                        kb_job_set_condition(s, j, "Scheduled", "True",
                                             "tasks in gang are ready to be scheduled", "");
                        continue;
                }
                kb_buf_reset(&b);
                kb_buf_reset(&msg);
                const char *reason = KB_WHY_RESOURCES;
                kb_buf_adds(&msg, why_waiting(s, j, &room, &b, &reason));
                if (j->position)
                        kb_buf_printf(&msg, "; %u%s of %u waiting in queue %s", j->position,
                                      ordinal_suffix(j->position), j->queue->waiting,
                                      j->queue->name);
                kb_job_set_condition(s, j, "Unschedulable", "True", reason, msg.data);
        }
        kb_buf_release(&b);
        kb_buf_release(&msg);
}
