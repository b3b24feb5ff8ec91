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
        double first_start;         /* earliest reservation start, INFINITY when none */
        struct kb__resv_room *room; /* the nodes' room over time */
        double *ends;               /* the reservations' ends within the window, ascending */
        size_t nends, capends;
        struct kb_res *room_buf; /* per node, fits_at's */
        uint32_t *order_buf;
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

/* ---- the filter ------------------------------------------------------------ */

static bool scope(void *arg, const struct kb_task *t, struct kb_filter_hint *hint)
{
        (void)hint;
        struct resv *r = arg;
        /* Nothing reserved, or the task is over before any reservation
         * starts: nothing to check (until the clock makes it too late). */
        if (!r->n)
                return false;
        double d = kb__resv_declared(r->room, t);
        if (r->now + d > r->first_start)
                return true;
        kb_session_clock_until(r->s, r->first_start - d);
        return false;
}

static const char *check(void *arg, const struct kb_task *t, const struct kb_node_info *n)
{
        struct resv *r = arg;
        if (r->planning)
                return NULL; /* plan() counts the reservations itself */
        double d = kb__resv_declared(r->room, t), end = r->now + d;
        for (int32_t i = r->node_first[n->index]; i >= 0; i = r->slots[i].next) {
                const struct reservation *v = &r->v[r->slots[i].resv];
                if (v->job == t->job)
                        continue;
                if (v->start >= end) {
                        kb_session_clock_until(r->s, v->start - d);
                        continue;
                }
                struct kb_res room;
                kb__resv_room_at(r->room, n->index, fmax(v->start, r->now), &room);
                if (!kb_res_le(t->resreq, &room))
                        return "node(s) had room reserved for a waiting gang";
        }
        return NULL;
}

/* ---- planning a reservation -------------------------------------------------- */

/*
 * Whether the gang's needed tasks fit at time at for dur seconds; if so,
 * their slots are recorded (as reservation r->n).  Tasks go first-fit, in
 * task order, onto the nodes that are busy now before idle ones (see the
 * banner), each by index; every predicate must pass.  A start at which the
 * nodes' room, summed, is short of the gang's (want) is refused before any
 * predicate runs.  only[0..nonly) are the nodes of the one domain a
 * hard-topology gang must fit in, NULL for every node.
 */
static bool fits_at(struct resv *r, struct kb_task **tasks, size_t ntasks, uint32_t need,
                    const struct kb_res *want, double at, double dur, const uint32_t *only,
                    size_t nonly)
{
        size_t nn = only ? nonly : r->nnodes;
        struct kb_res *room = r->room_buf, sum = {0};
        for (size_t i = 0; i < nn; i++) {
                kb__resv_room_over(r->room, only ? only[i] : (uint32_t)i, at, dur, &room[i]);
                for (int k = 0; k < KB_RES_MAX; k++)
                        if (room[i].q[k] > 0)
                                sum.q[k] += room[i].q[k];
        }
        if (!kb_res_le(want, &sum))
                return false;
        uint32_t *order = r->order_buf;
        size_t k = 0;
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < nn; i++) {
                        const struct kb_node_info *n = &r->nodes[only ? only[i] : i];
                        bool idle_now = kb_res_le(tasks[0]->resreq, &n->idle);
                        if (idle_now == (pass == 1))
                                order[k++] = (uint32_t)i;
                }
        size_t mark = r->nslots;
        uint32_t placed = 0;
        for (size_t ti = 0; ti < ntasks && placed < need; ti++) {
                struct kb_task *t = tasks[ti];
                for (size_t oi = 0; oi < nn; oi++) {
                        uint32_t ri = order[oi], ni = only ? only[ri] : ri;
                        if (!kb_res_le(t->resreq, &room[ri]) ||
                            kb_predicate(r->s, t, &r->nodes[ni]))
                                continue;
                        kb_res_sub(&room[ri], t->resreq);
                        struct slot sl = {.node = ni,
                                          .amount = *t->resreq,
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
                return false;
        }
        struct kb_res total = {0};
        for (size_t i = mark; i < r->nslots; i++) {
                kb__resv_room_reserve(r->room, r->slots[i].node, at, at + dur, &r->slots[i].amount);
                kb_res_add(&total, &r->slots[i].amount);
        }
        kb__resv_room_reserved(r->room, at, at + dur, &total);
        return true;
}

/* The first of the candidate starts c[0..n) at which the nodes' room past
 * what their tasks hold could take want: none before can (the room only
 * grows as tasks end), so the plan starts there. */
static size_t first_possible(struct resv *r, const double *c, size_t n, const uint32_t *only,
                             size_t nonly, const struct kb_res *want)
{
        size_t lo = 0, hi = n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (kb__resv_room_may_fit(r->room, only, nonly, c[mid], want))
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return lo;
}

/* The job of what holds room and ends at at (after rounding), for "when
 * default/train-a ends", or the earlier reservation ending then. */
static const char *ends_then(struct resv *r, double at)
{
        for (size_t i = 0; i < r->nnodes; i++)
                for (const struct kb_task *t = r->nodes[i].tasks; t; t = t->node_next) {
                        double e =
                            kb__resv_holds_room(t) ? kb__resv_expected_end(r->room, t) : INFINITY;
                        if (isinf(e))
                                continue;
                        if (kb__resv_on_grid(r->room, e) == at)
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
        /* Asked of every job every session: the count says whether any
         * pod's is, without reading each pod. */
        if (!j->bad_runtime)
                return NULL;
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
                /* Its slots are the last ones; a node counts at its first
                 * (the slot it points back to is another reservation's). */
                size_t nodes = 0;
                uint32_t last = (uint32_t)r->n - 1;
                for (size_t k = r->nslots; k > 0 && r->slots[k - 1].resv == last; k--) {
                        int32_t prev = r->slots[k - 1].next;
                        nodes += prev < 0 || r->slots[prev].resv != last;
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

/* Adds a reservation's end to the sorted candidate starts it makes. */
static void add_end(struct resv *r, double end)
{
        if (r->nends == r->capends) {
                r->capends = r->capends ? 2 * r->capends : 16;
                r->ends = kb_xrealloc(r->ends, r->capends * sizeof(*r->ends));
        }
        size_t k = r->nends;
        while (k && r->ends[k - 1] > end) {
                r->ends[k] = r->ends[k - 1];
                k--;
        }
        r->ends[k] = end;
        r->nends++;
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
                        kb_res_add(&want, t->resreq);
                tasks[nt++] = t;
                dur = fmax(dur, kb__resv_declared(r->room, t));
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
                 * grid, within the window, in order. */
                size_t nc = 0, ntc = 0;
                const double *tc = why ? NULL : kb__resv_room_candidates(r->room, &ntc);
                double *cand = kb_xmalloc((ntc + r->nends + 2) * sizeof(*cand));
                if (!why) {
                        cand[nc++] = r->now;
                        size_t a = 0, b = 0;
                        while (a < ntc || b < r->nends)
                                cand[nc++] = b == r->nends || (a < ntc && tc[a] <= r->ends[b])
                                                 ? tc[a++]
                                                 : r->ends[b++];
                }
                /* Where the tasks' room alone could first take the gang
                 * (per domain): no earlier start can. */
                size_t nk = topo ? ndoms : 1, from = nc;
                size_t *first = kb_xmalloc((nk + 1) * sizeof(*first));
                for (size_t k = 0; k < nk && nc; k++) {
                        first[k] =
                            topo ? first_possible(r, cand, nc, doms[k].nodes, doms[k].n, &want) : 0;
                        from = KB_MIN(from, first[k]);
                }
                for (size_t i = from; i < nc && !ok; i++) {
                        if (i && cand[i] == cand[i - 1])
                                continue;
                        for (size_t k = 0; k < nk && !ok; k++) {
                                /* (The cluster's room bounds the sum fits_at
                                 * checks first: where even that is short,
                                 * the nodes need not be asked.) */
                                if (i < first[k] ||
                                    (!topo &&
                                     !kb__resv_room_may_hold(r->room, cand[i], dur, &want)) ||
                                    !fits_at(r, tasks, nt, need, &want, cand[i], dur,
                                             topo ? doms[k].nodes : NULL, topo ? doms[k].n : 0))
                                        continue;
                                struct reservation v = {j, cand[i], cand[i] + dur};
                                KB_PUSH(r->v, r->n, r->cap, v);
                                r->first_start = fmin(r->first_start, v.start);
                                /* Its start reached (or now), the plan turns. */
                                kb_session_clock_until(r->s, v.start);
                                if (!isinf(v.end) && v.end <= r->now + r->window)
                                        add_end(r, v.end);
                                else if (!isinf(v.end)) /* the window takes it in then */
                                        kb_session_clock_until(r->s, v.end - r->window);
                                in = topo ? doms[k].d : NULL;
                                ok = true;
                        }
                }
                free(first);
                free(cand);
                /* No start within the window: is the room held for ever
                 * (pods declaring no runtime), or only too long? */
                size_t unbounded = 0;
                for (size_t i = 0; !ok && !why && i < r->nnodes; i++)
                        unbounded += kb__resv_room_unbounded(r->room, (uint32_t)i);
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
        /* Every comparison with the clock says when it turns
         * (kb_session_clock_until), so that an unchanged cluster's
         * sessions repeat until then (pkg/framework/repeat.c). */
        r->now = kb_session_clock(s);
        r->nodes = kb_session_nodes(s, &r->nnodes);
        r->node_first = kb_xmalloc((r->nnodes + 1) * sizeof(*r->node_first));
        for (size_t i = 0; i < r->nnodes; i++)
                r->node_first[i] = -1;
        r->first_start = INFINITY;
        r->room = kb__resv_room_new(s, r->now, r->window, r->resolution);
        r->room_buf = kb_xmalloc((r->nnodes + 1) * sizeof(*r->room_buf));
        r->order_buf = kb_xmalloc((r->nnodes + 1) * sizeof(*r->order_buf));
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
        kb__resv_room_free(r->room);
        free(r->ends);
        free(r->room_buf);
        free(r->order_buf);
        free(r);
}
