/*
 * The network topology of a session: domains of nodes (racks, blocks,
 * zones) in a forest, from HyperNode objects or from node labels.
 *
 * From labels.  The network-topology-aware plugin names a node label per
 * tier, tier 1 first: with tiers rack and block, nodes labelled {block: b1,
 * rack: r1} form domain r1 (tier 1) inside domain b1 (tier 2), as Volcano's
 * label discovery and Kueue's Topology levels build them.  A domain is the
 * label value under its parent, so rack r1 of block b1 and rack r1 of
 * block b2 are two domains (named b1/r1 and b2/r1 when a value repeats).
 * A node without a tier's label skips that tier.
 *
 * From HyperNodes: see hypernodes.c.
 *
 * Layout.  A depth-first walk from the roots, children by name, lays the
 * nodes out so that every domain's nodes are one range [lo, hi) of
 * positions: select.c builds its per-class trees over that order, so the
 * best node of a domain is a range query, O(log N).  Example: block b1
 * holds racks r1 {n3, n1} and r2 {n2}; the order is n1 n3 n2, r1 = [0, 2),
 * r2 = [2, 3), b1 = [0, 3).
 *
 * Room.  Each domain's allocatable, idle, future idle and used sums are
 * kept current by replaying the session's node change log (the same log
 * the selection caches replay) into every ancestor of a changed node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

/* ---- conf ------------------------------------------------------------------------ */

static struct kb_topology *topo(struct kb_session *s)
{
        if (!s->topo) {
                s->topo = kb_pool_alloc(&s->pool, sizeof(*s->topo));
                struct kb_topology_conf *c = &s->topo->conf;
                c->weighted[KB_RES_CPU] = c->weighted[KB_RES_MEMORY] = true;
                c->weight[KB_RES_CPU] = c->weight[KB_RES_MEMORY] = 1;
        }
        return s->topo;
}

void kb_topology_configure(struct kb_session *s, const struct kb_topology_conf *conf)
{
        struct kb_topology_conf *c = &topo(s)->conf;
        const char **labels = kb_pool_alloc(&s->pool, (conf->nlabels + 1) * sizeof(*labels));
        for (size_t i = 0; i < conf->nlabels; i++)
                labels[i] = kb_pool_strdup(&s->pool, conf->labels[i]);
        *c = *conf;
        c->labels = labels;
}

const struct kb_topology_conf *kb_topology_config(struct kb_session *s)
{
        return &topo(s)->conf;
}

static void from_labels(struct kb_session *s)
{
        struct kb_topology *t = s->topo;
        /* "<parent>/<tier>/<value>" (in the pool) -> domain */
        struct kb_map keys;
        kb_map_init(&keys, KB_MAP_STR);
        struct kb_buf key;
        kb_buf_init(&key);
        for (size_t i = 0; i < s->nnodes; i++) {
                const struct kb_meta *m = &s->nodes[i].node->meta;
                int32_t parent = -1;
                for (size_t k = t->conf.nlabels; k-- > 0;) {
                        const char *v = kb_meta_label(m, t->conf.labels[k]);
                        if (!v)
                                continue;
                        kb_buf_reset(&key);
                        kb_buf_printf(&key, "%d/%zu/%s", parent, k, v);
                        uint64_t *d = kb_map_get_str(&keys, key.data, key.len);
                        if (!d) {
                                d = kb_map_put_str(&keys, kb_pool_strdup(&s->pool, key.data),
                                                   key.len, NULL);
                                *d = (uint64_t)kb__topology_add_domain(
                                    s, kb_pool_strdup(&s->pool, v), t->conf.labels[k],
                                    (int32_t)k + 1, parent, NULL);
                        }
                        parent = (int32_t)*d;
                }
                t->node_domain[i] = parent;
        }
        kb_buf_release(&key);
        kb_map_release(&keys);
}

/* Label values may repeat under different parents: name such a domain
 * "<parent>/<value>" (parents are named first: they were created first). */
static void qualify_names(struct kb_session *s)
{
        struct kb_topology *t = s->topo;
        struct kb_map names; /* name -> how many domains have it */
        kb_map_init(&names, KB_MAP_STR);
        for (size_t i = 0; i < t->ndomains; i++)
                ++*kb_map_put_str(&names, t->domains[i].name, strlen(t->domains[i].name), NULL);
        for (size_t i = 0; i < t->ndomains; i++) {
                struct kb_domain *d = &t->domains[i];
                if (*kb_map_get_str(&names, d->name, strlen(d->name)) < 2)
                        continue;
                d->name =
                    d->parent >= 0
                        ? kb_pool_printf(&s->pool, "%s/%s", t->domains[d->parent].name, d->name)
                        : kb_pool_printf(&s->pool, "%s (%s)", d->name, d->tier_name);
        }
        kb_map_release(&names);
}

/* ---- layout and rooms --------------------------------------------------------------- */

struct layout {
        uint32_t *first_child, *next_sibling; /* domain + 1, 0 ends */
        uint32_t *first_node, *next_node;     /* node + 1, 0 ends */
        uint32_t cursor;
};

static void lay_out(struct kb_session *s, struct layout *l, uint32_t d)
{
        struct kb_domain *dom = &s->topo->domains[d];
        dom->lo = l->cursor;
        for (uint32_t n = l->first_node[d]; n; n = l->next_node[n - 1]) {
                s->topo_pos[n - 1] = l->cursor;
                s->topo_order[l->cursor++] = n - 1;
        }
        for (uint32_t c = l->first_child[d]; c; c = l->next_sibling[c - 1])
                lay_out(s, l, c - 1);
        dom->hi = l->cursor;
}

static int cmp_domain_name(const void *a, const void *b, void *ctx)
{
        const struct kb_domain *d = ctx;
        return strcmp(d[*(const uint32_t *)a].name, d[*(const uint32_t *)b].name);
}

static void layout(struct kb_session *s)
{
        struct kb_topology *t = s->topo;
        size_t nd = t->ndomains, nn = s->nnodes;
        struct layout l = {0};
        l.first_child = kb_xcalloc(nd + 1, sizeof(uint32_t));
        l.next_sibling = kb_xcalloc(nd + 1, sizeof(uint32_t));
        l.first_node = kb_xcalloc(nd + 1, sizeof(uint32_t));
        l.next_node = kb_xcalloc(nn + 1, sizeof(uint32_t));
        /* Children and roots by name: link them in reverse sorted order. */
        uint32_t *byname = kb_xmalloc((nd + 1) * sizeof(*byname)), roots = 0;
        for (uint32_t d = 0; d < nd; d++)
                byname[d] = d;
        qsort_r(byname, nd, sizeof(*byname), cmp_domain_name, t->domains);
        for (size_t k = nd; k-- > 0;) {
                uint32_t d = byname[k];
                int32_t p = t->domains[d].parent;
                uint32_t *head = p >= 0 ? &l.first_child[p] : &roots;
                l.next_sibling[d] = *head;
                *head = d + 1;
        }
        for (size_t n = nn; n-- > 0;) {
                int32_t d = t->node_domain[n];
                if (d >= 0) {
                        l.next_node[n] = l.first_node[d];
                        l.first_node[d] = (uint32_t)n + 1;
                }
        }
        s->topo_pos = kb_pool_alloc(&s->pool, (nn + 1) * sizeof(*s->topo_pos));
        s->topo_order = kb_pool_alloc(&s->pool, (nn + 1) * sizeof(*s->topo_order));
        for (uint32_t r = roots; r; r = l.next_sibling[r - 1])
                lay_out(s, &l, r - 1);
        for (size_t n = 0; n < nn; n++)
                if (t->node_domain[n] < 0) {
                        s->topo_pos[n] = l.cursor;
                        s->topo_order[l.cursor++] = (uint32_t)n;
                }
        free(byname);
        free(l.first_child);
        free(l.next_sibling);
        free(l.first_node);
        free(l.next_node);
}

static void node_seen(const struct kb_node_info *n, struct kb__topo_seen *out)
{
        out->idle = n->idle;
        kb_node_future_idle(n, &out->future_idle);
        out->used = n->used;
        kb_res_add(&out->used, &n->pipelined);
}

static void rooms(struct kb_session *s)
{
        struct kb_topology *t = s->topo;
        t->room = kb_pool_alloc(&s->pool, (t->ndomains + 1) * sizeof(*t->room));
        t->seen = kb_pool_alloc(&s->pool, (s->nnodes + 1) * sizeof(*t->seen));
        for (size_t n = 0; n < s->nnodes; n++) {
                node_seen(&s->nodes[n], &t->seen[n]);
                for (int32_t d = t->node_domain[n]; d >= 0; d = t->domains[d].parent) {
                        struct kb_domain_room *r = &t->room[d];
                        kb_res_add(&r->allocatable, &s->nodes[n].allocatable);
                        kb_res_add(&r->idle, &t->seen[n].idle);
                        kb_res_add(&r->future_idle, &t->seen[n].future_idle);
                        kb_res_add(&r->used, &t->seen[n].used);
                }
        }
        t->log_pos = s->nchanges;
}

void kb__topology_build(struct kb_session *s)
{
        const struct kb_snapshot *snap = s->snap;
        bool labels = s->topo && s->topo->conf.nlabels;
        if (!labels && !snap->nhypernodes)
                return;
        struct kb_topology *t = topo(s);
        t->node_domain = kb_pool_alloc(&s->pool, (s->nnodes + 1) * sizeof(*t->node_domain));
        for (size_t n = 0; n < s->nnodes; n++)
                t->node_domain[n] = -1;
        if (labels) {
                for (size_t i = 0; i < snap->nhypernodes; i++)
                        KB__TOPOLOGY_WARN(
                            s, snap->hypernodes[i],
                            "ignored: the scheduler conf derives the network topology from node "
                            "labels (network-topology-aware's tier labels)");
                from_labels(s);
                qualify_names(s);
        } else {
                kb__topology_from_hypernodes(s);
        }
        layout(s);
        rooms(s);
}

/* ---- queries ---------------------------------------------------------------------- */

const struct kb_domain *kb_session_topology_domains(struct kb_session *s, size_t *n)
{
        *n = s->topo ? s->topo->ndomains : 0;
        return s->topo ? s->topo->domains : NULL;
}

bool kb_domain_has(struct kb_session *s, const struct kb_domain *d, const struct kb_node_info *n)
{
        uint32_t pos = s->topo_pos ? s->topo_pos[n->index] : n->index;
        return pos >= d->lo && pos < d->hi;
}

/* The lowest domain holding both d (NULL: none yet) and node n: the domain
 * of n alone when d is NULL; NULL when no domain holds both. */
static const struct kb_domain *domain_join(struct kb_session *s, const struct kb_domain *d,
                                           const struct kb_node_info *n)
{
        struct kb_topology *t = s->topo;
        if (!t || !t->node_domain)
                return NULL;
        int32_t k = d ? (int32_t)d->index : t->node_domain[n->index];
        while (k >= 0 && !kb_domain_has(s, &t->domains[k], n))
                k = t->domains[k].parent;
        return k >= 0 ? &t->domains[k] : NULL;
}

const struct kb_domain_room *kb_domain_room(struct kb_session *s, const struct kb_domain *d)
{
        struct kb_topology *t = s->topo;
        for (; t->log_pos < s->nchanges; t->log_pos++) {
                uint32_t n = s->changes[t->log_pos];
                struct kb__topo_seen now, *was = &t->seen[n];
                node_seen(&s->nodes[n], &now);
                for (int32_t k = t->node_domain[n]; k >= 0; k = t->domains[k].parent) {
                        struct kb_domain_room *r = &t->room[k];
                        kb_res_sub(&r->idle, &was->idle);
                        kb_res_add(&r->idle, &now.idle);
                        kb_res_sub(&r->future_idle, &was->future_idle);
                        kb_res_add(&r->future_idle, &now.future_idle);
                        kb_res_sub(&r->used, &was->used);
                        kb_res_add(&r->used, &now.used);
                }
                *was = now;
        }
        return &t->room[d->index];
}

static bool on_node(enum kb_task_status st)
{
        return st == KB_TASK_ALLOCATED || st == KB_TASK_PIPELINED || st == KB_TASK_BINDING ||
               st == KB_TASK_BOUND || st == KB_TASK_RUNNING;
}

const struct kb_domain *kb_job_domain(struct kb_session *s, const struct kb_job *j, bool *split)
{
        return kb_tasks_domain(s, j->tasks, j->ntasks, split);
}

const struct kb_domain *kb_tasks_domain(struct kb_session *s, struct kb_task *const *tasks,
                                        size_t n, bool *split)
{
        const struct kb_domain *d = NULL;
        bool any = false;
        if (split)
                *split = false;
        if (!s->topo || !s->topo->node_domain)
                return NULL;
        for (size_t i = 0; i < n; i++) {
                const struct kb_task *task = tasks[i];
                if (task->node < 0 || !on_node(task->status))
                        continue;
                const struct kb_node_info *n = &s->nodes[task->node];
                d = domain_join(s, any ? d : NULL, n);
                any = true;
                if (!d) {
                        if (split)
                                *split = true;
                        return NULL;
                }
        }
        return d;
}

/* Node n's lowest domain (Volcano's FindHyperNodeForNode); NULL when it is
 * in none. */
static const struct kb_domain *node_domain(struct kb_session *s, const struct kb_node_info *n)
{
        struct kb_topology *t = s->topo;
        if (!t || !t->node_domain || t->node_domain[n->index] < 0)
                return NULL;
        return &t->domains[t->node_domain[n->index]];
}

/* ---- the node nearest a sub-group's tasks -------------------------------------- */

/* A domain the sub-group's placed tasks sit in (their node's lowest
 * domain), with how many. */
struct near_leaf {
        const struct kb_domain *d;
        int32_t n;
};

static int cmp_near_leaf(const void *a, const void *b)
{
        const struct near_leaf *x = a, *y = b;
        if (x->n != y->n)
                return x->n > y->n ? -1 : 1;
        return strcmp(x->d->name, y->d->name);
}

/* Tries domain c for t: keeps the first node that fits idle resources in
 * *idle (and stops: true), and the first that fits only future idle ones
 * in *later. */
static bool try_near(struct kb_session *s, struct kb_task *t, const struct kb_domain *c,
                     struct kb_node_info **idle, struct kb_node_info **later)
{
        struct kb_node_info *n = kb_select_node_in(s, t, c);
        if (!n)
                return false;
        if (kb_res_le(t->resreq, &n->idle)) {
                *idle = n;
                return true;
        }
        if (!*later)
                *later = n;
        return false;
}

/*
 * kb_select_node_near: the node for task t of a sub-group (tasks) with a
 * networkTopology (hard or soft) within jd (NULL: every node), nearest its
 * placed tasks first, as Volcano master scores nodes for it: allocate.go's
 * allocateResourcesForTasks sets task.JobAllocatedHyperNode to the
 * sub-group's AllocatedHyperNode (the lowest common HyperNode of its
 * placed tasks, updated as each is placed), and network-topology-aware's
 * batchNodeOrderFnForNetworkAwarePods scores a node 100 when its own
 * HyperNode is that one, else 100 * (maxTier - tier of their lowest common
 * ancestor) / (maxTier - minTier) (0 with one tier, or without a common
 * ancestor), and among the nodes of the best score adds 100 * the
 * sub-group's tasks on the node's HyperNode / its tasks
 * (scoreWithTaskNum); prioritizeNodes still takes a node with idle room
 * over one with room being released.  kbatch reads these ranks in order
 * rather than adding them to the other plugins' scores: the leaf domains
 * holding the sub-group's tasks (most tasks first, then name) when they
 * are more than one, then its common domain and each domain above it of
 * tier below the highest, then the rest of jd; within one, the usual
 * node order.  A sub-group with nothing placed takes the usual best node.
 */
struct kb_node_info *kb_select_node_near(struct kb_session *s, struct kb_task *t,
                                         struct kb_task *const *tasks, size_t ntasks,
                                         const struct kb_domain *jd, const char **why)
{
        /* A lowest domain (its last node is its own: a domain's own nodes
         * are laid out before its children's): every node of it is as
         * near as any other, O(1). */
        if (jd && s->topo_order && jd->hi > jd->lo &&
            s->topo->node_domain[s->topo_order[jd->hi - 1]] == (int32_t)jd->index)
                return kb_select_node_in(s, t, jd);
        size_t nd;
        const struct kb_domain *doms = kb_session_topology_domains(s, &nd);
        const struct kb_domain *placed = nd ? kb_tasks_domain(s, tasks, ntasks, NULL) : NULL;
        if (!placed || (jd && (placed->lo < jd->lo || placed->hi > jd->hi)))
                return jd ? kb_select_node_in(s, t, jd) : kb_select_node(s, t, why);
        struct kb_node_info *idle = NULL, *later = NULL;
        struct near_leaf *leaves = kb_xmalloc((ntasks + 1) * sizeof(*leaves));
        size_t nl = 0;
        for (size_t i = 0; i < ntasks; i++) {
                const struct kb_task *x = tasks[i];
                if (x->node < 0 ||
                    !(kb_task_status_allocated(x->status) || x->status == KB_TASK_PIPELINED))
                        continue;
                const struct kb_domain *d = node_domain(s, &s->nodes[x->node]);
                if (!d)
                        continue;
                size_t k = 0;
                while (k < nl && leaves[k].d != d)
                        k++;
                if (k == nl)
                        leaves[nl++] = (struct near_leaf){d, 0};
                leaves[k].n++;
        }
        int32_t max_tier = 0;
        for (size_t i = 0; i < nd; i++)
                max_tier = doms[i].tier > max_tier ? doms[i].tier : max_tier;
        /* Nodes on the sub-group's own HyperNode score 100 (exact: its
         * tasks share one lowest domain); nodes whose common ancestor with
         * it is domain a score by a's tier, 0 at the highest tier. */
        bool exact = nl == 1 && leaves[0].d == placed, done = false;
        if (!exact) {
                qsort(leaves, nl, sizeof(*leaves), cmp_near_leaf);
                for (size_t k = 0; k < nl && !done; k++)
                        done = try_near(s, t, leaves[k].d, &idle, &later);
        }
        free(leaves);
        for (const struct kb_domain *a = placed; !done && a;
             a = a->parent >= 0 ? &doms[a->parent] : NULL) {
                if ((jd && (a->lo < jd->lo || a->hi > jd->hi)) ||
                    !((exact && a == placed) || a->tier < max_tier))
                        break;
                done = try_near(s, t, a, &idle, &later);
        }
        if (done)
                return idle;
        struct kb_node_info *n = jd ? kb_select_node_in(s, t, jd) : kb_select_node(s, t, why);
        if (n && (kb_res_le(t->resreq, &n->idle) || !later))
                return n;
        return later;
}

/* ---- reporting ------------------------------------------------------------------- */

void kb__topology_report(struct kb_session *s)
{
        struct kb_topology *t = s->topo;
        struct kb_result *r = s->result;
        if (!t)
                return;
        size_t nhn = 0;
        for (size_t i = 0; i < t->ndomains; i++)
                nhn += t->domains[i].hypernode != NULL;
        r->hypernodes = kb_pool_alloc(&r->pool, (nhn + 1) * sizeof(*r->hypernodes));
        for (size_t i = 0; i < t->ndomains; i++) {
                const struct kb_domain *d = &t->domains[i];
                if (d->hypernode)
                        r->hypernodes[r->nhypernodes++] =
                            (struct kb_hn_status){d->hypernode, d->hi - d->lo};
        }
        for (size_t i = 0; i < t->nwarnings; i++) {
                const struct kb__topo_warning *w = &t->warnings[i];
                kb__result_add_warning(
                    s, &(struct kb_warning){
                           .hn = w->hn,
                           .object = kb_pool_printf(&r->pool, "hypernode %s", w->hn->meta.name),
                           .message = kb_pool_strdup(&r->pool, w->message)});
        }
}

void kb__topology_release(struct kb_session *s)
{
        if (!s->topo)
                return;
        free(s->topo->warnings);
        free(s->topo->domains);
        s->topo = NULL;
}

void kb_topology_bound_text(const struct kb_podgroup *pg, char *buf, size_t n)
{
        if (pg->highest_tier >= 0)
                snprintf(buf, n, " of tier <= %d", (int)pg->highest_tier);
        else if (pg->highest_tier_name)
                snprintf(buf, n, " at or below a domain of tierName %s", pg->highest_tier_name);
        else
                buf[0] = '\0';
}
