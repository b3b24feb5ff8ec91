/*
 * Synthetic clusters, built in memory without parsing YAML, for benchmarks
 * and capacity planning:
 *
 *   nodes=N, node-cpu, node-memory, node-pods     N identical Ready nodes
 *                                                 (labelled with hostname,
 *                                                 os linux, arch amd64)
 *   groups=G, group-size=S, pod-cpu, pod-memory   G PodGroups of S pods,
 *                                                 minMember S
 *   queues=Q                                      queues q0..q(Q-1), weight
 *                                                 1; groups go round-robin
 *   besteffort-groups=B                           B more groups of S pods
 *                                                 with no requests
 *   running=1                                     the groups already run:
 *                                                 pods bound and Running,
 *                                                 spread over the nodes as
 *                                                 allocate spreads them (pod
 *                                                 g of all goes to node g mod
 *                                                 N), groups Running
 *   packed=1                                      with running=1: each
 *                                                 group's pods together,
 *                                                 node after node (pod p of
 *                                                 all on node p/S mod N)
 *   priority=P                                    the groups' and pods'
 *                                                 PriorityClass "priority-P"
 *                                                 (value P, created)
 *   prefix=NAME                                   groups NAME-000001.. (pg)
 *   queue=NAME                                    every group in queue NAME
 *                                                 instead of round-robin
 *   interval=D                                    group i is created i*D
 *                                                 after the first (1s), so
 *                                                 job order is FIFO and
 *                                                 --until-done sees them
 *                                                 arrive D apart
 *   runtime=D                                     the pods' kbatch.io/runtime
 *   deadline=D                                    the pods' activeDeadlineSeconds
 *                                                 (whole seconds): their
 *                                                 declared runtime
 *   group-size-max=M                              group sizes spread over
 *                                                 group-size..M (group i:
 *                                                 group-size + i*7919 mod
 *                                                 the range's length)
 *   blocks=B, racks=R                             a network topology: the
 *                                                 nodes in B blocks of R
 *                                                 racks each, in order,
 *                                                 labelled
 *                                                 topology.kbatch.io/block
 *                                                 (b01..) and
 *                                                 topology.kbatch.io/rack
 *                                                 (b01-r01..)
 *   hypernodes=1                                  the same topology also as
 *                                                 HyperNodes (racks tier 1,
 *                                                 blocks tier 2, named as the
 *                                                 labels' values)
 *   hard-tier=T[:U]                               every group's PodGroup
 *                                                 asks networkTopology hard
 *                                                 with highestTierAllowed T
 *                                                 (alternating T and U)
 *   zones=Z                                       nodes labelled
 *                                                 topology.kubernetes.io/zone
 *                                                 zone-0..zone-(Z-1), node i
 *                                                 in zone i mod Z (every node
 *                                                 has kubernetes.io/hostname)
 *   anti-affinity=1                               every pod labelled
 *                                                 group=<its group>, with
 *                                                 required anti-affinity on
 *                                                 kubernetes.io/hostname
 *                                                 against its own group
 *   spread-groups=N                               N of the groups, evenly
 *                                                 spaced, also with a zone
 *                                                 topology spread (maxSkew 1,
 *                                                 DoNotSchedule) of their pods
 *
 * Nothing is added unless asked for: nodes and groups default to 0 (the
 * other defaults are the sizes: 32 cpu, 128Gi and 110 pods per node, 10
 * pods of 1 cpu and 1Gi per group, one queue).  A queue that exists already
 * is not made again, so a later spec adds groups to what an earlier one
 * built: kbatch-sim takes several --synthetic specs, e.g. a cluster full of
 * running low-priority gangs, then pending high-priority ones; the later
 * groups are created after the earlier ones.  Names: node-000001, pg-000001
 * with pods pg-000001-0..S-1, be-000001.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim.h"

struct spec {
        int64_t nodes, node_cpu, node_memory, node_pods;
        int64_t groups, group_size, pod_cpu, pod_memory, queues, besteffort;
        int64_t running, packed, priority;
        int64_t interval; /* ns */
        int64_t deadline; /* ns: the pods' activeDeadlineSeconds (declared runtime); 0 none */
        int64_t group_size_max, blocks, racks, hypernodes;
        int32_t hard_tier[2]; /* -1: none */
        int64_t zones, anti_affinity, spread_groups;
        char prefix[32], queue[64], runtime[32];
};

static int parse_spec(const char *text, struct spec *sp, char *err, size_t errlen)
{
        static const struct {
                const char *key;
                size_t off;
                bool milli, quantity;
        } keys[] = {
            {"nodes", offsetof(struct spec, nodes), false, false},
            {"node-cpu", offsetof(struct spec, node_cpu), true, true},
            {"node-memory", offsetof(struct spec, node_memory), false, true},
            {"node-pods", offsetof(struct spec, node_pods), false, true},
            {"groups", offsetof(struct spec, groups), false, false},
            {"group-size", offsetof(struct spec, group_size), false, false},
            {"pod-cpu", offsetof(struct spec, pod_cpu), true, true},
            {"pod-memory", offsetof(struct spec, pod_memory), false, true},
            {"queues", offsetof(struct spec, queues), false, false},
            {"besteffort-groups", offsetof(struct spec, besteffort), false, false},
            {"running", offsetof(struct spec, running), false, false},
            {"packed", offsetof(struct spec, packed), false, false},
            {"priority", offsetof(struct spec, priority), false, false},
            {"group-size-max", offsetof(struct spec, group_size_max), false, false},
            {"blocks", offsetof(struct spec, blocks), false, false},
            {"racks", offsetof(struct spec, racks), false, false},
            {"hypernodes", offsetof(struct spec, hypernodes), false, false},
            {"zones", offsetof(struct spec, zones), false, false},
            {"anti-affinity", offsetof(struct spec, anti_affinity), false, false},
            {"spread-groups", offsetof(struct spec, spread_groups), false, false},
        };
        char *copy = kb_xstrdup(text), *save = NULL;
        int rc = 0;
        *sp = (struct spec){.nodes = 0,
                            .node_cpu = 32000,
                            .node_memory = 128LL << 30,
                            .node_pods = 110,
                            .groups = 0,
                            .interval = 1000000000LL,
                            .group_size = 10,
                            .pod_cpu = 1000,
                            .pod_memory = 1LL << 30,
                            .queues = 1,
                            .hard_tier = {-1, -1},
                            .prefix = "pg"};
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(tok, '=');
                size_t i;
                if (!eq) {
                        snprintf(err, errlen, "--synthetic: \"%s\": expected key=value", tok);
                        rc = KB_EBADINPUT;
                        break;
                }
                *eq = '\0';
                if (strcmp(tok, "interval") == 0 || strcmp(tok, "runtime") == 0 ||
                    strcmp(tok, "deadline") == 0) {
                        char why[256];
                        int64_t ns;
                        if (kb_duration_parse(eq + 1, &ns, why, sizeof(why)) || ns < 0 ||
                            strlen(eq + 1) >= sizeof(sp->runtime)) {
                                snprintf(err, errlen,
                                         "--synthetic: %s: bad value \"%s\" (want a "
                                         "Go duration such as 30m)",
                                         tok, eq + 1);
                                rc = KB_EBADINPUT;
                                break;
                        }
                        if (tok[0] == 'i')
                                sp->interval = ns;
                        else if (tok[0] == 'd')
                                sp->deadline = ns / 1000000000LL * 1000000000LL;
                        else
                                snprintf(sp->runtime, sizeof(sp->runtime), "%s", eq + 1);
                        continue;
                }
                if (strcmp(tok, "hard-tier") == 0) {
                        int a = -1, b = -1, end = 0;
                        int got = sscanf(eq + 1, "%d%n:%d%n", &a, &end, &b, &end);
                        if (got < 1 || eq[1 + end] || a < 0 || (got == 2 && b < 0)) {
                                snprintf(err, errlen, "--synthetic: hard-tier: bad value \"%s\"",
                                         eq + 1);
                                rc = KB_EBADINPUT;
                                break;
                        }
                        sp->hard_tier[0] = a;
                        sp->hard_tier[1] = got == 2 ? b : a;
                        continue;
                }
                if (strcmp(tok, "prefix") == 0 || strcmp(tok, "queue") == 0) {
                        char *dst = tok[0] == 'p' ? sp->prefix : sp->queue;
                        size_t cap = tok[0] == 'p' ? sizeof(sp->prefix) : sizeof(sp->queue);
                        if (!eq[1] || strlen(eq + 1) >= cap) {
                                snprintf(err, errlen, "--synthetic: %s: bad value \"%s\"", tok,
                                         eq + 1);
                                rc = KB_EBADINPUT;
                                break;
                        }
                        snprintf(dst, cap, "%s", eq + 1);
                        continue;
                }
                for (i = 0; i < KB_ARRAY_SIZE(keys); i++)
                        if (strcmp(keys[i].key, tok) == 0)
                                break;
                if (i == KB_ARRAY_SIZE(keys)) {
                        snprintf(err, errlen, "--synthetic: unknown key \"%s\"", tok);
                        rc = KB_EBADINPUT;
                        break;
                }
                int64_t v;
                int qrc = kb_quantity_parse(eq + 1, keys[i].milli, &v);
                if (qrc || v < 0 || (!keys[i].quantity && !keys[i].milli && v > 10000000)) {
                        snprintf(err, errlen, "--synthetic: %s: bad value \"%s\"", tok, eq + 1);
                        rc = KB_EBADINPUT;
                        break;
                }
                *(int64_t *)((char *)sp + keys[i].off) = v;
        }
        free(copy);
        if (!rc && (sp->blocks > 0) != (sp->racks > 0)) {
                snprintf(err, errlen, "--synthetic: blocks and racks go together");
                rc = KB_EBADINPUT;
        }
        if (!rc && sp->group_size_max && sp->group_size_max < sp->group_size) {
                snprintf(err, errlen, "--synthetic: group-size-max: must be at least group-size");
                rc = KB_EBADINPUT;
        }
        if (!rc && sp->queues < 1 && !sp->queue[0] && sp->groups + sp->besteffort > 0) {
                snprintf(err, errlen,
                         "--synthetic: queues: must be at least 1, unless queue= names one");
                rc = KB_EBADINPUT;
        }
        return rc;
}

/* A selector {group In [name]}. */
static struct kb_label_selector group_selector(const char *name)
{
        struct kb_selector_req *r = kb_xcalloc(1, sizeof(*r));
        r->key = kb_xstrdup("group");
        r->op = KB_SEL_IN;
        r->values = kb_xmalloc(sizeof(*r->values));
        r->values[0] = kb_xstrdup(name);
        r->nvalues = 1;
        return (struct kb_label_selector){r, 1, true};
}

/* The group label, and the inter-pod rules the spec asks for. */
static void add_placement(struct kb_pod *p, const char *group, const struct spec *sp, bool spread)
{
        if (!sp->anti_affinity && !spread)
                return;
        p->meta.labels = kb_xcalloc(1, sizeof(*p->meta.labels));
        p->meta.labels[0] = (struct kb_kv){kb_xstrdup("group"), kb_xstrdup(group)};
        p->meta.nlabels = 1;
        p->rules = kb_xcalloc(1, sizeof(*p->rules));
        if (sp->anti_affinity) {
                struct kb_pod_term *t = kb_xcalloc(1, sizeof(*t));
                t->selector = group_selector(group);
                t->namespaces = kb_xmalloc(sizeof(*t->namespaces));
                t->namespaces[0] = kb_xstrdup("default");
                t->nnamespaces = 1;
                t->topology_key = kb_xstrdup("kubernetes.io/hostname");
                p->rules->anti_affinity = t;
                p->rules->nanti_affinity = 1;
        }
        if (spread) {
                struct kb_spread *c = kb_xcalloc(1, sizeof(*c));
                c->max_skew = 1;
                c->topology_key = kb_xstrdup("topology.kubernetes.io/zone");
                c->selector = group_selector(group);
                c->min_domains = 1;
                c->honor_affinity = true;
                p->rules->spread = c;
                p->rules->nspread = 1;
        }
}

static void add_group(struct kb_cluster *c, const char *prefix, int64_t i, const struct spec *sp,
                      bool best_effort)
{
        bool spread = sp->spread_groups && sp->groups &&
                      (i * sp->spread_groups) % sp->groups < sp->spread_groups;
        struct kb_podgroup *pg = kb_xcalloc(1, sizeof(*pg));
        char name[64];
        snprintf(name, sizeof(name), "%s-%06lld", prefix, (long long)i + 1);
        pg->meta.name = kb_xstrdup(name);
        pg->meta.namespace = kb_xstrdup("default");
        pg->meta.uid = kb_xasprintf("podgroup:default/%s", name);
        pg->meta.creation = c->synthetic_time + (double)i * (double)sp->interval / 1e9;
        int64_t size = sp->group_size;
        if (sp->group_size_max > sp->group_size)
                size += (i * 7919) % (sp->group_size_max - sp->group_size + 1);
        pg->min_member = (int32_t)size;
        pg->highest_tier = -1;
        if (sp->hard_tier[0] >= 0 && !best_effort) {
                pg->topology_mode = KB_TOPOLOGY_HARD;
                pg->highest_tier = sp->hard_tier[i % 2];
        }
        pg->queue = sp->queue[0] ? kb_xstrdup(sp->queue)
                                 : kb_xasprintf("q%lld", (long long)(i % sp->queues));
        if (sp->priority)
                pg->priority_class_name = kb_xasprintf("priority-%lld", (long long)sp->priority);
        if (sp->running)
                pg->phase = kb_xstrdup("Running");
        KB_PUSH(c->podgroups, c->npodgroups, c->cappodgroups, pg);
        for (int64_t k = 0; k < size; k++) {
                struct kb_pod *p = kb_xcalloc(1, sizeof(*p));
                p->meta.name = kb_xasprintf("%s-%lld", name, (long long)k);
                p->meta.namespace = kb_xstrdup("default");
                p->meta.uid = kb_xasprintf("pod:default/%s", p->meta.name);
                p->meta.creation = pg->meta.creation;
                p->scheduler_name =
                    kb_xstrdup(c->nscheduler_names ? c->scheduler_names[0] : "kbatch");
                p->group_name = kb_xstrdup(name);
                p->phase = KB_POD_PENDING;
                add_placement(p, name, sp, spread && !best_effort);
                if (sp->priority) {
                        p->priority_class_name = kb_xstrdup(pg->priority_class_name);
                        p->priority = (int32_t)sp->priority;
                        p->has_priority = true;
                }
                if (sp->running && c->nnodes) {
                        int64_t at = c->synthetic_placed++;
                        if (sp->packed)
                                at /= sp->group_size;
                        p->node_name =
                            kb_xstrdup(c->nodes[(size_t)(at % (int64_t)c->nnodes)]->meta.name);
                        p->phase = KB_POD_RUNNING;
                }
                p->active_deadline = sp->deadline;
                if (sp->running)
                        p->start_time = c->synthetic_time; /* started as the groups were made */
                if (sp->runtime[0]) {
                        p->meta.annotations = kb_xcalloc(1, sizeof(*p->meta.annotations));
                        p->meta.annotations[0].key = kb_xstrdup(KB_RUNTIME_ANNOTATION);
                        p->meta.annotations[0].value = kb_xstrdup(sp->runtime);
                        p->meta.nannotations = 1;
                }
                p->requests.q[KB_RES_PODS] = 1;
                if (best_effort) {
                        p->best_effort = true;
                } else {
                        p->requests.q[KB_RES_CPU] = sp->pod_cpu;
                        p->requests.q[KB_RES_MEMORY] = sp->pod_memory;
                        p->best_effort = sp->pod_cpu == 0 && sp->pod_memory == 0;
                }
                KB_PUSH(c->pods, c->npods, c->cappods, p);
        }
}

/* ---- topology ------------------------------------------------------------------ */

#define RACK_LABEL  "topology.kbatch.io/rack"
#define BLOCK_LABEL "topology.kbatch.io/block"

/* Node i's rack (0-based, blocks*racks of them, nodes in order). */
static int64_t rack_of(int64_t i, const struct spec *sp)
{
        int64_t nracks = sp->blocks * sp->racks;
        int64_t per = (sp->nodes + nracks - 1) / nracks;
        int64_t r = i / (per ? per : 1);
        return r < nracks ? r : nracks - 1;
}

/* Node labels: at most hostname, os, arch, zone, block and rack. */
#define NODE_LABELS 6

static void add_label(struct kb_node *n, const char *key, char *value)
{
        n->meta.labels[n->meta.nlabels++] = (struct kb_kv){kb_xstrdup(key), value};
}

/* Node i's labels: kubernetes.io/hostname, os and arch always (the
 * kubelet's well-known labels, so a pod selecting kubernetes.io/os: linux
 * fits as on a real node), a zone with zones=, a block and a rack with
 * blocks=. */
static void label_node(struct kb_node *n, int64_t i, const struct spec *sp)
{
        n->meta.labels = kb_xcalloc(NODE_LABELS, sizeof(*n->meta.labels));
        add_label(n, "kubernetes.io/hostname", kb_xstrdup(n->meta.name));
        add_label(n, "kubernetes.io/os", kb_xstrdup("linux"));
        add_label(n, "kubernetes.io/arch", kb_xstrdup("amd64"));
        if (sp->zones)
                add_label(n, "topology.kubernetes.io/zone",
                          kb_xasprintf("zone-%lld", (long long)(i % sp->zones)));
        if (!sp->blocks)
                return;
        int64_t r = rack_of(i, sp);
        add_label(n, BLOCK_LABEL, kb_xasprintf("b%02lld", (long long)(r / sp->racks + 1)));
        add_label(n, RACK_LABEL,
                  kb_xasprintf("b%02lld-r%02lld", (long long)(r / sp->racks + 1),
                               (long long)(r % sp->racks + 1)));
}

static struct kb_hypernode *new_hypernode(struct kb_cluster *c, char *name, int32_t tier,
                                          const char *tier_name, size_t nmembers)
{
        struct kb_hypernode *hn = kb_xcalloc(1, sizeof(*hn));
        hn->meta.name = name;
        hn->meta.uid = kb_xasprintf("hypernode:%s", name);
        hn->tier = tier;
        hn->tier_name = kb_xstrdup(tier_name);
        hn->members = kb_xcalloc(nmembers + 1, sizeof(*hn->members));
        hn->node_count = -1;
        KB_PUSH(c->hypernodes, c->nhypernodes, c->caphypernodes, hn);
        return hn;
}

/* The racks (tier 1, their nodes by name) and blocks (tier 2, their racks)
 * of the nodes from index first on, as HyperNodes. */
static void add_hypernodes(struct kb_cluster *c, size_t first, const struct spec *sp)
{
        int64_t nracks = sp->blocks * sp->racks;
        size_t per = (size_t)((sp->nodes + nracks - 1) / nracks);
        struct kb_hypernode **racks = kb_xcalloc((size_t)nracks + 1, sizeof(*racks));
        for (int64_t i = 0; i < sp->nodes; i++) {
                const struct kb_node *n = c->nodes[first + (size_t)i];
                int64_t r = rack_of(i, sp);
                if (!racks[r])
                        racks[r] = new_hypernode(c, kb_xstrdup(kb_meta_label(&n->meta, RACK_LABEL)),
                                                 1, RACK_LABEL, per);
                struct kb_hn_member *m = &racks[r]->members[racks[r]->nmembers++];
                m->type = KB_HN_NODE;
                m->match = KB_HN_EXACT;
                m->name = kb_xstrdup(n->meta.name);
        }
        for (int64_t b = 0; b < sp->blocks; b++) {
                struct kb_hypernode *hn =
                    new_hypernode(c, kb_xasprintf("b%02lld", (long long)b + 1), 2, BLOCK_LABEL,
                                  (size_t)sp->racks);
                for (int64_t r = b * sp->racks; r < (b + 1) * sp->racks; r++) {
                        if (!racks[r])
                                continue;
                        struct kb_hn_member *m = &hn->members[hn->nmembers++];
                        m->type = KB_HN_HYPERNODE;
                        m->match = KB_HN_EXACT;
                        m->name = kb_xstrdup(racks[r]->meta.name);
                }
        }
        free(racks);
}

int kb_cluster_synthetic(struct kb_cluster *c, const char *text, char *err, size_t errlen)
{
        kb_cluster_changed(c);
        struct spec sp;
        int rc = parse_spec(text, &sp, err, errlen);
        if (rc)
                return rc;
        for (int64_t i = 0; i < sp.nodes; i++) {
                struct kb_node *n = kb_xcalloc(1, sizeof(*n));
                n->meta.name = kb_xasprintf("node-%06lld", (long long)i + 1);
                n->meta.uid = kb_xasprintf("node:%s", n->meta.name);
                label_node(n, i, &sp);
                n->allocatable.q[KB_RES_CPU] = sp.node_cpu;
                n->allocatable.q[KB_RES_MEMORY] = sp.node_memory;
                n->allocatable.q[KB_RES_PODS] = sp.node_pods;
                n->ready = true;
                KB_PUSH(c->nodes, c->nnodes, c->capnodes, n);
        }
        if (sp.blocks && sp.hypernodes)
                add_hypernodes(c, c->nnodes - (size_t)sp.nodes, &sp);
        /* The queues the groups go round-robin over: only when there are
         * groups, or queues= asks for them ("nodes=4" is four nodes and
         * nothing else, as the banner says; issue 23, point 7). */
        bool want_queues = sp.groups > 0 || sp.besteffort > 0 || strstr(text, "queues=");
        for (int64_t q = 0; want_queues && q < sp.queues; q++) {
                char name[32];
                bool have = false;
                snprintf(name, sizeof(name), "q%lld", (long long)q);
                for (size_t k = 0; k < c->nqueues && !have; k++)
                        have = strcmp(c->queues[k]->meta.name, name) == 0;
                if (have)
                        continue;
                struct kb_queue *queue = kb_xcalloc(1, sizeof(*queue));
                queue->meta.name = kb_xstrdup(name);
                queue->meta.uid = kb_xasprintf("queue:%s", queue->meta.name);
                queue->weight = 1;
                queue->reclaimable = true;
                queue->state = KB_QUEUE_OPEN;
                kb_res_fill(&queue->capability, KB_RES_UNLIMITED);
                KB_PUSH(c->queues, c->nqueues, c->capqueues, queue);
        }
        bool have_class = false;
        for (size_t i = 0; sp.priority && i < c->npriorityclasses; i++)
                have_class |= c->priorityclasses[i]->value == sp.priority &&
                              kb_has_prefix(c->priorityclasses[i]->meta.name, "priority-");
        if (sp.priority && !have_class) {
                struct kb_priorityclass *pc = kb_xcalloc(1, sizeof(*pc));
                pc->meta.name = kb_xasprintf("priority-%lld", (long long)sp.priority);
                pc->meta.uid = kb_xasprintf("priorityclass:%s", pc->meta.name);
                pc->value = (int32_t)sp.priority;
                KB_PUSH(c->priorityclasses, c->npriorityclasses, c->cappriorityclasses, pc);
        }
        if (c->synthetic_time == 0)
                c->synthetic_time = 1.7e9;
        for (int64_t i = 0; i < sp.groups; i++)
                add_group(c, sp.prefix, i, &sp, false);
        for (int64_t i = 0; i < sp.besteffort; i++)
                add_group(c, "be", sp.groups + i, &sp, true);
        c->synthetic_groups += sp.groups + sp.besteffort;
        c->synthetic_time += (double)(sp.groups + sp.besteffort) * (double)sp.interval / 1e9;
        return 0;
}
