/*
 * Simulated time for kbatch-sim --until-done: sessions on a clock, pods
 * that run for their runtime, arrivals from creationTimestamps.
 *
 * The clock counts nanoseconds from time 0, the earliest creationTimestamp
 * among the input's pods and PodGroups.  Sessions fall on multiples of the
 * schedule period.  Between two sessions the cluster changes only through
 * events, kept in one heap with the arrivals beside it:
 *
 *   arrival  a pod or PodGroup whose creationTimestamp the clock reached
 *            joins the cluster;
 *   end      a running pod's runtime is over: it Succeeded and its room is
 *            free;
 *   reap     an evicted pod's grace period is over: it is deleted (and a
 *            pod of a PodGroup or Job comes back Pending, as its controller
 *            recreates it).
 *
 * A session that changes nothing (no bind, eviction, nomination, phase or
 * queue state) would decide the same again on the same cluster, since a
 * session reads nothing else that changes (conditions and the wall clock
 * are only written), so the clock jumps to the first period at or after
 * the next event; a session that changed something is followed by one a
 * period later, unless it left nothing to do (no pod of ours waiting or
 * being evicted, every PodGroup Running or Completed, no queue Closing).  Example, period 1 s: gang
 * A (runtime 30m) arrives at 0 and binds in session 1 at 0:00:00; session 2 at 0:00:01 changes
 * nothing; the next event is A's end at 0:30:01, so session 3 runs at 0:30:01 (A is Completed there
 * and leaves the cluster).  Three sessions for half an hour.
 *
 * What stays cheap per session: the cluster arrays hold only what has
 * arrived and not finished (a Completed PodGroup and its pods, and a
 * finished pod without one, leave them), pods are found from a session's
 * result through a pointer table, and the figures (room in use, each
 * queue's allocation) change by the events and binds alone.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"

void kb_sim_opts_init(struct kb_sim_opts *o)
{
        o->period = KB__NS_PER_S;
        o->default_runtime = 3600 * KB__NS_PER_S;
        o->time_limit = 30LL * 86400 * KB__NS_PER_S;
        o->time_limit_set = false;
        o->max_sessions = 0;
}

double kb_sim_percentile(const double *sorted, size_t n, double p)
{
        if (!n)
                return 0;
        /* The smallest rank whose share of the values reaches p percent;
         * the epsilon keeps 95/100*20 = 19 from becoming 19.000000000004. */
        double rank = ceil(p / 100.0 * (double)n - 1e-9);
        size_t r = rank < 1 ? 1 : (size_t)rank;
        return sorted[KB_MIN(r, n) - 1];
}

/* ---- a session ---------------------------------------------------------------------- */

static enum kb_pg_phase phase_of(const struct kb_podgroup *pg)
{
        for (int p = KB_PG_PENDING; pg->phase && p <= KB_PG_COMPLETED; p++)
                if (strcmp(pg->phase, kb_pg_phase_name((enum kb_pg_phase)p)) == 0)
                        return (enum kb_pg_phase)p;
        return KB_PG_PENDING;
}

static bool condition_differs(const struct kb_podgroup *pg, const struct kb_pg_status *st)
{
        if (!st->cond_type)
                return false;
        for (size_t k = 0; k < pg->nconditions; k++) {
                const struct kb_condition *c = &pg->conditions[k];
                if (kb_streq(c->type, st->cond_type))
                        return !kb_streq(c->status, st->cond_status) ||
                               !kb_streq(c->reason, st->cond_reason) ||
                               !kb_streq(c->message, st->cond_message);
        }
        return true;
}

static void set_why(struct kb_sim_gang *g, const struct kb_pg_status *st)
{
        if (!st->cond_type || strcmp(st->cond_type, "Unschedulable") ||
            strcmp(st->cond_status, "True") || kb_streq(g->why, st->cond_message))
                return;
        free(g->why);
        g->why = kb_xstrdup(st->cond_message);
}

/* What the session would change, per PodGroup entry and as a whole. */
static bool diff(struct run *r, const struct kb_result *res, bool *pg_changed)
{
        bool changed = res->nbinds || res->nevictions;
        for (size_t i = 0; i < res->nnominations && !changed; i++)
                changed = !kb_streq(res->nominations[i].pod->nominated_node_name,
                                    res->nominations[i].node);
        for (size_t i = 0; i < res->nqueues && !changed; i++)
                for (size_t k = 0; res->queues[i].state_changed && k < r->c->nqueues; k++)
                        if (strcmp(r->c->queues[k]->meta.name, res->queues[i].name) == 0 &&
                            r->c->queues[k]->state != res->queues[i].state)
                                changed = true;
        for (size_t i = 0; i < res->npodgroups; i++) {
                const struct kb_pg_status *st = &res->podgroups[i];
                if (!st->pg) {
                        int32_t g = kb__sim_find_gang(r->rep, st->name, false);
                        pg_changed[i] = g >= 0 && st->cond_message &&
                                        !kb_streq(r->rep->gangs[g].why, st->cond_message);
                        continue;
                }
                bool phase = phase_of(st->pg) != st->phase;
                pg_changed[i] = phase || condition_differs(st->pg, st);
                /* A Completed group leaves the cluster: it changes no
                 * later session. */
                changed |= phase && st->phase != KB_PG_COMPLETED;
        }
        return changed;
}

static void apply(struct run *r, const struct kb_result *res, int64_t t)
{
        if (res->nbinds || res->nevictions)
                r->c->gen++;
        struct kb_sim_report *rep = r->rep;
        uint32_t i;
        for (size_t k = 0; k < res->nbinds; k++) {
                struct kb_pod *p = (struct kb_pod *)res->binds[k].pod;
                kb__cluster_bind(p, res->binds[k].node);
                p->meta.gen = r->c->gen;
                if (kb__ptrmap_get(&r->podmap, p, &i))
                        kb__sim_start_pod(r, i, t);
        }
        for (size_t k = 0; k < res->nevictions; k++) {
                struct kb_pod *p = (struct kb_pod *)res->evictions[k].pod;
                if (p->meta.deletion > 0 || !kb__ptrmap_get(&r->podmap, p, &i))
                        continue;
                /* Kubernetes' default grace period is 30 s. */
                int64_t grace = (p->grace_period >= 0 ? p->grace_period : 30) * KB__NS_PER_S;
                p->meta.deletion = rep->origin + (double)(t + grace) / 1e9;
                p->meta.gen = r->c->gen;
                kb__sim_ev_push(r, t + grace, i, EV_REAP);
                if (r->pods[i].gang >= 0)
                        rep->gangs[r->pods[i].gang].evictions++;
        }
        for (size_t k = 0; k < res->nnominations; k++) {
                struct kb_pod *p = (struct kb_pod *)res->nominations[k].pod;
                if (kb_streq(p->nominated_node_name, res->nominations[k].node))
                        continue;
                free(p->nominated_node_name);
                p->nominated_node_name = kb_xstrdup(res->nominations[k].node);
                p->meta.gen = ++r->c->gen;
        }
        kb__cluster_apply_statuses(r->c, res);
        for (size_t k = 0; k < res->npodgroups; k++) {
                const struct kb_pg_status *st = &res->podgroups[k];
                int32_t g = -1;
                if (st->pg && kb__ptrmap_get(&r->pgmap, st->pg, &i))
                        g = (int32_t)i;
                else if (!st->pg)
                        g = kb__sim_find_gang(rep, st->name, false);
                if (g < 0)
                        continue;
                struct kb_sim_gang *gang = &rep->gangs[g];
                set_why(gang, st);
                if (st->phase == KB_PG_COMPLETED && st->pg && gang->finished == gang->pods &&
                    !r->gang_retired[g]) {
                        r->gang_retired[g] = true;
                        for (uint32_t x = r->gang_first[g]; x < r->gang_first[g + 1]; x++)
                                r->pods[r->gang_pods[x]].retired = true;
                        r->compact = true;
                }
        }
        /* Pods without a PodGroup left Pending say why too. */
        for (size_t k = 0; k < res->nunschedulable; k++) {
                const struct kb_pod_status *ps = &res->unschedulable[k];
                if (!kb__ptrmap_get(&r->podmap, ps->pod, &i) || r->pods[i].gang < 0)
                        continue;
                struct kb_sim_gang *gang = &rep->gangs[r->pods[i].gang];
                if (ps->message && !kb_streq(gang->why, ps->message)) {
                        free(gang->why);
                        gang->why = kb_xstrdup(ps->message);
                }
        }
        for (size_t k = 0; k < res->nqueues; k++) {
                int32_t q = kb__sim_find_queue(rep, res->queues[k].name);
                if (q < 0)
                        continue;
                r->qdeserved[q] = res->queues[k].deserved;
                for (int x = 0; x < KB_RES_MAX; x++)
                        if (r->qdeserved[q].q[x] == KB_RES_UNLIMITED)
                                r->qdeserved[q].q[x] = 0;
                r->qdeserved[q].q[KB_RES_PODS] = 0;
                kb__sim_series_note(&rep->queues[q].deserved, t, &r->qdeserved[q]);
        }
}

/*
 * Whether the scheduler has nothing to do: every pod of ours is running or
 * finished (none waits, none is being evicted), every PodGroup is Running
 * or Completed, no queue is Closing.  A session would then bind, evict and
 * change nothing (enqueue looks at Pending groups, the others at pending
 * pods), so after a session that bound the last waiting gang the clock
 * need not look again a period later: it goes to the next event.
 */
static bool quiet(const struct run *r)
{
        const struct kb_cluster *c = r->c;
        uint32_t i;
        for (size_t k = 0; k < c->nqueues; k++)
                if (c->queues[k]->state == KB_QUEUE_CLOSING)
                        return false;
        for (size_t k = 0; k < c->npodgroups; k++) {
                enum kb_pg_phase ph = phase_of(c->podgroups[k]);
                if (ph != KB_PG_RUNNING && ph != KB_PG_COMPLETED)
                        return false;
        }
        for (size_t k = 0; k < c->npods; k++) {
                const struct kb_pod *p = c->pods[k];
                if (!kb__ptrmap_get(&r->podmap, p, &i) || r->pods[i].finished)
                        continue;
                if (p->meta.deletion > 0 || (r->pods[i].ours && !r->pods[i].on_node))
                        return false;
        }
        return true;
}

/* The first period boundary at or after t. */
static int64_t on_grid(int64_t t, int64_t period)
{
        return (t + period - 1) / period * period;
}

int kb_sim_run(struct kb_cluster *c, const struct kb_conf *conf, const struct kb_sim_opts *opts,
               kb_sim_step_fn fn, void *arg, struct kb_sim_report *rep, char *err, size_t errlen)
{
        struct run r = {.c = c, .conf = conf, .o = opts, .rep = rep};
        double t0 = kb_now_mono();
        bool *changed_pg = NULL;
        size_t capchanged = 0;
        int rc;

        memset(rep, 0, sizeof(*rep));
        struct kb_model *model = kb_model_new();
        rc = kb__sim_setup(&r, err, errlen);
        /* Gangs done before time 0 are no part of the run (nor of
         * r.unfinished). */
        size_t gangs = 0;
        for (size_t g = 0; rc == 0 && g < rep->ngangs; g++)
                gangs += !rep->gangs[g].prior;
        /* The default limit fits the input: none when every pod of ours
         * declares its runtime. */
        int64_t limit = opts->time_limit_set || r.default_runtimes ? opts->time_limit : INT64_MAX;
        int64_t t = 0;
        while (rc == 0) {
                struct kb_snapshot snap;
                struct kb_result res;
                if (r.compact)
                        kb__sim_compact(&r);
                c->now = rep->origin + (double)t / 1e9;
                kb_cluster_snapshot(c, &snap);
                if (kb_session_run_model(model, &snap, conf, &res) != 0) {
                        snprintf(err, errlen,
                                 "session %ld: the conf names a missing action or plugin",
                                 rep->sessions + 1);
                        rc = KB_EBADCONF;
                }
                rep->sessions++;
                rep->clock = t;
                if (res.npodgroups > capchanged) {
                        capchanged = res.npodgroups * 2;
                        free(changed_pg);
                        changed_pg = kb_xmalloc(capchanged * sizeof(*changed_pg));
                }
                struct kb_sim_step step = {
                    rep->sessions,       t, &res, changed_pg, diff(&r, &res, changed_pg), gangs,
                    gangs - r.unfinished};
                if (fn)
                        fn(arg, &step);
                apply(&r, &res, t);
                kb_result_release(&res);
                if (rc)
                        break;
                if (!r.unfinished) {
                        rep->stop = KB_SIM_DONE;
                        break;
                }
                if (opts->max_sessions && rep->sessions >= opts->max_sessions) {
                        rep->stop = KB_SIM_SESSION_LIMIT;
                        break;
                }
                int64_t next = t + opts->period;
                if (!step.changed || quiet(&r)) {
                        int64_t e = kb__sim_next_event(&r, t);
                        if (e < 0) {
                                rep->stop = KB_SIM_STUCK;
                                break;
                        }
                        next = KB_MAX(next, on_grid(e, opts->period));
                }
                if (next > limit) {
                        rep->stop = KB_SIM_TIME_LIMIT;
                        break;
                }
                kb__sim_advance(&r, next);
                t = next;
        }
        kb__sim_restore(&r);
        kb_model_counts(model, &rep->model_built, &rep->model_reused);
        rep->model_updated = kb_model_updates(model);
        rep->model_repeated = kb_model_repeats(model);
        kb_model_free(model);
        free(changed_pg);
        free(r.pods);
        kb__ptrmap_release(&r.podmap);
        kb__ptrmap_release(&r.pgmap);
        free(r.gang_first);
        free(r.gang_pods);
        free(r.gang_retired);
        free(r.heap);
        free(r.future);
        free(r.gone_pods);
        free(r.gone_pgs);
        free(r.qalloc);
        free(r.qdeserved);
        rep->wall = kb_now_mono() - t0;
        if (rc)
                kb_sim_report_release(rep);
        return rc;
}

void kb_sim_report_release(struct kb_sim_report *rep)
{
        for (size_t i = 0; i < rep->ngangs; i++) {
                free(rep->gangs[i].name);
                free(rep->gangs[i].queue);
                free(rep->gangs[i].why);
        }
        for (size_t i = 0; i < rep->nqueues; i++) {
                free(rep->queues[i].name);
                free(rep->queues[i].allocated.v);
                free(rep->queues[i].deserved.v);
        }
        free(rep->gangs);
        free(rep->queues);
        free(rep->used.v);
        memset(rep, 0, sizeof(*rep));
}
