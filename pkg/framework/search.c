/*
 * Node selection under placement filters and batch scores, on a placement
 * class's cache (select.c keeps the cache: static verdicts and node-order
 * scores per node, in a max-tree).
 *
 * What depends on other pods is never cached.  A placement filter (pod
 * affinity, topology spread, host ports: struct kb_filter) is evaluated on
 * the nodes the search visits, best first; a batch score (normalised over
 * the candidates: struct kb_batch_scorer) is computed over the candidates
 * the search gathers.  The answer is the full scan's (select.c): the best
 * (gradient, node order + batch score, lower index) among the nodes where
 * the request fits, every predicate and filter passes, in the best
 * gradient.
 *
 * Best first.  The tree's root holds the best node ignoring the filters.
 * The search pops tree nodes from a heap ordered like the tree; a popped
 * subtree's best node is checked against the filters (once per query) and,
 * if it passes, is the answer: nothing left in the heap can beat it.  If it
 * fails, the subtree's children are pushed.  So a task whose best node
 * passes costs one check, and each better node that fails costs O(log N).
 * Filters may hint where passing nodes can be: a list of nodes (then only
 * those are looked at), or the domains of a topology key; subtrees holding
 * no allowed domain are never pushed (each tree node keeps a 64-bit mask of
 * the domains below it, domain d on bit d mod 63, nodes without the label
 * on bit 63: a subtree is skipped when its mask and the allowed bits do not
 * meet, which may keep a subtree that has nothing, never the reverse).
 *
 * Batch scores.  When every scorer says its scores are the same on every
 * node for the task, they are left out (a constant changes no choice).
 * When they differ only on a list of nodes L (the few nodes with a
 * PreferNoSchedule taint the task does not tolerate, say), the rest all
 * score alike, so the best of them — the search's answer with L excluded —
 * stands for all of them, and the candidates are it and the feasible nodes
 * of L: the scorers normalise over min and max, which that set has too.
 * Otherwise every node is a candidate (a scan over the cached leaves).
 *
 * Example: a gang whose pods must not share a node (hostname
 * anti-affinity) on three empty nodes a, b, c scoring 90, 80, 70.  Pod 1:
 * the root says a; the filter passes; a.  Pod 2: a now scores 85 and is
 * still best, but fails (pod 1 is there); a's subtree is expanded and b
 * passes.  Pod 3 checks a and b, both fail, then c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

/* Domains per key beyond which a hint is not worth its bits (one pass over
 * the domains per query). */
#define MAX_PRUNE_DOMAINS 4096

/* One topology key's domain masks for a cache's tree. */
struct kb__prune {
        const struct kb_domains *domains;
        uint64_t *mask; /* 2*size */
};

/* Scratch for one query at a time, reused across the session. */
struct kb__search {
        uint32_t epoch;
        uint32_t *failed;    /* per node: == epoch when it failed a filter in this query */
        uint32_t *listed;    /* per node: == epoch when it is in the batch scorers' list */
        struct kb_heap heap; /* tree nodes (never 0) by tree_before */
        struct kb_node_info **cand;
        uint8_t *cand_grad;
        double *cand_score;
        size_t ncand;
};

void kb__search_cache_free(struct kb__cache *c)
{
        for (size_t i = 0; i < c->nprune; i++)
                free(c->prune[i].mask);
        free(c->prune);
        c->prune = NULL;
        c->nprune = 0;
}

void kb__search_release(struct kb_session *s)
{
        struct kb__search *S = s->search;
        if (!S)
                return;
        free(S->failed);
        free(S->listed);
        kb_heap_release(&S->heap);
        free(S->cand);
        free(S->cand_grad);
        free(S->cand_score);
        free(S);
        s->search = NULL;
}

/* A new query: every mark of the last one is forgotten at once (and the
 * arrays cleared when the counter wraps). */
static void next_epoch(struct kb_session *s, struct kb__search *S)
{
        if (++S->epoch == 0) {
                memset(S->failed, 0, (s->nnodes + 1) * sizeof(*S->failed));
                memset(S->listed, 0, (s->nnodes + 1) * sizeof(*S->listed));
                S->epoch = 1;
        }
}

static inline bool tree_before(const struct kb__cache *c, uint32_t a, uint32_t b);

/* The search heap's order: the tree node with the better best node first
 * (the heap's context is the cache being searched). */
static int heap_cmp(void *c, const void *a, const void *b)
{
        return tree_before(c, (uint32_t)(uintptr_t)a, (uint32_t)(uintptr_t)b) ? -1 : 1;
}

static struct kb__search *scratch(struct kb_session *s)
{
        struct kb__search *S = s->search;
        if (!S) {
                size_t nn = s->nnodes + 1;
                S = s->search = kb_xcalloc(1, sizeof(*S));
                S->failed = kb_xcalloc(nn, sizeof(*S->failed));
                S->listed = kb_xcalloc(nn, sizeof(*S->listed));
                S->cand = kb_xmalloc(nn * sizeof(*S->cand));
                S->cand_grad = kb_xmalloc(nn * sizeof(*S->cand_grad));
                S->cand_score = kb_xmalloc(nn * sizeof(*S->cand_score));
                kb_heap_init(&S->heap, heap_cmp, NULL);
        }
        next_epoch(s, S);
        S->ncand = 0;
        S->heap.n = 0;
        return S;
}

/* ---- fit errors --------------------------------------------------------------------- */

uint16_t kb__short_mask(const struct kb_task *t, const struct kb_node_info *n)
{
        /* Only interned resources can be asked for (model.c's account). */
        int nres = kb_res_count();
        uint16_t mask = 0;
        for (int i = 0; i < nres; i++)
                if (t->resreq->q[i] > n->idle.q[i] + n->releasing.q[i] - n->pipelined.q[i])
                        mask |= (uint16_t)(1u << i);
        return mask;
}

void kb__short_reason(int slot, char *buf, size_t n)
{
        if (slot == KB_RES_PODS)
                snprintf(buf, n, "Too many pods");
        else
                snprintf(buf, n, "Insufficient %s", kb_res_name(slot));
}

static int cmp_reason_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * kube-scheduler's wording: "0/N nodes are available: <count> <reason>,
 * ... ." with the entries sorted as strings; equal texts from different
 * sources are folded.  Both the caches and the full scan word their
 * answers here.
 */
const char *kb__fit_error(struct kb_session *s, size_t nnodes,
                          const uint32_t short_count[KB_RES_MAX], const char *const *reasons,
                          const uint32_t *counts, size_t nreasons)
{
        /* Asked for tasks that fit nowhere, many a session: the items
         * ("<count> <reason>") are written into one buffer, NUL after
         * each, without printf, and sorted by their offsets' texts. */
        struct kb_buf all;
        kb_buf_init(&all);
        size_t *off = kb_xmalloc((KB_RES_MAX + nreasons + 1) * sizeof(*off));
        size_t k = 0;
        char num[24];
        for (int d = 0; d < KB_RES_MAX; d++) {
                if (!short_count[d])
                        continue;
                char why[160];
                kb__short_reason(d, why, sizeof(why));
                off[k++] = all.len;
                kb_buf_add(&all, num, kb_format_i64(short_count[d], num, sizeof(num)));
                kb_buf_addc(&all, ' ');
                kb_buf_adds(&all, why);
                kb_buf_addc(&all, '\0');
        }
        for (size_t i = 0; i < nreasons; i++) {
                uint32_t n = counts[i];
                bool seen = false;
                for (size_t j = 0; j < i && !seen; j++)
                        seen = counts[j] && strcmp(reasons[j], reasons[i]) == 0;
                if (seen || !n)
                        continue;
                for (size_t j = i + 1; j < nreasons; j++)
                        if (strcmp(reasons[j], reasons[i]) == 0)
                                n += counts[j];
                off[k++] = all.len;
                kb_buf_add(&all, num, kb_format_i64(n, num, sizeof(num)));
                kb_buf_addc(&all, ' ');
                kb_buf_adds(&all, reasons[i]);
                kb_buf_addc(&all, '\0');
        }
        const char **items = kb_xmalloc((k + 1) * sizeof(*items));
        for (size_t i = 0; i < k; i++)
                items[i] = all.data + off[i];
        free(off);
        qsort(items, k, sizeof(*items), cmp_reason_str);
        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_adds(&b, "0/");
        kb_buf_add(&b, num, kb_format_i64((int64_t)nnodes, num, sizeof(num)));
        kb_buf_adds(&b, " nodes are available");
        for (size_t i = 0; i < k; i++) {
                kb_buf_adds(&b, i ? ", " : ": ");
                kb_buf_adds(&b, items[i]);
        }
        free(items);
        kb_buf_release(&all);
        kb_buf_addc(&b, '.');
        const char *msg = kb_session_intern(s, b.data);
        kb_buf_release(&b);
        return msg;
}

const char *kb__cache_reasons(struct kb_session *s, struct kb__cache *c)
{
        /* The counts change only as the cache catches up (cache_catch_up):
         * at the same log position, the same words. */
        if (!c->why || c->why_pos != c->log_pos) {
                c->why = kb__fit_error(s, s->nnodes, c->short_count, c->reasons,
                                       c->reason_count, c->nreasons);
                c->why_pos = c->log_pos;
        }
        return c->why;
}

/* Why nothing fits t: the cache's counts (resources short, static
 * reasons), plus the filters' reason on every node that passed those. */
static const char *reasons_with_filters(struct kb_session *s, struct kb__cache *c,
                                        const struct kb_task *t)
{
        /* No node passed those (the root's gradient is 0): no filter is
         * asked, the counts alone say it. */
        if (!c->tree[1].grad)
                return kb__cache_reasons(s, c);
        size_t n = c->nreasons, cap = n + 8;
        const char **reasons = kb_xmalloc(cap * sizeof(*reasons));
        uint32_t *counts = kb_xmalloc(cap * sizeof(*counts));
        if (n) {
                memcpy(reasons, c->reasons, n * sizeof(*reasons));
                memcpy(counts, c->reason_count, n * sizeof(*counts));
        }
        for (size_t i = 0; i < s->nnodes; i++) {
                if (!c->tree[KB__LEAF(c, s, i)].grad)
                        continue;
                const char *w = kb_filter_check(s, t, &s->nodes[i]);
                if (!w)
                        continue;
                size_t r;
                for (r = c->nreasons; r < n; r++)
                        if (reasons[r] == w || strcmp(reasons[r], w) == 0)
                                break;
                if (r == n) {
                        if (n == cap) {
                                cap *= 2;
                                reasons = kb_xrealloc(reasons, cap * sizeof(*reasons));
                                counts = kb_xrealloc(counts, cap * sizeof(*counts));
                        }
                        reasons[n] = w;
                        counts[n++] = 0;
                }
                counts[r]++;
        }
        const char *msg = kb__fit_error(s, s->nnodes, c->short_count, reasons, counts, n);
        free(reasons);
        free(counts);
        return msg;
}

/* ---- what applies to the task ------------------------------------------------------ */

struct scope {
        uint32_t lo, hi; /* positions of the topology order searched */
        bool whole;      /* ... all of them */
        bool filtered;   /* some filter restricts t */
        bool scored;     /* some batch score differs between nodes */
        bool everywhere; /* ... and may differ on any node */
        const struct kb_domains *domains;
        const uint8_t *allowed;
        bool keyless;
        const uint32_t *nodes; /* the smallest node list a filter gave */
        size_t nnodes;
        bool has_nodes;
        size_t nlisted; /* nodes the scorers listed (marked in S->listed) */
};

static void get_scope(struct kb_session *s, struct kb__search *S, const struct kb_task *t,
                      struct scope *sc)
{
        memset(sc, 0, sizeof(*sc));
        EACH_CB (s, KB_POINT_FILTER, e) {
                struct kb_filter_hint h = {0};
                if (!e->fn.filter.scope || !e->fn.filter.scope(e->arg, t, &h))
                        continue;
                sc->filtered = true;
                if (h.domains && !sc->domains && h.allowed) {
                        sc->domains = h.domains;
                        sc->allowed = h.allowed;
                        sc->keyless = h.keyless;
                }
                if (h.nodes && (!sc->has_nodes || h.nnodes < sc->nnodes)) {
                        sc->nodes = h.nodes;
                        sc->nnodes = h.nnodes;
                        sc->has_nodes = true;
                }
        }
        EACH_CB (s, KB_POINT_BATCH_NODE_ORDER, e) {
                const uint32_t *list = NULL;
                size_t n = 0;
                if (e->fn.batch_node_order.varies &&
                    !e->fn.batch_node_order.varies(e->arg, t, &list, &n))
                        continue;
                sc->scored = true;
                if (!e->fn.batch_node_order.varies || !list) {
                        sc->everywhere = true;
                        continue;
                }
                for (size_t k = 0; k < n && !sc->everywhere; k++)
                        if (S->listed[list[k]] != S->epoch) {
                                S->listed[list[k]] = S->epoch;
                                /* Past a quarter of the nodes a scan is cheaper. */
                                if (++sc->nlisted > s->nnodes / 4 + 16)
                                        sc->everywhere = true;
                        }
        }
}

/* ---- pruning by domain ------------------------------------------------------------- */

static inline uint64_t domain_bit(uint32_t d)
{
        return d == KB_NO_DOMAIN ? (uint64_t)1 << 63 : (uint64_t)1 << (d % 63);
}

static const uint64_t *masks(struct kb_session *s, struct kb__cache *c, const struct kb_domains *dm)
{
        for (size_t i = 0; i < c->nprune; i++)
                if (c->prune[i].domains == dm)
                        return c->prune[i].mask;
        uint64_t *m = kb_xcalloc(2 * (size_t)c->size, sizeof(*m));
        for (uint32_t i = 0; i < s->nnodes; i++)
                m[KB__LEAF(c, s, i)] = domain_bit(dm->of[i]);
        for (uint32_t k = c->size - 1; k >= 1; k--)
                m[k] = m[2 * k] | m[2 * k + 1];
        c->prune = kb_xrealloc(c->prune, (c->nprune + 1) * sizeof(*c->prune));
        c->prune[c->nprune++] = (struct kb__prune){dm, m};
        return m;
}

/* ---- best first ------------------------------------------------------------------ */

static inline bool tree_before(const struct kb__cache *c, uint32_t a, uint32_t b)
{
        return kb__entry_better(&c->tree[a], &c->tree[b]);
}

static void heap_push(struct kb__search *S, const struct kb__cache *c, uint32_t k)
{
        S->heap.ctx = (void *)c;
        kb_heap_push(&S->heap, (void *)(uintptr_t)k);
}

static uint32_t heap_pop(struct kb__search *S)
{
        return (uint32_t)(uintptr_t)kb_heap_pop(&S->heap);
}

/* Whether node i's position is in the searched range. */
static inline bool in_scope(const struct kb_session *s, const struct scope *sc, uint32_t i)
{
        uint32_t pos = s->topo_pos ? s->topo_pos[i] : i;
        return sc->whole || (pos >= sc->lo && pos < sc->hi);
}

/* Whether node i may be the search's answer: feasible for the class, not
 * listed by the scorers (those are looked at apart), every filter passing;
 * a node that failed is remembered for the rest of the query. */
static bool passes(struct kb_session *s, struct kb__search *S, struct kb__cache *c,
                   const struct kb_task *t, const struct scope *sc, uint32_t i)
{
        if (!c->tree[KB__LEAF(c, s, i)].grad || S->failed[i] == S->epoch ||
            S->listed[i] == S->epoch)
                return false;
        if (!in_scope(s, sc, i))
                return false;
        if (sc->filtered && kb_filter_check(s, t, &s->nodes[i])) {
                S->failed[i] = S->epoch;
                return false;
        }
        return true;
}

/* The best node passing everything, not listed: -1 when none. */
static int64_t best_first(struct kb_session *s, struct kb__search *S, struct kb__cache *c,
                          const struct kb_task *t, const struct scope *sc)
{
        if (sc->has_nodes) {
                int64_t best = -1;
                for (size_t k = 0; k < sc->nnodes; k++) {
                        uint32_t i = sc->nodes[k];
                        if (i >= s->nnodes)
                                continue;
                        uint32_t l = KB__LEAF(c, s, i);
                        if (passes(s, S, c, t, sc, i) &&
                            (best < 0 || tree_before(c, l, KB__LEAF(c, s, (uint32_t)best))))
                                best = i;
                }
                return best;
        }
        const uint64_t *mask = NULL;
        uint64_t allowed = 0;
        if (sc->domains && sc->domains->ndomains <= MAX_PRUNE_DOMAINS) {
                mask = masks(s, c, sc->domains);
                for (uint32_t d = 0; d < sc->domains->ndomains; d++)
                        if (sc->allowed[d])
                                allowed |= domain_bit(d);
                if (sc->keyless)
                        allowed |= domain_bit(KB_NO_DOMAIN);
        }
        if (sc->whole) {
                if (c->tree[1].grad && (!mask || (mask[1] & allowed)))
                        heap_push(S, c, 1);
        } else {
                /* The subtrees that cover the range exactly (as a range
                 * query's), each wholly inside it. */
                for (uint32_t l = sc->lo + c->size, r = sc->hi + c->size; l < r; l /= 2, r /= 2) {
                        if (l & 1) {
                                if (c->tree[l].grad && (!mask || (mask[l] & allowed)))
                                        heap_push(S, c, l);
                                l++;
                        }
                        if (r & 1) {
                                --r;
                                if (c->tree[r].grad && (!mask || (mask[r] & allowed)))
                                        heap_push(S, c, r);
                        }
                }
        }
        while (!kb_heap_empty(&S->heap)) {
                uint32_t k = heap_pop(S);
                if (!c->tree[k].grad)
                        break;
                uint32_t i = c->tree[k].best;
                if (S->failed[i] != S->epoch && passes(s, S, c, t, sc, i))
                        return i;
                S->failed[i] = S->epoch;
                if (k >= c->size)
                        continue;
                for (uint32_t ch = 2 * k; ch <= 2 * k + 1; ch++)
                        if (c->tree[ch].grad && (!mask || (mask[ch] & allowed)))
                                heap_push(S, c, ch);
        }
        return -1;
}

/* ---- the answer ---------------------------------------------------------------------- */

static void add_cand(struct kb__search *S, struct kb_session *s, struct kb__cache *c, uint32_t i)
{
        S->cand[S->ncand] = &s->nodes[i];
        S->cand_grad[S->ncand] = c->tree[KB__LEAF(c, s, i)].grad;
        S->cand_score[S->ncand] = c->tree[KB__LEAF(c, s, i)].score;
        S->ncand++;
}

struct kb_node_info *kb__search(struct kb_session *s, struct kb__cache *c, struct kb_task *t,
                                uint32_t lo, uint32_t hi, const char **why, bool *plain)
{
        if (!s->cb[KB_POINT_FILTER].n && !s->cb[KB_POINT_BATCH_NODE_ORDER].n) {
                *plain = true; /* most sessions: nothing to do per task */
                return NULL;
        }
        struct kb__search *S = scratch(s);
        struct scope sc;
        get_scope(s, S, t, &sc);
        sc.lo = lo;
        sc.hi = hi;
        sc.whole = lo == 0 && hi >= s->nnodes;
        *plain = !sc.filtered && !sc.scored;
        if (*plain)
                return NULL;

        if (sc.everywhere) {
                /* Every feasible node is a candidate. */
                sc.nlisted = 0;
                next_epoch(s, S); /* forget the marks: nothing is looked at apart */
                for (uint32_t i = 0; i < s->nnodes; i++)
                        if (passes(s, S, c, t, &sc, i))
                                add_cand(S, s, c, i);
        } else {
                int64_t rep = best_first(s, S, c, t, &sc);
                if (rep >= 0)
                        add_cand(S, s, c, (uint32_t)rep);
                for (uint32_t i = 0; sc.nlisted && i < s->nnodes; i++) {
                        if (S->listed[i] != S->epoch || !c->tree[KB__LEAF(c, s, i)].grad ||
                            !in_scope(s, &sc, i))
                                continue;
                        if (sc.filtered && kb_filter_check(s, t, &s->nodes[i]))
                                continue;
                        add_cand(S, s, c, i);
                }
        }

        /* The best gradient's candidates, scored. */
        uint8_t top = 0;
        for (size_t k = 0; k < S->ncand; k++)
                top = KB_MAX(top, S->cand_grad[k]);
        size_t n = 0;
        for (size_t k = 0; k < S->ncand; k++)
                if (S->cand_grad[k] == top) {
                        S->cand[n] = S->cand[k];
                        S->cand_score[n++] = S->cand_score[k];
                }
        S->ncand = n;
        if (!n) {
                /* A domain's query (part of the topology order) keeps no
                 * reasons. */
                *why = sc.whole ? reasons_with_filters(s, c, t) : NULL;
                return NULL;
        }
        if (sc.scored && n > 1) {
                double *batch = kb_xcalloc(n, sizeof(*batch));
                kb_batch_node_order(s, t, S->cand, n, batch);
                for (size_t k = 0; k < n; k++)
                        S->cand_score[k] += batch[k];
                free(batch);
        }
        size_t best = 0;
        for (size_t k = 1; k < n; k++)
                if (kb__better(top, S->cand_score[k], S->cand[k]->index, top, S->cand_score[best],
                               S->cand[best]->index))
                        best = k;
        return S->cand[best];
}
