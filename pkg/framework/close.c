/*
 * Closing a session: what it tells the world about each PodGroup and queue.
 *
 *  - conditions: plugins and actions set them during the session
 *    (kb_job_set_condition, kb_job_explain); a job that could not be
 *    considered at all gets its validity reason;
 *  - phases by Volcano's jobStatus rule (close_phase);
 *  - queue statuses: counts of PodGroups per phase, allocated, deserved,
 *    and the state (a Closing queue with no work left is Closed);
 *  - nominations: the tasks still pipelined (they wait for room being
 *    freed on a node);
 *  - warnings: what a job's PodGroup or pods set that kbatch reads but does
 *    not evaluate yet, so that it is never ignored in silence.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

/* ---- conditions ------------------------------------------------------------- */

void kb_job_set_condition(struct kb_session *s, struct kb_job *j, const char *type,
                          const char *status, const char *reason, const char *message)
{
        struct kb_session_cond *c = &s->conds[j->index];
        c->type = kb_pool_strdup(&s->pool, type);
        c->status = kb_pool_strdup(&s->pool, status);
        c->reason = kb_pool_strdup(&s->pool, reason ? reason : "");
        c->message = kb_pool_strdup(&s->pool, message ? message : "");
}

void kb_job_explain(struct kb_session *s, const struct kb_job *j, const char *reason,
                    const char *why)
{
        struct kb_job *job = s->jobs[j->index];
        if (!job->enqueue_why) {
                job->enqueue_why = kb_pool_strdup(&s->pool, why);
                job->enqueue_reason = reason;
        }
}

void kb_job_explain_quota(struct kb_session *s, const struct kb_job *j, const char *reason,
                          const char *why)
{
        struct kb_job *job = s->jobs[j->index];
        if (!job->quota_error) {
                job->quota_error = kb_pool_strdup(&s->pool, why);
                job->quota_reason = reason;
        }
}

/* ---- queue positions -------------------------------------------------------------- */

/*
 * Each waiting job's place in its queue (kb_job.position of
 * kb_queue_info.waiting), as Kueue's visibility API gives it: among the
 * jobs of the queue that are valid and not ready at close, admitted ones
 * (Inqueue) first, each part in job order — the order the next session's
 * actions consider them in, as far as this session can tell.
 */
static bool waiting(struct kb_session *s, const struct kb_job *j)
{
        return j->queue && j->pg && j->ntasks &&
               (j->phase == KB_PG_PENDING || j->phase == KB_PG_INQUEUE) &&
               !kb_job_valid(s, j, NULL) && !kb_job_ready(s, j);
}

static int cmp_job_order(const void *a, const void *b, void *s)
{
        return kb_job_order(s, *(struct kb_job *const *)a, *(struct kb_job *const *)b);
}

void kb__session_positions(struct kb_session *s)
{
        /* Sorted, not popped from heaps: every session, every waiting job,
         * and a sort compares about half as often (job order is total: its
         * last tie-break is the name, so the order is the same). */
        struct kb_job **admitted = kb_xmalloc((s->njobs + 1) * sizeof(*admitted));
        struct kb_job **pending = kb_xmalloc((s->njobs + 1) * sizeof(*pending));
        size_t na = 0, np = 0;
        for (size_t q = 0; q < s->nqueues; q++)
                s->queues[q].waiting = 0;
        for (size_t i = 0; i < s->njobs; i++) {
                struct kb_job *j = s->jobs[i];
                j->position = 0;
                if (!waiting(s, j))
                        continue;
                if (j->phase == KB_PG_PENDING)
                        pending[np++] = j;
                else
                        admitted[na++] = j;
        }
        qsort_r(admitted, na, sizeof(*admitted), cmp_job_order, s);
        qsort_r(pending, np, sizeof(*pending), cmp_job_order, s);
        for (size_t i = 0; i < na; i++)
                admitted[i]->position = ++admitted[i]->queue->waiting;
        for (size_t i = 0; i < np; i++)
                pending[i]->position = ++pending[i]->queue->waiting;
        free(admitted);
        free(pending);
}

/* ---- warnings ------------------------------------------------------------------- */

/*
 * "kbatch does not evaluate yet: spec.networkTopology; pods x-0 (and 3
 * more): spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnored...":
 * the group's fields, then each distinct set of pod fields with the first
 * pod that has it.  NULL when the job has none.
 */
static char *unevaluated(const struct kb_job *j)
{
        /* Every job, every session: the counts say whether any pod has
         * such fields without reading each pod. */
        if (!j->unevaluated && !(j->pg && j->pg->unevaluated))
                return NULL;
        struct kb_buf b;
        kb_buf_init(&b);
        if (j->pg && j->pg->unevaluated)
                kb_buf_printf(&b, "%s", j->pg->unevaluated);
        for (uint32_t i = 0; i < j->ntasks; i++) {
                const char *f = j->tasks[i]->pod->unevaluated;
                bool seen = false;
                for (uint32_t k = 0; f && k < i && !seen; k++)
                        seen = kb_streq(j->tasks[k]->pod->unevaluated, f);
                if (!f || seen)
                        continue;
                uint32_t more = 0;
                for (uint32_t k = i + 1; k < j->ntasks; k++)
                        more += kb_streq(j->tasks[k]->pod->unevaluated, f);
                kb_buf_printf(&b, "%spod %s", b.len ? "; " : "", j->tasks[i]->pod->meta.name);
                if (more)
                        kb_buf_printf(&b, " (and %u more)", more);
                kb_buf_printf(&b, ": %s", f);
        }
        if (!b.len) {
                kb_buf_release(&b);
                return NULL;
        }
        char *msg = kb_xasprintf("kbatch does not evaluate these fields yet and schedules as if "
                                 "they were absent: %s",
                                 b.data);
        kb_buf_release(&b);
        return msg;
}

static void warnings(struct kb_session *s)
{
        struct kb_result *r = s->result;
        for (size_t i = 0; i < s->njobs; i++) {
                const struct kb_job *j = s->jobs[i];
                char *msg = unevaluated(j);
                if (!msg)
                        continue;
                struct kb_warning w = {
                    j->pg,
                    j->pg || !j->ntasks ? NULL : j->tasks[0]->pod,
                    kb_pool_printf(&r->pool, "%s %s", j->pg ? "podgroup" : "pod", j->name),
                    kb_pool_strdup(&r->pool, msg),
                    NULL,
                    NULL};
                free(msg);
                kb__result_add_warning(s, &w);
        }
}

/* ---- phases and statuses ------------------------------------------------------- */

/*
 * A job's phase at close, as Volcano's jobStatus (framework/job_updater.go):
 * running tasks while this session found the gang unschedulable make it
 * Unknown; enough allocated (or succeeded) tasks make it Running; otherwise
 * it stays Inqueue if it was, else Pending.  kbatch adds Completed: every
 * task finished and at least minMember of them succeeded (Volcano leaves
 * that to its job controller).
 */
static enum kb_pg_phase close_phase(struct kb_session *s, const struct kb_job *j)
{
        const struct kb_session_cond *c = &s->conds[j->index];
        bool unschedulable =
            c->type && strcmp(c->type, "Unschedulable") == 0 && strcmp(c->status, "True") == 0;
        uint32_t finished = j->count[KB_TASK_SUCCEEDED] + j->count[KB_TASK_FAILED];
        if (j->ntasks > 0 && finished == j->ntasks &&
            j->count[KB_TASK_SUCCEEDED] >= (uint32_t)KB_MAX(j->min_available, 1))
                return KB_PG_COMPLETED;
        if (j->count[KB_TASK_RUNNING] && unschedulable)
                return KB_PG_UNKNOWN;
        uint32_t allocated = j->count[KB_TASK_ALLOCATED] + j->count[KB_TASK_BINDING] +
                             j->count[KB_TASK_BOUND] + j->count[KB_TASK_RUNNING] +
                             j->count[KB_TASK_SUCCEEDED];
        if (j->ntasks > 0 && allocated >= (uint32_t)j->min_available)
                return KB_PG_RUNNING;
        return j->phase == KB_PG_INQUEUE ? KB_PG_INQUEUE : KB_PG_PENDING;
}

/*
 * Which jobs get a status in the result: every PodGroup, and also the jobs
 * of pods that name a PodGroup that does not exist.  Those have no object to
 * write a condition to, but their pods would otherwise wait silently: the
 * entry (pg NULL, named after the missing group) carries the reason to
 * kbatch-sim's output and to whoever reports on pods.  Volcano only logs
 * such a job at level 4 and skips it.  Lone pods without a group are not
 * reported: they are jobs of their own and nothing is missing.
 */
static bool reported(const struct kb_job *j)
{
        if (j->pg)
                return true;
        if (!j->ntasks)
                return false;
        const char *g = j->tasks[0]->pod->group_name;
        return g && *g;
}

/* The Inqueue condition this session sets for j, if any (inqueue.c): a
 * group that reserves and closes Inqueue without one gets True; one its
 * timeout sent back, False. */
static void inqueue_condition(struct kb_session *s, const struct kb_job *j, struct kb_pg_status *st)
{
        struct kb_result *r = s->result;
        const struct kb_podgroup *pg = j->pg;
        if (!pg || !pg->has_min_resources || !s->has_enqueue)
                return;
        const struct kb_condition *c = kb_pg_condition(pg, KB_INQUEUE_CONDITION);
        if (j->inqueue_expired) {
                char t[48];
                kb_duration_format((int64_t)(j->inqueue_expired * 1e9), t, sizeof(t));
                st->inq_status = "False";
                st->inq_reason = KB_INQUEUE_TIMEOUT_REASON;
                st->inq_message = kb_pool_printf(&r->pool,
                                                 "not ready within %s of its admission to queue "
                                                 "%s: sent back to Pending, its reservation freed",
                                                 t, j->queue_name);
        } else if (st->phase == KB_PG_INQUEUE && !(c && kb_streq(c->status, "True"))) {
                st->inq_status = "True";
                st->inq_reason = "Admitted";
                st->inq_message = kb_pool_printf(&r->pool, "admitted to queue %s", j->queue_name);
        } else {
                return;
        }
        st->inq_since = kb__now(s);
}

/* A pod of kbatch's without a PodGroup that is still Pending: why, in
 * kube-scheduler's words where it has them. */
static const char *lone_why(const struct kb_job *j, const struct kb_task *t)
{
        if (t->fit_error)
                return t->fit_error;
        if (j->fit_error)
                return j->fit_error;
        if (j->quota_error)
                return j->quota_error;
        if (j->enqueue_why)
                return j->enqueue_why;
        return j->invalid;
}

static void lone_pods(struct kb_session *s)
{
        struct kb_result *r = s->result;
        size_t n = 0;
        for (size_t i = 0; i < s->njobs; i++)
                n += !s->jobs[i]->pg && !reported(s->jobs[i]);
        r->unschedulable = kb_pool_alloc(&r->pool, (n + 1) * sizeof(*r->unschedulable));
        for (size_t i = 0; i < s->njobs; i++) {
                const struct kb_job *j = s->jobs[i];
                if (j->pg || reported(j))
                        continue;
                for (uint32_t k = 0; k < j->ntasks; k++) {
                        const struct kb_task *t = j->tasks[k];
                        const char *why = lone_why(j, t);
                        if (t->status != KB_TASK_PENDING || !why || r->nunschedulable >= n)
                                continue;
                        struct kb_pod_status *ps = &r->unschedulable[r->nunschedulable++];
                        ps->pod = t->pod;
                        ps->message = kb_pool_strdup(&r->pool, why);
                }
        }
}

/* Whether the pending tasks of a scheduled job wait for room, quota not
 * refusing them: reclaim takes nothing back for them (pending_why). */
static bool unreclaimed(const struct kb_job *j)
{
        return j->count[KB_TASK_PENDING] && !j->quota_error && j->fit_error;
}

/* Why the pending tasks of a scheduled (ready) job wait, as Volcano's
 * RecordJobStatusEvent marks every pending task of a job Unschedulable
 * with its reason (pkg/scheduler/cache/cache.go, TaskSchedulingReason):
 * what kept the session from placing more of the job.  NULL when none
 * waits. */
static const char *pending_why(struct kb_session *s, const struct kb_job *j)
{
        if (!j->count[KB_TASK_PENDING])
                return NULL;
        /* No room and no quota refusal: the user's next question is why
         * reclaim does not take back the queue's share for it.  Reclaim
         * serves only starving jobs, those below minMember, as Volcano
         * master's gang plugin (jobStarvingFn) has it (issue 23, point 4). */
        if (unreclaimed(j))
                return kb_pool_printf(&s->result->pool,
                                      "its gang is scheduled (minMember %d met); this pod waits: "
                                      "%s; nothing is reclaimed for it: only a gang below its "
                                      "minMember reclaims, as in Volcano",
                                      (int)j->min_available, j->fit_error);
        const char *why =
            j->quota_error ? j->quota_error : "no room was found for it in this session";
        return kb_pool_printf(&s->result->pool,
                              "its gang is scheduled (minMember %d met); this pod waits: %s",
                              (int)j->min_available, why);
}

void kb__session_statuses(struct kb_session *s)
{
        warnings(s);
        struct kb_result *r = s->result;
        size_t npg = 0;
        for (size_t i = 0; i < s->njobs; i++)
                npg += reported(s->jobs[i]);
        r->podgroups = kb_pool_alloc(&r->pool, (npg + 1) * sizeof(*r->podgroups));

        for (size_t i = 0; i < s->njobs; i++) {
                struct kb_job *j = s->jobs[i];
                /* A job that could not be considered at all says why. */
                const char *reason;
                const char *invalid = kb_job_valid(s, j, &reason);
                if (invalid && !s->conds[j->index].type)
                        kb_job_set_condition(s, j, "Unschedulable", "True", reason, invalid);
                if (!reported(j))
                        continue;
                struct kb_pg_status *st = &r->podgroups[r->npodgroups++];
                const struct kb_session_cond *c = &s->conds[j->index];
                st->pg = j->pg;
                st->name = kb_pool_strdup(&r->pool, j->name);
                st->phase = close_phase(s, j);
                st->running = (int32_t)j->count[KB_TASK_RUNNING];
                st->succeeded = (int32_t)j->count[KB_TASK_SUCCEEDED];
                st->failed = (int32_t)j->count[KB_TASK_FAILED];
                st->pending = (int32_t)j->count[KB_TASK_PENDING];
                inqueue_condition(s, j, st);
                int32_t prio;
                if (j->pg && j->pg->priority_class_name && *j->pg->priority_class_name &&
                    !kb_session_priority_class(s, j->pg->priority_class_name, &prio))
                        st->unknown_priority_class =
                            kb_pool_strdup(&r->pool, j->pg->priority_class_name);
                st->position = j->position;
                st->waiting = j->position ? j->queue->waiting : 0;
                st->expected_start = j->position ? j->expected_start : 0;
                const struct kb_domain *d = kb_job_domain(s, j, NULL);
                if (d) {
                        st->domain = kb_pool_strdup(&r->pool, d->name);
                        st->domain_tier = d->tier;
                }
                if (c->type) {
                        st->cond_type = kb_pool_strdup(&r->pool, c->type);
                        st->cond_status = kb_pool_strdup(&r->pool, c->status);
                        st->cond_reason = kb_pool_strdup(&r->pool, c->reason);
                        st->cond_message = kb_pool_strdup(&r->pool, c->message);
                        if (!strcmp(c->type, "Scheduled"))
                                st->pending_message = pending_why(s, j);
                }
        }

        lone_pods(s);

        /* Nominations: whatever is still Pipelined now was kept. */
        size_t nnom = 0;
        for (size_t i = 0; i < s->ntasks; i++)
                nnom += s->tasks[i].status == KB_TASK_PIPELINED && s->tasks[i].node >= 0;
        r->nominations = kb_pool_alloc(&r->pool, (nnom + 1) * sizeof(*r->nominations));
        for (size_t i = 0; i < s->ntasks; i++) {
                const struct kb_task *t = &s->tasks[i];
                if (t->status != KB_TASK_PIPELINED || t->node < 0)
                        continue;
                struct kb_nomination *nm = &r->nominations[r->nnominations++];
                nm->pod = t->pod;
                nm->node = kb_pool_strdup(&r->pool, s->nodes[t->node].name);
        }

        /* Queue status: counts of PodGroups per phase and allocated. */
        r->nqueues = s->nqueues;
        r->queues = kb_pool_alloc(&r->pool, (s->nqueues + 1) * sizeof(*r->queues));
        for (size_t i = 0; i < s->nqueues; i++) {
                struct kb_queue_status *qs = &r->queues[i];
                qs->name = kb_pool_strdup(&r->pool, s->queues[i].name);
                qs->state = s->queues[i].state;
                qs->state_changed = !s->queues[i].queue->has_state;
                qs->capability = s->queues[i].queue->capability;
                qs->deserved = s->queues[i].deserved;
                qs->share = s->queues[i].share;
                if (!s->queues[i].queue->has_capability)
                        kb_res_fill(&qs->capability, KB_RES_UNLIMITED);
        }
        /* r->podgroups follows job order, one entry per reported job; k
         * must advance for each of them, whether or not its queue exists,
         * or the phases of the jobs after a queue-less one would be read
         * from their neighbours' entries. */
        size_t k = 0;
        bool *busy = kb_pool_alloc(&s->pool, (s->nqueues + 1) * sizeof(*busy));
        for (size_t i = 0; i < s->njobs; i++) {
                struct kb_job *j = s->jobs[i];
                size_t entry = k;
                if (reported(j))
                        k++;
                if (!j->queue)
                        continue;
                struct kb_queue_status *qs = &r->queues[j->queue->index];
                kb_res_add(&qs->allocated, &j->allocated);
                /* Work: a pod not finished, or a group with no pod yet. */
                uint32_t done = j->count[KB_TASK_SUCCEEDED] + j->count[KB_TASK_FAILED];
                busy[j->queue->index] |=
                    j->ntasks > done || (j->pg && j->ntasks == 0 && j->phase != KB_PG_COMPLETED);
                if (!j->pg)
                        continue;
                if (r->podgroups[entry].pending_message && unreclaimed(j))
                        qs->unreclaimed += (int32_t)j->count[KB_TASK_PENDING];
                switch (r->podgroups[entry].phase) {
                case KB_PG_PENDING:
                        qs->pending++;
                        break;
                case KB_PG_INQUEUE:
                        qs->inqueue++;
                        break;
                case KB_PG_RUNNING:
                        qs->running++;
                        break;
                case KB_PG_UNKNOWN:
                        qs->unknown++;
                        break;
                case KB_PG_COMPLETED:
                        qs->completed++;
                        break;
                }
        }
        /* With a queue hierarchy, a parent's allocated is its subtree's
         * (its children hold the jobs; kubectl get queues would show the
         * parent empty otherwise).  Each queue's own sum goes to every
         * ancestor; the quota plugin left no cycle (the walk is bounded
         * all the same). */
        struct kb_res *own = kb_pool_alloc(&s->pool, (s->nqueues + 1) * sizeof(*own));
        for (size_t i = 0; i < s->nqueues; i++)
                own[i] = r->queues[i].allocated;
        for (size_t i = 0; i < s->nqueues; i++) {
                size_t hops = 0;
                for (int32_t p = s->queues[i].parent; p >= 0 && hops < s->nqueues;
                     p = s->queues[p].parent, hops++)
                        kb_res_add(&r->queues[p].allocated, &own[i]);
        }
        /* A Closing queue whose work is all done is Closed (what Volcano's
         * queue controller does; kbatch's daemon writes it). */
        for (size_t i = 0; i < s->nqueues; i++) {
                struct kb_queue_status *qs = &r->queues[i];
                if (qs->state == KB_QUEUE_CLOSING && !busy[i]) {
                        qs->state = KB_QUEUE_CLOSED;
                        qs->state_changed = true;
                }
        }
}
