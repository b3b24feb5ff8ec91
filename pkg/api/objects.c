/*
 * Nodes, PodGroups, Queues, PriorityClasses and Namespaces, and
 * kb_object_decode, which picks the decoder by apiVersion and kind
 * (HyperNodes decode in hypernode.c).
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

/* ---- podgroups -------------------------------------------------------- */

void kb_podgroup_free(struct kb_podgroup *pg)
{
        if (!pg)
                return;
        kb_meta_release(&pg->meta);
        for (size_t i = 0; i < pg->nmin_task_member; i++)
                free(pg->min_task_member[i].name);
        free(pg->min_task_member);
        free(pg->queue);
        free(pg->priority_class_name);
        free(pg->highest_tier_name);
        for (size_t i = 0; i < pg->nsubgroups; i++) {
                struct kb_subgroup_policy *sp = &pg->subgroups[i];
                free(sp->name);
                kb__api_label_selector_release(&sp->selector);
                for (size_t k = 0; k < sp->nmatch_keys; k++)
                        free(sp->match_keys[k]);
                free(sp->match_keys);
                free(sp->highest_tier_name);
        }
        free(pg->subgroups);
        free(pg->unevaluated);
        free(pg->runtime_invalid);
        free(pg->phase);
        for (size_t i = 0; i < pg->nconditions; i++) {
                struct kb_condition *c = &pg->conditions[i];
                free(c->type);
                free(c->status);
                free(c->reason);
                free(c->message);
                free(c->transition_id);
        }
        free(pg->conditions);
        free(pg);
}

static int decode_condition(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                            struct kb_condition *c)
{
        static const struct {
                const char *key;
                size_t off;
        } strs[] = {
            {"type", offsetof(struct kb_condition, type)},
            {"status", offsetof(struct kb_condition, status)},
            {"reason", offsetof(struct kb_condition, reason)},
            {"message", offsetof(struct kb_condition, message)},
            {"transitionID", offsetof(struct kb_condition, transition_id)},
        };
        char p[KB__API_PATH];
        int rc;

        if ((rc = kb__api_object(d, v, path)))
                return rc;
        for (size_t i = 0; i < KB_ARRAY_SIZE(strs); i++) {
                kb__api_path(p, sizeof(p), "%s.%s", path, strs[i].key);
                if ((rc = kb__api_str(d, kb_value_get(v, strs[i].key), p,
                                      (char **)((char *)c + strs[i].off))))
                        return rc;
        }
        kb__api_path(p, sizeof(p), "%s.lastTransitionTime", path);
        return kb__api_time(d, kb_value_get(v, "lastTransitionTime"), p, &c->last_transition);
}

static int podgroup_status(struct kb__api_dec *d, const struct kb_value *status,
                           struct kb_podgroup *pg)
{
        int rc;

        if ((rc = kb__api_object(d, status, "status")))
                return rc;
        if ((rc = kb__api_str(d, kb_value_get(status, "phase"), "status.phase", &pg->phase)))
                return rc;
        if (pg->phase && !pg->phase[0]) {
                free(pg->phase);
                pg->phase = NULL;
        }
        if ((rc = kb__api_int32(d, kb_value_get(status, "running"), "status.running", 0, INT32_MAX,
                                &pg->running)) ||
            (rc = kb__api_int32(d, kb_value_get(status, "succeeded"), "status.succeeded", 0,
                                INT32_MAX, &pg->succeeded)) ||
            (rc = kb__api_int32(d, kb_value_get(status, "failed"), "status.failed", 0, INT32_MAX,
                                &pg->failed)))
                return rc;

        const struct kb_value *conds = kb_value_get(status, "conditions");
        if ((rc = kb__api_list(d, conds, "status.conditions")))
                return rc;
        if (!kb__api_set(conds) || !conds->arr.n)
                return 0;
        pg->conditions = kb_xcalloc(conds->arr.n, sizeof(*pg->conditions));
        pg->nconditions = conds->arr.n;
        for (size_t i = 0; i < conds->arr.n; i++) {
                char p[KB__API_PATH];
                kb__api_path(p, sizeof(p), "status.conditions[%zu]", i);
                if ((rc = decode_condition(d, conds->arr.v[i], p, &pg->conditions[i])))
                        return rc;
        }
        return 0;
}

/* The paths of a networkTopology's fields, for errors. */
struct topology_paths {
        const char *self, *mode, *tier, *tier_name;
};

static const struct topology_paths pg_topology_paths = {
    "spec.networkTopology", "spec.networkTopology.mode", "spec.networkTopology.highestTierAllowed",
    "spec.networkTopology.highestTierName"};

/*
 * A networkTopology (Volcano's NetworkTopologySpec): mode hard or soft,
 * hard when unset (the CRD's default); highestTierAllowed, a tier >= 0, or
 * highestTierName, a HyperNode tierName, not both.  Unset leaves *mode
 * NONE and *tier -1.
 */
static int network_topology(struct kb__api_dec *d, const struct kb_value *nt,
                            const struct topology_paths *p, enum kb_topology_mode *mode_out,
                            int32_t *tier_out, char **name_out)
{
        char *mode = NULL;
        int rc;

        *tier_out = -1;
        if (!kb__api_set(nt))
                return 0;
        if ((rc = kb__api_object(d, nt, p->self)) ||
            (rc = kb__api_str(d, kb_value_get(nt, "mode"), p->mode, &mode)))
                return rc;
        if (!mode || !mode[0] || strcmp(mode, "hard") == 0)
                *mode_out = KB_TOPOLOGY_HARD;
        else if (strcmp(mode, "soft") == 0)
                *mode_out = KB_TOPOLOGY_SOFT;
        else
                rc = kb__api_fail(d, p->mode, "must be hard or soft, got \"%s\"", mode);
        free(mode);
        if (rc)
                return rc;
        const struct kb_value *tier = kb_value_get(nt, "highestTierAllowed");
        if ((rc = kb__api_int32(d, tier, p->tier, 0, INT32_MAX, tier_out)) ||
            (rc = kb__api_str(d, kb_value_get(nt, "highestTierName"), p->tier_name, name_out)))
                return rc;
        if (*name_out && !(*name_out)[0]) {
                free(*name_out);
                *name_out = NULL;
        }
        if (kb__api_set(tier) && *name_out)
                return kb__api_fail(d, p->self,
                                    "highestTierAllowed and highestTierName cannot both be set");
        return 0;
}

/* One spec.subGroupPolicy entry (struct kb_subgroup_policy). */
static int subgroup_policy(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                           void *elem, void *ctx)
{
        struct kb_subgroup_policy *sp = elem;
        char p[KB__API_PATH];
        int rc;
        (void)ctx;

        sp->size = 1;
        sp->highest_tier = -1;
        if ((rc = kb__api_object(d, v, path)))
                return rc;
        if (!kb__api_set(v))
                return kb__api_fail(d, path, "must be an object, got null");
        kb__api_path(p, sizeof(p), "%s.name", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "name"), p, &sp->name)))
                return rc;
        if (!sp->name || !sp->name[0])
                return kb__api_fail(d, p, "must be set");
        kb__api_path(p, sizeof(p), "%s.subGroupSize", path);
        if ((rc = kb__api_int32(d, kb_value_get(v, "subGroupSize"), p, 0, INT32_MAX, &sp->size)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.minSubGroups", path);
        if ((rc = kb__api_int32(d, kb_value_get(v, "minSubGroups"), p, 0, INT32_MAX,
                                &sp->min_groups)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.labelSelector", path);
        if ((rc = kb__api_label_selector(d, kb_value_get(v, "labelSelector"), p, &sp->selector)))
                return rc;
        const struct kb_value *keys = kb_value_get(v, "matchLabelKeys");
        kb__api_path(p, sizeof(p), "%s.matchLabelKeys", path);
        if ((rc = kb__api_list(d, keys, p)))
                return rc;
        if (kb__api_set(keys) && keys->arr.n) {
                sp->match_keys = kb_xcalloc(keys->arr.n, sizeof(*sp->match_keys));
                sp->nmatch_keys = keys->arr.n;
                for (size_t i = 0; i < keys->arr.n; i++) {
                        kb__api_path(p, sizeof(p), "%s.matchLabelKeys[%zu]", path, i);
                        if ((rc = kb__api_str(d, keys->arr.v[i], p, &sp->match_keys[i])))
                                return rc;
                        if (!sp->match_keys[i] || !sp->match_keys[i][0])
                                return kb__api_fail(d, p, "must be a label key, got \"\"");
                }
        }
        const struct kb_value *nt = kb_value_get(v, "networkTopology");
        if (!kb__api_set(nt))
                return 0;
        char self[KB__API_PATH], mode[KB__API_PATH], tier[KB__API_PATH], name[KB__API_PATH];
        kb__api_path(self, sizeof(self), "%s.networkTopology", path);
        kb__api_path(mode, sizeof(mode), "%s.networkTopology.mode", path);
        kb__api_path(tier, sizeof(tier), "%s.networkTopology.highestTierAllowed", path);
        kb__api_path(name, sizeof(name), "%s.networkTopology.highestTierName", path);
        const struct topology_paths tp = {self, mode, tier, name};
        return network_topology(d, nt, &tp, &sp->topology_mode, &sp->highest_tier,
                                &sp->highest_tier_name);
}

static int podgroup_fill(struct kb__api_dec *d, const struct kb_value *doc, struct kb_podgroup *pg)
{
        const struct kb_value *spec = kb_value_get(doc, "spec");
        int rc;

        if ((rc = kb__api_meta(d, doc, true, &pg->meta)))
                return rc;
        if ((rc = kb__api_object(d, spec, "spec")))
                return rc;

        /* Volcano's PodGroupSpec.MinMember is a plain int32 with no default
         * (an absent one reads as 0, a gang of nobody that is always
         * ready).  kbatch takes an absent minMember as 1, the value
         * Volcano's own controllers give the groups they create for lone
         * pods, so a PodGroup written without it still waits for a pod.  An
         * explicit 0 stays 0. */
        pg->min_member = 1;
        if ((rc = kb__api_int32(d, kb_value_get(spec, "minMember"), "spec.minMember", 0, INT32_MAX,
                                &pg->min_member)))
                return rc;

        const struct kb_value *mtm = kb_value_get(spec, "minTaskMember");
        if ((rc = kb__api_object(d, mtm, "spec.minTaskMember")))
                return rc;
        if (kb__api_set(mtm) && mtm->obj.n) {
                pg->min_task_member = kb_xcalloc(mtm->obj.n, sizeof(*pg->min_task_member));
                pg->nmin_task_member = mtm->obj.n;
                for (size_t i = 0; i < mtm->obj.n; i++) {
                        const struct kb_member *m = &mtm->obj.m[i];
                        struct kb_task_member *t = &pg->min_task_member[i];
                        char p[KB__API_PATH];
                        t->name = kb_xstrdup(m->key);
                        kb__api_path(p, sizeof(p), "spec.minTaskMember.%s", m->key);
                        if (!kb__api_set(m->val))
                                return kb__api_fail(d, p, "must be an integer, got null");
                        if ((rc = kb__api_int32(d, m->val, p, 0, INT32_MAX, &t->min)))
                                return rc;
                }
        }

        const struct kb_value *minres = kb_value_get(spec, "minResources");
        if ((rc = kb__api_res(d, minres, "spec.minResources", &pg->min_resources, NULL)))
                return rc;
        pg->has_min_resources = kb__api_set(minres);

        if ((rc = kb__api_str(d, kb_value_get(spec, "queue"), "spec.queue", &pg->queue)))
                return rc;
        /* PodGroupSpec.Queue: "Defaults to `default` Queue". */
        if (!pg->queue || !pg->queue[0]) {
                free(pg->queue);
                pg->queue = kb_xstrdup("default");
        }
        if ((rc = kb__api_str(d, kb_value_get(spec, "priorityClassName"), "spec.priorityClassName",
                              &pg->priority_class_name)))
                return rc;
        if ((rc = network_topology(d, kb_value_get(spec, "networkTopology"), &pg_topology_paths,
                                   &pg->topology_mode, &pg->highest_tier, &pg->highest_tier_name)))
                return rc;
        if ((rc = kb__api_list_of(d, kb_value_get(spec, "subGroupPolicy"), "spec.subGroupPolicy",
                                  sizeof(*pg->subgroups), (void **)&pg->subgroups, &pg->nsubgroups,
                                  subgroup_policy, NULL)))
                return rc;
        for (size_t i = 0; i < pg->nsubgroups; i++)
                for (size_t k = 0; k < i; k++)
                        if (kb_streq(pg->subgroups[i].name, pg->subgroups[k].name)) {
                                char p[KB__API_PATH];
                                kb__api_path(p, sizeof(p), "spec.subGroupPolicy[%zu].name", i);
                                return kb__api_fail(d, p, "duplicate name \"%s\"",
                                                    pg->subgroups[i].name);
                        }
        /* A soft sub-group topology is a preference kbatch does not act on
         * (Volcano scores a soft sub-group's nodes by its HyperNode): said in
         * the session's warnings. */
        struct kb_buf soft;
        kb_buf_init(&soft);
        for (size_t i = 0; i < pg->nsubgroups; i++)
                if (pg->subgroups[i].topology_mode == KB_TOPOLOGY_SOFT)
                        kb_buf_printf(&soft, "%sspec.subGroupPolicy[%zu].networkTopology",
                                      soft.len ? ", " : "", i);
        if (soft.len)
                pg->unevaluated = kb_xstrdup(soft.data);
        kb_buf_release(&soft);
        kb__api_podgroup_runtime(pg);
        return podgroup_status(d, kb_value_get(doc, "status"), pg);
}

int kb_podgroup_decode(const struct kb_value *doc, struct kb_podgroup **out, char *err,
                       size_t errlen)
{
        KB__DECODE("podgroup", struct kb_podgroup, podgroup_fill, kb_podgroup_free);
}

/* ---- queues ----------------------------------------------------------- */

const char *kb_queue_state_name(enum kb_queue_state s)
{
        switch (s) {
        case KB_QUEUE_OPEN:
                return "Open";
        case KB_QUEUE_CLOSED:
                return "Closed";
        case KB_QUEUE_CLOSING:
                return "Closing";
        case KB_QUEUE_UNKNOWN:
                return "Unknown";
        }
        return "?";
}

void kb_queue_free(struct kb_queue *q)
{
        if (!q)
                return;
        kb_meta_release(&q->meta);
        free(q->parent);
        free(q);
}

static int queue_state(struct kb__api_dec *d, const struct kb_value *status, struct kb_queue *q)
{
        static const char *const names[] = {"Open", "Closed", "Closing", "Unknown"};
        char *state = NULL;
        int rc;

        if ((rc = kb__api_object(d, status, "status")))
                return rc;
        /* A queue nobody has reconciled yet is open: Volcano's queue
         * controller starts every queue in Open. */
        q->state = KB_QUEUE_OPEN;
        if ((rc = kb__api_str(d, kb_value_get(status, "state"), "status.state", &state)))
                return rc;
        if (!state || !state[0]) {
                free(state);
                return 0;
        }
        for (size_t i = 0; i < KB_ARRAY_SIZE(names); i++)
                if (strcmp(state, names[i]) == 0) {
                        q->state = (enum kb_queue_state)i;
                        q->has_state = true;
                        free(state);
                        return 0;
                }
        rc = kb__api_fail(d, "status.state", "must be Open, Closed, Closing or Unknown, got \"%s\"",
                          state);
        free(state);
        return rc;
}

static int queue_fill(struct kb__api_dec *d, const struct kb_value *doc, struct kb_queue *q)
{
        const struct kb_value *spec = kb_value_get(doc, "spec");
        int rc;

        if ((rc = kb__api_meta(d, doc, false, &q->meta)))
                return rc;
        if ((rc = kb__api_object(d, spec, "spec")))
                return rc;

        /* The Queue CRD: weight defaults to 1, maximum 65535.  Its minimum
         * is 1, but Volcano's scheduler reads a queue of weight 0 (one
         * created before the CRD said so, or through an old webhook) as
         * weight 1 instead of dropping it; so does kbatch, and says so. */
        q->weight = 1;
        if ((rc = kb__api_int32(d, kb_value_get(spec, "weight"), "spec.weight", 0, 65535,
                                &q->weight)))
                return rc;
        if (q->weight == 0) {
                KB_WARN("queue %s: spec.weight: 0 is below the minimum 1; using 1", q->meta.name);
                q->weight = 1;
        }

        /* A capability caps only the resources it names. */
        const struct kb_value *cap = kb_value_get(spec, "capability");
        struct kb_res capres = {{0}};
        uint32_t mask = 0;
        if ((rc = kb__api_res(d, cap, "spec.capability", &capres, &mask)))
                return rc;
        kb_res_fill(&q->capability, KB_RES_UNLIMITED);
        for (int i = 0; i < KB_RES_MAX; i++)
                if (mask & ((uint32_t)1 << i))
                        q->capability.q[i] = capres.q[i];
        q->has_capability = kb__api_set(cap);

        const struct kb_value *guar = kb_value_get(spec, "guarantee");
        if ((rc = kb__api_object(d, guar, "spec.guarantee")) ||
            (rc = kb__api_res(d, kb_value_get(guar, "resource"), "spec.guarantee.resource",
                              &q->guarantee, NULL)))
                return rc;

        const struct kb_value *des = kb_value_get(spec, "deserved");
        if ((rc = kb__api_res(d, des, "spec.deserved", &q->deserved, NULL)))
                return rc;
        q->has_deserved = kb__api_set(des);

        /* Volcano's queue webhook defaults reclaimable to true. */
        q->reclaimable = true;
        if ((rc = kb__api_bool(d, kb_value_get(spec, "reclaimable"), "spec.reclaimable",
                               &q->reclaimable)) ||
            (rc = kb__api_int32(d, kb_value_get(spec, "priority"), "spec.priority", INT32_MIN,
                                INT32_MAX, &q->priority)) ||
            (rc = kb__api_str(d, kb_value_get(spec, "parent"), "spec.parent", &q->parent)))
                return rc;
        if (q->parent && !q->parent[0]) {
                free(q->parent);
                q->parent = NULL;
        }
        return queue_state(d, kb_value_get(doc, "status"), q);
}

int kb_queue_decode(const struct kb_value *doc, struct kb_queue **out, char *err, size_t errlen)
{
        KB__DECODE("queue", struct kb_queue, queue_fill, kb_queue_free);
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
        case KB_KIND_NONE:
                break;
        }
        o->kind = KB_KIND_NONE;
        o->ptr = NULL;
}
