/*
 * allocate's sub-group path: a gang whose PodGroup sets spec.subGroupPolicy
 * is placed sub-group by sub-group, as Volcano master's allocateForJob and
 * allocateForSubJob place a job's SubJobs:
 *
 *   - grouping: a task joins the first policy whose labelSelector matches
 *     its pod (every pod when unset) and whose matchLabelKeys it carries,
 *     all with non-empty values; its sub-group is that policy and those
 *     values.  A policy without matchLabelKeys takes no pod (Volcano needs
 *     match values).  The other tasks form the default sub-group, which
 *     needs 1 task and has the PodGroup's networkTopology;
 *   - the gang plays in one job domain: with a hard PodGroup topology,
 *     every candidate of actions/topology.c's first tier that has a
 *     solution is played and the one whose sub-groups scored most in sum
 *     keeps the gang (ties: topology.c's order); otherwise on every node;
 *   - in the job domain, sub-groups take turns: first those needed to reach
 *     a policy's minSubGroups, then in the session's sub-group order
 *     (kb_subgroup_order: with Volcano's default conf, the priority
 *     plugin's highest task priority first, then the gang plugin's not yet
 *     whole first), then by the first match value read as a number, then
 *     by policy and values (the default sub-group first), as Volcano's
 *     SubJobOrderFn;
 *   - a sub-group's turn: with a hard networkTopology of its own, within one
 *     domain inside the job domain, of tier <= its highestTierAllowed (or
 *     at or below its highestTierName), lowest tier first, then the best
 *     HyperNode binpack score of its pending tasks, then the name; a domain
 *     whose lowest common ancestor with the sub-group's placed tasks is
 *     above that bound is not tried.  Without one (or soft), on the job
 *     domain's nodes.  With a networkTopology (hard or soft), each task
 *     takes a node nearest the sub-group's placed tasks first
 *     (kb_select_node_near, Volcano's node score for a sub-group's HyperNode;
 *     a soft one is never refused).  Tasks go in task order until the sub-group has
 *     subGroupSize tasks placed; a sub-group that cannot reach it (ready
 *     or pipelined) is undone and drops out of the turn; one whole with
 *     tasks left goes back into the line;
 *   - the turn ends once the gang is ready: minMember placed and, for every
 *     policy, minSubGroups of its sub-groups whole.  It succeeds ready or
 *     pipelined; otherwise everything is undone.
 *
 * Example (Volcano's "podgroup hard network topology constrain and bunch
 * hard network topology constrain, can allocate job according to the
 * network topology constrain of bunch policy"): racks s0 {s0-n1, s0-n2}
 * and s1 {s1-n3} under s2, nodes of 2 cpu, pods of 2 cpu; gang hard tier
 * 2, minMember 3; sub-group A (one master, size 1, hard tier 1) and B (two
 * workers, size 2, hard tier 1).  Tier 1 job domains cannot hold all
 * three; in s2, A goes first: s1 scores (0 + 2) / 2 = 1 against s0's
 * 2 / 4, so the master takes s1-n3; B then fits s0 only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions/actions-int.h"

struct group {
        const struct kb_subgroup_policy *policy; /* NULL: the default sub-group */
        size_t policy_index;
        char *id; /* "" (default) or "/<policy>-<values joined by ->" */
        long match_index;
        int32_t min;
        enum kb_topology_mode mode;
        int32_t tier;
        const char *tier_name;
        struct kb_task **tasks; /* every task of the sub-group */
        size_t ntasks, cap;
        struct kb_heap start;   /* its pending tasks at the start of the turn */
        struct kb_heap pending; /* during a play: not tried yet */
        int32_t priority;       /* its tasks' highest */
        bool required;
};

struct plan {
        struct kb__alloc *c;
        struct kb_queue_info *q;
        struct kb_job *j;
        struct kb_statement *st;
        struct group *g;
        size_t ng;
        const char *why; /* the last sub-group that could not be placed */
};

/* Volcano's SubJob ReadyTaskNum (+ pending best-effort), and with
 * pipelined tasks. */
static int32_t group_count(const struct group *g, bool pipelined)
{
        int32_t n = 0;
        for (size_t i = 0; i < g->ntasks; i++) {
                enum kb_task_status st = g->tasks[i]->status;
                n += kb_task_status_allocated(st) || st == KB_TASK_SUCCEEDED ||
                     (st == KB_TASK_PENDING && g->tasks[i]->best_effort) ||
                     (pipelined && st == KB_TASK_PIPELINED);
        }
        return n;
}

static bool group_ready(const struct group *g)
{
        return group_count(g, false) >= g->min;
}

static bool group_pipelined(const struct group *g)
{
        return group_count(g, true) >= g->min;
}

/* The gang's own vote, and every policy's minSubGroups (Volcano's
 * CheckSubJobReady / CheckSubJobPipelined). */
static bool gang_done(struct plan *p, bool pipelined)
{
        struct kb_session *s = p->c->s;
        if (!(pipelined ? kb_job_pipelined(s, p->j) : kb_job_ready(s, p->j)))
                return false;
        const struct kb_podgroup *pg = p->j->pg;
        for (size_t i = 0; i < pg->nsubgroups; i++) {
                int32_t done = 0;
                for (size_t k = 0; k < p->ng; k++)
                        done += p->g[k].policy == &pg->subgroups[i] &&
                                (pipelined ? group_pipelined(&p->g[k]) : group_ready(&p->g[k]));
                if (done < pg->subgroups[i].min_groups)
                        return false;
        }
        return true;
}

static void group_tasks(struct plan *p, const struct kb_heap *pending)
{
        struct kb_job *j = p->j;
        const struct kb_podgroup *pg = j->pg;
        p->g = kb_xcalloc(j->ntasks + 1, sizeof(*p->g));
        for (uint32_t i = 0; i < j->ntasks; i++) {
                struct kb_task *t = j->tasks[i];
                char id[512];
                long mi = 0;
                size_t pi = kb_subgroup_of(pg, t, id, sizeof(id), &mi);
                struct group *g = NULL;
                for (size_t k = 0; k < p->ng && !g; k++)
                        if (p->g[k].policy_index == pi && strcmp(p->g[k].id, id) == 0)
                                g = &p->g[k];
                if (!g) {
                        g = &p->g[p->ng++];
                        g->policy_index = pi;
                        g->id = kb_xstrdup(id);
                        g->match_index = mi;
                        kb_heap_init_tasks(&g->start, p->c->s);
                        if (pi < pg->nsubgroups) {
                                const struct kb_subgroup_policy *sp = &pg->subgroups[pi];
                                g->policy = sp;
                                g->min = sp->size;
                                g->mode = sp->topology_mode;
                                g->tier = sp->highest_tier;
                                g->tier_name = sp->highest_tier_name;
                        } else {
                                g->min = 1;
                                g->mode = pg->topology_mode;
                                g->tier = pg->highest_tier;
                                g->tier_name = pg->highest_tier_name;
                        }
                }
                if (!g->ntasks || t->priority > g->priority)
                        g->priority = t->priority;
                KB_PUSH(g->tasks, g->ntasks, g->cap, t);
        }
        for (size_t i = 0; i < pending->n; i++) {
                struct kb_task *t = pending->v[i];
                for (size_t k = 0; k < p->ng; k++)
                        for (size_t x = 0; x < p->g[k].ntasks; x++)
                                if (p->g[k].tasks[x] == t)
                                        kb_heap_push(&p->g[k].start, t);
        }
}

/* The sub-group as the sub-group order sees it. */
static struct kb_subgroup_info group_info(const struct plan *p, const struct group *g)
{
        return (struct kb_subgroup_info){p->j, g->priority, group_ready(g), g->match_index, g->id};
}

/* Volcano's JobWorksheet order: the sub-groups needed for a minSubGroups
 * first, then the session's sub-group order (kb_subgroup_order: the
 * priority and gang plugins' SubJobOrderFn in conf order, then the first
 * match value, then the id). */
static int cmp_group(const struct plan *p, const struct group *a, const struct group *b)
{
        if (a->required != b->required)
                return a->required ? -1 : 1;
        struct kb_subgroup_info ia = group_info(p, a), ib = group_info(p, b);
        return kb_subgroup_order(p->c->s, &ia, &ib);
}

static int cmp_group_heap(void *ctx, const void *a, const void *b)
{
        return cmp_group(ctx, a, b);
}

/* Volcano's organizeJobWorksheet: the fewest sub-groups not yet whole, in
 * turn order, that bring every policy to its minSubGroups. */
static void mark_required(struct plan *p)
{
        const struct kb_podgroup *pg = p->j->pg;
        struct group **order = kb_xmalloc((p->ng + 1) * sizeof(*order));
        size_t n = 0;
        for (size_t k = 0; k < p->ng; k++)
                p->g[k].required = false;
        for (size_t k = 0; k < p->ng; k++)
                if (!group_ready(&p->g[k]))
                        order[n++] = &p->g[k];
        for (size_t i = 1; i < n; i++) /* insertion sort: stable, few groups */
                for (size_t k = i; k > 0 && cmp_group(p, order[k - 1], order[k]) > 0; k--) {
                        struct group *x = order[k];
                        order[k] = order[k - 1];
                        order[k - 1] = x;
                }
        for (size_t i = 0; i < pg->nsubgroups; i++) {
                int32_t have = 0;
                for (size_t k = 0; k < p->ng; k++)
                        have += p->g[k].policy == &pg->subgroups[i] && group_ready(&p->g[k]);
                for (size_t x = 0; x < n && have < pg->subgroups[i].min_groups; x++)
                        if (order[x]->policy == &pg->subgroups[i]) {
                                order[x]->required = true;
                                have++;
                        }
        }
        free(order);
}

/* Volcano's allocateResourcesForTasks for one sub-group on d's nodes (all
 * nodes when d is NULL): whether it became whole (ready or pipelined);
 * otherwise st is as it was. */
static bool play_tasks(struct plan *p, struct group *g, const struct kb_domain *d)
{
        struct kb_session *s = p->c->s;
        size_t mark = kb_statement_mark(p->st);
        struct kb_heap tasks;
        const char **failed = NULL;
        size_t nfailed = 0, capfailed = 0;
        kb_heap_copy(&tasks, &g->pending);
        while (!kb_heap_empty(&tasks)) {
                struct kb_task *t = kb_heap_pop(&tasks);
                if (!kb_allocatable(s, p->q, t))
                        continue;
                bool skip = false;
                for (size_t i = 0; *t->role && i < nfailed && !skip; i++)
                        skip = strcmp(failed[i], t->role) == 0;
                if (skip)
                        continue;
                const char *why = NULL;
                struct kb_node_info *n =
                    g->mode != KB_TOPOLOGY_NONE
                        ? kb_select_node_near(s, t, g->tasks, g->ntasks, d, &why)
                    : d ? kb_select_node_in(s, t, d)
                        : kb_select_node(s, t, &why);
                if (!n) {
                        if (!d)
                                kb_task_fit_failed(t, why);
                        KB_PUSH(failed, nfailed, capfailed, t->role);
                        if ((size_t)g->min >= g->ntasks)
                                break;
                        continue;
                }
                if (kb_res_le(t->resreq, &n->idle))
                        kb_statement_allocate(p->st, t, n);
                else
                        kb_statement_pipeline(p->st, t, n);
                if (group_ready(g))
                        break;
        }
        free(failed);
        if (kb_statement_mark(p->st) > mark && (group_ready(g) || group_pipelined(g))) {
                kb_heap_release(&g->pending);
                g->pending = tasks;
                return true;
        }
        kb_statement_rollback(p->st, mark);
        kb_heap_release(&tasks);
        return false;
}

/* Whether domain d and the sub-group's tasks on nodes (within domain
 * placed, NULL when it has none or they share no domain) are within one
 * domain its bound allows; with no common domain at all, yes (Volcano lets
 * a HyperNode with no lowest common ancestor through). */
static bool lca_allowed(const struct group *g, const struct kb_domain *doms,
                        const struct kb_domain *placed, const struct kb_domain *d)
{
        if (!placed)
                return true;
        for (const struct kb_domain *a = d;; a = &doms[a->parent]) {
                if (a->lo <= placed->lo && placed->hi <= a->hi)
                        return kb__domain_allowed(doms, a, g->tier, g->tier_name);
                if (a->parent < 0)
                        return true;
        }
}

struct sub_cand {
        const struct kb_domain *d;
        double score;
};

static int cmp_sub_cand(const void *a, const void *b)
{
        const struct sub_cand *x = a, *y = b;
        if (x->d->tier != y->d->tier)
                return x->d->tier < y->d->tier ? -1 : 1;
        if (x->score != y->score)
                return x->score > y->score ? -1 : 1;
        return strcmp(x->d->name, y->d->name);
}

/* Volcano's allocateForSubJob within the job domain jd (NULL: every
 * node); *score is the chosen domain's HyperNode score. */
static bool play_group(struct plan *p, struct group *g, const struct kb_domain *jd, double *score)
{
        struct kb_session *s = p->c->s;
        struct kb_res request = {0}, least = {0};
        int nres = kb_res_count();
        /* What the sub-group asks for in all (the domain score), and at
         * least (per resource, its smallest request): a domain without
         * room for that cannot take a single task of it and is not tried. */
        for (size_t i = 0; i < g->pending.n; i++) {
                const struct kb_res *r = ((const struct kb_task *)g->pending.v[i])->resreq;
                kb_res_add(&request, r);
                for (int k = 0; k < nres; k++)
                        least.q[k] = i && least.q[k] < r->q[k] ? least.q[k] : r->q[k];
        }
        if (g->mode != KB_TOPOLOGY_HARD || kb__tier_name_unknown(s, g->tier, g->tier_name)) {
                *score = jd ? kb__domain_binpack(s, jd, &request) : 0;
                return play_tasks(p, g, jd);
        }
        size_t nd;
        const struct kb_domain *doms = kb_session_topology_domains(s, &nd);
        const struct kb_domain *placed = kb_tasks_domain(s, g->tasks, g->ntasks, NULL);
        struct sub_cand *c = kb_xmalloc((nd + 1) * sizeof(*c));
        size_t n = 0;
        for (size_t i = 0; i < nd; i++) {
                const struct kb_domain *d = &doms[i];
                if (d->hi == d->lo || (jd && (d->lo < jd->lo || d->hi > jd->hi)) ||
                    !kb__domain_allowed(doms, d, g->tier, g->tier_name) ||
                    !lca_allowed(g, doms, placed, d) ||
                    !kb_res_le(&least, &kb_domain_room(s, d)->future_idle))
                        continue;
                c[n++] = (struct sub_cand){d, kb__domain_binpack(s, d, &request)};
        }
        qsort(c, n, sizeof(*c), cmp_sub_cand);
        bool ok = false;
        for (size_t i = 0; i < n && !ok; i++)
                if ((ok = play_tasks(p, g, c[i].d)))
                        *score = c[i].score;
        free(c);
        return ok;
}

/* The gang's turn in job domain jd: whether it ends ready or pipelined
 * (then st holds it), with the sum of its sub-groups' scores. */
static bool play_job(struct plan *p, const struct kb_domain *jd, double *sum)
{
        struct kb_heap line;
        size_t mark = kb_statement_mark(p->st);
        kb_heap_init(&line, cmp_group_heap, p);
        mark_required(p);
        *sum = 0;
        for (size_t k = 0; k < p->ng; k++) {
                kb_heap_release(&p->g[k].pending);
                kb_heap_copy(&p->g[k].pending, &p->g[k].start);
                if (!kb_heap_empty(&p->g[k].pending))
                        kb_heap_push(&line, &p->g[k]);
        }
        while (!kb_heap_empty(&line)) {
                struct group *g = kb_heap_pop(&line);
                size_t before = kb_statement_mark(p->st);
                double score = 0;
                if (!play_group(p, g, jd, &score)) {
                        p->why = g->id;
                        kb_heap_release(&g->pending);
                        kb_heap_init_tasks(&g->pending, p->c->s);
                        continue;
                }
                if (kb_statement_mark(p->st) == before)
                        continue;
                *sum += score;
                if (!kb_heap_empty(&g->pending))
                        kb_heap_push(&line, g);
                if (gang_done(p, false))
                        break;
        }
        kb_heap_release(&line);
        if (kb_statement_mark(p->st) > mark && (gang_done(p, false) || gang_done(p, true)))
                return true;
        kb_statement_rollback(p->st, mark);
        return false;
}

int kb__allocate_subgroups(struct kb__alloc *c, struct kb_queue_info *q, struct kb_job *j,
                           struct kb_heap *tasks, struct kb_statement *st)
{
        struct plan p = {.c = c, .q = q, .j = j, .st = st};
        const struct kb_podgroup *pg = j->pg;
        const struct kb_domain **cands = NULL;
        size_t ncands = 0;
        int rc = 0;
        if (pg->topology_mode == KB_TOPOLOGY_HARD &&
            !kb__tier_name_unknown(c->s, pg->highest_tier, pg->highest_tier_name) &&
            !(cands = kb__topology_candidates(c, j, tasks, &ncands)))
                return 0;
        group_tasks(&p, tasks);
        /* Volcano's CheckSubJobValid: a policy with fewer sub-groups than
         * its minSubGroups can never be satisfied. */
        for (size_t i = 0; i < pg->nsubgroups; i++) {
                int32_t have = 0;
                for (size_t k = 0; k < p.ng; k++)
                        have += p.g[k].policy == &pg->subgroups[i];
                if (have < pg->subgroups[i].min_groups) {
                        char msg[400];
                        snprintf(msg, sizeof(msg),
                                 "spec.subGroupPolicy[%zu] (%s): minSubGroups is %d but the "
                                 "gang's pods form %d sub-group(s) of it",
                                 i, pg->subgroups[i].name, (int)pg->subgroups[i].min_groups,
                                 (int)have);
                        j->fit_error = kb_session_intern(c->s, msg);
                        goto out;
                }
        }
        const struct kb_domain *best = NULL;
        bool found = false;
        double best_sum = 0;
        if (!cands) {
                found = play_job(&p, NULL, &best_sum);
        } else {
                /* Every candidate of the first tier with a solution; the
                 * best sum of sub-group scores keeps the gang. */
                for (size_t i = 0; i < ncands; i++) {
                        if (found && cands[i]->tier != best->tier)
                                break;
                        double sum;
                        size_t mark = kb_statement_mark(st);
                        if (play_job(&p, cands[i], &sum)) {
                                if (!found || sum > best_sum) {
                                        best = cands[i];
                                        best_sum = sum;
                                }
                                found = true;
                                kb_statement_rollback(st, mark);
                        }
                }
                if (found)
                        found = play_job(&p, best, &best_sum);
        }
        if (!found) {
                char msg[700];
                if (cands)
                        snprintf(msg, sizeof(msg),
                                 "no network topology domain the PodGroup allows can hold the "
                                 "gang's sub-groups (spec.subGroupPolicy)%s%s",
                                 p.why ? "; the last that did not fit: " : "",
                                 p.why ? (*p.why ? p.why + 1 : "the default sub-group") : "");
                else
                        snprintf(msg, sizeof(msg),
                                 "the gang's sub-groups (spec.subGroupPolicy) cannot all be "
                                 "placed%s%s",
                                 p.why ? "; the last that did not fit: " : "",
                                 p.why ? (*p.why ? p.why + 1 : "the default sub-group") : "");
                if (!j->fit_error || cands)
                        j->fit_error = kb_session_intern(c->s, msg);
                goto out;
        }
        /* What is left for the job's next turn: the tasks not tried, of
         * the sub-groups still in line. */
        kb_heap_release(tasks);
        kb_heap_init_tasks(tasks, c->s);
        for (size_t k = 0; k < p.ng; k++)
                for (size_t i = 0; i < p.g[k].pending.n; i++)
                        kb_heap_push(tasks, p.g[k].pending.v[i]);
        rc = gang_done(&p, false) ? 2 : 1;
        KB_V(4, "allocate: job %s by sub-groups%s%s", j->name, best ? " in domain " : "",
             best ? best->name : "");
out:
        for (size_t k = 0; k < p.ng; k++) {
                free(p.g[k].id);
                free(p.g[k].tasks);
                kb_heap_release(&p.g[k].start);
                kb_heap_release(&p.g[k].pending);
        }
        free(p.g);
        free(cands);
        return rc;
}
