/*
 * The session model's bottom layer: names, job counters, node accounting
 * with each node's task list, and lookups.  Everything that changes a task's
 * status or place goes through kb__task_move, kb__node_attach and
 * kb__node_detach, so that the job's counters, the node's sums, the node's
 * task list and the change log (which the node-selection caches replay)
 * never disagree.
 *
 * Node accounting is Volcano's NodeInfo.AddTask/RemoveTask: a Releasing
 * task holds idle resources and also counts as releasing; a Pipelined one
 * only reserves future idle; every other status takes idle resources.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

/* ---- names ------------------------------------------------------------------ */

const char *kb_task_status_name(enum kb_task_status st)
{
        static const char *const names[] = {
#define XX(name, str) str,
            KB_TASK_STATUSES(XX)
#undef XX
        };
        return (size_t)st < KB_ARRAY_SIZE(names) ? names[st] : "?";
}

const char *kb_pg_phase_name(enum kb_pg_phase p)
{
        static const char *const names[] = {
#define XX(name, str) str,
            KB_PG_PHASES(XX)
#undef XX
        };
        return (size_t)p < KB_ARRAY_SIZE(names) ? names[p] : "?";
}

bool kb_task_status_allocated(enum kb_task_status st)
{
        return st == KB_TASK_ALLOCATED || st == KB_TASK_BINDING || st == KB_TASK_BOUND ||
               st == KB_TASK_RUNNING;
}

/* ---- job counters --------------------------------------------------------- */

uint32_t kb_job_ready_count(const struct kb_job *j)
{
        return j->count[KB_TASK_ALLOCATED] + j->count[KB_TASK_BINDING] + j->count[KB_TASK_BOUND] +
               j->count[KB_TASK_RUNNING] + j->count[KB_TASK_SUCCEEDED];
}

uint32_t kb_job_placed_count(const struct kb_job *j)
{
        return j->count[KB_TASK_BINDING] + j->count[KB_TASK_BOUND] + j->count[KB_TASK_RUNNING];
}

uint32_t kb_job_waiting_count(const struct kb_job *j)
{
        return j->count[KB_TASK_PIPELINED];
}

uint32_t kb_job_pending_count(const struct kb_job *j)
{
        return j->count[KB_TASK_PENDING];
}

/* A task counted in (sign 1) or out (-1) of its job's counters and sums
 * as its status holds it (the build, update.c). */
void kb__job_count(struct kb_job *j, const struct kb_task *t, int sign)
{
        enum kb_task_status st = t->status;
        j->count[st] += (uint32_t)sign;
        if (t->best_effort && st == KB_TASK_PENDING)
                j->pending_best_effort += (uint32_t)sign;
        j->unevaluated += (uint32_t)sign * t->unevaluated;
        j->bad_runtime += (uint32_t)sign * t->bad_runtime;
        if (sign > 0 && !j->requests_differ) {
                if (!j->request_alike)
                        j->request_alike = t->resreq;
                else if (j->request_alike != t->resreq) {
                        j->request_alike = NULL;
                        j->requests_differ = true;
                }
        }
        j->allocated_gen += kb_task_status_allocated(st);
        struct kb_res *sum = kb_task_status_allocated(st) ? &j->allocated
                             : st == KB_TASK_PENDING      ? &j->pending_request
                                                          : NULL;
        bool live = st != KB_TASK_SUCCEEDED && st != KB_TASK_FAILED;
        /* Once per task built: over the interned resources only (the
         * others are 0 in every request), saturated as kb_res_add is. */
        int nres = kb_res_count();
        for (int i = 0; i < nres; i++) {
                int64_t q = sign < 0 ? -t->resreq->q[i] : t->resreq->q[i];
                if (sum)
                        sum->q[i] = kb_qty_add(sum->q[i], q);
                if (live)
                        j->total_request.q[i] = kb_qty_add(j->total_request.q[i], q);
        }
}

void kb_task_fit_failed(struct kb_task *t, const char *why)
{
        struct kb_job *j = t->job;
        t->fit_error = why;
        if (j->fit_error)
                return;
        j->fit_error = why;
        j->fit_task = t;
        j->fit_placed = kb_job_ready_count(j) + kb_job_waiting_count(j);
}

/* out = n copies of r summed, saturated as kb_res_add is (r is a request:
 * never negative). */
static void res_times(struct kb_res *out, const struct kb_res *r, uint32_t n, int nres)
{
        for (int i = 0; i < nres; i++)
                if (__builtin_mul_overflow(r->q[i], (int64_t)n, &out->q[i]))
                        out->q[i] = INT64_MAX;
}

void kb_job_need(const struct kb_job *j, struct kb_res *need, struct kb_res *gang,
                 struct kb_res *own)
{
        memset(need, 0, sizeof(*need));
        memset(gang, 0, sizeof(*gang));
        memset(own, 0, sizeof(*own));
        uint32_t min = j->min_available > 0 ? (uint32_t)j->min_available : 0;
        uint32_t held = kb_job_placed_count(j) + j->count[KB_TASK_SUCCEEDED];
        uint32_t lack = min > held ? min - held : 0, taken = 0, members = 0;
        /* Once per waiting job and session (gang_close.c, quota.c): over
         * the interned resources only. */
        int nres = kb_res_count();
        if (j->request_alike && !j->count[KB_TASK_FAILED] && !j->count[KB_TASK_SUCCEEDED]) {
                /* Every task asks alike and none is over: the loop below
                 * by counts (a backlog's gangs of hundreds, every session).
                 * It adds the Allocated and Pipelined tasks to own; the
                 * first lack of those and the Pending ones (all when lack
                 * is 0) to need; the first min tasks to gang. */
                uint32_t mine = j->count[KB_TASK_ALLOCATED] + j->count[KB_TASK_PIPELINED];
                uint32_t cand = mine + j->count[KB_TASK_PENDING];
                res_times(own, j->request_alike, mine, nres);
                res_times(need, j->request_alike, lack == 0 ? cand : KB_MIN(lack, cand), nres);
                res_times(gang, j->request_alike, KB_MIN(min, j->ntasks), nres);
                return;
        }
        for (uint32_t i = 0; i < j->ntasks; i++) {
                const struct kb_task *t = j->tasks[i];
                bool mine = t->status == KB_TASK_ALLOCATED || t->status == KB_TASK_PIPELINED;
                if (mine)
                        kb_res_add_first(own, t->resreq, nres);
                if ((mine || t->status == KB_TASK_PENDING) && (lack == 0 || taken < lack)) {
                        kb_res_add_first(need, t->resreq, nres);
                        taken++;
                }
                if (members < min && t->status != KB_TASK_FAILED) {
                        if (t->status != KB_TASK_SUCCEEDED)
                                kb_res_add_first(gang, t->resreq, nres);
                        members++;
                }
        }
}

/* ---- node accounting ------------------------------------------------------ */

void kb_node_future_idle(const struct kb_node_info *n, struct kb_res *out)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                out->q[i] = n->idle.q[i] + n->releasing.q[i] - n->pipelined.q[i];
}

/* How a status counts on a node. */
enum holding { HOLD_USED, HOLD_RELEASING, HOLD_PIPELINED };

static enum holding holding_of(enum kb_task_status st)
{
        if (st == KB_TASK_RELEASING)
                return HOLD_RELEASING;
        if (st == KB_TASK_PIPELINED)
                return HOLD_PIPELINED;
        return HOLD_USED;
}

/* Adds (sign 1) or removes (sign -1) t's request on n as status st holds it. */
static void account(struct kb_node_info *n, const struct kb_task *t, enum holding h, int sign)
{
        /* Only interned resources can be non-zero: a request has none of
         * the others (once per task placed or attached: a million at W8). */
        int nres = kb_res_count();
        for (int i = 0; i < nres; i++) {
                /* Saturated as kb_res_add is: two pods of 4Ei memory on
                 * one node are valid, their sum is not an int64. */
                int64_t q = sign * t->resreq->q[i];
                if (h == HOLD_PIPELINED) {
                        n->pipelined.q[i] = kb_qty_add(n->pipelined.q[i], q);
                        continue;
                }
                /* A releasing task still holds its room until it is gone. */
                if (h == HOLD_RELEASING)
                        n->releasing.q[i] = kb_qty_add(n->releasing.q[i], q);
                n->idle.q[i] = kb_qty_add(n->idle.q[i], -q);
                n->used.q[i] = kb_qty_add(n->used.q[i], q);
        }
}

static void log_change(struct kb_session *s, struct kb_node_info *n)
{
        n->version++;
        KB_PUSH(s->changes, s->nchanges, s->capchanges, n->index);
}

void kb__node_attach(struct kb_session *s, struct kb_node_info *n, struct kb_task *t)
{
        kb__touch(s, t);
        if (n->tasks_tail)
                kb__touch(s, n->tasks_tail);
        account(n, t, holding_of(t->status), 1);
        t->node = (int32_t)n->index;
        t->node_next = NULL;
        t->node_prev = n->tasks_tail;
        if (n->tasks_tail)
                n->tasks_tail->node_next = t;
        else
                n->tasks = t;
        n->tasks_tail = t;
        n->ntasks++;
        log_change(s, n);
}

void kb__node_attach_ordered(struct kb_session *s, struct kb_node_info *n, struct kb_task *t)
{
        kb__node_attach(s, n, t);
        struct kb_task *at = t->node_prev;
        if (!at || at->index < t->index)
                return;
        /* Off the tail, then in before the first task of a higher index. */
        while (at->node_prev && at->node_prev->index > t->index)
                at = at->node_prev;
        n->tasks_tail = t->node_prev;
        n->tasks_tail->node_next = NULL;
        t->node_prev = at->node_prev;
        t->node_next = at;
        if (at->node_prev)
                at->node_prev->node_next = t;
        else
                n->tasks = t;
        at->node_prev = t;
}

void kb__node_detach(struct kb_session *s, struct kb_task *t)
{
        struct kb_node_info *n = &s->nodes[t->node];
        kb__touch(s, t);
        if (t->node_prev)
                kb__touch(s, t->node_prev);
        if (t->node_next)
                kb__touch(s, t->node_next);
        account(n, t, holding_of(t->status), -1);
        if (t->node_prev)
                t->node_prev->node_next = t->node_next;
        else
                n->tasks = t->node_next;
        if (t->node_next)
                t->node_next->node_prev = t->node_prev;
        else
                n->tasks_tail = t->node_prev;
        t->node_prev = t->node_next = NULL;
        t->node = -1;
        n->ntasks--;
        log_change(s, n);
}

void kb__task_move(struct kb_session *s, struct kb_task *t, enum kb_task_status st)
{
        struct kb_job *j = t->job;
        kb__touch(s, t);
        if (j) {
                if (t->best_effort)
                        j->pending_best_effort +=
                            (st == KB_TASK_PENDING) - (t->status == KB_TASK_PENDING);
                /* Per task moved: over the interned resources only. */
                int nres = kb_res_count();
                j->count[t->status]--;
                bool was = kb_task_status_allocated(t->status), is = kb_task_status_allocated(st);
                j->allocated_gen += was != is;
                if (was)
                        kb_res_sub_first(&j->allocated, t->resreq, nres);
                else if (t->status == KB_TASK_PENDING)
                        kb_res_sub_first(&j->pending_request, t->resreq, nres);
                j->count[st]++;
                if (is)
                        kb_res_add_first(&j->allocated, t->resreq, nres);
                else if (st == KB_TASK_PENDING)
                        kb_res_add_first(&j->pending_request, t->resreq, nres);
        }
        if (t->node >= 0 && holding_of(t->status) != holding_of(st)) {
                struct kb_node_info *n = &s->nodes[t->node];
                account(n, t, holding_of(t->status), -1);
                account(n, t, holding_of(st), 1);
                log_change(s, n);
        }
        t->status = st;
}

/* ---- lookups ------------------------------------------------------------------ */

struct kb_node_info *kb_session_node(struct kb_session *s, const char *name)
{
        uint64_t *i = kb_map_get_str(&s->node_ids, name, strlen(name));
        return i ? &s->nodes[*i] : NULL;
}

struct kb_queue_info *kb_session_queue(struct kb_session *s, const char *name)
{
        uint64_t *i = kb_map_get_str(&s->queue_ids, name, strlen(name));
        return i ? &s->queues[*i] : NULL;
}

bool kb_session_priority_class(struct kb_session *s, const char *name, int32_t *value)
{
        const struct kb_snapshot *snap = s->snap;
        for (size_t i = 0; i < snap->npriorityclasses; i++) {
                const struct kb_priorityclass *pc = snap->priorityclasses[i];
                if (name ? kb_streq(pc->meta.name, name) : pc->global_default) {
                        *value = pc->value;
                        return true;
                }
        }
        return false;
}

/* ---- interning ------------------------------------------------------------- */

static bool same_request(const struct kb_res *a, const struct kb_res *b)
{
        return a && kb_res_eq_first(a, b, kb_res_count());
}

/*
 * A copy in the pool the tasks live in, not the pod's own vector: a kept
 * model's tasks outlive their pods (update.c takes a task's old request
 * off its job and node after the pod is gone).  One copy for a run of
 * pods that ask alike (a job's, mostly), not one per task.
 */
const struct kb_res *kb__request_of(struct kb_session *s, const struct kb_res *old,
                                    const struct kb_res *r)
{
        if (same_request(old, r))
                return old;
        if (same_request(s->last_request, r))
                return s->last_request;
        struct kb_res *copy = kb_pool_alloc(s->bpool, sizeof(*copy));
        *copy = *r;
        s->last_request = copy;
        return copy;
}

const char *kb_session_intern(struct kb_session *s, const char *str)
{
        size_t len = strlen(str);
        uint64_t *v = kb_map_get_str(&s->interned, str, len);
        if (v)
                return (const char *)(uintptr_t)*v;
        const char *copy = kb_pool_strdup(&s->pool, str);
        *kb_map_put_str(&s->interned, copy, len, NULL) = (uint64_t)(uintptr_t)copy;
        return copy;
}
