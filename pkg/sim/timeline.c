/*
 * The timeline of kbatch-sim --until-done (clock.c says how the clock
 * moves): the pointer tables from pods and PodGroups to their records, the
 * event heap (pod ends and reapings), the arrivals waiting outside the
 * cluster, and the figures that change as pods take and give back room.
 * Calls nothing else of pkg/sim: setup.c and clock.c sit above it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"

/* ---- pointer tables -------------------------------------------------------------- */

/* On base's kb_map, keyed by the pointer's value (never iterated, so its
 * order does not matter). */
void kb__ptrmap_init(struct ptrmap *m, size_t n)
{
        kb_map_init(&m->map, KB_MAP_INT);
        kb_map_reserve(&m->map, n);
}

void kb__ptrmap_release(struct ptrmap *m)
{
        kb_map_release(&m->map);
}

void kb__ptrmap_put(struct ptrmap *m, const void *key, uint32_t val)
{
        *kb_map_put_int(&m->map, (uint64_t)(uintptr_t)key, NULL) = val;
}

bool kb__ptrmap_get(const struct ptrmap *m, const void *key, uint32_t *val)
{
        const uint64_t *v = kb_map_get_int(&m->map, (uint64_t)(uintptr_t)key);
        if (v)
                *val = (uint32_t)*v;
        return v != NULL;
}

int64_t kb__sim_offset(double origin, double when)
{
        if (when <= 0 || when <= origin)
                return 0;
        return (int64_t)llround((when - origin) * 1e9);
}

/* ---- the event heap -------------------------------------------------------------- */

/* Its own heap, not base's kb_heap: kb_heap holds pointer-sized values,
 * and an event is a 24-byte value (time, pod, generation, kind) that would
 * then need an allocation each, for a heap that sees every pod start and
 * end of a run. */

static bool ev_before(const struct event *a, const struct event *b)
{
        if (a->t != b->t)
                return a->t < b->t;
        if (a->kind != b->kind)
                return a->kind < b->kind;
        return a->pod < b->pod;
}

void kb__sim_ev_push(struct run *r, int64_t t, uint32_t pod, enum ev_kind kind)
{
        struct event e = {t, pod, r->pods[pod].gen, kind};
        KB_PUSH(r->heap, r->nheap, r->capheap, e);
        for (size_t i = r->nheap - 1; i > 0;) {
                size_t up = (i - 1) / 2;
                if (!ev_before(&r->heap[i], &r->heap[up]))
                        break;
                struct event tmp = r->heap[i];
                r->heap[i] = r->heap[up];
                r->heap[up] = tmp;
                i = up;
        }
}

static struct event ev_pop(struct run *r)
{
        struct event top = r->heap[0];
        r->heap[0] = r->heap[--r->nheap];
        for (size_t i = 0;;) {
                size_t l = 2 * i + 1, m = i;
                if (l < r->nheap && ev_before(&r->heap[l], &r->heap[m]))
                        m = l;
                if (l + 1 < r->nheap && ev_before(&r->heap[l + 1], &r->heap[m]))
                        m = l + 1;
                if (m == i)
                        break;
                struct event tmp = r->heap[i];
                r->heap[i] = r->heap[m];
                r->heap[m] = tmp;
                i = m;
        }
        return top;
}

/* ---- figures ------------------------------------------------------------------------ */

/* Appends (t, v) to a step series: a point at the same time is replaced,
 * one equal to the previous value is not added. */
void kb__sim_series_note(struct kb_sim_series *s, int64_t t, const struct kb_res *v)
{
        if (s->n && s->v[s->n - 1].t == t) {
                s->v[s->n - 1].v = *v;
                if (s->n > 1 && memcmp(&s->v[s->n - 2].v, v, sizeof(*v)) == 0)
                        s->n--;
                return;
        }
        if (s->n && memcmp(&s->v[s->n - 1].v, v, sizeof(*v)) == 0)
                return;
        struct kb_sim_point p = {t, *v};
        KB_PUSH(s->v, s->n, s->cap, p);
}

/* A pod takes (sign 1) or gives back (-1) its room on a node. */
static void hold(struct run *r, struct spod *sp, int sign, int64_t t)
{
        struct kb_res req = sp->pod->requests;
        req.q[KB_RES_PODS] = 0;
        if (sign < 0)
                for (int i = 0; i < KB_RES_MAX; i++)
                        req.q[i] = -req.q[i];
        sp->on_node = sign > 0;
        kb_res_add(&r->used, &req);
        kb__sim_series_note(&r->rep->used, t, &r->used);
        if (sp->queue >= 0) {
                kb_res_add(&r->qalloc[sp->queue], &req);
                kb__sim_series_note(&r->rep->queues[sp->queue].allocated, t, &r->qalloc[sp->queue]);
        }
}

/* A pod is done: finished and, when its gang's last, the gang ends. */
void kb__sim_pod_finished(struct run *r, struct spod *sp, int64_t t)
{
        sp->finished = true;
        if (sp->gang < 0)
                return;
        struct kb_sim_gang *g = &r->rep->gangs[sp->gang];
        if (++g->finished == g->pods) {
                g->end = t;
                r->unfinished--;
                r->rep->makespan = KB_MAX(r->rep->makespan, t);
        }
        if (g->lone) {
                /* Nothing reports on it any more: it leaves the cluster. */
                sp->retired = true;
                r->compact = true;
        }
}

void kb__sim_start_pod(struct run *r, uint32_t i, int64_t t)
{
        struct spod *sp = &r->pods[i];
        sp->gen++;
        sp->pod->start_time =
            r->rep->origin + (double)t / 1e9; /* as the kubelet's status.startTime */
        hold(r, sp, 1, t);
        /* Only pods that start run the default runtime: one that never
         * starts, or starts again after an eviction, counts once at most. */
        if (sp->default_rt) {
                r->rep->default_runtime_pods++;
                sp->default_rt = false;
        }
        if (sp->gang >= 0 && r->rep->gangs[sp->gang].start < 0)
                r->rep->gangs[sp->gang].start = t;
        if (sp->runtime >= 0)
                kb__sim_ev_push(r, t + sp->runtime, i, EV_END);
}

/* ---- events ------------------------------------------------------------------------- */

static void on_end(struct run *r, const struct event *e)
{
        struct spod *sp = &r->pods[e->pod];
        if (sp->gen != e->gen || sp->finished || !sp->on_node)
                return;
        sp->pod->phase = KB_POD_SUCCEEDED;
        sp->pod->meta.gen = ++r->c->gen;
        hold(r, sp, -1, e->t);
        kb__sim_pod_finished(r, sp, e->t);
}

static void on_reap(struct run *r, const struct event *e)
{
        struct spod *sp = &r->pods[e->pod];
        struct kb_pod *p = sp->pod;
        if (sp->gen != e->gen || sp->finished)
                return;
        p->meta.gen = ++r->c->gen;
        if (sp->on_node)
                hold(r, sp, -1, e->t);
        if (!sp->recreate) {
                kb__sim_pod_finished(r, sp, e->t);
                sp->retired = true;
                r->compact = true;
                return;
        }
        /* Its controller makes it again: Pending, its whole runtime ahead. */
        free(p->node_name);
        p->node_name = NULL;
        free(p->nominated_node_name);
        p->nominated_node_name = NULL;
        p->phase = KB_POD_PENDING;
        p->start_time = 0;
        p->meta.deletion = 0;
        sp->gen++;
}

static void arrive(struct run *r, const struct arrival *a)
{
        struct kb_cluster *c = r->c;
        c->gen++;
        if (a->pod)
                a->pod->meta.gen = c->gen;
        else
                a->pg->meta.gen = c->gen;
        if (a->pod)
                KB_PUSH(c->pods, c->npods, c->cappods, a->pod);
        else
                KB_PUSH(c->podgroups, c->npodgroups, c->cappodgroups, a->pg);
}

/* Time of the next event or arrival, or -1 when there is none. */
/* The next event after now: an arrival, a pod's end or reaping, or a
 * PodGroup's Inqueue timeout or backoff, or a Pending one's sla waiting
 * time, running out (sessions depend on the clock there); -1 when none. */
int64_t kb__sim_next_event(const struct run *r, int64_t now)
{
        int64_t t = -1;
        if (r->nextfuture < r->nfuture)
                t = r->future[r->nextfuture].t;
        if (r->nheap && (t < 0 || r->heap[0].t < t))
                t = r->heap[0].t;
        for (size_t i = 0; i < r->c->npodgroups; i++) {
                const struct kb_podgroup *pg = r->c->podgroups[i];
                double ds[2] = {kb_inqueue_deadline(r->conf, pg), kb_sla_deadline(r->conf, pg)};
                for (int k = 0; k < 2; k++) {
                        int64_t off = ds[k] > 0 ? kb__sim_offset(r->rep->origin, ds[k]) : -1;
                        if (off > now && (t < 0 || off < t))
                                t = off;
                }
        }
        return t;
}

/* Everything that happens up to and including time `to`, in time order. */
void kb__sim_advance(struct run *r, int64_t to)
{
        for (;;) {
                bool arr = r->nextfuture < r->nfuture && r->future[r->nextfuture].t <= to;
                bool ev = r->nheap && r->heap[0].t <= to;
                if (!arr && !ev)
                        break;
                if (arr && (!ev || r->future[r->nextfuture].t <= r->heap[0].t)) {
                        arrive(r, &r->future[r->nextfuture++]);
                        continue;
                }
                struct event e = ev_pop(r);
                if (e.kind == EV_END)
                        on_end(r, &e);
                else
                        on_reap(r, &e);
        }
}

/* Drops what finished from the cluster's arrays (kept aside until the end). */
void kb__sim_compact(struct run *r)
{
        struct kb_cluster *c = r->c;
        size_t w = 0;
        uint32_t i;
        c->gen++;
        for (size_t k = 0; k < c->npods; k++) {
                struct kb_pod *p = c->pods[k];
                /* Only a finished pod retires, and a finished one has ended
                 * (Succeeded), was terminal at load or was deleted: the
                 * others need no lookup. */
                if ((kb_pod_terminal(p) || p->meta.deletion > 0) &&
                    kb__ptrmap_get(&r->podmap, p, &i) && r->pods[i].retired)
                        KB_PUSH(r->gone_pods, r->ngone_pods, r->capgone_pods, p);
                else
                        c->pods[w++] = p;
        }
        c->npods = w;
        w = 0;
        for (size_t k = 0; k < c->npodgroups; k++) {
                struct kb_podgroup *pg = c->podgroups[k];
                if (kb__ptrmap_get(&r->pgmap, pg, &i) && r->gang_retired[i])
                        KB_PUSH(r->gone_pgs, r->ngone_pgs, r->capgone_pgs, pg);
                else
                        c->podgroups[w++] = pg;
        }
        c->npodgroups = w;
        r->compact = false;
}

/* Gives every object that left the cluster, or never arrived, back. */
void kb__sim_restore(struct run *r)
{
        struct kb_cluster *c = r->c;
        c->gen++;
        if (r->compact)
                kb__sim_compact(r);
        for (size_t i = 0; i < r->ngone_pods; i++)
                KB_PUSH(c->pods, c->npods, c->cappods, r->gone_pods[i]);
        for (size_t i = 0; i < r->ngone_pgs; i++)
                KB_PUSH(c->podgroups, c->npodgroups, c->cappodgroups, r->gone_pgs[i]);
        for (size_t i = r->nextfuture; i < r->nfuture; i++)
                arrive(r, &r->future[i]);
        r->nextfuture = r->nfuture;
}
