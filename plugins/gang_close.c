/*
 * gang's close (gang.c's banner, "close"): for every job not ready, the
 * Unschedulable condition naming what it waits for, with its numbers and
 * its place in its queue; Scheduled for a ready one.
 */
#include <stdio.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

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
        int i = t ? kb_res_first_short(t->resreq, &c->largest) : -1;
        if (i >= 0) {
                kb_res_human(i, (double)t->resreq->q[i], n, sizeof(n));
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

/* The overcommit plugin's factor when it votes at enqueue in this
 * session's conf (as plugins/overcommit.c reads it), else 0. */
static double overcommit_factor(struct kb_session *s)
{
        const struct kb_conf *conf = kb_session_conf(s);
        for (size_t t = 0; t < conf->ntiers; t++)
                for (size_t p = 0; p < conf->tiers[t].nplugins; p++) {
                        const struct kb_plugin_conf *pc = &conf->tiers[t].plugins[p];
                        if (strcmp(pc->name, "overcommit") ||
                            !pc->enabled[KB_POINT_JOB_ENQUEUEABLE])
                                continue;
                        double f = kb_args_double(pc->arguments, "overcommit-factor", 1.2);
                        return f < 1.0 ? 1.2 : f;
                }
        return 0;
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
                /* The bound is the cluster, not the cluster over-committed:
                 * Volcano's overcommit admits a group while inqueue +
                 * minResources <= total * overcommit-factor - used
                 * (pkg/scheduler/plugins/overcommit/overcommit.go,
                 * AddJobEnqueueableFn), so one asking less than that may
                 * yet be admitted, and then sits holding its queue's room
                 * with pods that cannot all be placed.  The message says
                 * which of the two it is. */
                double f = overcommit_factor(s);
                if (f > 0) {
                        double over = (double)c->total.q[i] * f;
                        kb_res_human(i, over, h, sizeof(h));
                        if ((double)min->q[i] <= over)
                                kb_buf_printf(b,
                                              "; overcommit (factor %g) may admit it, up to %s, "
                                              "but not fit it",
                                              f, h);
                        else
                                kb_buf_printf(b, "; nor with overcommit's factor %g (%s)", f, h);
                }
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
        char min[24];
        kb_format_i64(j->min_available, min, sizeof(min));
        kb_buf_adds(b, "its minMember ");
        kb_buf_adds(b, min);
        kb_buf_adds(b, " pods do not all fit the free room: ");
        kb_buf_adds(b, j->fit_error);
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

void kb__gang_close(struct kb_session *s, void *state)
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
                if (!kb_job_valid(s, j, NULL) && kb__gang_is_ready(j) && kb__gang_roles_ok(j, KB__COUNT_READY)) {
                        kb_job_set_condition(s, j, "Scheduled", "True",
                                             "tasks in gang are ready to be scheduled", "");
                        continue;
                }
                kb_buf_reset(&b);
                kb_buf_reset(&msg);
                const char *reason = KB_WHY_RESOURCES;
                kb_buf_adds(&msg, why_waiting(s, j, &room, &b, &reason));
                /* "; 2nd of 4 waiting in queue q", written for every
                 * waiting job of every session: without printf. */
                if (j->position) {
                        char pos[24], all[24];
                        kb_format_i64(j->position, pos, sizeof(pos));
                        kb_format_i64(j->queue->waiting, all, sizeof(all));
                        const char *parts[] = {"; ", pos, ordinal_suffix(j->position), " of ",
                                               all, " waiting in queue ", j->queue->name};
                        kb_buf_add_all(&msg, parts, KB_ARRAY_SIZE(parts));
                }
                kb_job_set_condition(s, j, "Unschedulable", "True", reason, msg.data);
        }
        kb_buf_release(&b);
        kb_buf_release(&msg);
}
