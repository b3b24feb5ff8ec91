/*
 * The reservation plugin's room over time (plugins/reservation.c; issue
 * 19's speed point: planning linear in running pods plus the gangs
 * considered).
 *
 * A node's room at time t is its allocatable, less what its tasks hold
 * past t (each until its expected end: its start plus its declared
 * runtime), less the reservations active at t.  Both parts are kept per
 * node as sorted step functions rather than walked again for every
 * question:
 *
 *   - the tasks' part: the finite expected ends in order, with what they
 *     give back summed (built once per node, and again only when the node
 *     changes: its version), so the room at t is one binary search;
 *   - the reservations' part: their starts and ends in order, with the
 *     room they take summed, so what is reserved at t is one binary
 *     search too, and the least room over [t, t + d) looks only at the
 *     reservation starts inside it (room only shrinks there).
 *
 * Example: a 4-cpu node runs a (1 cpu, ends 100) and b (2 cpu, ends 300):
 * base 4 - 3 = 1, ends [100, 300], given back [1, 3]; the room at 150 is
 * 1 + 1 = 2.  Reservations x (2 cpu, [200, 400)) and y (1 cpu, [250,
 * 260)): events 200 +2, 250 +1, 260 -1, 400 -2, summed 2, 3, 2, 0.  The
 * least room over [150, 300) is the least of the room at 150 (2 - 0),
 * at 200 (2 - 2 = 0) and at 250 (2 - 3 = -1): -1.
 *
 * The same sums over the whole cluster (each reservation as one start and
 * one end) give, for a candidate start, an upper bound on the room the
 * nodes could offer the gang over its run: the least cluster room over
 * the run, plus whatever nodes below 0 take from that sum.  A start where
 * even that is short of the gang is passed over without asking a node;
 * with conservative backfilling, most are.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/plugins-int.h"

#define NS_PER_S 1e9

/* One node's step functions. */
struct prof {
        bool built;
        uint32_t version;
        struct kb_res base;  /* allocatable less everything held */
        double *end;         /* the finite expected ends, ascending */
        struct kb_res *back; /* back[k]: what end[0..k] give back, summed */
        uint32_t n, cap;
        uint32_t unbounded; /* holders declaring no runtime */
        /* Reservation events: times ascending, the room reserved just
         * after each (all events at or before it counted). */
        double *et;
        struct kb_res *reserved;
        bool *is_start;
        uint32_t ne, cape;
        /* The least room at any time from now on, as of (version, ne). */
        bool min_built;
        uint32_t min_version, min_ne;
        struct kb_res deficit; /* how far below 0 that least room goes, per resource */
};

struct kb__resv_room {
        struct kb_session *s;
        double now, horizon; /* horizon: now + the window */
        double resolution;
        struct kb_node_info *nodes;
        size_t nnodes;
        struct prof *p;
        double *declared; /* per task index, 0 until asked (allocated then) */
        size_t ntasks;
        /* tasks_prof's scratch: ends, tasks and order, for the longest
         * task list so far. */
        double *se;
        const struct kb_task **st;
        uint32_t *sx;
        uint32_t caps;
        struct kb_pool pool; /* the nodes' ends and sums */
        /* The candidate starts from the tasks' ends, on the grid, within
         * the window; valid while no node changed (versions). */
        double *cand;
        size_t ncand, capcand;
        uint32_t *cand_version;
        bool cand_built;
        /* The whole cluster's room, summed over nodes without clamping:
         * allocatable less everything held (base), what the tasks' ends
         * give back (as in struct prof), and the reservations' room as
         * events (agg); with the nodes' deficits, an upper bound on the
         * room summed where positive, the sum fits_at checks first. */
        struct kb_res gbase;
        double *gend;
        struct kb_res *gback;
        size_t ng, capg;
        struct prof agg;
        bool def_valid; /* def_total is the nodes' deficits, summed */
        struct kb_res def_total;
};

double kb__resv_declared(struct kb__resv_room *m, const struct kb_task *t)
{
        if (!m->declared)
                m->declared = kb_xcalloc(m->ntasks + 1, sizeof(*m->declared));
        double *d = &m->declared[t->index];
        if (*d == 0) {
                int64_t ns = kb_pod_declared_runtime(t->pod, t->job ? t->job->pg : NULL);
                *d = ns > 0 ? (double)ns / NS_PER_S : INFINITY;
        }
        return *d;
}

bool kb__resv_holds_room(const struct kb_task *t)
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

/* The clock from which an answer read off it could differ (repeat.c's
 * turning points; at or before now: this clock alone). */
static void turns(const struct kb__resv_room *m, double t)
{
        kb_session_clock_until(m->s, t);
}

double kb__resv_expected_end(struct kb__resv_room *m, const struct kb_task *t)
{
        if (t->status == KB_TASK_RELEASING) {
                turns(m, m->now);
                return m->now;
        }
        double run = kb__resv_declared(m, t);
        if (isinf(run))
                return INFINITY;
        bool placed_now = t->status == KB_TASK_ALLOCATED || t->status == KB_TASK_PIPELINED;
        double start = !placed_now && t->pod->start_time > 0 ? t->pod->start_time : m->now;
        /* Past its end (or starting now), it ends with the clock. */
        turns(m, start == m->now ? m->now : start + run);
        return fmax(m->now, start + run);
}

struct kb__resv_room *kb__resv_room_new(struct kb_session *s, double now, double window,
                                        double resolution)
{
        struct kb__resv_room *m = kb_xcalloc(1, sizeof(*m));
        m->s = s;
        m->now = now;
        m->horizon = now + window;
        m->resolution = resolution;
        m->nodes = kb_session_nodes(s, &m->nnodes);
        kb_session_tasks(s, &m->ntasks);
        kb_pool_init(&m->pool, 64 * 1024);
        return m;
}

void kb__resv_room_free(struct kb__resv_room *m)
{
        if (!m)
                return;
        free(m->p);
        free(m->gend);
        free(m->gback);
        free(m->cand_version);
        free(m->declared);
        free(m->cand);
        kb_pool_release(&m->pool);
        free(m->se);
        free(m->st);
        free(m->sx);
        free(m);
}

static int cmp_end(const void *a, const void *b, void *ctx)
{
        const double *e = ctx;
        double x = e[*(const uint32_t *)a], y = e[*(const uint32_t *)b];
        return x < y ? -1 : x > y;
}

/* The per-node state, made on first use (a session that plans nothing
 * and checks nothing never needs it). */
static struct prof *prof_of(struct kb__resv_room *m, uint32_t i)
{
        if (!m->p) {
                m->p = kb_xcalloc(m->nnodes + 1, sizeof(*m->p));
                m->cand_version = kb_xcalloc(m->nnodes + 1, sizeof(*m->cand_version));
        }
        return &m->p[i];
}

/* Node i's tasks' step function, current. */
static struct prof *tasks_prof(struct kb__resv_room *m, uint32_t i)
{
        struct prof *p = prof_of(m, i);
        const struct kb_node_info *n = &m->nodes[i];
        if (p->built && p->version == n->version)
                return p;
        p->built = true;
        p->version = n->version;
        p->base = n->allocatable;
        p->n = 0;
        p->unbounded = 0;
        uint32_t cap = n->ntasks + 1;
        if (p->cap < cap) {
                /* From the pool: most nodes hold a few tasks, and a
                 * malloc per node per session would cost more than the
                 * rest of the build. */
                cap = KB_MAX(cap, 2 * p->cap);
                p->end = kb_pool_alloc(&m->pool, cap * sizeof(*p->end));
                p->back = kb_pool_alloc(&m->pool, cap * sizeof(*p->back));
                p->cap = cap;
        }
        if (m->caps < cap) {
                m->caps = KB_MAX(cap, 2 * m->caps);
                m->se = kb_xrealloc(m->se, m->caps * sizeof(*m->se));
                m->st = kb_xrealloc(m->st, m->caps * sizeof(*m->st));
                m->sx = kb_xrealloc(m->sx, m->caps * sizeof(*m->sx));
        }
        /* Ends and requests in task order, then sorted by end (ties in
         * task order: the sums come out the same either way). */
        double *e = m->se;
        const struct kb_task **ts = m->st;
        uint32_t *ix = m->sx;
        uint32_t k = 0;
        bool sorted = true;
        for (const struct kb_task *t = n->tasks; t; t = t->node_next) {
                if (!kb__resv_holds_room(t))
                        continue;
                kb_res_sub(&p->base, t->resreq);
                double x = kb__resv_expected_end(m, t);
                if (isinf(x)) {
                        p->unbounded++;
                        continue;
                }
                sorted &= !k || e[k - 1] <= x;
                e[k] = x;
                ts[k] = t;
                ix[k] = k;
                k++;
        }
        if (!sorted)
                qsort_r(ix, k, sizeof(*ix), cmp_end, e);
        struct kb_res sum = {0};
        for (uint32_t j = 0; j < k; j++) {
                kb_res_add(&sum, ts[ix[j]]->resreq);
                p->end[j] = e[ix[j]];
                p->back[j] = sum;
        }
        p->n = k;
        return p;
}

/* How many of the sorted v[0..n) are <= x. */
static uint32_t count_le(const double *v, uint32_t n, double x)
{
        uint32_t lo = 0, hi = n;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (v[mid] <= x)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

void kb__resv_room_tasks(struct kb__resv_room *m, uint32_t node, double at, struct kb_res *out)
{
        const struct prof *p = tasks_prof(m, node);
        *out = p->base;
        uint32_t k = count_le(p->end, p->n, at);
        if (k)
                kb_res_add(out, &p->back[k - 1]);
}

void kb__resv_room_at(struct kb__resv_room *m, uint32_t node, double at, struct kb_res *out)
{
        kb__resv_room_tasks(m, node, at, out);
        const struct prof *p = prof_of(m, node);
        uint32_t k = count_le(p->et, p->ne, at);
        if (k)
                kb_res_sub(out, &p->reserved[k - 1]);
}

void kb__resv_room_over(struct kb__resv_room *m, uint32_t node, double at, double dur,
                        struct kb_res *out)
{
        kb__resv_room_at(m, node, at, out);
        const struct prof *p = &m->p[node];
        double until = at + dur, last = at;
        for (uint32_t k = count_le(p->et, p->ne, at); k < p->ne && p->et[k] < until; k++) {
                if (!p->is_start[k] || p->et[k] == last)
                        continue; /* the room at a time counts every event then */
                last = p->et[k];
                struct kb_res x;
                kb__resv_room_at(m, node, p->et[k], &x);
                for (int r = 0; r < KB_RES_MAX; r++)
                        out->q[r] = KB_MIN(out->q[r], x.q[r]);
        }
}

/* Inserts an event into node's sorted events (after those at the same
 * time) and adds delta to the sums from there on. */
static void add_event(struct kb__resv_room *m, struct prof *p, double t, const struct kb_res *delta,
                      bool start)
{
        if (p->ne == p->cape) {
                /* Grown in the room's pool (freed with it): every session
                 * plans afresh, and most nodes take a few events. */
                uint32_t cap = p->cape ? 2 * p->cape : 8;
                double *et = kb_pool_alloc(&m->pool, cap * sizeof(*et));
                struct kb_res *reserved = kb_pool_alloc(&m->pool, cap * sizeof(*reserved));
                bool *is_start = kb_pool_alloc(&m->pool, cap * sizeof(*is_start));
                if (p->ne) {
                        memcpy(et, p->et, p->ne * sizeof(*et));
                        memcpy(reserved, p->reserved, p->ne * sizeof(*reserved));
                        memcpy(is_start, p->is_start, p->ne * sizeof(*is_start));
                }
                p->et = et;
                p->reserved = reserved;
                p->is_start = is_start;
                p->cape = cap;
        }
        uint32_t k = count_le(p->et, p->ne, t);
        memmove(p->et + k + 1, p->et + k, (p->ne - k) * sizeof(*p->et));
        memmove(p->reserved + k + 1, p->reserved + k, (p->ne - k) * sizeof(*p->reserved));
        memmove(p->is_start + k + 1, p->is_start + k, (p->ne - k) * sizeof(*p->is_start));
        p->ne++;
        p->et[k] = t;
        p->is_start[k] = start;
        if (k)
                p->reserved[k] = p->reserved[k - 1];
        else
                memset(&p->reserved[k], 0, sizeof(p->reserved[k]));
        int nres = kb_res_count(); /* a request's only non-zero slots */
        for (uint32_t j = k; j < p->ne; j++) {
                if (start)
                        kb_res_add_first(&p->reserved[j], delta, nres);
                else
                        kb_res_sub_first(&p->reserved[j], delta, nres);
        }
}

void kb__resv_room_reserve(struct kb__resv_room *m, uint32_t node, double start, double end,
                           const struct kb_res *amount)
{
        struct prof *p = prof_of(m, node);
        m->def_valid = false;
        /* The reservation's own events: the start first, so that "at or
         * before" sums count it from its start. */
        add_event(m, p, start, amount, true);
        if (!isinf(end))
                add_event(m, p, end, amount, false);
}

uint32_t kb__resv_room_unbounded(struct kb__resv_room *m, uint32_t node)
{
        return tasks_prof(m, node)->unbounded;
}

bool kb__resv_room_may_fit(struct kb__resv_room *m, const uint32_t *only, size_t nonly, double at,
                           const struct kb_res *want)
{
        struct kb_res sum = {0};
        size_t nn = only ? nonly : m->nnodes;
        for (size_t i = 0; i < nn; i++) {
                struct kb_res x;
                kb__resv_room_tasks(m, only ? only[i] : (uint32_t)i, at, &x);
                for (int r = 0; r < KB_RES_MAX; r++)
                        if (x.q[r] > 0)
                                sum.q[r] += x.q[r];
        }
        return kb_res_le(want, &sum);
}

/* Sorts the cluster's ends and sums what they give back. */
static int cmp_gend(const void *a, const void *b, void *ctx)
{
        const double *e = ctx;
        double x = e[*(const uint32_t *)a], y = e[*(const uint32_t *)b];
        return x < y ? -1 : x > y;
}

static void sum_ends(struct kb__resv_room *m)
{
        if (!m->ng)
                return;
        bool sorted = true;
        for (size_t i = 1; i < m->ng && sorted; i++)
                sorted = m->gend[i - 1] <= m->gend[i];
        if (sorted) {
                for (size_t i = 1; i < m->ng; i++)
                        kb_res_add(&m->gback[i], &m->gback[i - 1]);
                return;
        }
        uint32_t *ix = kb_xmalloc((m->ng + 1) * sizeof(*ix));
        double *e = kb_xmalloc((m->ng + 1) * sizeof(*e));
        struct kb_res *b = kb_xmalloc((m->ng + 1) * sizeof(*b));
        for (size_t i = 0; i < m->ng; i++)
                ix[i] = (uint32_t)i;
        qsort_r(ix, m->ng, sizeof(*ix), cmp_gend, m->gend);
        struct kb_res sum = {0};
        for (size_t i = 0; i < m->ng; i++) {
                kb_res_add(&sum, &m->gback[ix[i]]);
                e[i] = m->gend[ix[i]];
                b[i] = sum;
        }
        memcpy(m->gend, e, m->ng * sizeof(*e));
        memcpy(m->gback, b, m->ng * sizeof(*b));
        free(ix);
        free(e);
        free(b);
}

/* The least room node i has at any time from now on, below 0 (or 0),
 * per resource: the room at now and at every reservation start. */
static const struct kb_res *deficit(struct kb__resv_room *m, uint32_t i)
{
        struct prof *p = tasks_prof(m, i);
        if (p->min_built && p->min_version == p->version && p->min_ne == p->ne)
                return &p->deficit;
        struct kb_res least;
        kb__resv_room_at(m, i, m->now, &least);
        for (uint32_t k = 0; k < p->ne; k++)
                if (p->is_start[k] && p->et[k] > m->now) {
                        struct kb_res x;
                        kb__resv_room_at(m, i, p->et[k], &x);
                        for (int r = 0; r < KB_RES_MAX; r++)
                                least.q[r] = KB_MIN(least.q[r], x.q[r]);
                }
        for (int r = 0; r < KB_RES_MAX; r++)
                p->deficit.q[r] = least.q[r] < 0 ? -least.q[r] : 0;
        p->min_built = true;
        p->min_version = p->version;
        p->min_ne = p->ne;
        return &p->deficit;
}

/* The cluster's room at at, summed over nodes (not clamped). */
static void cluster_at(const struct kb__resv_room *m, double at, struct kb_res *out)
{
        *out = m->gbase;
        uint32_t k = count_le(m->gend, (uint32_t)m->ng, at);
        if (k)
                kb_res_add(out, &m->gback[k - 1]);
        k = count_le(m->agg.et, m->agg.ne, at);
        if (k)
                kb_res_sub(out, &m->agg.reserved[k - 1]);
}

void kb__resv_room_reserved(struct kb__resv_room *m, double start, double end,
                            const struct kb_res *total)
{
        add_event(m, &m->agg, start, total, true);
        if (!isinf(end))
                add_event(m, &m->agg, end, total, false);
}

bool kb__resv_room_may_hold(struct kb__resv_room *m, double at, double dur,
                            const struct kb_res *want)
{
        struct kb_res bound, x;
        cluster_at(m, at, &bound);
        double until = at + dur, last = at;
        const struct prof *a = &m->agg;
        for (uint32_t k = count_le(a->et, a->ne, at); k < a->ne && a->et[k] < until; k++) {
                if (!a->is_start[k] || a->et[k] == last)
                        continue;
                last = a->et[k];
                cluster_at(m, last, &x);
                for (int r = 0; r < KB_RES_MAX; r++)
                        bound.q[r] = KB_MIN(bound.q[r], x.q[r]);
        }
        if (kb_res_le(want, &bound))
                return true;
        /* Nodes whose room goes below 0 pull the unclamped sum down: add
         * it back (rare: only pods above a node's allocatable do it). */
        if (!m->def_valid) {
                memset(&m->def_total, 0, sizeof(m->def_total));
                for (size_t i = 0; i < m->nnodes; i++)
                        kb_res_add(&m->def_total, deficit(m, (uint32_t)i));
                m->def_valid = true;
        }
        kb_res_add(&bound, &m->def_total);
        return kb_res_le(want, &bound);
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

double kb__resv_on_grid(const struct kb__resv_room *m, double t)
{
        double g = ceil(t / m->resolution) * m->resolution;
        if (g <= m->now)
                turns(m, m->now);
        return fmax(m->now, g);
}

const double *kb__resv_room_candidates(struct kb__resv_room *m, size_t *n)
{
        prof_of(m, 0);
        bool stale = !m->cand_built;
        for (size_t i = 0; i < m->nnodes && !stale; i++)
                stale = m->cand_version[i] != m->nodes[i].version;
        if (stale) {
                m->ncand = 0;
                m->ng = 0;
                memset(&m->gbase, 0, sizeof(m->gbase));
                for (size_t i = 0; i < m->nnodes; i++) {
                        const struct prof *p = tasks_prof(m, (uint32_t)i);
                        m->cand_version[i] = m->nodes[i].version;
                        kb_res_add(&m->gbase, &p->base);
                        for (uint32_t k = 0; k < p->n; k++) {
                                if (p->end[k] <= m->horizon)
                                        KB_PUSH(m->cand, m->ncand, m->capcand,
                                                kb__resv_on_grid(m, p->end[k]));
                                else /* the window takes it in then */
                                        turns(m, p->end[k] - (m->horizon - m->now));
                                if (m->ng == m->capg) {
                                        m->capg = m->capg ? 2 * m->capg : 64;
                                        m->gend = kb_xrealloc(m->gend, m->capg * sizeof(*m->gend));
                                        m->gback =
                                            kb_xrealloc(m->gback, m->capg * sizeof(*m->gback));
                                }
                                /* What this end gives back on its own. */
                                m->gend[m->ng] = p->end[k];
                                m->gback[m->ng] = p->back[k];
                                if (k)
                                        kb_res_sub(&m->gback[m->ng], &p->back[k - 1]);
                                m->ng++;
                        }
                }
                sum_ends(m);
                m->def_valid = false;
                if (m->ncand)
                        qsort(m->cand, m->ncand, sizeof(*m->cand), cmp_double);
                size_t k = 0;
                for (size_t i = 0; i < m->ncand; i++)
                        if (!k || m->cand[i] != m->cand[k - 1])
                                m->cand[k++] = m->cand[i];
                m->ncand = k;
                m->cand_built = true;
        }
        *n = m->ncand;
        return m->cand;
}
