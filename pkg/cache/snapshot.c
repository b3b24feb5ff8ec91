/*
 * Snapshots: arrays of pointers to the cache's decoded objects, each held
 * by a reference, so a session on a worker thread reads them with no copy
 * and no lock while the loop thread goes on replacing objects in the
 * cache; pods being bound appear on their target node.  And the SIGUSR1
 * dump.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "cache/cache-int.h"

#define FILL(field, nfield, kind, type)                                                            \
        do {                                                                                       \
                size_t n_ = HASH_COUNT(c->tab[kind]), i_ = 0;                                      \
                s->snap.field = kb_xmalloc((n_ + 1) * sizeof(*s->snap.field));                     \
                struct kb__entry *e_, *t_;                                                         \
                HASH_ITER(hh, c->tab[kind], e_, t_)                                                \
                {                                                                                  \
                        e_->o->refs++;                                                             \
                        s->refs[s->nrefs++] = e_->o;                                               \
                        s->snap.field[i_++] = (type *)e_->o->ptr;                                  \
                }                                                                                  \
                s->snap.nfield = i_;                                                               \
        } while (0)

static bool served(const char *const *names, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (kb_streq(names[i], name))
                        return true;
        return false;
}

/*
 * snap.pg_foreign: the PodGroups whose Volcano Job asks for a scheduler
 * this one does not serve.  The Job is found by its owner reference's name
 * in the group's namespace and must carry the reference's uid when both
 * have one (a Job deleted and made again under the same name owns new
 * groups, not the old one's).  Each Job found is held by the snapshot: the
 * strings point into it.  For example PodGroup default/test-job-7c1e owned
 * by Job test-job (uid 7c1e...) whose spec.schedulerName is volcano gets
 * {"Volcano Job", "default", "test-job", "volcano"}; with
 * schedulerName kbatch, nothing.
 */
static void foreign_owners(struct kb_cache *c, struct kb_cache_snap *s, const char *const *names,
                           size_t nnames)
{
        if (!HASH_COUNT(c->tab[KB_KIND_VCJOB]))
                return;
        struct kb_foreign_owner *fo = NULL;
        for (size_t i = 0; i < s->snap.npodgroups; i++) {
                const struct kb_podgroup *pg = s->snap.podgroups[i];
                const struct kb_owner_ref *o = pg->vcjob;
                if (!o)
                        continue;
                char *key = kb__cache_key(pg->meta.namespace, o->name);
                struct kb__entry *e;
                HASH_FIND_STR(c->tab[KB_KIND_VCJOB], key, e);
                free(key);
                if (!e)
                        continue;
                const struct kb_vcjob *j = e->o->ptr;
                if ((o->uid && j->has_uid && strcmp(o->uid, j->meta.uid)) ||
                    served(names, nnames, j->scheduler_name))
                        continue;
                if (!fo)
                        fo = kb_xcalloc(s->snap.npodgroups + 1, sizeof(*fo));
                e->o->refs++;
                s->refs[s->nrefs++] = e->o;
                fo[i] = (struct kb_foreign_owner){.kind = "Volcano Job",
                                                  .ns = kb_meta_ns(&j->meta),
                                                  .name = j->meta.name,
                                                  .scheduler = j->scheduler_name};
        }
        s->pg_foreign = fo;
        s->snap.pg_foreign = fo;
}

struct kb_cache_snap *kb_cache_snapshot(struct kb_cache *c, const char *const *names, size_t nnames,
                                        const char *default_queue)
{
        struct kb_cache_snap *s = kb_xcalloc(1, sizeof(*s));
        size_t total = 0;
        for (int k = 0; k < KB__NKINDS; k++)
                total += HASH_COUNT(c->tab[k]);
        s->cache = c;
        /* Each object once, and a Volcano Job once per PodGroup it owns
         * (foreign_owners). */
        if (HASH_COUNT(c->tab[KB_KIND_VCJOB]))
                total += HASH_COUNT(c->tab[KB_KIND_PODGROUP]);
        s->refs = kb_xmalloc((total + 1) * sizeof(*s->refs));

        /* Acknowledged marks the watch never confirmed are dropped after a
         * while, so a lost event cannot hold a pod forever. */
        double now = kb_now_mono();
        struct kb__mark *m, **stale = NULL;
        size_t nstale = 0, capstale = 0;
        /* Collected first: deleting from a kb_map moves its entries. */
        for (size_t i = 0; i < c->marks.cap; i++) {
                m = (struct kb__mark *)(uintptr_t)c->marks.slots[i].val;
                if (c->marks.slots[i].hash && m->acked && now - m->acked > KB__MARK_TTL)
                        KB_PUSH(stale, nstale, capstale, m);
        }
        for (size_t i = 0; i < nstale; i++) {
                c->gen++;
                KB_WARN("pod %s: bind acknowledged %.0fs ago but not seen; forgetting it",
                        stale[i]->key, now - stale[i]->acked);
                kb__cache_mark_del(c, stale[i]);
        }
        free(stale);

        FILL(nodes, nnodes, KB_KIND_NODE, struct kb_node);
        FILL(pods, npods, KB_KIND_POD, struct kb_pod);
        FILL(podgroups, npodgroups, KB_KIND_PODGROUP, struct kb_podgroup);
        FILL(queues, nqueues, KB_KIND_QUEUE, struct kb_queue);
        FILL(priorityclasses, npriorityclasses, KB_KIND_PRIORITYCLASS, struct kb_priorityclass);
        FILL(namespaces, nnamespaces, KB_KIND_NAMESPACE, struct kb_namespace);
        FILL(hypernodes, nhypernodes, KB_KIND_HYPERNODE, struct kb_hypernode);
        FILL(pdbs, npdbs, KB_KIND_PDB, struct kb_pdb);
        foreign_owners(c, s, names, nnames);

        /* Assumed pods: the snapshot says which node each pod being bound
         * is on (snap.assumed_node, a pointer per pod: 8 bytes where a
         * copy of the pod with its nodeName set took 370, and a bind storm
         * assumes every pod at once).  The name is the node object's own,
         * which the snapshot holds, as the mark may go while the session
         * runs; a pod whose node is not in the cache is not assumed (the
         * dispatcher never binds a pod that is marked). */
        if (kb_map_count(&c->marks)) {
                const char **on = kb_xcalloc(s->snap.npods + 1, sizeof(*on));
                for (size_t i = 0; i < s->snap.npods; i++) {
                        struct kb_pod *p = s->snap.pods[i];
                        if (p->node_name && *p->node_name)
                                continue;
                        char *key = kb__cache_key(p->meta.namespace, p->meta.name);
                        m = kb__cache_mark_find(c, key);
                        free(key);
                        if (!m)
                                continue;
                        const struct kb_node *n = kb_cache_get(c, KB_KIND_NODE, NULL, m->node);
                        if (!n)
                                continue;
                        on[i] = n->meta.name;
                        s->nassumed++;
                }
                s->assumed_node = on;
                s->snap.assumed_node = on;
        }
        s->snap.scheduler_names = names;
        s->snap.nscheduler_names = nnames;
        s->snap.default_queue = default_queue;
        s->snap.now = kb_now_wall();
        s->snap.gen = c->gen + 1; /* after the stale marks went */
        return s;
}

void kb_cache_snapshot_free(struct kb_cache_snap *s)
{
        if (!s)
                return;
        free(s->assumed_node);
        free(s->pg_foreign);
        for (size_t i = 0; i < s->nrefs; i++)
                kb__cache_cobj_unref(s->refs[i]);
        free(s->refs);
        free(s->snap.nodes);
        free(s->snap.pods);
        free(s->snap.podgroups);
        free(s->snap.queues);
        free(s->snap.priorityclasses);
        free(s->snap.namespaces);
        free(s->snap.hypernodes);
        free(s->snap.pdbs);
        free(s);
}

/* ---- dump ------------------------------------------------------------------------ */

char *kb_cache_dump_json(const struct kb_cache *c)
{
        struct kb_value *root = kb_value_new(KB_VOBJECT);
        static const char *const lists[KB__NKINDS] = {
            NULL,         "nodes",      "pods",
            "podGroups",  "queues",     "priorityClasses",
            "namespaces", "hyperNodes", "podDisruptionBudgets",
            "volcanoJobs"};
        for (int k = 1; k < KB__NKINDS; k++) {
                struct kb_value *arr = kb_value_new(KB_VARRAY);
                struct kb__entry *e, *t;
                HASH_ITER(hh, c->tab[k], e, t)
                {
                        struct kb_value *o = kb_value_new(KB_VOBJECT);
                        kb_value_set(o, "name", kb_value_new_string(e->key));
                        const char *rv = kb__cache_entry_rv(e);
                        kb_value_set(o, "resourceVersion", kb_value_new_string(rv ? rv : ""));
                        char buf[256];
                        if (k == KB_KIND_POD) {
                                const struct kb_pod *p = e->o->ptr;
                                kb_value_set(o, "phase",
                                             kb_value_new_string(kb_pod_phase_name(p->phase)));
                                if (p->node_name)
                                        kb_value_set(o, "nodeName",
                                                     kb_value_new_string(p->node_name));
                                if (p->group_name)
                                        kb_value_set(o, "group",
                                                     kb_value_new_string(p->group_name));
                                struct kb__mark *mk;
                                mk = kb__cache_mark_find(c, e->key);
                                if (mk)
                                        kb_value_set(o, "binding", kb_value_new_string(mk->node));
                                kb_res_format(&p->requests, false, buf, sizeof(buf));
                                kb_value_set(o, "requests", kb_value_new_string(buf));
                        } else if (k == KB_KIND_NODE) {
                                const struct kb_node *n = e->o->ptr;
                                kb_res_format(&n->allocatable, true, buf, sizeof(buf));
                                kb_value_set(o, "allocatable", kb_value_new_string(buf));
                        } else if (k == KB_KIND_PODGROUP) {
                                const struct kb_podgroup *pg = e->o->ptr;
                                kb_value_set(o, "minMember", kb_value_new_int(pg->min_member));
                                if (pg->phase)
                                        kb_value_set(o, "phase", kb_value_new_string(pg->phase));
                        }
                        kb_value_append(arr, o);
                }
                kb_value_set(root, lists[k], arr);
        }
        char *s = kb_json_emit(root, true);
        kb_value_free(root);
        return s;
}
