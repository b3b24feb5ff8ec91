/*
 * Nodes, PriorityClasses, PodDisruptionBudgets and Namespaces, and
 * kb_object_decode, which picks the decoder by apiVersion and kind
 * (PodGroups and Queues decode in podgroup.c, HyperNodes in hypernode.c,
 * pods in pod.c).
 *
 * Each decoder fills a zeroed heap struct and, on any error, hands it to the
 * kind's free, which passes over whatever is still NULL; so no error path
 * needs its own unwinding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-int.h"

/* ---- nodes ------------------------------------------------------------ */

/* kubelet's default --max-pods, for hand-written nodes that list no pods. */
#define KB_DEFAULT_MAX_PODS 110

void kb_node_free(struct kb_node *n)
{
        if (!n)
                return;
        kb_meta_release(&n->meta);
        for (size_t i = 0; i < n->ntaints; i++) {
                free(n->taints[i].key);
                free(n->taints[i].value);
        }
        free(n->taints);
        for (size_t i = 0; i < n->nimages; i++) {
                for (size_t k = 0; k < n->images[i].nnames; k++)
                        free(n->images[i].names[k]);
                free(n->images[i].names);
        }
        free(n->images);
        free(n);
}

/* status.images: what ImageLocality reads (names and sizeBytes). */
static int decode_images(struct kb__api_dec *d, const struct kb_value *status, struct kb_node *n)
{
        const struct kb_value *imgs = kb_value_get(status, "images");
        int rc;
        if ((rc = kb__api_list(d, imgs, "status.images")))
                return rc;
        if (!kb__api_set(imgs) || !imgs->arr.n)
                return 0;
        n->images = kb_xcalloc(imgs->arr.n, sizeof(*n->images));
        n->nimages = imgs->arr.n;
        for (size_t i = 0; i < imgs->arr.n; i++) {
                const struct kb_value *v = imgs->arr.v[i];
                struct kb_node_image *im = &n->images[i];
                char p[KB__API_PATH], pf[KB__API_PATH + 16];
                kb__api_path(p, sizeof(p), "status.images[%zu]", i);
                if ((rc = kb__api_object(d, v, p)))
                        return rc;
                const struct kb_value *names = kb_value_get(v, "names");
                kb__api_path(pf, sizeof(pf), "%s.names", p);
                if ((rc = kb__api_list(d, names, pf)))
                        return rc;
                if (kb__api_set(names) && names->arr.n) {
                        im->names = kb_xcalloc(names->arr.n, sizeof(*im->names));
                        im->nnames = names->arr.n;
                        for (size_t k = 0; k < names->arr.n; k++) {
                                char pk[KB__API_PATH + 32];
                                kb__api_path(pk, sizeof(pk), "%s[%zu]", pf, k);
                                if ((rc = kb__api_str(d, names->arr.v[k], pk, &im->names[k])))
                                        return rc;
                                if (!im->names[k])
                                        im->names[k] = kb_xstrdup("");
                        }
                }
                const struct kb_value *size = kb_value_get(v, "sizeBytes");
                kb__api_path(pf, sizeof(pf), "%s.sizeBytes", p);
                if (kb__api_set(size) && (kb_value_int(size, &im->size) || im->size < 0))
                        return kb__api_fail(d, pf, "must be a non-negative integer");
        }
        return 0;
}

static int decode_taint(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                        struct kb_taint *t)
{
        char p[KB__API_PATH];
        char *effect = NULL;
        int rc;

        if ((rc = kb__api_object(d, v, path)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.key", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "key"), p, &t->key)))
                return rc;
        /* ValidateTaints: a taint needs a key and one of the three effects. */
        if (!t->key || !t->key[0])
                return kb__api_fail(d, p, "required");
        kb__api_path(p, sizeof(p), "%s.value", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "value"), p, &t->value)))
                return rc;
        if (!t->value)
                t->value = kb_xstrdup("");
        kb__api_path(p, sizeof(p), "%s.effect", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "effect"), p, &effect)))
                return rc;
        if (!effect || !effect[0])
                rc = kb__api_fail(d, p, "required");
        else if (kb__api_taint_effect(effect, &t->effect))
                rc = kb__api_fail(
                    d, p, "must be NoSchedule, PreferNoSchedule or NoExecute, got \"%s\"", effect);
        free(effect);
        return rc;
}

static int node_fill(struct kb__api_dec *d, const struct kb_value *doc, struct kb_node *n)
{
        const struct kb_value *spec = kb_value_get(doc, "spec");
        const struct kb_value *status = kb_value_get(doc, "status");
        uint32_t mask = 0;
        int rc;

        if ((rc = kb__api_meta(d, doc, false, &n->meta)))
                return rc;
        if ((rc = kb__api_object(d, spec, "spec")) || (rc = kb__api_object(d, status, "status")))
                return rc;

        /* What the scheduler may hand out is allocatable (capacity less
         * system reservations); a node that reports only capacity (as
         * hand-written ones do) offers all of it.  The fallback takes the
         * whole list, never a mix of the two.
         * A node may advertise more kinds of resources than the table has
         * slots (device plugins, attachable-volumes-*).  Those that do not
         * fit are left out rather than losing the node: no pod can request
         * them anyway, since a pod naming one fails to decode. */
        const struct kb_value *alloc = kb_value_get(status, "allocatable");
        d->skip_full_res = true;
        if (kb__api_set(alloc))
                rc = kb__api_res(d, alloc, "status.allocatable", &n->allocatable, &mask);
        else
                rc = kb__api_res(d, kb_value_get(status, "capacity"), "status.capacity",
                                 &n->allocatable, &mask);
        d->skip_full_res = false;
        if (rc)
                return rc;
        /* The kubelet always reports pods; a manifest that leaves it out
         * means an ordinary node, not one that can run nothing. */
        if (!(mask & ((uint32_t)1 << KB_RES_PODS)))
                n->allocatable.q[KB_RES_PODS] = KB_DEFAULT_MAX_PODS;

        if ((rc = kb__api_bool(d, kb_value_get(spec, "unschedulable"), "spec.unschedulable",
                               &n->unschedulable)))
                return rc;

        const struct kb_value *taints = kb_value_get(spec, "taints");
        if ((rc = kb__api_list(d, taints, "spec.taints")))
                return rc;
        if (kb__api_set(taints) && taints->arr.n) {
                n->taints = kb_xcalloc(taints->arr.n, sizeof(*n->taints));
                n->ntaints = taints->arr.n;
                for (size_t i = 0; i < taints->arr.n; i++) {
                        char p[KB__API_PATH];
                        kb__api_path(p, sizeof(p), "spec.taints[%zu]", i);
                        if ((rc = decode_taint(d, taints->arr.v[i], p, &n->taints[i])))
                                return rc;
                }
        }

        if ((rc = decode_images(d, status, n)))
                return rc;

        /* Ready unless a Ready condition says otherwise: a node without
         * conditions is a hand-written one, and kube-scheduler itself no
         * longer filters on conditions (the node lifecycle controller taints
         * NotReady nodes instead), so only an explicit verdict counts.
         * Status "False" or "Unknown" (a silent kubelet) is not ready. */
        n->ready = true;
        const struct kb_value *conds = kb_value_get(status, "conditions");
        if ((rc = kb__api_list(d, conds, "status.conditions")))
                return rc;
        for (size_t i = 0; kb__api_set(conds) && i < conds->arr.n; i++) {
                const struct kb_value *c = conds->arr.v[i];
                char p[KB__API_PATH];
                kb__api_path(p, sizeof(p), "status.conditions[%zu]", i);
                if ((rc = kb__api_object(d, c, p)))
                        return rc;
                const struct kb_value *type = kb_value_get(c, "type");
                if (!kb_streq(kb_value_str(type), "Ready"))
                        continue;
                const struct kb_value *st = kb_value_get(c, "status");
                if (kb__api_set(st) && !kb_value_str(st)) {
                        kb__api_path(p, sizeof(p), "status.conditions[%zu].status", i);
                        return kb__api_fail(d, p, "must be a string, got %s",
                                            kb_value_type_name(st->type));
                }
                n->ready = kb_streq(kb_value_str(st), "True");
                break;
        }
        return 0;
}

int kb_node_decode(const struct kb_value *doc, struct kb_node **out, char *err, size_t errlen)
{
        KB__DECODE("node", struct kb_node, node_fill, kb_node_free);
}

/* Two label or annotation lists with the same pairs in the same order. */
static bool kv_same(const struct kb_kv *a, size_t na, const struct kb_kv *b, size_t nb)
{
        if (na != nb)
                return false;
        for (size_t i = 0; i < na; i++)
                if (!kb_streq(a[i].key, b[i].key) || !kb_streq(a[i].value, b[i].value))
                        return false;
        return true;
}

/* Metas the same but for resourceVersion and gen (which is the cache's). */
static bool meta_same(const struct kb_meta *a, const struct kb_meta *b)
{
        return kb_streq(a->name, b->name) && kb_streq(a->namespace, b->namespace) &&
               kb_streq(a->uid, b->uid) && a->creation == b->creation &&
               a->deletion == b->deletion &&
               kv_same(a->labels, a->nlabels, b->labels, b->nlabels) &&
               kv_same(a->annotations, a->nannotations, b->annotations, b->nannotations);
}

static bool image_same(const struct kb_node_image *a, const struct kb_node_image *b)
{
        if (a->size != b->size || a->nnames != b->nnames)
                return false;
        for (size_t k = 0; k < a->nnames; k++)
                if (!kb_streq(a->names[k], b->names[k]))
                        return false;
        return true;
}

bool kb_node_same(const struct kb_node *a, const struct kb_node *b)
{
        if (!meta_same(&a->meta, &b->meta) || a->unschedulable != b->unschedulable ||
            a->ready != b->ready || a->ntaints != b->ntaints || a->nimages != b->nimages)
                return false;
        if (!kb_res_eq_first(&a->allocatable, &b->allocatable, KB_RES_MAX))
                return false;
        for (size_t i = 0; i < a->ntaints; i++)
                if (!kb_streq(a->taints[i].key, b->taints[i].key) ||
                    !kb_streq(a->taints[i].value, b->taints[i].value) ||
                    a->taints[i].effect != b->taints[i].effect)
                        return false;
        for (size_t i = 0; i < a->nimages; i++)
                if (!image_same(&a->images[i], &b->images[i]))
                        return false;
        return true;
}

/* ---- priority classes and namespaces ---------------------------------- */

void kb_priorityclass_free(struct kb_priorityclass *pc)
{
        if (!pc)
                return;
        kb_meta_release(&pc->meta);
        free(pc);
}

static int priorityclass_fill(struct kb__api_dec *d, const struct kb_value *doc,
                              struct kb_priorityclass *pc)
{
        char *policy = NULL;
        int rc;

        if ((rc = kb__api_meta(d, doc, false, &pc->meta)))
                return rc;
        /* value, globalDefault and preemptionPolicy sit at the top level. */
        if ((rc = kb__api_int32(d, kb_value_get(doc, "value"), "value", INT32_MIN, INT32_MAX,
                                &pc->value)) ||
            (rc = kb__api_bool(d, kb_value_get(doc, "globalDefault"), "globalDefault",
                               &pc->global_default)) ||
            (rc = kb__api_str(d, kb_value_get(doc, "preemptionPolicy"), "preemptionPolicy",
                              &policy)))
                return rc;
        /* Defaults to PreemptLowerPriority. */
        if (policy && policy[0] && strcmp(policy, "Never") != 0 &&
            strcmp(policy, "PreemptLowerPriority") != 0)
                rc = kb__api_fail(d, "preemptionPolicy",
                                  "must be PreemptLowerPriority or Never, got \"%s\"", policy);
        pc->preempt_never = kb_streq(policy, "Never");
        free(policy);
        return rc;
}

int kb_priorityclass_decode(const struct kb_value *doc, struct kb_priorityclass **out, char *err,
                            size_t errlen)
{
        KB__DECODE("priorityclass", struct kb_priorityclass, priorityclass_fill,
                   kb_priorityclass_free);
}

void kb_pdb_free(struct kb_pdb *pdb)
{
        if (!pdb)
                return;
        kb_meta_release(&pdb->meta);
        kb__api_label_selector_release(&pdb->selector);
        free(pdb);
}

static int pdb_fill(struct kb__api_dec *d, const struct kb_value *doc, struct kb_pdb *pdb)
{
        int rc;
        const struct kb_value *spec = kb_value_get(doc, "spec");
        const struct kb_value *status = kb_value_get(doc, "status");
        if ((rc = kb__api_meta(d, doc, true, &pdb->meta)) ||
            (rc = kb__api_object(d, spec, "spec")) || (rc = kb__api_object(d, status, "status")) ||
            (rc = kb__api_label_selector(d, kb_value_get(spec, "selector"), "spec.selector",
                                         &pdb->selector)) ||
            (rc = kb__api_int32(d, kb_value_get(status, "disruptionsAllowed"),
                                "status.disruptionsAllowed", INT32_MIN, INT32_MAX,
                                &pdb->disruptions_allowed)))
                return rc;
        return 0;
}

int kb_pdb_decode(const struct kb_value *doc, struct kb_pdb **out, char *err, size_t errlen)
{
        KB__DECODE("poddisruptionbudget", struct kb_pdb, pdb_fill, kb_pdb_free);
}

bool kb_pdb_covers(const struct kb_pdb *pdb, const struct kb_pod *p)
{
        return pdb->selector.set && pdb->selector.nreqs &&
               kb_streq(pdb->meta.namespace, p->meta.namespace) &&
               kb_label_selector_matches(&pdb->selector, &p->meta);
}

void kb_namespace_free(struct kb_namespace *ns)
{
        if (!ns)
                return;
        kb_meta_release(&ns->meta);
        free(ns);
}

static int namespace_fill(struct kb__api_dec *d, const struct kb_value *doc,
                          struct kb_namespace *ns)
{
        return kb__api_meta(d, doc, false, &ns->meta);
}

int kb_namespace_decode(const struct kb_value *doc, struct kb_namespace **out, char *err,
                        size_t errlen)
{
        KB__DECODE("namespace", struct kb_namespace, namespace_fill, kb_namespace_free);
}

/* ---- any object ------------------------------------------------------- */

static const struct {
        const char *api_version;
        const char *kind;
        enum kb_kind k;
} kinds[] = {
    {"v1", "Node", KB_KIND_NODE},
    {"v1", "Pod", KB_KIND_POD},
    {"v1", "Namespace", KB_KIND_NAMESPACE},
    {"scheduling.volcano.sh/v1beta1", "PodGroup", KB_KIND_PODGROUP},
    {"scheduling.volcano.sh/v1beta1", "Queue", KB_KIND_QUEUE},
    {"topology.volcano.sh/v1alpha1", "HyperNode", KB_KIND_HYPERNODE},
    {"scheduling.k8s.io/v1", "PriorityClass", KB_KIND_PRIORITYCLASS},
    /* v1beta1 has the same fields; older clusters and manifests use it. */
    {"scheduling.k8s.io/v1beta1", "PriorityClass", KB_KIND_PRIORITYCLASS},
    {"policy/v1", "PodDisruptionBudget", KB_KIND_PDB},
};

int kb_object_decode(const struct kb_value *doc, struct kb_object *out, char *err, size_t errlen)
{
        struct kb__api_dec d;
        int rc;

        out->kind = KB_KIND_NONE;
        out->ptr = NULL;
        kb__api_dec_init(&d, "object", err, errlen);
        if ((rc = kb__api_doc(&d, doc)))
                return rc;
        /* Name the object in messages when it says who it is. */
        d.name = kb_value_str(kb_value_dig(doc, "metadata", "name"));
        d.ns = kb_value_str(kb_value_dig(doc, "metadata", "namespace"));
        if (d.name && !d.name[0])
                d.name = NULL;
        if (d.ns && !d.ns[0])
                d.ns = NULL;

        const struct kb_value *av = kb_value_get(doc, "apiVersion");
        const struct kb_value *kv = kb_value_get(doc, "kind");
        const char *api_version = kb_value_str(av);
        const char *kind = kb_value_str(kv);
        if (kb__api_set(kv) && !kind)
                return kb__api_fail(&d, "kind", "must be a string, got %s",
                                    kb_value_type_name(kv->type));
        if (!kind || !kind[0])
                return kb__api_fail(&d, "kind", "required");
        if (kb__api_set(av) && !api_version)
                return kb__api_fail(&d, "apiVersion", "must be a string, got %s",
                                    kb_value_type_name(av->type));
        if (!api_version || !api_version[0])
                return kb__api_fail(&d, "apiVersion", "required");

        size_t i;
        for (i = 0; i < KB_ARRAY_SIZE(kinds); i++)
                if (strcmp(api_version, kinds[i].api_version) == 0 &&
                    strcmp(kind, kinds[i].kind) == 0)
                        break;
        if (i == KB_ARRAY_SIZE(kinds)) {
                if (err && errlen)
                        snprintf(err, errlen, "kind %s %s is not read by kbatch", api_version,
                                 kind);
                return KB_ENOTFOUND;
        }

        switch (kinds[i].k) {
        case KB_KIND_NODE:
                rc = kb_node_decode(doc, &out->node, err, errlen);
                break;
        case KB_KIND_POD:
                rc = kb_pod_decode(doc, &out->pod, err, errlen);
                break;
        case KB_KIND_PODGROUP:
                rc = kb_podgroup_decode(doc, &out->podgroup, err, errlen);
                break;
        case KB_KIND_QUEUE:
                rc = kb_queue_decode(doc, &out->queue, err, errlen);
                break;
        case KB_KIND_PRIORITYCLASS:
                rc = kb_priorityclass_decode(doc, &out->priorityclass, err, errlen);
                break;
        case KB_KIND_NAMESPACE:
                rc = kb_namespace_decode(doc, &out->namespace, err, errlen);
                break;
        case KB_KIND_HYPERNODE:
                rc = kb_hypernode_decode(doc, &out->hypernode, err, errlen);
                break;
        case KB_KIND_PDB:
                rc = kb_pdb_decode(doc, &out->pdb, err, errlen);
                break;
        case KB_KIND_NONE:
        default:
                return KB_ENOTFOUND; /* not reached: the table has no NONE */
        }
        if (rc == 0)
                out->kind = kinds[i].k;
        return rc;
}

void kb_object_release(struct kb_object *o)
{
        if (!o)
                return;
        switch (o->kind) {
        case KB_KIND_NODE:
                kb_node_free(o->node);
                break;
        case KB_KIND_POD:
                kb_pod_free(o->pod);
                break;
        case KB_KIND_PODGROUP:
                kb_podgroup_free(o->podgroup);
                break;
        case KB_KIND_QUEUE:
                kb_queue_free(o->queue);
                break;
        case KB_KIND_PRIORITYCLASS:
                kb_priorityclass_free(o->priorityclass);
                break;
        case KB_KIND_NAMESPACE:
                kb_namespace_free(o->namespace);
                break;
        case KB_KIND_HYPERNODE:
                kb_hypernode_free(o->hypernode);
                break;
        case KB_KIND_PDB:
                kb_pdb_free(o->pdb);
                break;
        case KB_KIND_VCJOB:
                kb_vcjob_free(o->vcjob);
                break;
        case KB_KIND_NONE:
                break;
        }
        o->kind = KB_KIND_NONE;
        o->ptr = NULL;
}
