/*
 * reservation: big gangs never starve.  Backfilling by declared runtime,
 * as Slurm and the EASY scheduler do it, in the session's own terms
 * (issue 19; docs/scheduling.md, "Reservations").
 *
 * allocate places gangs in job order and goes on past one that does not
 * fit, so small gangs can keep taking the room a wide one waits for.  With
 * this plugin, the first `depth` gangs allocate could not place (in the
 * order allocate met them: queue order, then job order) each get a
 * reservation: the earliest time at which the whole gang fits, counting
 * only the expected ends of what holds room (a pod's start plus its
 * declared runtime, kb_pod_declared_runtime) and the earlier reservations,
 * and the room it would take then, node by node.  From its start to its
 * start plus the gang's declared runtime that room is closed: a later task
 * may take a node now only if, at every reservation start on the node
 * before the task's own expected end, the node would still have room for
 * it.  So a task that ends before the reservation starts may use reserved
 * room, a longer one only room the reservations do not need, and one with
 * no declared runtime (unbounded) never reserved room.
 *
 * EASY (Lifka 1995; Mu'alem and Feitelson 2001) is depth 1: the shadow
 * time is the reservation's start, and "extra" the room at the shadow time
 * beyond the head's need.  A reservation takes the room that is busy now
 * first (nodes freeing up before its start), then idle room, so that what
 * stays free now for long backfill is exactly the extra.  depth "all" is
 * conservative backfilling: every blocked gang gets one, in order, and a
 * task starts now only if it delays none of them.
 *
 * Example, four one-cpu nodes, time 0: n1 and n2 run pods ending at 100 s;
 * gang W (4 pods, 50 s) waits; S (1 pod, declared 60 s) and L (1 pod,
 * declared 500 s) arrive.  W's reservation starts at 100 on all four
 * nodes (n1, n2 first: they free up; then n3, n4).  S ends at 60 <= 100: it
 * takes n3.  L would still hold n4 at 100, where W needs it: refused.
 *
 * A hard-topology gang is reserved within one network topology domain
 * (reservation_domain.c), and blocks that domain's room alone.
 *
 * Reservations are recomputed every session and never written anywhere
 * but into the waiting gang's condition message ("expected to start at
 * ..."), and a gang that gets none says why.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/plugins-int.h"

static void *resv_open(struct kb_session *s, const struct kb_value *args);
static void resv_close(struct kb_session *s, void *state);
static int resv_check(const struct kb_value *args, char *err, size_t errlen);

static const char *const arguments[] = {"depth", "window", "resolution", NULL};

const struct kb_plugin kb_plugin_reservation = {
    .name = "reservation",
    .open = resv_open,
    .close = resv_close,
    .arguments = arguments,
    .check = resv_check,
};

#define NS_PER_S 1e9

/* One reservation's room on one node. */
struct slot {
        uint32_t node;
        struct kb_res amount;
        int32_t next; /* the node's next slot, -1 at the end */
        uint32_t resv;
};

struct reservation {
        const struct kb_job *job;
        double start, end; /* seconds since the epoch; end INFINITY: unbounded */
};

struct resv {
        struct kb_session *s;
        long depth; /* 0: all */
        double window, resolution;
        double now;
        struct kb_node_info *nodes;
        size_t nnodes;
        struct reservation *v;
        size_t n, cap;
        struct slot *slots;
        size_t nslots, capslots;
        int32_t *node_first; /* per node, its first slot or -1 */
        size_t tried;        /* blocked gangs considered */
        bool planning;       /* inside plan(): the filter stands aside */
        uint8_t *backfilled; /* per task index: placed with a reservation ahead */
        uint32_t nbackfilled;
        double first_start; /* earliest reservation start, INFINITY when none */
};

/* ---- arguments ------------------------------------------------------------- */

static int parse_args(const struct kb_value *args, long *depth, double *window, double *res,
                      char *err, size_t errlen)
{
        *depth = 1;
        *window = 24 * 3600;
        *res = 60;
        const struct kb_value *v = kb_value_get(args, "depth");
        if (v) {
                const char *t = kb_value_text(v);
                int64_t d;
                if (t && !strcmp(t, "all"))
                        *depth = 0;
                else if (kb_value_int(v, &d) || d < 1 || d > 1000000) {
                        snprintf(err, errlen,
                                 "depth: want a whole number >= 1 or \"all\", got \"%s\"",
                                 t ? t : kb_value_type_name(v->type));
                        return -1;
                } else
                        *depth = (long)d;
        }
        static const char *const keys[] = {"window", "resolution"};
        double *outs[] = {window, res};
        for (size_t i = 0; i < 2; i++) {
                v = kb_value_get(args, keys[i]);
                if (!v)
                        continue;
                const char *t = kb_value_text(v);
                int64_t ns;
                char why[200];
                if (!t || kb_duration_parse(t, &ns, why, sizeof(why))) {
                        snprintf(err, errlen, "%s: want a duration (24h, 60s), got \"%s\"", keys[i],
                                 t ? t : kb_value_type_name(v->type));
                        return -1;
                }
                if (ns <= 0) {
                        snprintf(err, errlen, "%s: must be greater than 0, got \"%s\"", keys[i], t);
                        return -1;
                }
                *outs[i] = (double)ns / NS_PER_S;
        }
        return 0;
}

static int resv_check(const struct kb_value *args, char *err, size_t errlen)
{
        long d;
        double w, r;
        return parse_args(args, &d, &w, &r, err, errlen);
}

/* ---- time ------------------------------------------------------------------ */

/* A task's declared runtime in seconds, INFINITY when it declares none. */
static double declared(const struct kb_task *t)
{
        int64_t ns = kb_pod_declared_runtime(t->pod, t->job ? t->job->pg : NULL);
        return ns > 0 ? (double)ns / NS_PER_S : INFINITY;
}

/* When a task holding room on a node gives it back: its start (the pod's
 * status.startTime; now for one placed in this session or not started
 * yet) plus its declared runtime; one past its declared end is taken to
 * end any moment; a releasing one is going now. */
static double expected_end(const struct resv *r, const struct kb_task *t)
{
        if (t->status == KB_TASK_RELEASING)
                return r->now;
        double run = declared(t);
        if (isinf(run))
                return INFINITY;
        bool placed_now = t->status == KB_TASK_ALLOCATED || t->status == KB_TASK_PIPELINED;
        double start = !placed_now && t->pod->start_time > 0 ? t->pod->start_time : r->now;
        return fmax(r->now, start + run);
}

static bool holds_room(const struct kb_task *t)
{
        switch (t->status) {
        case KB_TASK_ALLOCATED:
        case KB_TASK_PIPELINED:
        case KB_TASK_BINDING:
        case KB_TASK_BOUND:
        case KB_TASK_RUNNING:
        case KB_TASK_RELEASING:
                return true;
        default:
                return false;
        }
}

/* Room on node n at time at: allocatable, less what holds room past at,
 * less the reservations active at at. */
static void free_at(const struct resv *r, const struct kb_node_info *n, double at,
                    struct kb_res *out)
{
        *out = n->allocatable;
        for (const struct kb_task *t = n->tasks; t; t = t->node_next)
                if (holds_room(t) && expected_end(r, t) > at)
                        kb_res_sub(out, &t->resreq);
        for (int32_t i = r->node_first[n->index]; i >= 0; i = r->slots[i].next) {
                const struct reservation *v = &r->v[r->slots[i].resv];
                if (v->start <= at && at < v->end)
                        kb_res_sub(out, &r->slots[i].amount);
        }
}

/* ---- the filter ------------------------------------------------------------ */

static bool scope(void *arg, const struct kb_task *t, struct kb_filter_hint *hint)
{
        (void)hint;
        const struct resv *r = arg;
        /* Nothing reserved, or the task is over before any reservation
         * starts: nothing to check. */
        return r->n && r->now + declared(t) > r->first_start;
}

static const char *check(void *arg, const struct kb_task *t, const struct kb_node_info *n)
{
        const struct resv *r = arg;
        if (r->planning)
                return NULL; /* plan() counts the reservations itself */
        double end = r->now + declared(t);
        for (int32_t i = r->node_first[n->index]; i >= 0; i = r->slots[i].next) {
                const struct reservation *v = &r->v[r->slots[i].resv];
                if (v->job == t->job || v->start >= end)
                        continue;
                struct kb_res room;
                free_at(r, n, fmax(v->start, r->now), &room);
                if (!kb_res_le(&t->resreq, &room))
                        return "node(s) had room reserved for a waiting gang";
        }
        return NULL;
}

/* ---- planning a reservation -------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

/* The least room node n has over [at, at + dur): at at, and at every
 * reservation start inside the interval (ends only free room). */
static void room_over(const struct resv *r, const struct kb_node_info *n, double at, double dur,
                      struct kb_res *out)
{
        free_at(r, n, at, out);
        for (int32_t i = r->node_first[n->index]; i >= 0; i = r->slots[i].next) {
                double st = r->v[r->slots[i].resv].start;
                if (st > at && st < at + dur) {
                        struct kb_res x;
                        free_at(r, n, st, &x);
                        for (int k = 0; k < KB_RES_MAX; k++)
                                out->q[k] = KB_MIN(out->q[k], x.q[k]);
                }
        }
}

/*
 * Whether the gang's needed tasks fit at time at for dur seconds; if so,
 * their slots are recorded (as reservation r->n).  Tasks go first-fit, in
 * task order, onto the nodes that are busy now before idle ones (see the
 * banner), each by index; every predicate must pass.  A start at which the
 * nodes' room, summed, is short of the gang's is refused before any
 * predicate runs.  only[0..nonly) are the nodes of the one domain a
 * hard-topology gang must fit in, NULL for every node.
 */
static bool fits_at(struct resv *r, struct kb_task **tasks, size_t ntasks, uint32_t need, double at,
                    double dur, const uint32_t *only, size_t nonly)
{
        size_t nn = only ? nonly : r->nnodes;
        struct kb_res *room = kb_xmalloc((nn + 1) * sizeof(*room));
        struct kb_res sum = {0}, want = {0};
        for (size_t i = 0; i < nn; i++) {
                room_over(r, &r->nodes[only ? only[i] : i], at, dur, &room[i]);
                for (int k = 0; k < KB_RES_MAX; k++)
                        if (room[i].q[k] > 0)
                                sum.q[k] += room[i].q[k];
        }
        for (size_t ti = 0; ti < ntasks && ti < need; ti++)
                kb_res_add(&want, &tasks[ti]->resreq);
        if (!kb_res_le(&want, &sum)) {
                free(room);
                return false;
        }
        uint32_t *order = kb_xmalloc((nn + 1) * sizeof(*order));
        size_t k = 0;
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < nn; i++) {
                        const struct kb_node_info *n = &r->nodes[only ? only[i] : i];
                        bool idle_now = kb_res_le(&tasks[0]->resreq, &n->idle);
                        if (idle_now == (pass == 1))
                                order[k++] = (uint32_t)i;
                }
        size_t mark = r->nslots;
        uint32_t placed = 0;
        for (size_t ti = 0; ti < ntasks && placed < need; ti++) {
                struct kb_task *t = tasks[ti];
                for (size_t oi = 0; oi < nn; oi++) {
                        uint32_t ri = order[oi], ni = only ? only[ri] : ri;
                        if (!kb_res_le(&t->resreq, &room[ri]) ||
                            kb_predicate(r->s, t, &r->nodes[ni]))
                                continue;
                        kb_res_sub(&room[ri], &t->resreq);
                        struct slot sl = {.node = ni,
                                          .amount = t->resreq,
                                          .next = r->node_first[ni],
                                          .resv = (uint32_t)r->n};
                        KB_PUSH(r->slots, r->nslots, r->capslots, sl);
                        r->node_first[ni] = (int32_t)(r->nslots - 1);
                        placed++;
                        break;
                }
        }
        if (placed < need) {
                /* Undone newest first: each slot went to its node's head. */
                while (r->nslots > mark) {
                        const struct slot *sl = &r->slots[--r->nslots];
                        r->node_first[sl->node] = sl->next;
                }
        }
        free(order);
        free(room);
        return placed >= need;
}

/* t rounded up to the resolution, on the clock's grid (not from now: a
 * start that moved with every session would rewrite the gang's condition
 * every session), and never before now. */
static double on_grid(const struct resv *r, double t)
{
        return fmax(r->now, ceil(t / r->resolution) * r->resolution);
}

/* The job of what holds room and ends at at (after rounding), for "when
 * default/train-a ends", or the earlier reservation ending then. */
static const char *ends_then(const struct resv *r, double at)
{
        for (size_t i = 0; i < r->nnodes; i++)
                for (const struct kb_task *t = r->nodes[i].tasks; t; t = t->node_next) {
                        double e = holds_room(t) ? expected_end(r, t) : INFINITY;
                        if (isinf(e))
                                continue;
                        if (on_grid(r, e) == at)
                                return t->job ? t->job->name : t->name;
                }
        for (size_t i = 0; i < r->n; i++)
                if (r->v[i].end == at)
                        return r->v[i].job->name;
        return NULL;
}

/* The first unusable declared runtime among j's PodGroup and pods
 * ("pod ml/a-0: spec.activeDeadlineSeconds: must be greater than 0, got
 * 0"), or NULL. */
static const char *runtime_invalid(const struct kb_job *j)
{
        if (j->pg && j->pg->runtime_invalid)
                return j->pg->runtime_invalid;
        for (uint32_t i = 0; i < j->ntasks; i++)
                if (j->tasks[i]->pod->runtime_invalid)
                        return j->tasks[i]->pod->runtime_invalid;
        return NULL;
}

/* Says in j when it should start (in domain d, for a hard-topology
 * gang), or why no time can be given (why, when the topology says). */
static void explain(struct resv *r, struct kb_job *j, bool ok, size_t unbounded,
                    const struct kb_domain *d, const char *why)
{
        char msg[800], when[64];
        if (ok) {
                const struct reservation *v = &r->v[r->n - 1];
                size_t nodes = 0;
                for (size_t i = 0; i < r->nnodes; i++)
                        for (int32_t k = r->node_first[i]; k >= 0; k = r->slots[k].next)
                                if (r->slots[k].resv == r->n - 1) {
                                        nodes++;
                                        break;
                                }
                kb_format_time(v->start, when, sizeof(when));
                const char *who = v->start > r->now ? ends_then(r, v->start) : NULL;
                /* The time, not "in 41m": that would change the message,
                 * and so the written condition, every session
                 * (kubectl kbatch why adds it when it shows the time). */
                snprintf(msg, sizeof(msg), "expected to start at %s on %zu node(s)%s%s%s%s%s", when,
                         nodes, d ? " in " : "", d ? d->name : "", who ? ", when " : "",
                         who ? who : "", who ? " ends" : "");
                j->expected_start = v->start;
        } else if (why) {
                snprintf(msg, sizeof(msg), "%s", why);
        } else if (unbounded) {
                snprintf(msg, sizeof(msg),
                         "no expected start: %zu pod(s) holding the room it needs declare no "
                         "runtime (activeDeadlineSeconds, kbatch.io/runtime-limit)",
                         unbounded);
        } else {
                char w[32];
                kb_duration_format((int64_t)(r->window * 1e9), w, sizeof(w));
                snprintf(msg, sizeof(msg), "no expected start within the reservation window (%s)",
                         w);
        }
        const char *bad = runtime_invalid(j);
        if (bad) {
                size_t len = strlen(msg);
                snprintf(msg + len, sizeof(msg) - len, "; %s (counted as undeclared)", bad);
        }
        j->expected = kb_session_intern(r->s, msg);
}

/* Plans j's reservation; false when it gets none (say why in j).  A
 * hard-topology gang is planned within one domain (reservation_domain.c):
 * at each candidate start, each allowed domain in turn. */
static bool plan(struct resv *r, struct kb_job *j)
{
        uint32_t ready = kb_job_ready_count(j);
        if (ready >= (uint32_t)j->min_available)
                return false;
        uint32_t need = (uint32_t)j->min_available - ready;
        struct kb_task **tasks = kb_xmalloc((j->ntasks + 1) * sizeof(*tasks));
        size_t nt = 0;
        double dur = 0;
        struct kb_res want = {0};
        for (uint32_t i = 0; i < j->ntasks; i++) {
                struct kb_task *t = j->tasks[i];
                if (t->status != KB_TASK_PENDING)
                        continue;
                if (nt < need)
                        kb_res_add(&want, &t->resreq);
                tasks[nt++] = t;
                dur = fmax(dur, declared(t));
        }
        bool ok = false;
        if (nt >= need) {
                struct kb__resv_domain *doms = NULL;
                size_t ndoms = 0;
                const char *why = NULL;
                const struct kb_domain *in = NULL;
                bool topo = kb__resv_domains(r->s, j, &want, &doms, &ndoms, &why);
                /* Candidate starts: now, then every expected end of what
                 * holds room and of the reservations, on the resolution's
                 * grid, within the window. */
                size_t cap = 64, nc = 0;
                double *cand = kb_xmalloc(cap * sizeof(*cand));
                if (!why) {
                        cand[nc++] = r->now;
                        for (size_t i = 0; i < r->nnodes; i++)
                                for (const struct kb_task *t = r->nodes[i].tasks; t;
                                     t = t->node_next) {
                                        double e = holds_room(t) ? expected_end(r, t) : INFINITY;
                                        if (isinf(e) || e > r->now + r->window)
                                                continue;
                                        KB_PUSH(cand, nc, cap, on_grid(r, e));
                                }
                        for (size_t i = 0; i < r->n; i++)
                                if (!isinf(r->v[i].end) && r->v[i].end <= r->now + r->window)
                                        KB_PUSH(cand, nc, cap, r->v[i].end);
                        qsort(cand, nc, sizeof(*cand), cmp_double);
                }
                for (size_t i = 0; i < nc && !ok; i++) {
                        if (i && cand[i] == cand[i - 1])
                                continue;
                        for (size_t k = 0; k < (topo ? ndoms : 1) && !ok; k++) {
                                if (!fits_at(r, tasks, nt, need, cand[i], dur,
                                             topo ? doms[k].nodes : NULL, topo ? doms[k].n : 0))
                                        continue;
                                struct reservation v = {j, cand[i], cand[i] + dur};
                                KB_PUSH(r->v, r->n, r->cap, v);
                                r->first_start = fmin(r->first_start, v.start);
                                in = topo ? doms[k].d : NULL;
                                ok = true;
                        }
                }
                free(cand);
                /* No start within the window: is the room held for ever
                 * (pods declaring no runtime), or only too long? */
                size_t unbounded = 0;
                for (size_t i = 0; !ok && !why && i < r->nnodes; i++)
                        for (const struct kb_task *t = r->nodes[i].tasks; t; t = t->node_next)
                                unbounded += holds_room(t) && isinf(expected_end(r, t));
                explain(r, j, ok, unbounded, in, why);
                kb__resv_domains_free(doms, ndoms);
        }
        free(tasks);
        return ok;
}

/* allocate could not place j: among the first depth such gangs, it gets a
 * reservation. */
static void unplaced(void *arg, const struct kb_job *cj)
{
        struct kb_job *j = (struct kb_job *)cj; /* the plugin writes its explanation */
        struct resv *r = arg;
        /* A gang its queue's quota held back is reserved as one short of
         * room: with one queue, proportion's deserved share is the
         * cluster, and its refusal is the room running out.  A closed
         * queue takes nothing whatever the room. */
        if (j->invalid || kb_streq(j->quota_reason, KB_WHY_QUEUE_CLOSED))
                return;
        if (r->depth && r->tried >= (size_t)r->depth)
                return;
        r->tried++;
        r->planning = true;
        plan(r, j);
        r->planning = false;
}

/* A task placed while some gang ahead holds a reservation is backfill;
 * undone (its gang rolled back), it is not. */
static bool reserved_job(const struct resv *r, const struct kb_job *j)
{
        for (size_t i = 0; i < r->n; i++)
                if (r->v[i].job == j)
                        return true;
        return false;
}

static void on_allocate(void *arg, const struct kb_task *t)
{
        struct resv *r = arg;
        if (!r->n || r->backfilled[t->index] || reserved_job(r, t->job))
                return;
        r->backfilled[t->index] = 1;
        r->nbackfilled++;
}

static void on_deallocate(void *arg, const struct kb_task *t)
{
        struct resv *r = arg;
        if (!r->backfilled[t->index])
                return;
        r->backfilled[t->index] = 0;
        r->nbackfilled--;
}

static void *resv_open(struct kb_session *s, const struct kb_value *args)
{
        struct resv *r = kb_xcalloc(1, sizeof(*r));
        char err[256];
        /* The conf was checked when it loaded. */
        (void)parse_args(args, &r->depth, &r->window, &r->resolution, err, sizeof(err));
        r->s = s;
        r->now = kb_session_now(s);
        r->nodes = kb_session_nodes(s, &r->nnodes);
        r->node_first = kb_xmalloc((r->nnodes + 1) * sizeof(*r->node_first));
        for (size_t i = 0; i < r->nnodes; i++)
                r->node_first[i] = -1;
        r->first_start = INFINITY;
        /* A runtime set but unusable is named where the user looks: a
         * Warning event here, and the condition of a gang it leaves without
         * a reservation (explain). */
        size_t nj;
        struct kb_job **jobs = kb_session_jobs(s, &nj);
        for (size_t i = 0; i < nj; i++) {
                const char *bad = runtime_invalid(jobs[i]);
                if (!bad)
                        continue;
                char *w = kb_xasprintf("%s; the reservation plugin counts it as undeclared "
                                       "(unbounded)",
                                       bad);
                kb_job_warn(s, jobs[i], "InvalidRuntime", w);
                free(w);
        }
        size_t nt;
        kb_session_tasks(s, &nt);
        r->backfilled = kb_xcalloc(nt + 1, 1);
        kb_on_filter(s, (struct kb_filter){scope, check}, r);
        kb_on_job_unplaced(s, unplaced, r);
        kb_on_event(s, (struct kb_event_handler){on_allocate, on_deallocate}, r);
        return r;
}

static void resv_close(struct kb_session *s, void *state)
{
        struct resv *r = state;
        kb_session_note_backfilled(s, r->nbackfilled);
        free(r->backfilled);
        free(r->v);
        free(r->slots);
        free(r->node_first);
        free(r);
}
