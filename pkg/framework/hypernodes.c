/*
 * HyperNodes into topology domains (the forest topology.c lays out), and
 * the primitives both ways of building domains share.
 *
 * Members are resolved against the session's nodes and HyperNodes:
 * exactMatch by name, regexMatch over names, labelMatch over node labels.
 * Then, each dropped with a warning naming the HyperNode and the member's
 * field: a HyperNode member that does not exist; a link that
 * closes a cycle (found by a depth-first walk); a child whose tier is not
 * below its parent's; a HyperNode listed by two parents (the first by name
 * keeps it); a node listed directly by two HyperNodes where neither holds
 * the other (the lower tier keeps it, then the first by name).
 *
 * Domain h is HyperNode h in name order.  Example: x (tier 3) lists y and
 * y (tier 2) lists x: the walk from x meets x again through y, and y's
 * member is dropped ("closes a cycle (x -> y -> x)"); x keeps y.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework-int.h"

void kb__topology_warn(struct kb_session *s, const struct kb_hypernode *hn, const char *msg)
{
        struct kb_topology *t = s->topo;
        struct kb__topo_warning w = {hn, msg};
        KB_PUSH(t->warnings, t->nwarnings, t->capwarnings, w);
}

int32_t kb__topology_add_domain(struct kb_session *s, const char *name, const char *tier_name,
                                int32_t tier, int32_t parent, const struct kb_hypernode *hn)
{
        struct kb_topology *t = s->topo;
        struct kb_domain d = {name, tier_name, tier, (uint32_t)t->ndomains, parent, 0, 0, hn};
        KB_PUSH(t->domains, t->ndomains, t->capdomains, d);
        return (int32_t)d.index;
}

bool kb__topology_is_ancestor(const struct kb_topology *t, int32_t a, int32_t d)
{
        for (; d >= 0; d = t->domains[d].parent)
                if (d == a)
                        return true;
        return false;
}

/* Node k listed by HyperNode h: it goes to the lowest HyperNode listing
 * it.  Whether the listing conflicts with another: neither holds the other
 * (a HyperNode listing a node its descendant lists is merely redundant). */
struct link {
        uint32_t child;
        size_t member;
        bool dropped;
};

struct hn_graph {
        const struct kb_hypernode **hn; /* sorted by name */
        size_t n;
        struct kb_map ids;   /* name -> index in hn */
        struct link **links; /* per HyperNode: links to members */
        size_t *nlinks, *caplinks;
        uint8_t *color; /* cycle search: 0 new, 1 on the path, 2 done */
        uint32_t *path;
        size_t npath;
};

static int cmp_hn(const void *a, const void *b)
{
        return strcmp((*(const struct kb_hypernode *const *)a)->meta.name,
                      (*(const struct kb_hypernode *const *)b)->meta.name);
}

static int64_t hn_find(const struct hn_graph *g, const char *name)
{
        uint64_t *v = kb_map_get_str(&g->ids, name, strlen(name));
        return v ? (int64_t)*v : -1;
}

/* The HyperNode members of every HyperNode. */
static void hn_links(struct kb_session *s, struct hn_graph *g)
{
        for (size_t h = 0; h < g->n; h++) {
                const struct kb_hypernode *hn = g->hn[h];
                for (size_t i = 0; i < hn->nmembers; i++) {
                        const struct kb_hn_member *m = &hn->members[i];
                        if (m->type != KB_HN_HYPERNODE)
                                continue;
                        if (m->match == KB_HN_LABEL) {
                                KB__TOPOLOGY_WARN(
                                    s, hn,
                                    "spec.members[%zu].selector.labelMatch: selects nodes only, "
                                    "not members of type HyperNode; ignored",
                                    i);
                                continue;
                        }
                        int64_t c = m->match == KB_HN_EXACT ? hn_find(g, m->name) : -1;
                        if (m->match == KB_HN_EXACT && c < 0)
                                KB__TOPOLOGY_WARN(s, hn,
                                                  "spec.members[%zu].selector.exactMatch.name: "
                                                  "hypernode %s not found; ignored",
                                                  i, m->name);
                        for (size_t k = 0; k < g->n; k++) {
                                bool hit = m->match == KB_HN_EXACT
                                               ? (int64_t)k == c
                                               : k != h && kb_hn_member_matches(
                                                               m, g->hn[k]->meta.name, NULL);
                                if (!hit)
                                        continue;
                                struct link l = {(uint32_t)k, i, false};
                                KB_PUSH(g->links[h], g->nlinks[h], g->caplinks[h], l);
                        }
                }
        }
}

/* Depth-first search from h; a link back to a HyperNode on the path closes
 * a cycle and is dropped. */
static void hn_cycles(struct kb_session *s, struct hn_graph *g, uint32_t h)
{
        g->color[h] = 1;
        g->path[g->npath++] = h;
        for (size_t i = 0; i < g->nlinks[h]; i++) {
                struct link *l = &g->links[h][i];
                if (g->color[l->child] == 0) {
                        hn_cycles(s, g, l->child);
                        continue;
                }
                if (g->color[l->child] != 1)
                        continue;
                struct kb_buf b;
                kb_buf_init(&b);
                size_t from = 0;
                while (g->path[from] != l->child)
                        from++;
                for (size_t k = from; k < g->npath; k++)
                        kb_buf_printf(&b, "%s -> ", g->hn[g->path[k]]->meta.name);
                kb_buf_adds(&b, g->hn[l->child]->meta.name);
                KB__TOPOLOGY_WARN(s, g->hn[h],
                                  "spec.members[%zu]: hypernode %s closes a cycle (%s); ignored",
                                  l->member, g->hn[l->child]->meta.name, b.data);
                kb_buf_release(&b);
                l->dropped = true;
        }
        g->npath--;
        g->color[h] = 2;
}

/* Parents: tiers must go down, and a HyperNode has one parent. */
static void hn_parents(struct kb_session *s, struct hn_graph *g, int32_t *parent)
{
        for (size_t h = 0; h < g->n; h++)
                parent[h] = -1;
        for (size_t h = 0; h < g->n; h++) {
                const struct kb_hypernode *hn = g->hn[h];
                for (size_t i = 0; i < g->nlinks[h]; i++) {
                        struct link *l = &g->links[h][i];
                        const struct kb_hypernode *c = g->hn[l->child];
                        if (l->dropped || parent[l->child] == (int32_t)h)
                                continue;
                        if (c->tier >= hn->tier)
                                KB__TOPOLOGY_WARN(s, hn,
                                                  "spec.members[%zu]: hypernode %s has tier %d, "
                                                  "not below this one's %d; ignored",
                                                  l->member, c->meta.name, (int)c->tier,
                                                  (int)hn->tier);
                        else if (parent[l->child] >= 0)
                                KB__TOPOLOGY_WARN(s, hn,
                                                  "spec.members[%zu]: hypernode %s is already a "
                                                  "member of hypernode %s; ignored here",
                                                  l->member, c->meta.name,
                                                  g->hn[parent[l->child]]->meta.name);
                        else
                                parent[l->child] = (int32_t)h;
                }
        }
}

/* Node k listed by HyperNode h: it goes to the lowest HyperNode listing
 * it.  Returns whether the listing conflicts with another: neither holds
 * the other (one listing a node its descendant lists is merely redundant). */
static bool claim(struct kb_session *s, const struct hn_graph *g, int32_t h, size_t k)
{
        struct kb_topology *t = s->topo;
        int32_t cur = t->node_domain[k];
        if (cur < 0 || kb__topology_is_ancestor(t, cur, h)) {
                t->node_domain[k] = h;
                return false;
        }
        if (kb__topology_is_ancestor(t, h, cur))
                return false;
        if (g->hn[h]->tier < g->hn[cur]->tier)
                t->node_domain[k] = h;
        return true;
}

/* The nodes member m of HyperNode h selects, claimed for h; returns how
 * many conflicted, *example one of them.  An exact name is looked up (a
 * listed node that is gone is no error: nodes come and go); a pattern or a
 * label selector is matched against every node. */
static size_t claim_member(struct kb_session *s, const struct hn_graph *g, int32_t h,
                           const struct kb_hn_member *m, size_t *example)
{
        size_t lost = 0;
        if (m->match == KB_HN_EXACT) {
                struct kb_node_info *n = kb_session_node(s, m->name);
                if (n && claim(s, g, h, n->index)) {
                        lost = 1;
                        *example = n->index;
                }
                return lost;
        }
        for (size_t k = 0; k < s->nnodes; k++)
                if (kb_hn_member_matches(m, s->nodes[k].name, &s->nodes[k].node->meta) &&
                    claim(s, g, h, k) && !lost++)
                        *example = k;
        return lost;
}

/* Node members: each node to the lowest HyperNode listing it. */
static void hn_nodes(struct kb_session *s, const struct hn_graph *g)
{
        for (size_t h = 0; h < g->n; h++) {
                const struct kb_hypernode *hn = g->hn[h];
                for (size_t i = 0; i < hn->nmembers; i++) {
                        size_t example = 0, lost = 0;
                        if (hn->members[i].type == KB_HN_NODE)
                                lost = claim_member(s, g, (int32_t)h, &hn->members[i], &example);
                        if (lost)
                                KB__TOPOLOGY_WARN(
                                    s, hn,
                                    "spec.members[%zu]: %zu node(s) also listed by a hypernode "
                                    "that is neither above nor below this one (node %s); each node "
                                    "belongs to the lowest tier listing it",
                                    i, lost, s->nodes[example].name);
                }
        }
}

void kb__topology_from_hypernodes(struct kb_session *s)
{
        const struct kb_snapshot *snap = s->snap;
        struct hn_graph g = {0};
        g.n = snap->nhypernodes;
        g.hn = kb_xmalloc((g.n + 1) * sizeof(*g.hn));
        memcpy(g.hn, snap->hypernodes, g.n * sizeof(*g.hn));
        qsort(g.hn, g.n, sizeof(*g.hn), cmp_hn);
        kb_map_init(&g.ids, KB_MAP_STR);
        for (size_t h = 0; h < g.n; h++) {
                bool added;
                uint64_t *v =
                    kb_map_put_str(&g.ids, g.hn[h]->meta.name, strlen(g.hn[h]->meta.name), &added);
                if (added) /* of two of one name, the first */
                        *v = h;
        }
        g.links = kb_xcalloc(g.n + 1, sizeof(*g.links));
        g.nlinks = kb_xcalloc(g.n + 1, sizeof(*g.nlinks));
        g.caplinks = kb_xcalloc(g.n + 1, sizeof(*g.caplinks));
        g.color = kb_xcalloc(g.n + 1, 1);
        g.path = kb_xcalloc(g.n + 1, sizeof(*g.path));
        int32_t *parent = kb_xcalloc(g.n + 1, sizeof(*parent));

        hn_links(s, &g);
        for (uint32_t h = 0; h < g.n; h++)
                if (!g.color[h])
                        hn_cycles(s, &g, h);
        hn_parents(s, &g, parent);
        /* Domain h is HyperNode h (sorted by name). */
        for (size_t h = 0; h < g.n; h++)
                kb__topology_add_domain(s, g.hn[h]->meta.name, g.hn[h]->tier_name, g.hn[h]->tier,
                                        parent[h], g.hn[h]);
        hn_nodes(s, &g);

        for (size_t h = 0; h < g.n; h++)
                free(g.links[h]);
        free(g.links);
        free(g.nlinks);
        free(g.caplinks);
        free(g.color);
        free(g.path);
        free(parent);
        kb_map_release(&g.ids);
        free(g.hn);
}
