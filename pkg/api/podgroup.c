/*
 * Volcano's PodGroups and Queues (scheduling.volcano.sh/v1beta1).
 *
 * Each decoder fills a zeroed heap struct and, on any error, hands it to the
 * kind's free, which passes over whatever is still NULL; so no error path
 * needs its own unwinding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-int.h"

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
        kb__api_owner_free(pg->vcjob);
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
        kb__api_podgroup_runtime(pg);
        if ((rc = kb__api_owner(d, doc, "batch.volcano.sh", "Job", &pg->vcjob)))
                return rc;
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
