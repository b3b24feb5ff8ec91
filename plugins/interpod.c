/*
 * The inter-pod index: counts of pods per topology domain, for pod
 * affinity, anti-affinity and topology spread, kept current as the session
 * assumes, pipelines, evicts and rolls back tasks.  It is a session
 * service (kb_session_service): predicates (the filters) and nodeorder
 * (the scores) share one index, built once per session, with one set of
 * event handlers; each plugin asks it for the counters its tasks need
 * while it opens, and the index counts what is on the nodes once every
 * plugin has opened.
 *
 * A counter counts, per domain of a node label key (or per node), either
 *   - the pods that match a matcher: every one of a list of pod affinity
 *     terms (namespace and label selector), optionally only pods not being
 *     deleted and only on eligible nodes (topology spread's inclusion
 *     policies) — "how many pods of app=web are in zone a"; or
 *   - the pods that carry a term of their own (an existing pod's required
 *     anti-affinity, its preferred terms with their weights) — "is a pod
 *     whose anti-affinity could match me in zone a".
 * Counters are made while the plugins open, from every task's spec, equal
 * ones shared (between the plugins too); then the index counts what is on
 * the nodes, and its event handlers add and take back each task as
 * statements move it: O(counters it touches) per operation, never a walk
 * over pods.
 *
 * Which counters a pod moves is found through an inverted index: a
 * matcher is filed under the values of one `key In (values)` requirement
 * of its selectors (matchLabels are such requirements), so a pod labelled
 * {app: web, tier: db} looks at the matchers filed under app=web and
 * tier=db, plus the few without such a requirement, and checks those
 * fully.  Carried terms are found for an incoming pod the same way.
 *
 * Which tasks count: everything on a node's list — bound, running,
 * releasing, assumed, pipelined, another scheduler's — except a task this
 * session evicted, as Volcano's predicates plugin keeps its node snapshot
 * (it adds a pod on the allocate event and removes it on deallocate).
 *
 * Example: three gangs of two pods, each with hostname anti-affinity
 * against its own label (gang=g1, g2, g3): three matching counters and
 * three carrying ones, all on the key kubernetes.io/hostname.  Assuming
 * g1-0 on node a adds 1 to g1's two counters at domain "a"; g1-1 then
 * sees count 1 at a (its own anti-affinity fails there) and the carrier
 * count 1 at a (g1-0's anti-affinity matches g1-1: symmetry).
 */
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

/* Dense counts for keys with at most this many domains, else a map. */
#define DENSE_DOMAINS 256

/* Matchers or carried terms filed under a label (key=value). */
struct anchor {
        uint32_t *ids;
        size_t n, cap;
};

struct carried {
        struct kb__ctr *c;
        int32_t weight;
};

struct ptask {
        struct kb__ctr **match; /* matching counters, once computed */
        uint32_t nmatch;
        bool matched, counted;
        struct carried *carry;
        uint32_t ncarry;
        size_t capcarry;
        /* The carrying counters whose terms match this pod, per class. */
        struct kb__ctr **carriers[KB__CARRY_CLASSES];
        uint32_t ncarriers[KB__CARRY_CLASSES];
        bool carriers_done[KB__CARRY_CLASSES];
};

#ifdef KB_TESTING
unsigned kb__ipod_builds;
#endif

void *kb__ipod_copy_key(struct kb__ipod *ix, const struct kb_buf *b)
{
        char *k = kb_pool_alloc(kb_session_pool(ix->s), b->len + 1);
        memcpy(k, b->data, b->len);
        return k;
}

/* Per-task state, allocated once something needs it (a session without
 * any inter-pod term never does). */
static struct ptask *ptask(struct kb__ipod *ix, const struct kb_task *t)
{
        if (!ix->pt)
                ix->pt = kb_xcalloc(ix->ntasks + 1, sizeof(*ix->pt));
        return &ix->pt[t->index];
}

static bool all_match(const struct kb__ipod *ix, const struct kb__ctr *c, const struct kb_pod *p)
{
        for (size_t i = 0; i < c->nterms; i++)
                if (!kb__term_matches(ix, c->terms[i], p))
                        return false;
        return true;
}

/* ---- counters ---------------------------------------------------------------------- */

/* Canonical keys are binary: numbers as they are, strings with their
 * length first, so that no two different keys read alike. */
void kb__ipod_key_num(struct kb_buf *b, uint64_t v)
{
        kb_buf_add(b, (const char *)&v, sizeof(v));
}

void kb__ipod_key_str(struct kb_buf *b, const char *s)
{
        uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;
        kb_buf_add(b, (const char *)&n, sizeof(n));
        if (s)
                kb_buf_add(b, s, n);
}

static void key_selector(struct kb_buf *b, const struct kb_label_selector *sel)
{
        kb__ipod_key_num(b, (uint64_t)sel->set << 32 | sel->nreqs);
        for (size_t i = 0; i < sel->nreqs; i++) {
                const struct kb_selector_req *r = &sel->reqs[i];
                kb__ipod_key_str(b, r->key);
                kb__ipod_key_num(b, (uint64_t)r->op << 32 | r->nvalues);
                for (size_t v = 0; v < r->nvalues; v++)
                        kb__ipod_key_str(b, r->values[v]);
        }
}

static void key_term(struct kb_buf *b, const struct kb_pod_term *t)
{
        key_selector(b, &t->selector);
        key_selector(b, &t->ns_selector);
        kb__ipod_key_num(b, t->nnamespaces);
        for (size_t i = 0; i < t->nnamespaces; i++)
                kb__ipod_key_str(b, t->namespaces[i]);
}

/* The counter with this canonical key, or NULL. */
static struct kb__ctr *by_name(struct kb__ipod *ix, const struct kb_buf *key)
{
        ix->nrequests++;
        uint64_t *id = kb_map_get_str(&ix->byname, key->data, key->len);
        return id ? ix->ctrs[*id] : NULL;
}

static struct kb__ctr *new_ctr(struct kb__ipod *ix, const struct kb_buf *key,
                               const char *topology_key)
{
        struct kb__ctr *c = kb_xcalloc(1, sizeof(*c));
        c->id = (uint32_t)ix->nctrs;
        c->dom = topology_key ? kb_session_domains(ix->s, topology_key) : NULL;
        if (c->dom && c->dom->ndomains <= DENSE_DOMAINS)
                c->dense = kb_xcalloc(c->dom->ndomains + 1, sizeof(*c->dense));
        else
                kb_map_init(&c->counts, KB_MAP_INT);
        KB_PUSH(ix->ctrs, ix->nctrs, ix->capctrs, c);
        *kb_map_put_str(&ix->byname, kb__ipod_copy_key(ix, key), key->len, NULL) = c->id;
        return c;
}

/* The postings' key of label key=value. */
static void label_key(struct kb_buf *b, const char *key, const char *value)
{
        kb_buf_reset(b);
        kb_buf_add(b, key, strlen(key) + 1);
        kb_buf_add(b, value, strlen(value));
}

/* Files counter id under one In requirement of its terms, or as loose. */
static void post(struct kb__ipod *ix, struct postings *p, const struct kb_pod_term *const *terms,
                 size_t nterms, uint32_t id)
{
        const struct kb_selector_req *anchor = NULL;
        for (size_t t = 0; t < nterms && !anchor; t++)
                for (size_t i = 0; i < terms[t]->selector.nreqs && !anchor; i++)
                        if (terms[t]->selector.reqs[i].op == KB_SEL_IN)
                                anchor = &terms[t]->selector.reqs[i];
        if (!anchor) {
                KB_PUSH(p->loose, p->nloose, p->caploose, id);
                return;
        }
        for (size_t v = 0; v < anchor->nvalues; v++) {
                struct kb_buf *b = &ix->key;
                label_key(b, anchor->key, anchor->values[v]);
                uint64_t *slot = kb_map_get_str(&p->anchors, b->data, b->len);
                if (!slot) {
                        /* The map borrows its keys: this one from the pool. */
                        slot = kb_map_put_str(&p->anchors, kb__ipod_copy_key(ix, b), b->len, NULL);
                        struct anchor *na = kb_pool_alloc(kb_session_pool(ix->s), sizeof(*na));
                        memset(na, 0, sizeof(*na));
                        *slot = (uint64_t)(uintptr_t)na;
                }
                struct anchor *a = (struct anchor *)(uintptr_t)*slot;
                if (!a->n || a->ids[a->n - 1] != id)
                        KB_PUSH(a->ids, a->n, a->cap, id);
        }
}

/* Calls fn for every id filed under one of pod's labels, and the loose
 * ones; an id may come once per label it is filed under (once in all,
 * since a matcher is filed under one key). */
static size_t probe(struct kb__ipod *ix, const struct postings *p, const struct kb_pod *pod,
                    uint32_t *out, size_t cap)
{
        size_t n = 0;
        for (size_t i = 0; kb_map_count(&p->anchors) && i < pod->meta.nlabels; i++) {
                label_key(&ix->key, pod->meta.labels[i].key, pod->meta.labels[i].value);
                uint64_t *v = kb_map_get_str(&p->anchors, ix->key.data, ix->key.len);
                if (!v)
                        continue;
                const struct anchor *a = (const struct anchor *)(uintptr_t)*v;
                for (size_t j = 0; j < a->n; j++, n++)
                        if (n < cap)
                                out[n] = a->ids[j];
        }
        for (size_t j = 0; j < p->nloose; j++, n++)
                if (n < cap)
                        out[n] = p->loose[j];
        return n;
}

struct kb__ctr *kb__ipod_matching(struct kb__ipod *ix, const struct kb_pod_term *const *terms,
                                  size_t nterms, const char *topology_key, bool live,
                                  const uint8_t *eligible)
{
        struct kb_buf *key = &ix->key;
        kb_buf_reset(key);
        kb__ipod_key_num(key, 'm' << 8 | live);
        kb__ipod_key_num(key, (uint64_t)(uintptr_t)eligible);
        kb__ipod_key_str(key, topology_key);
        for (size_t i = 0; i < nterms; i++)
                key_term(key, terms[i]);
        struct kb__ctr *c = by_name(ix, key);
        if (!c) {
                c = new_ctr(ix, key, topology_key);
                c->live = live;
                c->eligible = eligible;
                const struct kb_pod_term **copy =
                    kb_pool_alloc(kb_session_pool(ix->s), (nterms + 1) * sizeof(*copy));
                memcpy(copy, terms, nterms * sizeof(*copy));
                c->terms = copy;
                c->nterms = nterms;
                bool never = false;
                for (size_t i = 0; i < nterms; i++)
                        never |= !terms[i]->selector.set;
                if (!never)
                        post(ix, &ix->match_post, terms, nterms, c->id);
                if (eligible && c->dom) {
                        c->present = kb_xcalloc(c->dom->ndomains + 1, 1);
                        for (size_t n = 0; n < ix->nnodes; n++) {
                                uint32_t d = c->dom->of[n];
                                if (eligible[n] && d != KB_NO_DOMAIN && !c->present[d]) {
                                        c->present[d] = 1;
                                        c->npresent++;
                                }
                        }
                        c->nhist = 4;
                        c->hist = kb_xcalloc(c->nhist, sizeof(*c->hist));
                        c->hist[0] = c->npresent;
                }
        }
        return c;
}

const struct kb_pod_term *kb__ipod_spread_term(struct kb__ipod *ix, const struct kb_pod *pod,
                                               const struct kb_spread *c)
{
        struct kb_pool *pool = kb_session_pool(ix->s);
        struct kb_pod_term *term = kb_pool_alloc(pool, sizeof(*term));
        char **names = kb_pool_alloc(pool, sizeof(*names));
        names[0] = (char *)kb_meta_ns(&pod->meta);
        term->selector = c->selector;
        term->namespaces = names;
        term->nnamespaces = 1;
        term->topology_key = c->topology_key;
        /* countPodsMatchSelector counts nothing for an empty selector
         * (labels.Everything); an unset one matches nothing anyway. */
        if (!c->selector.nreqs)
                term->selector.set = false;
        return term;
}

struct kb__ctr *kb__ipod_carrying(struct kb__ipod *ix, enum kb__carry_class cls,
                                  const struct kb_pod_term *term)
{
        struct kb_buf *key = &ix->key;
        kb_buf_reset(key);
        kb__ipod_key_num(key, 'c' << 8 | cls);
        kb__ipod_key_str(key, term->topology_key);
        key_term(key, term);
        struct kb__ctr *c = by_name(ix, key);
        if (!c) {
                c = new_ctr(ix, key, term->topology_key);
                c->carrying = true;
                const struct kb_pod_term **copy =
                    kb_pool_alloc(kb_session_pool(ix->s), sizeof(*copy));
                copy[0] = term;
                c->terms = copy;
                c->nterms = 1;
                if (term->selector.set)
                        post(ix, &ix->carry_post[cls], copy, 1, c->id);
        }
        return c;
}

void kb__ipod_carries(struct kb__ipod *ix, const struct kb_task *t, struct kb__ctr *c,
                      int32_t weight)
{
        struct ptask *p = ptask(ix, t);
        if (p->ncarry == p->capcarry)
                kb_grow((void **)&p->carry, &p->capcarry, p->ncarry + 1, sizeof(*p->carry));
        p->carry[p->ncarry++] = (struct carried){c, weight};
}

/* ---- tasks ------------------------------------------------------------------------- */

/* The counters filed in p under the pod's labels whose terms all match
 * it, appended to *out (*n of them). */
static void collect(struct kb__ipod *ix, const struct postings *p, const struct kb_pod *pod,
                    bool carrying, struct kb__ctr ***out, uint32_t *n)
{
        uint32_t buf[64];
        size_t k = probe(ix, p, pod, buf, KB_ARRAY_SIZE(buf));
        uint32_t *ids = buf;
        if (k > KB_ARRAY_SIZE(buf)) {
                ids = kb_xmalloc(k * sizeof(*ids));
                probe(ix, p, pod, ids, k);
        }
        for (size_t i = 0; i < k; i++) {
                struct kb__ctr *c = ix->ctrs[ids[i]];
                if (carrying ? !kb__term_matches(ix, c->terms[0], pod) : !all_match(ix, c, pod))
                        continue;
                *out = kb_xrealloc(*out, (*n + 1) * sizeof(**out));
                (*out)[(*n)++] = c;
        }
        if (ids != buf)
                free(ids);
}

/* The matching counters a pod moves, found once. */
static void compute_matches(struct kb__ipod *ix, const struct kb_task *t)
{
        struct ptask *p = ptask(ix, t);
        if (p->matched)
                return;
        p->matched = true;
        collect(ix, &ix->match_post, t->pod, false, &p->match, &p->nmatch);
}

static void count(struct kb__ipod *ix, const struct kb_task *t, int32_t sign)
{
        struct ptask *p = ptask(ix, t);
        if (t->node < 0 || p->counted == (sign > 0))
                return;
        p->counted = sign > 0;
        uint32_t node = (uint32_t)t->node;
        compute_matches(ix, t);
        for (uint32_t i = 0; i < p->nmatch; i++) {
                struct kb__ctr *c = p->match[i];
                if ((c->live && t->pod->meta.deletion) || (c->eligible && !c->eligible[node]))
                        continue;
                uint32_t d = kb__ctr_domain(c, node);
                if (d != KB_NO_DOMAIN)
                        kb__ctr_bump(c, d, sign);
        }
        for (uint32_t i = 0; i < p->ncarry; i++) {
                uint32_t d = kb__ctr_domain(p->carry[i].c, node);
                if (d != KB_NO_DOMAIN)
                        kb__ctr_bump(p->carry[i].c, d, sign * p->carry[i].weight);
        }
}

size_t kb__ipod_carriers(struct kb__ipod *ix, const struct kb_task *t, enum kb__carry_class cls,
                         struct kb__ctr *const **out)
{
        if (!kb_map_count(&ix->carry_post[cls].anchors) && !ix->carry_post[cls].nloose) {
                *out = NULL;
                return 0;
        }
        struct ptask *p = ptask(ix, t);
        if (!p->carriers_done[cls]) {
                p->carriers_done[cls] = true;
                collect(ix, &ix->carry_post[cls], t->pod, true, &p->carriers[cls],
                        &p->ncarriers[cls]);
        }
        *out = p->carriers[cls];
        return p->ncarriers[cls];
}

/* ---- life --------------------------------------------------------------------------- */

static void on_allocate(void *arg, const struct kb_task *t)
{
        count(arg, t, 1);
}

static void on_deallocate(void *arg, const struct kb_task *t)
{
        count(arg, t, -1);
}

bool kb__any_pending(struct kb_session *s)
{
        size_t njobs;
        struct kb_job **jobs = kb_session_jobs(s, &njobs);
        for (size_t i = 0; i < njobs; i++)
                if (kb_job_pending_count(jobs[i]))
                        return true;
        return false;
}

static void *ipod_new(struct kb_session *s)
{
#ifdef KB_TESTING
        kb__ipod_builds++;
#endif
        struct kb__ipod *ix = kb_xcalloc(1, sizeof(*ix));
        ix->s = s;
        kb_buf_init(&ix->key);
        kb_map_init(&ix->byname, KB_MAP_STR);
        kb_map_init(&ix->match_post.anchors, KB_MAP_STR);
        for (int k = 0; k < KB__CARRY_CLASSES; k++)
                kb_map_init(&ix->carry_post[k].anchors, KB_MAP_STR);
        kb_map_init(&ix->eligs, KB_MAP_STR);
        kb_map_init(&ix->ns, KB_MAP_STR);
        kb_session_nodes(s, &ix->nnodes);
        ix->tasks = kb_session_tasks(s, &ix->ntasks);
        const struct kb_snapshot *snap = kb_session_snapshot(s);
        struct nslabels *ns =
            kb_pool_alloc(kb_session_pool(s), (snap->nnamespaces + 1) * sizeof(*ns));
        for (size_t i = 0; i < snap->nnamespaces; i++) {
                const char *name = snap->namespaces[i]->meta.name;
                if (!name)
                        continue;
                bool added;
                uint64_t *v = kb_map_put_str(&ix->ns, name, strlen(name), &added);
                /* The first of two namespaces of one name, as the binary
                 * search over the sorted list found one of them. */
                if (!added)
                        continue;
                ns[i] = (struct nslabels){name, &snap->namespaces[i]->meta};
                *v = (uint64_t)(uintptr_t)&ns[i];
        }
        return ix;
}

/* Counts what is on the nodes and registers the one set of event
 * handlers that keeps the counts current: once every plugin has opened
 * and asked for its counters.  A session in which no plugin asked for
 * any registers nothing. */
static void ipod_ready(void *arg)
{
        struct kb__ipod *ix = arg;
        ix->started = true;
        if (!ix->nctrs)
                return;
        for (size_t i = 0; i < ix->ntasks; i++)
                if (ix->tasks[i].node >= 0)
                        count(ix, &ix->tasks[i], 1);
        kb_on_event(ix->s, (struct kb_event_handler){on_allocate, on_deallocate}, ix);
}

static void postings_free(struct postings *p)
{
        for (size_t i = 0; i < p->anchors.cap; i++)
                if (p->anchors.slots[i].hash)
                        free(((struct anchor *)(uintptr_t)p->anchors.slots[i].val)->ids);
        kb_map_release(&p->anchors);
        free(p->loose);
}

static void ipod_free(void *arg)
{
        struct kb__ipod *ix = arg;
        for (size_t i = 0; i < ix->nctrs; i++) {
                struct kb__ctr *c = ix->ctrs[i];
                free(c->dense);
                kb_map_release(&c->counts);
                free(c->present);
                free(c->hist);
                free(c);
        }
        free(ix->ctrs);
        kb_map_release(&ix->byname);
        postings_free(&ix->match_post);
        for (int k = 0; k < KB__CARRY_CLASSES; k++)
                postings_free(&ix->carry_post[k]);
        for (size_t i = 0; ix->pt && i < ix->ntasks; i++) {
                free(ix->pt[i].match);
                free(ix->pt[i].carry);
                for (int k = 0; k < KB__CARRY_CLASSES; k++)
                        free(ix->pt[i].carriers[k]);
        }
        free(ix->pt);
        for (size_t i = 0; i < ix->eligs.cap; i++)
                if (ix->eligs.slots[i].hash)
                        free((void *)(uintptr_t)ix->eligs.slots[i].val);
        kb_map_release(&ix->eligs);
        kb_map_release(&ix->ns);
        kb_buf_release(&ix->key);
        free(ix);
}

static const struct kb_service ipod_service = {"interpod", ipod_new, ipod_ready, ipod_free};

struct kb__ipod *kb__ipod_get(struct kb_session *s)
{
        return kb_session_service(s, &ipod_service);
}

size_t kb__ipod_requests(const struct kb__ipod *ix)
{
        return ix->nrequests;
}
