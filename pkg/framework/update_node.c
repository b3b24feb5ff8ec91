/*
 * A kept model's nodes brought up to a newer snapshot in which some nodes
 * changed in place: the same name at the same position of the snapshot's
 * array, the object updated (kbatch-sim's cluster) or replaced (the
 * daemon's cache, where the old one stood).  Kubelets update their Node
 * objects every few seconds (status, conditions, heartbeats), so at 5,000
 * nodes nearly every session of the daemon finds some changed; building
 * the whole model again for each would make the kept model useless there.
 *
 * What the model keeps of a node is little.  Labels, taints,
 * unschedulable, readiness and images are read through the object each
 * session (the plugins, and the topology domains, HyperNode members and
 * placement classes, which every session makes again); the model itself
 * keeps the object and its name, its allocatable, the sums of what its
 * tasks hold (idle, used, releasing, pipelined), the nodes' total, and
 * node_ids, keyed by the model's own copies of the names (never the
 * objects': a replaced object goes with the snapshot that held it).  So a
 * changed node takes the new object and name (kb__node_read, what a build
 * reads); when its allocatable changed, its sums are counted again from
 * its tasks, attached afresh in list order (task order, the order a build
 * attaches them in), and the total is summed again over all nodes in
 * order: node sums and totals saturate, so no subtraction could undo an
 * add exactly.  Nothing else is derived from nodes between sessions.
 *
 * For example, n2 of n1..n3 (sorted), its status heartbeat replaced by
 * the cache: n2's lookup by name gives index 1, whose object is the one
 * the model saw at n2's position, so index 1 takes the new object and
 * name, and nothing more (allocatable the same).  Had its allocatable
 * gone from 4 to 2 cpu under pods holding 3, idle would be counted again
 * as 2 - 3 = -1 cpu, as a build counts it.
 *
 * Anything else builds the model again: a node added or dropped (the
 * count differs), one renamed at its position (its name is not found, or
 * found at a node the model saw elsewhere), one of two nodes of one name
 * (node_ids finds the first only).
 */
#include <string.h>

#include "framework/framework-int.h"

/* n's sums and task list counted again from its tasks, as a build counts
 * them: from its allocatable, each task attached in list order. */
static void recount(struct kb_session *s, struct kb_node_info *n)
{
        struct kb_task *t = n->tasks;
        n->tasks = n->tasks_tail = NULL;
        n->ntasks = 0;
        n->idle = n->allocatable;
        memset(&n->used, 0, sizeof(n->used));
        memset(&n->releasing, 0, sizeof(n->releasing));
        memset(&n->pipelined, 0, sizeof(n->pipelined));
        while (t) {
                struct kb_task *next = t->node_next;
                t->node = -1;
                kb__node_attach(s, n, t);
                t = next;
        }
}

bool kb__model_update_nodes(struct kb_session *s, struct kb_model *m)
{
        const struct kb_snapshot *snap = s->snap;
        if (snap->nnodes != m->nnodes_seen)
                return false;
        bool resum = false;
        for (size_t i = 0; i < snap->nnodes; i++) {
                const struct kb_node *node = snap->nodes[i];
                if (node == m->nodes_seen[i] && node->meta.gen <= m->gen)
                        continue;
                const char *name = node->meta.name;
                const uint64_t *k = kb_map_get_str(&m->node_ids, name, strlen(name));
                /* Pointers compared only: the object seen may be freed. */
                if (!k || m->nodes[*k].node != m->nodes_seen[i])
                        return false;
                struct kb_node_info *n = &m->nodes[*k];
                bool same =
                    memcmp(&n->allocatable, &node->allocatable, sizeof(n->allocatable)) == 0;
                kb__node_read(n, node);
                if (!same) {
                        recount(s, n);
                        resum = true;
                }
        }
        if (resum) {
                memset(&m->total, 0, sizeof(m->total));
                for (size_t i = 0; i < m->nnodes; i++)
                        kb_res_add(&m->total, &m->nodes[i].allocatable);
                s->total = m->total;
        }
        if (snap->nnodes)
                memcpy(m->nodes_seen, snap->nodes, snap->nnodes * sizeof(*m->nodes_seen));
        return true;
}
