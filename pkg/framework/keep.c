/*
 * The model kept between sessions: a session on a snapshot of the same
 * nonzero generation as the last one's uses the nodes, queues, jobs and
 * tasks that session built (open.c) instead of building them again, and
 * puts back as built whatever it changed when it closes:
 *
 *  - jobs, nodes and queues (thousands) are copied back whole from the
 *    copies taken when the model was built;
 *  - tasks (a hundred thousand) have the fields sessions change (status,
 *    node, node list links, placement class) saved before their first
 *    change (kb__touch, called by model.c and class.c, the only writers
 *    of a task), and only those are put back; a task's fit error, set
 *    without the session at hand (kb_task_fit_failed), is cleared on the
 *    tasks of the jobs that have one.
 *
 * A later snapshot brings the model up to date (update.c, when only pods
 * and PodGroups changed, came or went) or builds it again.  Test builds
 * check the kept model against a fresh build every KB_MODEL_CHECK-th
 * session, tasks by their rank among the live ones (an update leaves
 * holes and appends, keeping a build's order but not its indices).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

struct kb_model *kb_model_new(void)
{
        return kb_xcalloc(1, sizeof(struct kb_model));
}

static void model_clear(struct kb_model *m)
{
        if (m->built) {
                kb_map_release(&m->node_ids);
                kb_map_release(&m->queue_ids);
                kb_pool_release(&m->pool);
        }
        for (size_t i = 0; i < m->nscheduler_names; i++)
                free(m->scheduler_names[i]);
        free(m->scheduler_names);
        free(m->default_queue);
        free(m->base_jobs);
        free(m->base_nodes);
        free(m->base_queues);
        free(m->saved);
        free(m->touched);
        free(m->nodes_seen);
        free(m->queues_seen);
        free(m->pcs_seen);
        free(m->pods_seen);
        free(m->pgs_seen);
        free(m->assumed_seen);
        free(m->pod_task);
        free(m->pg_job);
        free(m->jobs_own);
        kb__result_unhold(m->last);
        uint64_t nbuilt = m->nbuilt, nreused = m->nreused, nupdated = m->nupdated;
        uint64_t nrepeated = m->nrepeated;
        memset(m, 0, sizeof(*m));
        m->nbuilt = nbuilt;
        m->nreused = nreused;
        m->nupdated = nupdated;
        m->nrepeated = nrepeated;
}

void kb_model_free(struct kb_model *m)
{
        if (!m)
                return;
        model_clear(m);
        free(m);
}

void kb_model_counts(const struct kb_model *m, uint64_t *built, uint64_t *reused)
{
        *built = m->nbuilt;
        *reused = m->nreused;
}

uint64_t kb_model_updates(const struct kb_model *m)
{
        return m->nupdated;
}

uint64_t kb_model_repeats(const struct kb_model *m)
{
        return m->nrepeated;
}

bool kb__model_same_input(const struct kb_model *m, const struct kb_snapshot *snap)
{
        /* The Volcano Jobs' verdicts live in the snapshot (pg_foreign),
         * which jobs point to: a model of them is not kept. */
        if (!m->built || !snap->gen || snap->gen < m->gen || snap->pg_foreign || m->pg_foreign ||
            snap->workload_podgroups != m->workload_podgroups ||
            snap->nscheduler_names != m->nscheduler_names ||
            !kb_streq(snap->default_queue, m->default_queue))
                return false;
        for (size_t i = 0; i < m->nscheduler_names; i++)
                if (!kb_streq(snap->scheduler_names[i], m->scheduler_names[i]))
                        return false;
        return true;
}

static void *dup_array(const void *v, size_t n, size_t size)
{
        void *copy = kb_xmalloc(n * size + 1);
        if (n)
                memcpy(copy, v, n * size);
        return copy;
}

/* A copy of the snapshot's array v of n objects. */
static const void **seen(const void *v, size_t n)
{
        return dup_array(v, n, sizeof(void *));
}

/* Builds m from s's snapshot and takes what was built. */
static void model_build(struct kb_session *s, struct kb_model *m)
{
        const struct kb_snapshot *snap = s->snap;
        model_clear(m);
        kb_pool_init(&m->pool, 1 << 20);
        m->pod_task = kb_xcalloc(snap->npods + 1, sizeof(*m->pod_task));
        m->pg_job = kb_xcalloc(snap->npodgroups + 1, sizeof(*m->pg_job));
        s->pod_task = m->pod_task;
        s->pg_job = m->pg_job;
        /* Room for the pods of a few sessions to come (update.c). */
        s->task_spare = snap->npods / 4 + 64;
        kb__session_build(s, &m->pool);
        m->taskcap = snap->npods + s->task_spare;
        m->pool_built = m->pool.total;
        m->nforeign = s->nforeign;
        s->task_spare = s->nforeign = 0;
        s->pod_task = NULL;
        s->pg_job = NULL;
        m->built = true;
        m->nbuilt++;
        m->gen = snap->gen;
        m->epoch = snap->epoch;
        m->pg_foreign = snap->pg_foreign != NULL;
        m->nodes_seen = seen(snap->nodes, m->nnodes_seen = snap->nnodes);
        m->queues_seen = seen(snap->queues, m->nqueues_seen = snap->nqueues);
        m->pcs_seen = seen(snap->priorityclasses, m->npcs_seen = snap->npriorityclasses);
        m->pods_seen = seen(snap->pods, m->npods_seen = snap->npods);
        m->pgs_seen = seen(snap->podgroups, m->npgs_seen = snap->npodgroups);
        m->assumed_seen = kb_xcalloc(snap->npods + 1, sizeof(*m->assumed_seen));
        for (size_t i = 0; snap->assumed_node && i < snap->npods; i++)
                m->assumed_seen[i] = snap->assumed_node[i];
        m->workload_podgroups = snap->workload_podgroups;
        m->nscheduler_names = snap->nscheduler_names;
        m->scheduler_names = kb_xcalloc(snap->nscheduler_names + 1, sizeof(char *));
        for (size_t i = 0; i < snap->nscheduler_names; i++)
                m->scheduler_names[i] =
                    snap->scheduler_names[i] ? kb_xstrdup(snap->scheduler_names[i]) : NULL;
        m->default_queue = snap->default_queue ? kb_xstrdup(snap->default_queue) : NULL;
        m->nodes = s->nodes;
        m->nnodes = s->nnodes;
        m->node_ids = s->node_ids;
        m->queue_ids = s->queue_ids;
        m->tasks = s->tasks;
        m->ntasks = s->ntasks;
        m->jobs = s->jobs;
        m->njobs = s->njobs;
        m->queues = s->queues;
        m->nqueues = s->nqueues;
        m->total = s->total;
        m->base_nodes = dup_array(m->nodes, m->nnodes, sizeof(*m->nodes));
        m->base_queues = dup_array(m->queues, m->nqueues, sizeof(*m->queues));
        m->base_jobs = kb_xmalloc((m->njobs + 1) * sizeof(*m->base_jobs));
        for (size_t i = 0; i < m->njobs; i++)
                m->base_jobs[i] = *m->jobs[i];
        m->touched = kb_xcalloc(m->taskcap + 1, 1);
}

/* The model's arrays into s. */
static void model_use(struct kb_session *s, struct kb_model *m)
{
        s->bpool = &m->pool;
        s->nodes = m->nodes;
        s->nnodes = m->nnodes;
        s->node_ids = m->node_ids;
        s->queue_ids = m->queue_ids;
        s->tasks = m->tasks;
        s->ntasks = m->ntasks;
        s->jobs = m->jobs;
        s->njobs = m->njobs;
        s->queues = m->queues;
        s->nqueues = m->nqueues;
        s->total = m->total;
}

/* m brought up to s's snapshot (update.c), its copies as built taken
 * again; false when it has to be built. */
static bool model_update(struct kb_session *s, struct kb_model *m)
{
        model_use(s, m);
        bool ok = kb__model_update(s, m);
        if (!ok) {
                s->nchanges = 0;
                /* As a build finds s. */
                s->bpool = NULL;
                s->nodes = NULL;
                s->tasks = NULL;
                s->jobs = NULL;
                s->queues = NULL;
                s->nnodes = s->ntasks = s->njobs = s->nqueues = 0;
                memset(&s->node_ids, 0, sizeof(s->node_ids));
                memset(&s->queue_ids, 0, sizeof(s->queue_ids));
                memset(&s->total, 0, sizeof(s->total));
                return false;
        }
        model_use(s, m); /* tasks and jobs added or dropped */
        m->gen = s->snap->gen;
        m->nupdated++;
        s->nchanges = 0; /* the starting point, not a change */
        /* The copies as built: of every node (update_node.c reads a
         * changed one again without a change logged), of the jobs the
         * update changed (update.c took those). */
        memcpy(m->base_nodes, m->nodes, m->nnodes * sizeof(*m->nodes));
        return true;
}

/* ---- the check (test builds) ----------------------------------------------------- */

#ifdef KB_TESTING
#define DIFF(what, ...)                                                                            \
        do {                                                                                       \
                fprintf(stderr, "kept model differs from a fresh build: " what "\n", __VA_ARGS__); \
                abort();                                                                           \
        } while (0)

/*
 * Tasks are compared by rank: an update leaves holes where pods were
 * removed and appends new pods' tasks after the last (update.c), so the
 * kept model's live tasks are a build's in the same order, not at the
 * same indices.  rank maps a kept task's index to its place among the
 * live ones (-1: a hole); NULL for the fresh build, whose index is its
 * rank.
 */
static int32_t task_idx(const int32_t *rank, const struct kb_task *t)
{
        return !t ? -1 : rank ? rank[t->index] : (int32_t)t->index;
}

static void check_task(const int32_t *rank, const struct kb_task *a, const struct kb_task *b)
{
        const char *n = b->name;
        if (a->pod != b->pod || strcmp(a->name, b->name) != 0)
                DIFF("task %zu: pod %s, fresh %s", (size_t)b->index, a->name, n);
        if ((a->job ? a->job->index : UINT32_MAX) != (b->job ? b->job->index : UINT32_MAX))
                DIFF("task %s: job", n);
        if (strcmp(a->role, b->role) != 0)
                DIFF("task %s: role %s, fresh %s", n, a->role, b->role);
        if (a->eclass != b->eclass)
                DIFF("task %s: eclass %u, fresh %u", n, a->eclass, b->eclass);
        if (a->status != b->status)
                DIFF("task %s: status %s, fresh %s", n, kb_task_status_name(a->status),
                     kb_task_status_name(b->status));
        if (a->node != b->node)
                DIFF("task %s: node %d, fresh %d", n, a->node, b->node);
        if (a->priority != b->priority)
                DIFF("task %s: priority %d, fresh %d", n, a->priority, b->priority);
        /* name_index is read from the name on first use: either way the same. */
        if (a->best_effort != b->best_effort || a->preemptable != b->preemptable ||
            a->unevaluated != b->unevaluated || a->has_rules != b->has_rules ||
            a->bad_runtime != b->bad_runtime)
                DIFF("task %s: best_effort, preemptable or a pod field's flag", n);
        if (memcmp(a->resreq, b->resreq, sizeof(*a->resreq)) != 0)
                DIFF("task %s: resreq", n);
        if (!kb_streq(a->fit_error, b->fit_error))
                DIFF("task %s: fit_error %s", n, a->fit_error ? a->fit_error : "(none)");
        if (task_idx(rank, a->node_prev) != task_idx(NULL, b->node_prev) ||
            task_idx(rank, a->node_next) != task_idx(NULL, b->node_next))
                DIFF("task %s: node list links", n);
}

static void check_node(const int32_t *rank, const struct kb_node_info *a,
                       const struct kb_node_info *b)
{
        const char *n = b->name;
        if (a->node != b->node || strcmp(a->name, b->name) != 0 || a->index != b->index)
                DIFF("node %u: %s, fresh %s", b->index, a->name, n);
        if (memcmp(&a->allocatable, &b->allocatable, sizeof(a->allocatable)) != 0 ||
            memcmp(&a->idle, &b->idle, sizeof(a->idle)) != 0 ||
            memcmp(&a->used, &b->used, sizeof(a->used)) != 0 ||
            memcmp(&a->releasing, &b->releasing, sizeof(a->releasing)) != 0 ||
            memcmp(&a->pipelined, &b->pipelined, sizeof(a->pipelined)) != 0)
                DIFF("node %s: resource sums", n);
        if (a->ntasks != b->ntasks || task_idx(rank, a->tasks) != task_idx(NULL, b->tasks) ||
            task_idx(rank, a->tasks_tail) != task_idx(NULL, b->tasks_tail))
                DIFF("node %s: task list (%u tasks, fresh %u)", n, a->ntasks, b->ntasks);
        if (a->version != b->version)
                DIFF("node %s: version %u, fresh %u", n, a->version, b->version);
}

static void check_queue(const struct kb_queue_info *a, const struct kb_queue_info *b)
{
        const char *n = b->name;
        if (a->queue != b->queue || strcmp(a->name, b->name) != 0 || a->index != b->index)
                DIFF("queue %u: %s, fresh %s", b->index, a->name, n);
        if (a->weight != b->weight || a->state != b->state || a->parent != b->parent ||
            a->share != b->share || a->waiting != b->waiting ||
            memcmp(&a->deserved, &b->deserved, sizeof(a->deserved)) != 0)
                DIFF("queue %s: weight, state or status fields", n);
}

static void check_job(const int32_t *rank, const struct kb_job *a, const struct kb_job *b)
{
        const char *n = b->name;
        if (a->pg != b->pg || strcmp(a->name, b->name) != 0 || a->index != b->index)
                DIFF("job %u: %s, fresh %s", b->index, a->name, n);
        if (!kb_streq(a->namespace, b->namespace) || !kb_streq(a->queue_name, b->queue_name) ||
            (a->queue ? a->queue->index : UINT32_MAX) != (b->queue ? b->queue->index : UINT32_MAX))
                DIFF("job %s: namespace or queue", n);
        if (a->min_available != b->min_available || a->priority != b->priority ||
            a->creation != b->creation || a->phase != b->phase)
                DIFF("job %s: minAvailable %d/%d, priority %d/%d, phase %s/%s", n, a->min_available,
                     b->min_available, a->priority, b->priority, kb_pg_phase_name(a->phase),
                     kb_pg_phase_name(b->phase));
        if (a->ntasks != b->ntasks)
                DIFF("job %s: %u tasks, fresh %u", n, a->ntasks, b->ntasks);
        for (uint32_t i = 0; i < a->ntasks; i++)
                if (task_idx(rank, a->tasks[i]) != task_idx(NULL, b->tasks[i]))
                        DIFF("job %s: task %u", n, i);
        if (memcmp(a->count, b->count, sizeof(a->count)) != 0 ||
            a->pending_best_effort != b->pending_best_effort || a->unevaluated != b->unevaluated ||
            a->bad_runtime != b->bad_runtime)
                DIFF("job %s: task counts", n);
        /* request_alike may be NULL where a build would find one (a task
         * that asked otherwise went), never wrong. */
        for (uint32_t i = 0; a->request_alike && i < a->ntasks; i++)
                if (a->tasks[i]->resreq != a->request_alike)
                        DIFF("job %s: task %u asks otherwise than request_alike", n, i);
        if (memcmp(&a->allocated, &b->allocated, sizeof(a->allocated)) != 0 ||
            memcmp(&a->total_request, &b->total_request, sizeof(a->total_request)) != 0 ||
            memcmp(&a->pending_request, &b->pending_request, sizeof(a->pending_request)) != 0)
                DIFF("job %s: allocated, total or pending request", n);
        if (!kb_streq(a->invalid, b->invalid) || !kb_streq(a->invalid_reason, b->invalid_reason))
                DIFF("job %s: invalid %s, fresh %s", n, a->invalid ? a->invalid : "(none)",
                     b->invalid ? b->invalid : "(none)");
        if (a->foreign_pods != b->foreign_pods || a->foreign_owner != b->foreign_owner ||
            !kb_streq(a->foreign_scheduler, b->foreign_scheduler))
                DIFF("job %s: foreign pods", n);
        /* What sessions write, as a fresh build leaves it. */
        if (a->enqueue_why || a->enqueue_reason || a->fit_error || a->fit_task || a->fit_placed ||
            a->quota_error || a->quota_reason || a->quota_checked || a->position || a->partial ||
            a->partial_never || a->inqueue_since || a->inqueue_expired || a->inqueue_backoff ||
            a->evictions || a->evicted_by || a->expected || a->expected_start)
                DIFF("job %s: a session's field left set", n);
}

/* The kept model in s against a fresh build of s's snapshot. */
static void model_check(struct kb_session *s)
{
        struct kb_session f = {.snap = s->snap, .conf = s->conf};
        kb_pool_init(&f.pool, 1 << 20);
        kb__session_build(&f, &f.pool);
        int32_t *rank = kb_xmalloc((s->ntasks + 1) * sizeof(*rank));
        size_t live = 0;
        for (size_t i = 0; i < s->ntasks; i++) {
                const struct kb_task *t = &s->tasks[i];
                if (t->index != i)
                        DIFF("task %s: index %u at %zu", t->name, t->index, i);
                if (kb__task_hole(t) && (t->job || t->node >= 0 || t->node_prev || t->node_next))
                        DIFF("task %zu: a hole on a job or node", i);
                rank[i] = kb__task_hole(t) ? -1 : (int32_t)live++;
        }
        if (f.nnodes != s->nnodes || f.nqueues != s->nqueues || f.njobs != s->njobs ||
            f.ntasks != live)
                DIFF("%zu nodes, %zu queues, %zu jobs, %zu tasks; fresh %zu, %zu, %zu, %zu",
                     s->nnodes, s->nqueues, s->njobs, live, f.nnodes, f.nqueues, f.njobs, f.ntasks);
        if (memcmp(&f.total, &s->total, sizeof(f.total)) != 0)
                DIFF("%s", "the nodes' total");
        for (size_t i = 0; i < f.nnodes; i++)
                check_node(rank, &s->nodes[i], &f.nodes[i]);
        for (size_t i = 0; i < f.nqueues; i++)
                check_queue(&s->queues[i], &f.queues[i]);
        for (size_t i = 0; i < f.njobs; i++)
                check_job(rank, s->jobs[i], f.jobs[i]);
        for (size_t i = 0; i < s->ntasks; i++)
                if (rank[i] >= 0)
                        check_task(rank, &s->tasks[i], &f.tasks[rank[i]]);
        free(rank);
        kb_map_release(&f.node_ids);
        kb_map_release(&f.queue_ids);
        kb_map_release(&f.interned);
        free(f.changes);
        kb_pool_release(&f.pool);
}

bool kb__model_check_due(const struct kb_model *m)
{
        const char *e = getenv("KB_MODEL_CHECK");
        long every = e && *e ? strtol(e, NULL, 10) : 1;
        return every > 0 && (m->nbuilt + m->nreused) % (uint64_t)every == 0;
}
#endif

/* ---- open and close ------------------------------------------------------------- */

void kb__model_open(struct kb_session *s)
{
        struct kb_model *m = s->model;
        s->model = NULL; /* nothing to save while building */
        bool same = s->snap->gen == m->gen;
        if (!kb__model_same_input(m, s->snap) || (!same && !model_update(s, m))) {
                model_build(s, m);
                s->model = m;
                return;
        }
        m->nreused += same;
        model_use(s, m);
        kb_map_init(&s->interned, KB_MAP_STR);
        s->conds = kb_pool_alloc(&s->pool, (s->njobs + 1) * sizeof(*s->conds));
        s->model = m;
#ifdef KB_TESTING
        if (kb__model_check_due(m))
                model_check(s);
#endif
}

void kb__model_close(struct kb_session *s)
{
        struct kb_model *m = s->model;
        for (size_t i = 0; i < m->nsaved; i++) {
                const struct kb__task_save *save = &m->saved[i];
                struct kb_task *t = save->t;
                t->node_prev = save->node_prev;
                t->node_next = save->node_next;
                t->node = save->node;
                t->eclass = save->eclass;
                t->status = save->status;
                t->fit_error = NULL;
                m->touched[t->index] = 0;
        }
        m->nsaved = 0;
        /* Task fit errors (set before or without a save): the jobs still
         * say which have any. */
        for (size_t i = 0; i < m->njobs; i++) {
                struct kb_job *j = m->jobs[i];
                if (!j->fit_error)
                        continue;
                for (uint32_t k = 0; k < j->ntasks; k++)
                        j->tasks[k]->fit_error = NULL;
        }
        for (size_t i = 0; i < m->njobs; i++)
                *m->jobs[i] = m->base_jobs[i];
        if (m->nnodes)
                memcpy(m->nodes, m->base_nodes, m->nnodes * sizeof(*m->nodes));
        if (m->nqueues)
                memcpy(m->queues, m->base_queues, m->nqueues * sizeof(*m->queues));
#ifdef KB_TESTING
        /* What the next session on this generation would start from. */
        if (kb__model_check_due(m))
                model_check(s);
#endif
}
