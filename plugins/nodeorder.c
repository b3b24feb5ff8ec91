/*
 * nodeorder: scores a node for a task as Volcano's nodeorder plugin does
 * (pkg/scheduler/plugins/nodeorder/nodeorder.go).  Volcano calls four of
 * kube-scheduler's score plugins directly, without their normalisation, and
 * adds score * weight; kbatch computes the same four scores itself:
 *
 *   argument                  default  scorer (kube-scheduler source)
 *   leastrequested.weight     1        NodeResourcesFit LeastAllocated
 *                                      (noderesources/least_allocated.go)
 *   mostrequested.weight      0        NodeResourcesFit MostAllocated
 *                                      (noderesources/most_allocated.go)
 *   balancedresource.weight   1        NodeResourcesBalancedAllocation
 *                                      (noderesources/balanced_allocation.go)
 *   nodeaffinity.weight       2        NodeAffinity's Score, un-normalised
 *                                      (nodeaffinity/node_affinity.go)
 *
 *   imagelocality.weight      1        ImageLocality
 *                                      (imagelocality/image_locality.go)
 *
 * and, normalised over the candidate nodes as Volcano's batch node order
 * does it (plugins/podscore.c):
 *
 *   podaffinity.weight        2        InterPodAffinity (preferred terms)
 *   tainttoleration.weight    3        TaintToleration (PreferNoSchedule)
 *   podtopologyspread.weight  2        PodTopologySpread (ScheduleAnyway)
 *
 * A weight of 0 skips its scorer.  selectorspread.weight (gone from Volcano
 * master) is accepted and ignored.
 *
 * Every scorer returns 0..100 in int64 arithmetic, with requested = the
 * node's used resources + this task's request, over cpu (millicores) and
 * memory (bytes) with weight 1 each (Volcano passes 50/50 to LeastAllocated,
 * which divides the same), skipping a resource whose allocatable is 0:
 *
 *   leastrequested   per resource (allocatable - requested) * 100 / allocatable
 *                    (0 when requested > allocatable); the mean, integer division
 *   mostrequested    per resource min(requested, allocatable) * 100 / allocatable;
 *                    the mean, integer division
 *   balancedresource f = min(requested / allocatable, 1) as doubles, for cpu,
 *                    memory and nvidia.com/gpu (Volcano adds the GPU; it counts
 *                    only when the task requests it); with two fractions
 *                    std = |f1 - f2| / 2, with more the population standard
 *                    deviation, with fewer 0; score = (int64)((1 - std) * 100)
 *   nodeaffinity     the sum of the weights of the preferred terms the node
 *                    matches (terms of weight 0 or without requirements count
 *                    for nothing)
 *   imagelocality    sum over the pod's init containers and containers of the
 *                    size of its image on the node (":latest" added to a name
 *                    without a tag) times the share of nodes holding it;
 *                    clamped to [23 MiB, 1000 MiB * containers] and scaled to
 *                    0..100 (integer division)
 *
 * Example: a node with 4000m / 8Gi allocatable and 1000m / 2Gi used, a task
 * asking 1000m / 2Gi: requested 2000m / 4Gi; leastrequested
 * ((4000-2000)*100/4000 + (8Gi-4Gi)*100/8Gi) / 2 = (50 + 50) / 2 = 50;
 * mostrequested 50; balancedresource fractions 0.5 and 0.5, std 0, 100.  With
 * the default weights the node scores 50*1 + 100*1 = 150 plus twice its
 * affinity.
 *
 * kube-scheduler counts a container without a cpu or memory request as
 * 100m / 200Mi for LeastAllocated and MostAllocated; kbatch's node accounting
 * keeps only the sum of requests, so it uses the requests as they are.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

static void *nodeorder_open(struct kb_session *s, const struct kb_value *args);
static void nodeorder_close(struct kb_session *s, void *state);

static const char *const arguments[] = {
    "leastrequested.weight", "mostrequested.weight",     "balancedresource.weight",
    "nodeaffinity.weight",   "podaffinity.weight",       "tainttoleration.weight",
    "imagelocality.weight",  "podtopologyspread.weight", NULL};
static const char *const ignored[] = {"selectorspread.weight", NULL};

const struct kb_plugin kb_plugin_nodeorder = {
    .name = "nodeorder",
    .open = nodeorder_open,
    .close = nodeorder_close,
    .arguments = arguments,
    .ignored = ignored,
};

#define MAX_NODE_SCORE 100

KB_TESTABLE void nodeorder_conf(const struct kb_value *args, struct kb__nodeorder *no)
{
        no->least = kb_args_int(args, "leastrequested.weight", 1);
        no->most = kb_args_int(args, "mostrequested.weight", 0);
        no->balanced = kb_args_int(args, "balancedresource.weight", 1);
        no->affinity = kb_args_int(args, "nodeaffinity.weight", 2);
        no->pod_affinity = kb_args_int(args, "podaffinity.weight", 2);
        no->taint = kb_args_int(args, "tainttoleration.weight", 3);
        no->image = kb_args_int(args, "imagelocality.weight", 1);
        no->spread = kb_args_int(args, "podtopologyspread.weight", 2);
        no->gpu = kb_res_lookup("nvidia.com/gpu");
}

/* ---- images --------------------------------------------------------------------------- */

/* One (node, image name) the cluster has, and per name how many nodes. */
struct image_entry {
        uint64_t hash;
        const char *name;
        uint32_t node; /* UINT32_MAX: the entry counting nodes per name */
        int64_t value; /* size on the node, or the number of nodes */
};

struct kb__images {
        struct image_entry *tab;
        size_t cap;
        size_t nnodes;
};

/* The entry for (name, node), or the empty slot where it goes (the caller
 * fills name, node and hash). */
static struct image_entry *image_slot(const struct kb__images *im, const char *name, uint32_t node,
                                      uint64_t *hash)
{
        uint64_t h = kb_hash(name, strlen(name), KB_HASH_SEED + node);
        *hash = h;
        for (size_t k = h & (im->cap - 1);; k = (k + 1) & (im->cap - 1)) {
                struct image_entry *e = &im->tab[k];
                if (!e->name || (e->hash == h && e->node == node && strcmp(e->name, name) == 0))
                        return e;
        }
}

static struct kb__images *images_new(struct kb_session *s)
{
        size_t nn, total = 0;
        struct kb_node_info *nodes = kb_session_nodes(s, &nn);
        for (size_t i = 0; i < nn; i++)
                for (size_t k = 0; k < nodes[i].node->nimages; k++)
                        total += nodes[i].node->images[k].nnames;
        if (!total)
                return NULL;
        struct kb__images *im = kb_xcalloc(1, sizeof(*im));
        im->nnodes = nn;
        im->cap = 64;
        while (im->cap < 4 * total)
                im->cap *= 2;
        im->tab = kb_xcalloc(im->cap, sizeof(*im->tab));
        for (size_t i = 0; i < nn; i++)
                for (size_t k = 0; k < nodes[i].node->nimages; k++) {
                        const struct kb_node_image *img = &nodes[i].node->images[k];
                        for (size_t j = 0; j < img->nnames; j++) {
                                uint64_t h, hc;
                                struct image_entry *e =
                                    image_slot(im, img->names[j], (uint32_t)i, &h);
                                if (!e->name) {
                                        /* A node counts once per name. */
                                        struct image_entry *c =
                                            image_slot(im, img->names[j], UINT32_MAX, &hc);
                                        if (!c->name)
                                                *c = (struct image_entry){hc, img->names[j],
                                                                          UINT32_MAX, 0};
                                        c->value++;
                                }
                                /* The last listing of a name wins. */
                                *e = (struct image_entry){h, img->names[j], (uint32_t)i, img->size};
                        }
                }
        return im;
}

static void images_free(struct kb__images *im)
{
        if (!im)
                return;
        free(im->tab);
        free(im);
}

#define MIB                 (1024 * 1024LL)
#define IMAGE_MIN_THRESHOLD (23 * MIB)
#define IMAGE_MAX_CONTAINER (1000 * MIB)

KB_TESTABLE int64_t nodeorder_image_locality(const struct kb__images *im, const struct kb_task *t,
                                             const struct kb_node_info *n)
{
        const struct kb_pod *pod = t->pod;
        int64_t sum = 0;
        for (size_t i = 0; im && i < pod->nimages; i++) {
                uint64_t h;
                const struct image_entry *e = image_slot(im, pod->images[i], n->index, &h);
                if (!e->name)
                        continue;
                const struct image_entry *c = image_slot(im, pod->images[i], UINT32_MAX, &h);
                double spread = (double)c->value / (double)im->nnodes;
                sum += (int64_t)((double)e->value * spread);
        }
        int64_t max = IMAGE_MAX_CONTAINER * (int64_t)pod->nimages;
        if (sum < IMAGE_MIN_THRESHOLD)
                sum = IMAGE_MIN_THRESHOLD;
        else if (sum > max)
                sum = max;
        if (max == IMAGE_MIN_THRESHOLD)
                return 0;
        return MAX_NODE_SCORE * (sum - IMAGE_MIN_THRESHOLD) / (max - IMAGE_MIN_THRESHOLD);
}

/* The requested amount of slot r if the task went to the node
 * (saturated, as node sums are). */
static int64_t requested(const struct kb_task *t, const struct kb_node_info *n, int r)
{
        return kb_qty_add(n->used.q[r], t->resreq->q[r]);
}

/* part * MAX_NODE_SCORE / whole for 0 <= part <= whole, the product in
 * 128 bits: a node's memory in exabytes times 100 is past int64 (a fuzzed
 * manifest found it).  The same quotient as in 64 bits wherever that
 * does not overflow. */
static int64_t scaled(int64_t part, int64_t whole)
{
        __extension__ typedef __int128 i128;
        return (int64_t)((i128)part * MAX_NODE_SCORE / whole);
}

static const int cpu_mem[] = {KB_RES_CPU, KB_RES_MEMORY};

KB_TESTABLE int64_t nodeorder_least_requested(const struct kb_task *t, const struct kb_node_info *n)
{
        int64_t sum = 0, count = 0;
        for (size_t i = 0; i < KB_ARRAY_SIZE(cpu_mem); i++) {
                int64_t cap = n->allocatable.q[cpu_mem[i]];
                int64_t req = requested(t, n, cpu_mem[i]);
                if (cap == 0)
                        continue;
                count++;
                if (req <= cap)
                        sum += scaled(cap - req, cap);
        }
        return count ? sum / count : 0;
}

KB_TESTABLE int64_t nodeorder_most_requested(const struct kb_task *t, const struct kb_node_info *n)
{
        int64_t sum = 0, count = 0;
        for (size_t i = 0; i < KB_ARRAY_SIZE(cpu_mem); i++) {
                int64_t cap = n->allocatable.q[cpu_mem[i]];
                int64_t req = requested(t, n, cpu_mem[i]);
                if (cap == 0)
                        continue;
                count++;
                /* kube-scheduler clamps: pods without requests count as
                 * minimum values and may push requested past capacity. */
                sum += scaled(KB_MIN(req, cap), cap);
        }
        return count ? sum / count : 0;
}

KB_TESTABLE int64_t nodeorder_balanced_resource(const struct kb_task *t,
                                                const struct kb_node_info *n, int gpu)
{
        double f[3], total = 0;
        size_t nf = 0;
        int slots[3] = {KB_RES_CPU, KB_RES_MEMORY, gpu};

        for (size_t i = 0; i < KB_ARRAY_SIZE(slots); i++) {
                int r = slots[i];
                if (r < 0)
                        continue;
                /* An extended resource the task does not ask for is left
                 * out, as kube-scheduler's calculateResourceAllocatableRequest
                 * does. */
                if (r == gpu && t->resreq->q[r] == 0)
                        continue;
                int64_t cap = n->allocatable.q[r];
                if (cap == 0)
                        continue;
                double frac = (double)requested(t, n, r) / (double)cap;
                f[nf++] = frac > 1 ? 1 : frac;
                total += f[nf - 1];
        }

        double std = 0;
        if (nf == 2) {
                std = fabs((f[0] - f[1]) / 2);
        } else if (nf > 2) {
                double mean = total / (double)nf, sum = 0;
                for (size_t i = 0; i < nf; i++)
                        sum += (f[i] - mean) * (f[i] - mean);
                std = sqrt(sum / (double)nf);
        }
        return (int64_t)((1 - std) * MAX_NODE_SCORE);
}

KB_TESTABLE int64_t nodeorder_node_affinity(const struct kb_task *t, const struct kb_node_info *n)
{
        const struct kb_pod *pod = t->pod;
        int64_t sum = 0;
        for (size_t i = 0; i < pod->npreferred; i++) {
                const struct kb_preferred_term *p = &pod->preferred[i];
                if (p->weight != 0 && kb__plugins_term_matches(&p->term, n->node))
                        sum += p->weight;
        }
        return sum;
}

KB_TESTABLE double nodeorder_score(void *arg, const struct kb_task *t, const struct kb_node_info *n)
{
        const struct kb__nodeorder *no = arg;
        double score = 0;
        if (no->least)
                score += (double)(nodeorder_least_requested(t, n) * no->least);
        if (no->most)
                score += (double)(nodeorder_most_requested(t, n) * no->most);
        if (no->balanced)
                score += (double)(nodeorder_balanced_resource(t, n, no->gpu) * no->balanced);
        if (no->affinity)
                score += (double)(nodeorder_node_affinity(t, n) * no->affinity);
        if (no->image && t->pod->nimages)
                score += (double)(nodeorder_image_locality(no->images, t, n) * no->image);
        return score;
}

static void *nodeorder_open(struct kb_session *s, const struct kb_value *args)
{
        struct kb__nodeorder *no = kb_pool_alloc(kb_session_pool(s), sizeof(*no));
        nodeorder_conf(args, no);
        if (no->image)
                no->images = images_new(s);
        if (no->least || no->most || no->balanced || no->affinity || no->image)
                kb_on_node_order(s, nodeorder_score, no, KB_PURE);
        no->batch = kb__podscore_open(s, no->pod_affinity, no->taint, no->spread);
        return no;
}

static void nodeorder_close(struct kb_session *s, void *state)
{
        struct kb__nodeorder *no = state;
        if (!no)
                return;
        images_free(no->images);
        kb__podscore_close(no->batch);
}
