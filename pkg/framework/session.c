/*
 * The session: open (build jobs, tasks, nodes and queues from the snapshot;
 * open the plugins), run the actions, close (plugins close, PodGroup and
 * queue statuses).
 *
 * Building the state follows Volcano's scheduler cache and snapshot:
 *  - a pod's task status comes from its phase, nodeName and deletion
 *    timestamp (Volcano api.getTaskStatus);
 *  - every non-terminal pod bound to a node counts on that node, whichever
 *    scheduler placed it (NodeInfo.AddTask);
 *  - pods of our scheduler join the job of the PodGroup their annotation
 *    names; one without a group is a job of its own with minMember 1 in the
 *    default queue (kube-batch's shadow PodGroup).
 */
#include <stdio.h>
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

uint32_t kb_job_waiting_count(const struct kb_job *j)
{
        return j->count[KB_TASK_PIPELINED];
}

uint32_t kb_job_pending_count(const struct kb_job *j)
{
        return j->count[KB_TASK_PENDING];
}

void kb__task_set_status(struct kb_task *t, enum kb_task_status st)
{
        struct kb_job *j = t->job;
        if (j) {
                j->count[t->status]--;
                if (kb_task_status_allocated(t->status))
                        kb_res_sub(&j->allocated, &t->resreq);
                j->count[st]++;
                if (kb_task_status_allocated(st))
                        kb_res_add(&j->allocated, &t->resreq);
        }
        t->status = st;
}

/* ---- node accounting ------------------------------------------------------ */

void kb_node_future_idle(const struct kb_node_info *n, struct kb_res *out)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                out->q[i] = n->idle.q[i] + n->releasing.q[i] - n->pipelined.q[i];
}

static void log_change(struct kb_session *s, const struct kb_node_info *n)
{
        KB_PUSH(s->changes, s->nchanges, s->capchanges, n->index);
}

/* Volcano NodeInfo.AddTask: a Releasing task holds idle resources and is
 * also counted as releasing; a Pipelined one only reserves future idle;
 * every other status takes idle resources. */
void kb__node_add_task(struct kb_session *s, struct kb_node_info *n, const struct kb_task *t)
{
        switch (t->status) {
        case KB_TASK_RELEASING:
                kb_res_sub(&n->idle, &t->resreq);
                kb_res_add(&n->releasing, &t->resreq);
                kb_res_add(&n->used, &t->resreq);
                break;
        case KB_TASK_PIPELINED:
                kb_res_add(&n->pipelined, &t->resreq);
                break;
        default:
                kb_res_sub(&n->idle, &t->resreq);
                kb_res_add(&n->used, &t->resreq);
                break;
        }
        n->ntasks++;
        if (s)
                log_change(s, n);
}

void kb__node_remove_task(struct kb_session *s, struct kb_node_info *n, const struct kb_task *t)
{
        switch (t->status) {
        case KB_TASK_RELEASING:
                kb_res_add(&n->idle, &t->resreq);
                kb_res_sub(&n->releasing, &t->resreq);
                kb_res_sub(&n->used, &t->resreq);
                break;
        case KB_TASK_PIPELINED:
                kb_res_sub(&n->pipelined, &t->resreq);
                break;
        default:
                kb_res_add(&n->idle, &t->resreq);
                kb_res_sub(&n->used, &t->resreq);
                break;
        }
        n->ntasks--;
        log_change(s, n);
}

/* ---- lookups ------------------------------------------------------------------ */

static int cmp_node_info(const void *a, const void *b)
{
        return strcmp(((const struct kb_node_info *)a)->name,
                      ((const struct kb_node_info *)b)->name);
}

static struct kb_node_info *find_node(struct kb_session *s, const char *name)
{
        struct kb_node_info key = {.name = name};
        return bsearch(&key, s->nodes, s->nnodes, sizeof(*s->nodes), cmp_node_info);
}

static int cmp_queue_info(const void *a, const void *b)
{
        return strcmp(((const struct kb_queue_info *)a)->name,
                      ((const struct kb_queue_info *)b)->name);
}

struct kb_queue_info *kb_session_queue(struct kb_session *s, const char *name)
{
        struct kb_queue_info key = {.name = name};
        return bsearch(&key, s->queues, s->nqueues, sizeof(*s->queues), cmp_queue_info);
}

static int cmp_job_name(const void *a, const void *b)
{
        return strcmp((*(struct kb_job *const *)a)->name, (*(struct kb_job *const *)b)->name);
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

struct kb_intern {
        struct kb_intern *next;
        uint64_t hash;
        const char *str;
};

const char *kb_session_intern(struct kb_session *s, const char *str)
{
        uint64_t h = kb_hash(str, strlen(str), KB_HASH_SEED);
        for (struct kb_intern *e = s->interned; e; e = e->next)
                if (e->hash == h && strcmp(e->str, str) == 0)
                        return e->str;
        struct kb_intern *e = kb_pool_alloc(&s->pool, sizeof(*e));
        e->hash = h;
        e->str = kb_pool_strdup(&s->pool, str);
        e->next = s->interned;
        s->interned = e;
        return e->str;
}

/* ---- accessors ------------------------------------------------------------- */

struct kb_pool *kb_session_pool(struct kb_session *s)
{
        return &s->pool;
}

const struct kb_snapshot *kb_session_snapshot(struct kb_session *s)
{
        return s->snap;
}

const struct kb_conf *kb_session_conf(struct kb_session *s)
{
        return s->conf;
}

struct kb_job **kb_session_jobs(struct kb_session *s, size_t *n)
{
        *n = s->njobs;
        return s->jobs;
}

struct kb_node_info *kb_session_nodes(struct kb_session *s, size_t *n)
{
        *n = s->nnodes;
        return s->nodes;
}

struct kb_queue_info *kb_session_queues(struct kb_session *s, size_t *n)
{
        *n = s->nqueues;
        return s->queues;
}

const struct kb_res *kb_session_total(struct kb_session *s)
{
        return &s->total;
}

const struct kb_value *kb_session_action_args(struct kb_session *s)
{
        static const struct kb_value empty = {.type = KB_VOBJECT};
        return s->cur_action && s->cur_action->arguments ? s->cur_action->arguments : &empty;
}

void kb_job_set_condition(struct kb_session *s, struct kb_job *j, const char *type,
                          const char *status, const char *reason, const char *message)
{
        struct kb_session_cond *c = &s->conds[j->index];
        c->type = kb_pool_strdup(&s->pool, type);
        c->status = kb_pool_strdup(&s->pool, status);
        c->reason = kb_pool_strdup(&s->pool, reason ? reason : "");
        c->message = kb_pool_strdup(&s->pool, message ? message : "");
}

void kb_job_explain(struct kb_session *s, const struct kb_job *j, const char *why)
{
        struct kb_job *job = s->jobs[j->index];
        if (!job->enqueue_reason)
                job->enqueue_reason = kb_pool_strdup(&s->pool, why);
}

/* ---- open ---------------------------------------------------------------- */

/* Volcano api.getTaskStatus. */
static enum kb_task_status pod_task_status(const struct kb_pod *p)
{
        switch (p->phase) {
        case KB_POD_RUNNING:
                return p->meta.deletion ? KB_TASK_RELEASING : KB_TASK_RUNNING;
        case KB_POD_PENDING:
                if (p->meta.deletion)
                        return KB_TASK_RELEASING;
                return p->node_name && *p->node_name ? KB_TASK_BOUND : KB_TASK_PENDING;
        case KB_POD_SUCCEEDED:
                return KB_TASK_SUCCEEDED;
        case KB_POD_FAILED:
                return KB_TASK_FAILED;
        default:
                return KB_TASK_UNKNOWN;
        }
}

static bool ours(const struct kb_snapshot *snap, const struct kb_pod *p)
{
        for (size_t i = 0; i < snap->nscheduler_names; i++)
                if (kb_streq(p->scheduler_name, snap->scheduler_names[i]))
                        return true;
        return false;
}

static enum kb_pg_phase pg_phase(const struct kb_podgroup *pg)
{
        if (!pg || !pg->phase)
                return KB_PG_PENDING;
        for (int p = KB_PG_PENDING; p <= KB_PG_COMPLETED; p++)
                if (strcmp(pg->phase, kb_pg_phase_name((enum kb_pg_phase)p)) == 0)
                        return (enum kb_pg_phase)p;
        return KB_PG_PENDING;
}

static int32_t class_priority(struct kb_session *s, const char *name)
{
        int32_t v = 0;
        if (name && *name && kb_session_priority_class(s, name, &v))
                return v;
        if (kb_session_priority_class(s, NULL, &v))
                return v;
        return 0;
}

static struct kb_job *new_job(struct kb_session *s, const char *name, const char *ns)
{
        struct kb_job *j = kb_pool_alloc(&s->pool, sizeof(*j));
        j->name = name;
        j->namespace = ns;
        return j;
}

/* Builds nodes, queues, jobs and tasks.  Jobs are sorted PodGroups first
 * (by namespace/name) then lone pods (by namespace/name). */
static void build_state(struct kb_session *s)
{
        const struct kb_snapshot *snap = s->snap;
        const char *dflt_queue = snap->default_queue ? snap->default_queue : "default";

        /* Nodes, sorted by name so that lookups and tie-breaks are stable. */
        s->nnodes = snap->nnodes;
        s->nodes = kb_pool_alloc(&s->pool, (snap->nnodes + 1) * sizeof(*s->nodes));
        for (size_t i = 0; i < snap->nnodes; i++) {
                struct kb_node_info *n = &s->nodes[i];
                n->node = snap->nodes[i];
                n->name = n->node->meta.name;
                n->allocatable = n->node->allocatable;
                n->idle = n->allocatable;
        }
        qsort(s->nodes, s->nnodes, sizeof(*s->nodes), cmp_node_info);
        for (size_t i = 0; i < s->nnodes; i++) {
                s->nodes[i].index = (uint32_t)i;
                kb_res_add(&s->total, &s->nodes[i].allocatable);
        }

        s->nqueues = snap->nqueues;
        s->queues = kb_pool_alloc(&s->pool, (snap->nqueues + 1) * sizeof(*s->queues));
        for (size_t i = 0; i < snap->nqueues; i++) {
                struct kb_queue_info *q = &s->queues[i];
                q->queue = snap->queues[i];
                q->name = q->queue->meta.name;
                q->weight = q->queue->weight;
                q->state = q->queue->state;
        }
        qsort(s->queues, s->nqueues, sizeof(*s->queues), cmp_queue_info);
        for (size_t i = 0; i < s->nqueues; i++)
                s->queues[i].index = (uint32_t)i;

        /* PodGroup jobs. */
        size_t cap = snap->npodgroups + 16, njobs = 0;
        struct kb_job **jobs = kb_xmalloc(cap * sizeof(*jobs));
        for (size_t i = 0; i < snap->npodgroups; i++) {
                const struct kb_podgroup *pg = snap->podgroups[i];
                const char *ns = pg->meta.namespace ? pg->meta.namespace : "default";
                struct kb_job *j =
                    new_job(s, kb_pool_printf(&s->pool, "%s/%s", ns, pg->meta.name), ns);
                j->pg = pg;
                j->min_available = pg->min_member;
                j->queue_name = pg->queue ? pg->queue : dflt_queue;
                j->priority = class_priority(s, pg->priority_class_name);
                j->creation = pg->meta.creation;
                j->phase = pg_phase(pg);
                jobs[njobs++] = j;
        }
        qsort(jobs, njobs, sizeof(*jobs), cmp_job_name);
        size_t npg_jobs = njobs;

        /* Tasks: count first so each job's task array is one allocation. */
        s->tasks = kb_pool_alloc(&s->pool, (snap->npods + 1) * sizeof(*s->tasks));
        uint32_t *job_of = kb_xmalloc((snap->npods + 1) * sizeof(*job_of));
        for (size_t i = 0; i < snap->npods; i++) {
                const struct kb_pod *p = snap->pods[i];
                enum kb_task_status st = pod_task_status(p);
                job_of[i] = UINT32_MAX;

                /* Node accounting, for every scheduler's pods. */
                struct kb_node_info *node = NULL;
                if (p->node_name && *p->node_name && st != KB_TASK_SUCCEEDED &&
                    st != KB_TASK_FAILED)
                        node = find_node(s, p->node_name);
                if (node) {
                        struct kb_task tmp = {.status = st, .resreq = p->requests};
                        kb__node_add_task(NULL, node, &tmp);
                }
                if (!ours(snap, p))
                        continue;

                struct kb_task *t = &s->tasks[s->ntasks];
                const char *ns = p->meta.namespace ? p->meta.namespace : "default";
                t->pod = p;
                t->index = (uint32_t)s->ntasks;
                t->name = kb_pool_printf(&s->pool, "%s/%s", ns, p->meta.name);
                t->role = kb_meta_annotation(&p->meta, "volcano.sh/task-spec");
                if (!t->role)
                        t->role = "";
                t->status = st;
                t->node = node ? (int32_t)node->index : -1;
                t->priority =
                    p->has_priority ? p->priority : class_priority(s, p->priority_class_name);
                t->best_effort = p->best_effort;
                t->resreq = p->requests;

                struct kb_job *j = NULL;
                if (p->group_name && *p->group_name) {
                        struct kb_job key_job = {
                            .name = kb_pool_printf(&s->pool, "%s/%s", ns, p->group_name)};
                        struct kb_job *key = &key_job;
                        struct kb_job **found =
                            bsearch(&key, jobs, npg_jobs, sizeof(*jobs), cmp_job_name);
                        if (found) {
                                j = *found;
                        } else {
                                /* The group is missing: a job that cannot run
                                 * and says why. */
                                for (size_t k = npg_jobs; k < njobs; k++)
                                        if (strcmp(jobs[k]->name, key_job.name) == 0)
                                                j = jobs[k];
                                if (!j) {
                                        j = new_job(s, key_job.name, ns);
                                        j->queue_name = dflt_queue;
                                        j->min_available = 1;
                                        j->invalid = kb_pool_printf(
                                            &s->pool, "podgroup %s not found", key_job.name);
                                        j->creation = p->meta.creation;
                                        KB_PUSH(jobs, njobs, cap, j);
                                }
                        }
                } else {
                        j = new_job(s, t->name, ns);
                        j->queue_name = dflt_queue;
                        j->min_available = 1;
                        j->priority = t->priority;
                        j->creation = p->meta.creation;
                        KB_PUSH(jobs, njobs, cap, j);
                }
                t->job = j;
                j->ntasks++;
                j->count[st]++;
                if (kb_task_status_allocated(st))
                        kb_res_add(&j->allocated, &t->resreq);
                if (st != KB_TASK_SUCCEEDED && st != KB_TASK_FAILED)
                        kb_res_add(&j->total_request, &t->resreq);
                s->ntasks++;
        }
        free(job_of);

        /* Lone-pod and missing-group jobs after the PodGroup jobs, by name. */
        qsort(jobs + npg_jobs, njobs - npg_jobs, sizeof(*jobs), cmp_job_name);
        s->njobs = njobs;
        s->jobs = kb_pool_alloc(&s->pool, (njobs + 1) * sizeof(*s->jobs));
        memcpy(s->jobs, jobs, njobs * sizeof(*jobs));
        free(jobs);
        for (size_t i = 0; i < s->njobs; i++) {
                struct kb_job *j = s->jobs[i];
                j->index = (uint32_t)i;
                j->tasks = kb_pool_alloc(&s->pool, (j->ntasks + 1) * sizeof(*j->tasks));
                j->ntasks = 0;
                if (!j->invalid) {
                        j->queue = kb_session_queue(s, j->queue_name);
                        if (!j->queue)
                                j->invalid =
                                    kb_pool_printf(&s->pool, "queue %s not found", j->queue_name);
                }
        }
        for (size_t i = 0; i < s->ntasks; i++) {
                struct kb_task *t = &s->tasks[i];
                t->job->tasks[t->job->ntasks++] = t;
        }
        s->conds = kb_pool_alloc(&s->pool, (s->njobs + 1) * sizeof(*s->conds));
}

/* ---- close ----------------------------------------------------------------- */

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

static void close_statuses(struct kb_session *s)
{
        struct kb_result *r = s->result;
        size_t npg = 0;
        for (size_t i = 0; i < s->njobs; i++)
                npg += reported(s->jobs[i]);
        r->podgroups = kb_pool_alloc(&r->pool, (npg + 1) * sizeof(*r->podgroups));

        for (size_t i = 0; i < s->njobs; i++) {
                struct kb_job *j = s->jobs[i];
                /* A job that could not be considered at all says why. */
                const char *invalid = kb_job_valid(s, j);
                if (invalid && !s->conds[j->index].type)
                        kb_job_set_condition(s, j, "Unschedulable", "True", "NotEnoughResources",
                                             invalid);
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
                if (c->type) {
                        st->cond_type = kb_pool_strdup(&r->pool, c->type);
                        st->cond_status = kb_pool_strdup(&r->pool, c->status);
                        st->cond_reason = kb_pool_strdup(&r->pool, c->reason);
                        st->cond_message = kb_pool_strdup(&r->pool, c->message);
                }
        }

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
        for (size_t i = 0; i < s->njobs; i++) {
                struct kb_job *j = s->jobs[i];
                size_t entry = k;
                if (reported(j))
                        k++;
                if (!j->queue)
                        continue;
                struct kb_queue_status *qs = &r->queues[j->queue->index];
                kb_res_add(&qs->allocated, &j->allocated);
                if (!j->pg)
                        continue;
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
}

/* ---- results --------------------------------------------------------------- */

void kb__result_add_bind(struct kb_session *s, const struct kb_task *t)
{
        struct kb_result *r = s->result;
        struct kb_bind b = {t->pod, s->nodes[t->node].name};
        KB_PUSH(r->binds, r->nbinds, r->capbinds, b);
}

void kb__result_add_eviction(struct kb_session *s, const struct kb_task *t, const char *action,
                             const char *reason)
{
        struct kb_result *r = s->result;
        struct kb_eviction e = {t->pod, kb_pool_strdup(&r->pool, action),
                                kb_pool_strdup(&r->pool, reason ? reason : "")};
        KB_PUSH(r->evictions, r->nevictions, r->capevictions, e);
}

void kb_result_release(struct kb_result *r)
{
        free(r->binds);
        free(r->evictions);
        kb_pool_release(&r->pool);
        memset(r, 0, sizeof(*r));
}

/* ---- run ------------------------------------------------------------------ */

int kb_session_run(const struct kb_snapshot *snap, const struct kb_conf *conf,
                   struct kb_result *result)
{
        double start = kb_now_mono();
        struct kb_session *s = kb_xcalloc(1, sizeof(*s));
        size_t nplugins = 0, k = 0;
        int rc = 0;

        memset(result, 0, sizeof(*result));
        kb_pool_init(&result->pool, 0);
        kb_pool_init(&s->pool, 1 << 20);
        s->snap = snap;
        s->conf = conf;
        s->result = result;
        build_state(s);
        kb__select_init(s);

        for (size_t t = 0; t < conf->ntiers; t++)
                nplugins += conf->tiers[t].nplugins;
        s->plugin_state = kb_pool_alloc(&s->pool, (nplugins + 1) * sizeof(void *));
        result->plugin_times =
            kb_pool_alloc(&result->pool, (nplugins + 1) * sizeof(*result->plugin_times));
        result->action_times =
            kb_pool_alloc(&result->pool, (conf->nactions + 1) * sizeof(*result->action_times));
        for (size_t t = 0; t < conf->ntiers; t++) {
                for (size_t p = 0; p < conf->tiers[t].nplugins; p++, k++) {
                        const struct kb_plugin_conf *pc = &conf->tiers[t].plugins[p];
                        const struct kb_plugin *plugin = kb_plugin_find(pc->name);
                        struct kb_plugin_time *pt = &result->plugin_times[k];
                        pt->name = pc->name;
                        result->nplugin_times = k + 1;
                        if (!plugin) {
                                rc = KB_EBADCONF;
                                continue;
                        }
                        s->cur_plugin = pc;
                        s->cur_tier = (int)t;
                        double t0 = kb_now_mono();
                        s->plugin_state[k] = plugin->open ? plugin->open(s, pc->arguments) : NULL;
                        pt->open = kb_now_mono() - t0;
                }
        }
        s->cur_plugin = NULL;

        for (size_t a = 0; a < conf->nactions; a++) {
                const struct kb_action *action = kb_action_find(conf->actions[a].name);
                if (!action) {
                        rc = KB_EBADCONF;
                        continue;
                }
                s->cur_action = &conf->actions[a];
                double t0 = kb_now_mono();
                action->execute(s);
                struct kb_action_time *at = &result->action_times[result->naction_times++];
                at->name = conf->actions[a].name;
                at->seconds = kb_now_mono() - t0;
                KB_V(3, "action %s took %.6fs", action->name, at->seconds);
        }
        s->cur_action = NULL;

        k = 0;
        for (size_t t = 0; t < conf->ntiers; t++) {
                for (size_t p = 0; p < conf->tiers[t].nplugins; p++, k++) {
                        const struct kb_plugin *plugin =
                            kb_plugin_find(conf->tiers[t].plugins[p].name);
                        double t0 = kb_now_mono();
                        if (plugin && plugin->close)
                                plugin->close(s, s->plugin_state[k]);
                        result->plugin_times[k].close = kb_now_mono() - t0;
                }
        }
        close_statuses(s);

        kb__select_release(s);
        kb__statements_release(s);
        free(s->changes);
#define FREE_LIST(l) free(s->l.v);
        FREE_LIST(job_order)
        FREE_LIST(queue_order)
        FREE_LIST(task_order)
        FREE_LIST(namespace_order)
        FREE_LIST(predicate)
        FREE_LIST(node_order)
        FREE_LIST(batch_node_order)
        FREE_LIST(job_ready)
        FREE_LIST(job_pipelined)
        FREE_LIST(job_valid)
        FREE_LIST(job_enqueueable)
        FREE_LIST(job_enqueued)
        FREE_LIST(job_starving)
        FREE_LIST(overused)
        FREE_LIST(allocatable)
        FREE_LIST(preemptable)
        FREE_LIST(reclaimable)
        FREE_LIST(preemptive)
#undef FREE_LIST
        free(s->events);
        kb_pool_release(&s->pool);
        free(s);
        result->duration = kb_now_mono() - start;
        return rc;
}
