/*
 * Topology domains: for a node label key, the nodes grouped by the label's
 * value.  Inter-pod affinity and topology spread count pods per domain, and
 * node selection skips whole domains a filter rules out, so each key is
 * indexed once per session, on first use: O(N) with a hash of the values.
 *
 * Example: nodes a, b, c, d labelled zone=x, zone=y, (none), zone=x give
 * domains 0 = "x" (nodes a, d) and 1 = "y" (node b); of = [0, 1, NO, 0];
 * start = [0, 2, 3], nodes = [a, d, b]; nkeyless = 1.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

struct kb__domains_list {
        struct kb_domains **v;
        size_t n, cap;
};

static const char *node_label(const struct kb_node *node, const char *key)
{
        return kb_meta_label(&node->meta, key);
}

static struct kb_domains *build(struct kb_session *s, const char *key)
{
        struct kb_pool *pool = &s->pool;
        size_t nn = s->nnodes;
        /* label value -> domain id */
        struct kb_map ids;
        kb_map_init(&ids, KB_MAP_STR);
        const char **values = kb_xmalloc((nn + 1) * sizeof(*values));
        uint32_t *of = kb_pool_alloc(pool, (nn + 1) * sizeof(*of));
        uint32_t *count = kb_xcalloc(nn + 1, sizeof(*count));
        uint32_t nd = 0, keyless = 0;
        for (size_t i = 0; i < nn; i++) {
                const char *v = node_label(s->nodes[i].node, key);
                if (!v) {
                        of[i] = KB_NO_DOMAIN;
                        keyless++;
                        continue;
                }
                bool added;
                uint64_t *id = kb_map_put_str(&ids, v, strlen(v), &added);
                if (added) {
                        values[nd] = v;
                        *id = nd++;
                }
                of[i] = (uint32_t)*id;
                count[of[i]]++;
        }
        struct kb_domains *d = kb_pool_alloc(pool, sizeof(*d));
        uint32_t *start = kb_pool_alloc(pool, (nd + 2) * sizeof(*start));
        uint32_t *nodes = kb_pool_alloc(pool, (nn - keyless + 1) * sizeof(*nodes));
        const char **vals = kb_pool_alloc(pool, (nd + 1) * sizeof(*vals));
        for (uint32_t k = 0; k < nd; k++) {
                start[k + 1] = start[k] + count[k];
                vals[k] = values[k];
                count[k] = start[k];
        }
        for (size_t i = 0; i < nn; i++)
                if (of[i] != KB_NO_DOMAIN)
                        nodes[count[of[i]]++] = (uint32_t)i;
        d->key = kb_pool_strdup(pool, key);
        d->ndomains = nd;
        d->values = vals;
        d->of = of;
        d->start = start;
        d->nodes = nodes;
        d->nkeyless = keyless;
        kb_map_release(&ids);
        free(values);
        free(count);
        return d;
}

const struct kb_domains *kb_session_domains(struct kb_session *s, const char *key)
{
        struct kb__domains_list *l = s->domains;
        if (!l)
                l = s->domains = kb_pool_alloc(&s->pool, sizeof(*l));
        for (size_t i = 0; i < l->n; i++)
                if (strcmp(l->v[i]->key, key) == 0)
                        return l->v[i];
        struct kb_domains *d = build(s, key);
        KB_PUSH(l->v, l->n, l->cap, d);
        return d;
}

void kb__domains_release(struct kb_session *s)
{
        if (s->domains)
                free(s->domains->v);
        s->domains = NULL;
}
