/*
 * Node selection: the best node for a task, fast and exact.
 *
 * Volcano's allocate checks every node for every task: the request must fit
 * the node's future idle resources, every predicate must pass, and the node
 * with the highest score wins.  At 5,000 nodes and 100,000 tasks that is
 * 5e8 predicate and score calls a session.  kbatch gets the same answer
 * from per-class caches:
 *
 *   - Tasks whose placement specs are equal (requests, nodeSelector,
 *     affinity, tolerations) form a placement class.  The tasks of one job
 *     nearly always share one.
 *   - For a class, the cache keeps per node: the static predicate verdict
 *     (computed once: labels and taints do not change in a session), which
 *     resources are short, and a max-tree (a segment tree over nodes) of
 *     scores, -inf where the node is infeasible.  The root is the answer.
 *   - Every change to a node's accounting appends the node to the session's
 *     change log.  Before answering, a cache replays the log from where it
 *     last stopped and recomputes those nodes' leaves: O(log N) each.
 *
 * Example: 3 nodes, scores 50 / 70 / 70 for class C, all feasible.  The tree
 * holds max(50,70)=70 at node 1 and 70 at node 2; ties go to the lower
 * index, so the root says node 1.  Placing a task on node 1 logs "1"; the
 * next query for C recomputes node 1 (now 40), and the root says node 2.
 *
 * Correctness rests on purity (KB_PURE in framework.h): a cached callback's
 * answer depends only on the class and the node.  Anything else (a
 * non-pure callback, batch node orders, or conf.full_scan) makes every query
 * a full scan, which is also what the tests compare the caches against.
 *
 * The reasons a task fits nowhere are counted per class as the leaves
 * change, so "0/5000 nodes are available: ..." costs nothing extra.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

#define MAX_CACHES 64

struct cache {
        uint32_t eclass;
        const struct kb_task *proto;
        size_t log_pos;
        uint64_t last_use;
        uint32_t size; /* leaves, a power of two >= nnodes */
        double *score; /* 2*size, [1] is the root */
        uint32_t *best;
        /* Per node: index+1 into reasons[] of the static verdict (0 passes),
         * and the mask of resources short. */
        uint16_t *static_why;
        uint16_t *short_mask;
        /* Reason counts: per resource slot, and per static reason (counted
         * only for nodes where nothing is short, as Volcano checks resources
         * before predicates). */
        uint32_t short_count[KB_RES_MAX];
        const char **reasons;
        uint32_t *reason_count;
        size_t nreasons;
};

struct class_entry {
        uint64_t hash;
        uint32_t id;
        uint32_t len;
        const unsigned char *key;
};

struct kb_select {
        bool cached;
        struct cache *caches[MAX_CACHES];
        size_t ncaches;
        uint64_t clock;
        /* Placement classes: an open-addressing table of canonical keys. */
        struct class_entry *classes;
        size_t nclasses, capclasses;
        struct kb_buf key;
};

void kb__select_init(struct kb_session *s)
{
        s->select = kb_xcalloc(1, sizeof(*s->select));
        kb_buf_init(&s->select->key);
}

static void cache_free(struct cache *c)
{
        if (!c)
                return;
        free(c->score);
        free(c->best);
        free(c->static_why);
        free(c->short_mask);
        free(c->reasons);
        free(c->reason_count);
        free(c);
}

void kb__select_release(struct kb_session *s)
{
        struct kb_select *sel = s->select;
        for (size_t i = 0; i < sel->ncaches; i++)
                cache_free(sel->caches[i]);
        free(sel->classes);
        kb_buf_release(&sel->key);
        free(sel);
        s->select = NULL;
}

/* ---- placement classes ------------------------------------------------------ */

static void key_str(struct kb_buf *b, const char *s)
{
        size_t n = s ? strlen(s) : 0;
        uint32_t len = s ? (uint32_t)n : UINT32_MAX;
        kb_buf_add(b, (const char *)&len, sizeof(len));
        if (s)
                kb_buf_add(b, s, n);
}

static void key_term(struct kb_buf *b, const struct kb_node_term *t)
{
        const struct kb_selector_req *lists[2] = {t->exprs, t->fields};
        size_t counts[2] = {t->nexprs, t->nfields};
        for (int l = 0; l < 2; l++) {
                kb_buf_add(b, (const char *)&counts[l], sizeof(counts[l]));
                for (size_t i = 0; i < counts[l]; i++) {
                        const struct kb_selector_req *r = &lists[l][i];
                        key_str(b, r->key);
                        kb_buf_add(b, (const char *)&r->op, sizeof(r->op));
                        kb_buf_add(b, (const char *)&r->nvalues, sizeof(r->nvalues));
                        for (size_t v = 0; v < r->nvalues; v++)
                                key_str(b, r->values[v]);
                }
        }
}

/* The canonical bytes of everything a pure callback may read of a task. */
static void placement_key(struct kb_buf *b, const struct kb_task *t)
{
        const struct kb_pod *p = t->pod;
        kb_buf_reset(b);
        kb_buf_add(b, (const char *)&t->resreq, sizeof(t->resreq));
        kb_buf_add(b, (const char *)&p->nnode_selector, sizeof(p->nnode_selector));
        for (size_t i = 0; i < p->nnode_selector; i++) {
                key_str(b, p->node_selector[i].key);
                key_str(b, p->node_selector[i].value);
        }
        kb_buf_add(b, (const char *)&p->nrequired, sizeof(p->nrequired));
        for (size_t i = 0; i < p->nrequired; i++)
                key_term(b, &p->required[i]);
        kb_buf_add(b, (const char *)&p->npreferred, sizeof(p->npreferred));
        for (size_t i = 0; i < p->npreferred; i++) {
                kb_buf_add(b, (const char *)&p->preferred[i].weight, sizeof(int32_t));
                key_term(b, &p->preferred[i].term);
        }
        kb_buf_add(b, (const char *)&p->ntolerations, sizeof(p->ntolerations));
        for (size_t i = 0; i < p->ntolerations; i++) {
                const struct kb_toleration *tol = &p->tolerations[i];
                key_str(b, tol->key);
                key_str(b, tol->value);
                key_str(b, tol->effect);
                kb_buf_add(b, (const char *)&tol->op, sizeof(tol->op));
        }
}

static uint32_t class_of(struct kb_session *s, struct kb_task *t)
{
        struct kb_select *sel = s->select;
        if (t->eclass)
                return t->eclass;
        placement_key(&sel->key, t);
        uint64_t h = kb_hash(sel->key.data, sel->key.len, KB_HASH_SEED);
        if (sel->nclasses * 2 >= sel->capclasses) {
                size_t cap = sel->capclasses ? sel->capclasses * 2 : 64;
                struct class_entry *tab = kb_xcalloc(cap, sizeof(*tab));
                for (size_t i = 0; i < sel->capclasses; i++) {
                        struct class_entry *e = &sel->classes[i];
                        if (!e->id)
                                continue;
                        size_t k = e->hash & (cap - 1);
                        while (tab[k].id)
                                k = (k + 1) & (cap - 1);
                        tab[k] = *e;
                }
                free(sel->classes);
                sel->classes = tab;
                sel->capclasses = cap;
        }
        size_t k = h & (sel->capclasses - 1);
        for (;; k = (k + 1) & (sel->capclasses - 1)) {
                struct class_entry *e = &sel->classes[k];
                if (!e->id) {
                        unsigned char *key = kb_pool_alloc(&s->pool, sel->key.len);
                        memcpy(key, sel->key.data, sel->key.len);
                        e->hash = h;
                        e->key = key;
                        e->len = (uint32_t)sel->key.len;
                        e->id = (uint32_t)++sel->nclasses;
                        break;
                }
                if (e->hash == h && e->len == sel->key.len &&
                    memcmp(e->key, sel->key.data, e->len) == 0)
                        break;
        }
        t->eclass = sel->classes[k].id;
        return t->eclass;
}

/* ---- fit --------------------------------------------------------------------- */

/* Mask of resource slots where t does not fit n's future idle resources. */
static uint16_t short_mask(const struct kb_task *t, const struct kb_node_info *n)
{
        uint16_t mask = 0;
        for (int i = 0; i < KB_RES_MAX; i++)
                if (t->resreq.q[i] > n->idle.q[i] + n->releasing.q[i] - n->pipelined.q[i])
                        mask |= (uint16_t)(1u << i);
        return mask;
}

/* The kube-scheduler wording for a short resource. */
static void short_reason(int slot, char *buf, size_t n)
{
        if (slot == KB_RES_PODS)
                snprintf(buf, n, "Too many pods");
        else
                snprintf(buf, n, "Insufficient %s", kb_res_name(slot));
}

/* A reason histogram, worded as kube-scheduler's FitError:
 * "0/N nodes are available: <count> <reason>, ... ." with the entries
 * sorted as strings. */
struct reason_count {
        const char *reason;
        uint32_t count;
};

static int cmp_reason_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *format_reasons(struct kb_session *s, size_t nnodes, struct reason_count *rc,
                                  size_t n)
{
        char **items = kb_xmalloc((n + 1) * sizeof(*items));
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                bool dup = false;
                /* Fold equal texts from different sources. */
                for (size_t j = 0; j < i; j++)
                        if (rc[j].count && strcmp(rc[j].reason, rc[i].reason) == 0) {
                                rc[j].count += rc[i].count;
                                rc[i].count = 0;
                                dup = true;
                                break;
                        }
                (void)dup;
        }
        for (size_t i = 0; i < n; i++)
                if (rc[i].count)
                        items[k++] = kb_xasprintf("%u %s", rc[i].count, rc[i].reason);
        qsort(items, k, sizeof(*items), cmp_reason_str);
        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_printf(&b, "0/%zu nodes are available", nnodes);
        for (size_t i = 0; i < k; i++) {
                kb_buf_adds(&b, i ? ", " : ": ");
                kb_buf_adds(&b, items[i]);
                free(items[i]);
        }
        kb_buf_addc(&b, '.');
        free(items);
        const char *msg = kb_session_intern(s, b.data);
        kb_buf_release(&b);
        return msg;
}

/* ---- the cache ------------------------------------------------------------- */

static inline bool better(double sa, uint32_t ia, double sb, uint32_t ib)
{
        return sa > sb || (sa == sb && ia < ib);
}

static void tree_pull(struct cache *c, uint32_t k)
{
        uint32_t l = 2 * k, r = 2 * k + 1;
        if (better(c->score[r], c->best[r], c->score[l], c->best[l])) {
                c->score[k] = c->score[r];
                c->best[k] = c->best[r];
        } else {
                c->score[k] = c->score[l];
                c->best[k] = c->best[l];
        }
}

static void count_node(struct cache *c, uint32_t i, int sign)
{
        uint16_t m = c->short_mask[i];
        if (m) {
                for (int d = 0; d < KB_RES_MAX; d++)
                        if (m & (1u << d))
                                c->short_count[d] += (uint32_t)sign;
        } else if (c->static_why[i]) {
                c->reason_count[c->static_why[i] - 1] += (uint32_t)sign;
        }
}

/* Recomputes leaf i (short resources, score) without touching the tree. */
static void leaf_compute(struct kb_session *s, struct cache *c, uint32_t i)
{
        const struct kb_node_info *n = &s->nodes[i];
        c->short_mask[i] = short_mask(c->proto, n);
        uint32_t leaf = c->size + i;
        c->best[leaf] = i;
        if (c->short_mask[i] || c->static_why[i])
                c->score[leaf] = -INFINITY;
        else
                c->score[leaf] = kb_node_order(s, c->proto, n);
}

static struct cache *cache_build(struct kb_session *s, struct kb_task *t)
{
        struct cache *c = kb_xcalloc(1, sizeof(*c));
        size_t nn = s->nnodes;
        c->eclass = t->eclass;
        c->proto = t;
        c->size = 1;
        while (c->size < nn)
                c->size *= 2;
        c->score = kb_xmalloc(2 * c->size * sizeof(*c->score));
        c->best = kb_xmalloc(2 * c->size * sizeof(*c->best));
        c->static_why = kb_xcalloc(nn + 1, sizeof(*c->static_why));
        c->short_mask = kb_xcalloc(nn + 1, sizeof(*c->short_mask));
        size_t capreasons = 0;
        for (uint32_t i = 0; i < nn; i++) {
                const char *why = kb_predicate(s, t, &s->nodes[i]);
                if (why) {
                        size_t r;
                        for (r = 0; r < c->nreasons; r++)
                                if (c->reasons[r] == why || strcmp(c->reasons[r], why) == 0)
                                        break;
                        if (r == c->nreasons) {
                                if (c->nreasons >= 65535)
                                        r = 0; /* absurdly many distinct texts: share one */
                                else {
                                        KB_PUSH(c->reasons, c->nreasons, capreasons, why);
                                        c->reason_count = kb_xrealloc(
                                            c->reason_count, c->nreasons * sizeof(uint32_t));
                                        c->reason_count[r] = 0;
                                }
                        }
                        c->static_why[i] = (uint16_t)(r + 1);
                }
                leaf_compute(s, c, i);
                count_node(c, i, +1);
        }
        for (uint32_t i = (uint32_t)nn; i < c->size; i++) {
                c->score[c->size + i] = -INFINITY;
                c->best[c->size + i] = UINT32_MAX;
        }
        for (uint32_t k = c->size - 1; k >= 1; k--)
                tree_pull(c, k);
        if (c->size == 1 && nn == 0) {
                c->score[1] = -INFINITY;
                c->best[1] = UINT32_MAX;
        }
        c->log_pos = s->nchanges;
        return c;
}

static void cache_catch_up(struct kb_session *s, struct cache *c)
{
        for (; c->log_pos < s->nchanges; c->log_pos++) {
                uint32_t i = s->changes[c->log_pos];
                count_node(c, i, -1);
                leaf_compute(s, c, i);
                count_node(c, i, +1);
                for (uint32_t k = (c->size + i) / 2; k >= 1; k /= 2)
                        tree_pull(c, k);
        }
}

static struct cache *cache_get(struct kb_session *s, struct kb_task *t)
{
        struct kb_select *sel = s->select;
        uint32_t ec = class_of(s, t);
        struct cache *c = NULL;
        for (size_t i = 0; i < sel->ncaches; i++)
                if (sel->caches[i]->eclass == ec) {
                        c = sel->caches[i];
                        break;
                }
        if (!c) {
                c = cache_build(s, t);
                if (sel->ncaches < MAX_CACHES) {
                        sel->caches[sel->ncaches++] = c;
                } else {
                        /* Evict the least recently used class. */
                        size_t lru = 0;
                        for (size_t i = 1; i < sel->ncaches; i++)
                                if (sel->caches[i]->last_use < sel->caches[lru]->last_use)
                                        lru = i;
                        cache_free(sel->caches[lru]);
                        sel->caches[lru] = c;
                }
        } else {
                cache_catch_up(s, c);
        }
        c->last_use = ++sel->clock;
        return c;
}

static const char *cache_reasons(struct kb_session *s, struct cache *c)
{
        struct reason_count rc[KB_RES_MAX + 64];
        struct reason_count *all = rc;
        size_t n = 0, need = KB_RES_MAX + c->nreasons;
        char names[KB_RES_MAX][160];
        if (need > KB_ARRAY_SIZE(rc))
                all = kb_xmalloc(need * sizeof(*all));
        for (int d = 0; d < KB_RES_MAX; d++)
                if (c->short_count[d]) {
                        short_reason(d, names[d], sizeof(names[d]));
                        all[n].reason = names[d];
                        all[n++].count = c->short_count[d];
                }
        for (size_t r = 0; r < c->nreasons; r++)
                if (c->reason_count[r]) {
                        all[n].reason = c->reasons[r];
                        all[n++].count = c->reason_count[r];
                }
        const char *msg = format_reasons(s, s->nnodes, all, n);
        if (all != rc)
                free(all);
        return msg;
}

/* ---- the full scan ----------------------------------------------------------- */

static struct kb_node_info *full_scan(struct kb_session *s, struct kb_task *t, const char **why)
{
        struct kb_node_info *best = NULL;
        double best_score = -INFINITY;
        size_t nn = s->nnodes, n = 0, cap = 0;
        struct reason_count *rc = NULL;
        char names[KB_RES_MAX][160];
        uint32_t short_count[KB_RES_MAX] = {0};

        /* Batch scores for every node that passes (Volcano computes them over
         * the feasible list). */
        double *batch = NULL;
        if (s->batch_node_order.n) {
                struct kb_node_info **list = kb_xmalloc((nn + 1) * sizeof(*list));
                batch = kb_xcalloc(nn + 1, sizeof(*batch));
                for (size_t i = 0; i < nn; i++)
                        list[i] = &s->nodes[i];
                for (size_t b = 0; b < s->batch_node_order.n; b++)
                        s->batch_node_order.v[b].fn(s->batch_node_order.v[b].arg, t, list, nn,
                                                    batch);
                free(list);
        }
        for (size_t i = 0; i < nn; i++) {
                struct kb_node_info *node = &s->nodes[i];
                uint16_t m = short_mask(t, node);
                if (m) {
                        for (int d = 0; d < KB_RES_MAX; d++)
                                if (m & (1u << d))
                                        short_count[d]++;
                        continue;
                }
                const char *w = kb_predicate(s, t, node);
                if (w) {
                        size_t r;
                        for (r = 0; r < n; r++)
                                if (rc[r].reason == w || strcmp(rc[r].reason, w) == 0)
                                        break;
                        if (r == n) {
                                struct reason_count e = {w, 0};
                                KB_PUSH(rc, n, cap, e);
                        }
                        rc[r].count++;
                        continue;
                }
                double score = kb_node_order(s, t, node) + (batch ? batch[i] : 0);
                if (!best || score > best_score) {
                        best = node;
                        best_score = score;
                }
        }
        if (!best && why) {
                for (int d = 0; d < KB_RES_MAX; d++)
                        if (short_count[d]) {
                                short_reason(d, names[d], sizeof(names[d]));
                                struct reason_count e = {names[d], short_count[d]};
                                KB_PUSH(rc, n, cap, e);
                        }
                *why = format_reasons(s, nn, rc, n);
        }
        free(rc);
        free(batch);
        return best;
}

static bool use_cache(struct kb_session *s)
{
        if (s->conf->full_scan || s->batch_node_order.n)
                return false;
        for (size_t i = 0; i < s->predicate.n; i++)
                if (!(s->predicate.v[i].flags & KB_PURE))
                        return false;
        for (size_t i = 0; i < s->node_order.n; i++)
                if (!(s->node_order.v[i].flags & KB_PURE))
                        return false;
        return true;
}

static struct kb_node_info *find_node_by_name(struct kb_session *s, const char *name)
{
        size_t lo = 0, hi = s->nnodes;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = strcmp(s->nodes[mid].name, name);
                if (c == 0)
                        return &s->nodes[mid];
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

struct kb_node_info *kb_select_node(struct kb_session *s, struct kb_task *t, const char **why)
{
        if (why)
                *why = NULL;
        /* The nominated node first, when it is feasible (Volcano allocate). */
        const char *nom = t->pod->nominated_node_name;
        if (nom && *nom) {
                struct kb_node_info *n = find_node_by_name(s, nom);
                if (n && !short_mask(t, n) && !kb_predicate(s, t, n))
                        return n;
        }
        if (!use_cache(s))
                return full_scan(s, t, why);
        struct cache *c = cache_get(s, t);
        if (c->score[1] == -INFINITY) {
                if (why)
                        *why = cache_reasons(s, c);
                return NULL;
        }
        return &s->nodes[c->best[1]];
}
