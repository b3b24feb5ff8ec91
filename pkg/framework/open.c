/*
 * Opening a session: the snapshot becomes the session's model, in four
 * steps (nodes, queues, jobs, tasks), following Volcano's scheduler cache
 * and snapshot:
 *
 *  - nodes sorted by name (stable lookups and tie-breaks);
 *  - queues sorted by name;
 *  - one job per PodGroup (sorted by namespace/name), with its priority
 *    from priorityClassName and its phase from the status;
 *  - a task per pod of ours, with Volcano's task status (api.getTaskStatus)
 *    joining the job its annotation (or scheduler-plugins' label) names; a
 *    pod that names no group joins the PodGroup kbatch makes for its
 *    workload (snap->workload_podgroups), or else is a job of its own with
 *    minMember 1 in the default queue (kube-batch's shadow PodGroup); one
 *    naming a missing group (or whose workload's group is not made yet)
 *    gets a job that cannot run and says why;
 *  - a task per pod of another scheduler that sits on a node, so that the
 *    node's accounting and task list hold everything on it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

/* ---- nodes and queues ---------------------------------------------------------- */

static int cmp_node_info(const void *a, const void *b)
{
        return strcmp(((const struct kb_node_info *)a)->name,
                      ((const struct kb_node_info *)b)->name);
}

void kb__node_read(struct kb_node_info *n, const struct kb_node *node)
{
        n->node = node;
        n->name = node->meta.name;
        n->allocatable = node->allocatable;
}

static void build_nodes(struct kb_session *s)
{
        const struct kb_snapshot *snap = s->snap;
        s->nnodes = snap->nnodes;
        s->nodes = kb_pool_alloc(s->bpool, (snap->nnodes + 1) * sizeof(*s->nodes));
        for (size_t i = 0; i < snap->nnodes; i++) {
                struct kb_node_info *n = &s->nodes[i];
                kb__node_read(n, snap->nodes[i]);
                n->idle = n->allocatable; /* the tasks attached take theirs */
        }
        qsort(s->nodes, s->nnodes, sizeof(*s->nodes), cmp_node_info);
        kb_map_reserve(&s->node_ids, s->nnodes);
        for (size_t i = 0; i < s->nnodes; i++) {
                s->nodes[i].index = (uint32_t)i;
                kb_res_add(&s->total, &s->nodes[i].allocatable);
                /* A kept model's keys are copies: it outlives node
                 * objects that are replaced (update_node.c), and a key
                 * borrowed from a freed one would be read by the next
                 * lookup.  A session's own model goes with its snapshot. */
                const char *name = s->nodes[i].name;
                if (s->bpool != &s->pool)
                        name = kb_pool_strdup(s->bpool, name);
                bool added;
                uint64_t *v = kb_map_put_str(&s->node_ids, name, strlen(name), &added);
                if (added) /* of two nodes of one name, the first */
                        *v = i;
        }
}

static int cmp_queue_info(const void *a, const void *b)
{
        return strcmp(((const struct kb_queue_info *)a)->name,
                      ((const struct kb_queue_info *)b)->name);
}

static void build_queues(struct kb_session *s)
{
        const struct kb_snapshot *snap = s->snap;
        s->nqueues = snap->nqueues;
        s->queues = kb_pool_alloc(s->bpool, (snap->nqueues + 1) * sizeof(*s->queues));
        for (size_t i = 0; i < snap->nqueues; i++) {
                struct kb_queue_info *q = &s->queues[i];
                q->queue = snap->queues[i];
                q->name = q->queue->meta.name;
                q->weight = q->queue->weight;
                q->state = q->queue->state;
        }
        qsort(s->queues, s->nqueues, sizeof(*s->queues), cmp_queue_info);
        for (size_t i = 0; i < s->nqueues; i++) {
                bool added;
                uint64_t *v = kb_map_put_str(&s->queue_ids, s->queues[i].name,
                                             strlen(s->queues[i].name), &added);
                if (added)
                        *v = i;
                s->queues[i].index = (uint32_t)i;
                s->queues[i].parent = -1;
        }
}

/* ---- jobs -------------------------------------------------------------------- */

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

static int cmp_job_name(const void *a, const void *b)
{
        return strcmp((*(struct kb_job *const *)a)->name, (*(struct kb_job *const *)b)->name);
}

/* The jobs being built: PodGroup jobs, then the jobs made for pods (lone
 * pods and missing groups), all found through a kb_map by name, so a
 * task finds its job in one probe (a session at W2 does that 100,000
 * times).  A lone pod's job and a group's job may share a name (a pod and
 * a PodGroup both called x): the table tells them apart. */
struct jobs {
        struct kb_job **v;
        size_t n, cap, npg;
        /* Jobs by name: groups' (PodGroups and missing groups), lone pods'. */
        struct kb_map groups, lone;
        /* The group's job found or filed last: a group's pods mostly come
         * one after another in the snapshot, so it answers most lookups
         * without hashing the name (the idle W2 session: 100,000 lookups,
         * 95% of them this one). */
        struct kb_job *last_group;
};

static struct kb_job *new_job(struct kb_session *s, struct jobs *js, const char *name,
                              const char *ns)
{
        struct kb_job *j = kb_pool_alloc(s->bpool, sizeof(*j));
        j->name = name;
        j->namespace = ns;
        KB_PUSH(js->v, js->n, js->cap, j);
        return j;
}

/* The job named name (len bytes) of the kind asked for, or NULL. */
static struct kb_job *find_job(struct jobs *js, const char *name, size_t len, bool grouped)
{
        struct kb_job *last = grouped ? js->last_group : NULL;
        if (last && strncmp(last->name, name, len) == 0 && last->name[len] == '\0')
                return last;
        uint64_t *v = kb_map_get_str(grouped ? &js->groups : &js->lone, name, len);
        struct kb_job *j = v ? (struct kb_job *)(uintptr_t)*v : NULL;
        if (j && grouped)
                js->last_group = j;
        return j;
}

/* Files j (its name outlives the session's open) as a group's job or not. */
static void file_job(struct jobs *js, struct kb_job *j, bool grouped)
{
        *kb_map_put_str(grouped ? &js->groups : &js->lone, j->name, strlen(j->name), NULL) =
            (uint64_t)(uintptr_t)j;
        if (grouped)
                js->last_group = j;
}

void kb__job_from_pg(struct kb_session *s, struct kb_job *j, const struct kb_podgroup *pg)
{
        j->pg = pg;
        j->namespace = kb_meta_ns(&pg->meta);
        j->min_available = pg->min_member;
        j->queue_name = pg->queue ? pg->queue : kb_ns_or_default(s->snap->default_queue);
        j->priority = class_priority(s, pg->priority_class_name);
        j->creation = pg->meta.creation;
        j->phase = pg_phase(pg);
}

static void build_podgroup_jobs(struct kb_session *s, struct jobs *js)
{
        const struct kb_snapshot *snap = s->snap;
        for (size_t i = 0; i < snap->npodgroups; i++) {
                const struct kb_podgroup *pg = snap->podgroups[i];
                const char *ns = kb_meta_ns(&pg->meta);
                struct kb_job *j = new_job(s, js, kb_pool_path(s->bpool, ns, pg->meta.name), ns);
                kb__job_from_pg(s, j, pg);
                if (s->pg_job)
                        s->pg_job[i] = j;
                /* Only before admission: a group another scheduler
                 * admitted (Volcano's, beside kbatch) is left to it, and
                 * its pending pods, once they exist, say the rest. */
                if (snap->pg_foreign && snap->pg_foreign[i].scheduler &&
                    j->phase == KB_PG_PENDING) {
                        j->foreign_owner = &snap->pg_foreign[i];
                        j->foreign_scheduler = j->foreign_owner->scheduler;
                }
        }
        if (js->n)
                qsort(js->v, js->n, sizeof(*js->v), cmp_job_name);
        js->npg = js->n;
        kb_map_reserve(&js->groups, snap->npodgroups);
        for (size_t i = 0; i < js->n; i++) {
                const char *name = js->v[i]->name;
                /* Two PodGroups cannot share a namespace and name. */
                if (!find_job(js, name, strlen(name), true))
                        file_job(js, js->v[i], true);
        }
}

/* Why a pod waits for a group that does not exist, and the reason. */
static void missing_group(struct kb_session *s, struct kb_job *j, const struct kb_pod *p,
                          bool workload)
{
        if (workload && p->workload_invalid) {
                j->invalid = p->workload_invalid;
                j->invalid_reason = KB_WHY_GROUP_ANNOTATION;
        } else if (workload) {
                j->invalid = kb_pool_printf(s->bpool,
                                            "waiting for kbatch to create podgroup %s, which it "
                                            "makes for the workload of pod %s",
                                            j->name, p->meta.name);
                j->invalid_reason = KB_WHY_PODGROUP_WAIT;
        } else if (p->group_from_label) {
                j->invalid = kb_pool_printf(s->bpool,
                                            "podgroup %s not found: kbatch makes it from the "
                                            "scheduling.x-k8s.io PodGroup that the pod's label %s "
                                            "names",
                                            j->name, KB_GROUP_LABEL_COSCHEDULING);
                j->invalid_reason = KB_WHY_PODGROUP_MISSING;
        } else {
                j->invalid = kb_pool_printf(s->bpool, "podgroup %s not found", j->name);
                j->invalid_reason = KB_WHY_PODGROUP_MISSING;
        }
}

const char *kb__pod_group(const struct kb_snapshot *snap, const struct kb_pod *p, bool *workload)
{
        const char *group = p->group_name;
        *workload = false;
        if ((!group || !*group) && p->workload_group && snap->workload_podgroups) {
                group = p->workload_group;
                *workload = true;
        }
        return group && *group ? group : NULL;
}

/* The job a pod of ours joins. */
static struct kb_job *job_for(struct kb_session *s, struct jobs *js, const struct kb_task *t)
{
        const struct kb_pod *p = t->pod;
        const char *ns = kb_meta_ns(&p->meta);
        const char *dflt_queue = s->snap->default_queue ? s->snap->default_queue : "default";
        bool workload;
        const char *group = kb__pod_group(s->snap, p, &workload);
        bool grouped = group != NULL;
        /* The group's "ns/name" on the stack: only a new job keeps it. */
        char buf[256];
        const char *name = t->name;
        size_t len;
        if (grouped) {
                size_t nns = strlen(ns), ng = strlen(group);
                len = nns + 1 + ng;
                if (len < sizeof(buf)) {
                        memcpy(buf, ns, nns);
                        buf[nns] = '/';
                        memcpy(buf + nns + 1, group, ng + 1);
                        name = buf;
                } else {
                        name = kb_pool_path(s->bpool, ns, group);
                }
        } else {
                len = strlen(name);
        }
        struct kb_job *j = find_job(js, name, len, grouped);
        if (j)
                return j;
        j = new_job(s, js, name == buf ? kb_pool_strdup(s->bpool, buf) : name, ns);
        file_job(js, j, grouped);
        j->queue_name = dflt_queue;
        j->min_available = 1;
        j->creation = p->meta.creation;
        if (grouped)
                missing_group(s, j, p, workload);
        else
                j->priority = t->priority;
        return j;
}

/* A pending pod of another scheduler that names one of the session's
 * PodGroups (not a pod's job of its own: that would be another
 * scheduler's alone) is counted on that group, with the scheduler it asks
 * for: a Volcano Job still saying schedulerName: volcano, the likeliest
 * slip when switching, would otherwise leave its group waiting for pods
 * kbatch never sees (issue 23, point 1). */
static void foreign_pod(struct kb_session *s, struct jobs *js, const struct kb_pod *p)
{
        const char *group = p->group_name;
        if (!group || !*group || p->phase != KB_POD_PENDING || p->meta.deletion)
                return;
        s->nforeign++;
        const char *ns = p->meta.namespace ? p->meta.namespace : "default";
        char buf[256];
        int len = snprintf(buf, sizeof(buf), "%s/%s", ns, group);
        if (len < 0 || (size_t)len >= sizeof(buf))
                return;
        struct kb_job *j = find_job(js, buf, (size_t)len, true);
        if (!j || !j->pg)
                return;
        if (!j->foreign_pods++)
                j->foreign_scheduler = p->scheduler_name ? p->scheduler_name : "default-scheduler";
}

/* ---- tasks ---------------------------------------------------------------------- */

/* The pod's node: its nodeName, or the node it is assumed on. */
const char *kb__pod_node(const struct kb_snapshot *snap, size_t i)
{
        const struct kb_pod *p = snap->pods[i];
        if (p->node_name && *p->node_name)
                return p->node_name;
        return snap->assumed_node ? snap->assumed_node[i] : NULL;
}

/* Pod i's status and the node that holds it (NULL when none, or when the
 * pod is over); whether the pod is ours (the build, update.c,
 * update_add.c). */
bool kb__pod_place(struct kb_session *s, size_t i, enum kb_task_status *st,
                   struct kb_node_info **node)
{
        const struct kb_snapshot *snap = s->snap;
        const char *on = kb__pod_node(snap, i);
        *st = kb__pod_status(snap->pods[i], on);
        *node = on && *st != KB_TASK_SUCCEEDED && *st != KB_TASK_FAILED ? kb_session_node(s, on)
                                                                          : NULL;
        return kb__pod_ours(snap, snap->pods[i]);
}

/* Volcano api.getTaskStatus (node: pod_node). */
enum kb_task_status kb__pod_status(const struct kb_pod *p, const char *node)
{
        switch (p->phase) {
        case KB_POD_RUNNING:
                return p->meta.deletion ? KB_TASK_RELEASING : KB_TASK_RUNNING;
        case KB_POD_PENDING:
                if (p->meta.deletion)
                        return KB_TASK_RELEASING;
                return node ? KB_TASK_BOUND : KB_TASK_PENDING;
        case KB_POD_SUCCEEDED:
                return KB_TASK_SUCCEEDED;
        case KB_POD_FAILED:
                return KB_TASK_FAILED;
        default:
                return KB_TASK_UNKNOWN;
        }
}

bool kb__pod_ours(const struct kb_snapshot *snap, const struct kb_pod *p)
{
        for (size_t i = 0; i < snap->nscheduler_names; i++)
                if (kb_streq(p->scheduler_name, snap->scheduler_names[i]))
                        return true;
        return false;
}

/*
 * The pod-name index: the part after the last '-' when the name has at
 * least three '-'-separated parts ("job-worker-3" -> 3), as Volcano's
 * GetPodIndexUnderTask; -1 when there is none or it is not a number.
 */
int64_t kb__pod_name_index(const char *name)
{
        int dashes = 0;
        const char *last = NULL;
        for (const char *p = name; *p; p++)
                if (*p == '-') {
                        dashes++;
                        last = p;
                }
        if (dashes < 2 || !last[1])
                return -1;
        int64_t v = 0;
        for (const char *p = last + 1; *p; p++) {
                if (*p < '0' || *p > '9' || v > 100000000)
                        return -1;
                v = v * 10 + (*p - '0');
        }
        return v;
}

void kb__task_fields(struct kb_session *s, struct kb_task *t, const struct kb_pod *p,
                     enum kb_task_status st)
{
        t->pod = p;
        /* The annotation, else the label of the same name (Volcano
         * master's getTaskRole in pkg/scheduler/api/job_info.go: its job
         * controller writes both); an empty value counts as none. */
        t->role = kb_meta_annotation(&p->meta, "volcano.sh/task-spec");
        if (!t->role || !*t->role)
                t->role = kb_meta_label(&p->meta, "volcano.sh/task-spec");
        if (!t->role)
                t->role = "";
        t->status = st;
        t->node = -1;
        t->priority = p->has_priority ? p->priority : class_priority(s, p->priority_class_name);
        /* A pending task's now, while init_task has the name at hand: task
         * order compares pending tasks long after the build, when the name
         * has left the cache.  Others' on their first comparison (points.c). */
        t->name_index = st == KB_TASK_PENDING && p->meta.name
                            ? (int32_t)kb__pod_name_index(p->meta.name)
                            : KB_NAME_INDEX_UNREAD;
        t->best_effort = p->best_effort;
        t->unevaluated = p->unevaluated != NULL;
        t->has_rules = p->rules != NULL;
        t->bad_runtime = p->runtime_invalid != NULL;
        t->resreq = kb__request_of(s, t->resreq, &p->requests);
        const char *pre = kb_meta_annotation(&p->meta, "volcano.sh/preemptable");
        if (!pre)
                pre = kb_meta_label(&p->meta, "volcano.sh/preemptable");
        t->preemptable = !pre || strcmp(pre, "true") == 0;
}

static void init_task(struct kb_session *s, struct kb_task *t, const struct kb_pod *p,
                      enum kb_task_status st)
{
        t->index = (uint32_t)s->ntasks;
        t->resreq = NULL;
        t->name = kb_pool_path(s->bpool, kb_meta_ns(&p->meta), p->meta.name);
        kb__task_fields(s, t, p, st);
}

/*
 * The loop below reads each of 100,000 pods (and the strings and lists
 * each points to), allocated by the cache one by one: it waits on memory,
 * not on work.  So the pod PREFETCH_FAR ahead is asked for, and what the
 * one PREFETCH_NEAR ahead points to, its struct having arrived by then
 * (idle W2 session 40 -> 35 ms).  Hints only: nothing is read through
 * them, and a NULL one is harmless.
 */
#define PREFETCH_FAR  8
#define PREFETCH_NEAR 4

static inline void prefetch_pods(const struct kb_snapshot *snap, size_t i)
{
        if (i + PREFETCH_FAR < snap->npods) {
                const char *far = (const char *)snap->pods[i + PREFETCH_FAR];
                __builtin_prefetch(far);
                __builtin_prefetch(far + 64);
                __builtin_prefetch(far + 128);
        }
        if (i + PREFETCH_NEAR < snap->npods) {
                const struct kb_pod *near = snap->pods[i + PREFETCH_NEAR];
                __builtin_prefetch(near->meta.namespace);
                __builtin_prefetch(near->meta.name);
                __builtin_prefetch(near->scheduler_name);
                __builtin_prefetch(near->node_name);
                __builtin_prefetch(near->group_name);
                __builtin_prefetch(near->meta.annotations);
                __builtin_prefetch(near->meta.labels);
        }
}

/* Every task of ours joins its job (counted here, listed afterwards);
 * every pod on a node, whoever placed it, is put on the node. */
static void build_tasks(struct kb_session *s, struct jobs *js)
{
        const struct kb_snapshot *snap = s->snap;
        s->tasks = kb_pool_alloc(s->bpool, (snap->npods + 1 + s->task_spare) * sizeof(*s->tasks));
        for (size_t i = 0; i < snap->npods; i++) {
                prefetch_pods(snap, i);
                const struct kb_pod *p = snap->pods[i];
                enum kb_task_status st;
                struct kb_node_info *node;
                bool mine = kb__pod_place(s, i, &st, &node);
                if (!mine && !node) {
                        foreign_pod(s, js, p);
                        continue;
                }

                struct kb_task *t = &s->tasks[s->ntasks];
                init_task(s, t, p, st);
                s->ntasks++;
                if (s->pod_task)
                        s->pod_task[i] = (uint32_t)s->ntasks; /* index + 1 */
                if (node)
                        kb__node_attach(s, node, t);
                if (!mine)
                        continue;
                struct kb_job *j = job_for(s, js, t);
                t->job = j;
                j->ntasks++;
                kb__job_count(j, t, 1);
        }
}

/* Why j, whose pods ask for another scheduler, is not admitted: "6 pods
 * ask for scheduler volcano; kbatch serves kbatch" (with every name it
 * serves). */
static void not_ours(struct kb_session *s, struct kb_job *j)
{
        const struct kb_snapshot *snap = s->snap;
        struct kb_buf b;
        kb_buf_init(&b);
        for (size_t i = 0; i < snap->nscheduler_names; i++)
                kb_buf_printf(&b, "%s%s", i ? ", " : "", snap->scheduler_names[i]);
        bool one = j->foreign_pods == 1;
        j->invalid = kb_pool_printf(s->bpool,
                                    "%u %s for scheduler %s; kbatch serves %s (set the pods' "
                                    "spec.schedulerName, or a Volcano Job's, to it)",
                                    j->foreign_pods, one ? "pod asks" : "pods ask",
                                    j->foreign_scheduler, b.len ? b.data : "kbatch");
        const struct kb_foreign_owner *o = j->foreign_owner;
        if (o) /* the owner, whose field to set, before any pod */
                j->invalid = kb_pool_printf(s->bpool,
                                            "%s %s/%s asks for scheduler %s; kbatch serves %s "
                                            "(set the %s's spec.schedulerName to it)",
                                            o->kind, o->ns, o->name, o->scheduler,
                                            b.len ? b.data : "kbatch", o->kind);
        j->invalid_reason = KB_WHY_OTHER_SCHEDULER;
        kb_buf_release(&b);
}

void kb__job_resolve(struct kb_session *s, struct kb_job *j, uint32_t n)
{
        if ((j->foreign_pods || j->foreign_owner) && !j->invalid) {
                /* Only when ours alone cannot make the gang: a few pods of
                 * another scheduler beside a full gang (a sidecar job's) do
                 * not stop it. */
                if (n - j->count[KB_TASK_FAILED] < (uint32_t)j->min_available)
                        not_ours(s, j);
        }
        if (!j->invalid) {
                j->queue = kb_session_queue(s, j->queue_name);
                if (!j->queue) {
                        j->invalid = kb_pool_printf(s->bpool, "queue %s not found", j->queue_name);
                        j->invalid_reason = KB_WHY_QUEUE_MISSING;
                }
        }
}

/* The session's job array: PodGroup jobs first, then the pod jobs, each by
 * name; each job's task list; queues resolved. */
static void finish_jobs(struct kb_session *s, struct jobs *js)
{
        if (js->n > js->npg)
                qsort(js->v + js->npg, js->n - js->npg, sizeof(*js->v), cmp_job_name);
        s->njobs = js->n;
        s->jobs = kb_pool_alloc(s->bpool, (js->n + 1) * sizeof(*s->jobs));
        if (js->n)
                memcpy(s->jobs, js->v, js->n * sizeof(*js->v));
        for (size_t i = 0; i < s->njobs; i++) {
                struct kb_job *j = s->jobs[i];
                j->index = (uint32_t)i;
                uint32_t n = j->ntasks;
                j->tasks = kb_pool_alloc(s->bpool, (n + 1) * sizeof(*j->tasks));
                j->ntasks = 0;
                kb__job_resolve(s, j, n);
        }
        for (size_t i = 0; i < s->ntasks; i++) {
                struct kb_task *t = &s->tasks[i];
                if (!t->job)
                        continue;
                t->job->tasks[t->job->ntasks++] = t;
                /* A pending pod whose placement fields are unusable cannot
                 * be placed: its job says why, naming the pod and field
                 * (its queue stays resolved, for the accounting). */
                if (t->pod->invalid && t->status == KB_TASK_PENDING && !t->job->invalid)
                        t->job->invalid = t->pod->invalid;
        }
}

void kb__session_build(struct kb_session *s, struct kb_pool *pool)
{
        s->bpool = pool;
        s->last_request = NULL; /* in a pool since released, if any */
        struct jobs js = {0};
        kb_map_init(&js.groups, KB_MAP_STR);
        kb_map_init(&js.lone, KB_MAP_STR);
        kb_map_init(&s->node_ids, KB_MAP_STR);
        kb_map_init(&s->queue_ids, KB_MAP_STR);
        kb_map_init(&s->interned, KB_MAP_STR);
        build_nodes(s);
        build_queues(s);
        build_podgroup_jobs(s, &js);
        build_tasks(s, &js);
        finish_jobs(s, &js);
        free(js.v);
        kb_map_release(&js.groups);
        kb_map_release(&js.lone);
        s->conds = kb_pool_alloc(&s->pool, (s->njobs + 1) * sizeof(*s->conds));
        /* What the snapshot holds is the starting point, not a change. */
        s->nchanges = 0;
}
