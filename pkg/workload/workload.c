/*
 * The PodGroups kbatch makes for pods without one and for scheduler-plugins'
 * PodGroups (workload.h says what each holds).
 *
 * Worked example: a batch/v1 Job train (uid 5c1f) of parallelism 4 whose
 * pod template has the annotation scheduling.volcano.sh/group-min-member:
 * "4" and requests cpu 1 each.  Its four pods name no group, so each has
 * workload_group "podgroup-5c1f"; the first one seen gives
 *
 *   metadata: {name: podgroup-5c1f, namespace: default,
 *              ownerReferences: [{apiVersion: batch/v1, kind: Job,
 *                                 name: train, uid: 5c1f, controller: true}]}
 *   spec: {minMember: 4, minResources: {cpu: "4"}}
 *
 * and the other three find it made: the Job is one gang of four.
 */
#include "workload/workload-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kb_value *kb__workload_resources(const struct kb_res *r, int64_t times)
{
        struct kb_value *list = kb_value_new(KB_VOBJECT);
        for (int i = 0; i < kb_res_count(); i++) {
                if (i == KB_RES_PODS || r->q[i] <= 0)
                        continue;
                char buf[64];
                double v = (double)r->q[i] * (double)times;
                kb_value_set(list, kb_res_name(i),
                             kb_value_new_string(kb_res_qty(i, v, buf, sizeof(buf))));
        }
        return list;
}

struct kb_value *kb_workload_owner_refs(const char *api_version, const char *kind, const char *name,
                                        const char *uid)
{
        struct kb_value *ref = kb_value_new(KB_VOBJECT);
        kb_value_set(ref, "apiVersion", kb_value_new_string(api_version));
        kb_value_set(ref, "kind", kb_value_new_string(kind));
        kb_value_set(ref, "name", kb_value_new_string(name));
        if (uid)
                kb_value_set(ref, "uid", kb_value_new_string(uid));
        kb_value_set(ref, "controller", kb_value_new_bool(true));
        kb_value_set(ref, "blockOwnerDeletion", kb_value_new_bool(true));
        struct kb_value *refs = kb_value_new(KB_VARRAY);
        kb_value_append(refs, ref);
        return refs;
}

struct kb_value *kb__workload_podgroup_doc(const char *ns, const char *name)
{
        struct kb_value *pg = kb_value_new(KB_VOBJECT);
        kb_value_set(pg, "apiVersion", kb_value_new_string("scheduling.volcano.sh/v1beta1"));
        kb_value_set(pg, "kind", kb_value_new_string("PodGroup"));
        struct kb_value *md = kb_value_ensure_object(pg, "metadata");
        kb_value_set(md, "name", kb_value_new_string(name));
        kb_value_set(md, "namespace", kb_value_new_string(ns));
        kb_value_ensure_object(pg, "spec");
        return pg;
}

/* ---- pods without a group --------------------------------------------------------- */

static const struct {
        const char *api_version, *kind, *resource;
} owner_kinds[] = {
    {"batch/v1", "Job", "jobs"},
    {"apps/v1", "ReplicaSet", "replicasets"},
    {"apps/v1", "StatefulSet", "statefulsets"},
    {"apps/v1", "DaemonSet", "daemonsets"},
};

bool kb_workload_owner_path(const struct kb_pod *p, char *path, size_t n)
{
        const struct kb_owner_ref *o = p->controller;
        if (p->has_workload_min_member || p->workload_invalid || !o || !o->api_version)
                return false;
        /* Kubernetes checks no more of an owner reference's name than that
         * it is not empty, so a pod's could otherwise steer the request
         * ("../../../pods" read the cluster's every pod as the owner).  The
         * owners read here (Jobs, Volcano Jobs, ReplicaSets...) are named
         * as DNS-1123 subdomains, in namespaces named as labels. */
        if (!kb_dns_subdomain(o->name) || !kb_dns_label(p->meta.namespace))
                return false;
        for (size_t i = 0; i < KB_ARRAY_SIZE(owner_kinds); i++)
                if (kb_streq(o->api_version, owner_kinds[i].api_version) &&
                    kb_streq(o->kind, owner_kinds[i].kind)) {
                        snprintf(path, n, "/apis/%s/namespaces/%s/%s/%s", o->api_version,
                                 p->meta.namespace, owner_kinds[i].resource, o->name);
                        return true;
                }
        return false;
}

/* "job default/train", for messages about the owner. */
static void owner_label(const struct kb_pod *p, char *buf, size_t n)
{
        const struct kb_owner_ref *o = p->controller;
        char kind[64];
        snprintf(kind, sizeof(kind), "%s", o && o->kind ? o->kind : "owner");
        for (char *c = kind; *c; c++)
                if (*c >= 'A' && *c <= 'Z')
                        *c = (char)(*c - 'A' + 'a');
        snprintf(buf, n, "%s %s/%s", kind, p->meta.namespace, o && o->name ? o->name : "?");
}

struct kb_value *kb_workload_podgroup(const struct kb_pod *p, const struct kb_value *owner,
                                      char *err, size_t errlen)
{
        if (!p->workload_group) {
                snprintf(err, errlen, "pod %s/%s: names its group %s", p->meta.namespace,
                         p->meta.name, p->group_name ? p->group_name : "already");
                return NULL;
        }
        if (p->workload_invalid) {
                snprintf(err, errlen, "%s", p->workload_invalid);
                return NULL;
        }
        int32_t min_member = 1;
        if (p->has_workload_min_member) {
                min_member = p->workload_min_member;
        } else {
                const char *v = kb_value_str(
                    kb_value_dig(owner, "metadata", "annotations", KB_ANNOTATION_MIN_MEMBER));
                char why[200];
                if (v && kb_min_member_parse(v, &min_member, why, sizeof(why))) {
                        char who[300];
                        owner_label(p, who, sizeof(who));
                        snprintf(err, errlen, "%s: annotation %s: %s", who,
                                 KB_ANNOTATION_MIN_MEMBER, why);
                        return NULL;
                }
        }

        struct kb_value *pg = kb__workload_podgroup_doc(p->meta.namespace, p->workload_group);
        struct kb_value *md = kb_value_get(pg, "metadata");
        const struct kb_owner_ref *o = p->controller;
        if (o)
                kb_value_set(md, "ownerReferences",
                             kb_workload_owner_refs(o->api_version ? o->api_version : "v1", o->kind,
                                                    o->name, o->uid));
        else
                kb_value_set(md, "ownerReferences",
                             kb_workload_owner_refs("v1", "Pod", p->meta.name,
                                                    strchr(p->meta.uid, ':') ? NULL : p->meta.uid));
        /* A trace replays the group's arrival with its first pod's. */
        if (p->meta.creation > 0) {
                char ts[40];
                kb_format_time(p->meta.creation, ts, sizeof(ts));
                kb_value_set(md, "creationTimestamp", kb_value_new_string(ts));
        }
        struct kb_value *spec = kb_value_get(pg, "spec");
        kb_value_set(spec, "minMember", kb_value_new_int(min_member));
        if (p->workload_queue)
                kb_value_set(spec, "queue", kb_value_new_string(p->workload_queue));
        if (p->priority_class_name && p->priority_class_name[0])
                kb_value_set(spec, "priorityClassName",
                             kb_value_new_string(p->priority_class_name));
        kb_value_set(spec, "minResources", kb__workload_resources(&p->requests, min_member));
        /* The owning batch/v1 Job's spec.activeDeadlineSeconds, which its
         * pods do not carry: the reservation plugin reads it here as the
         * gang's declared runtime (kb_pod_declared_runtime). */
        const char *ads = o && kb_streq(o->kind, "Job") && kb_streq(o->api_version, "batch/v1")
                              ? kb_value_text(kb_value_dig(owner, "spec", "activeDeadlineSeconds"))
                              : NULL;
        if (ads && *ads)
                kb_value_set(kb_value_ensure_object(md, "annotations"), KB_JOB_DEADLINE_ANNOTATION,
                             kb_value_new_string(ads));
        return pg;
}

/* ---- scheduler-plugins' PodGroup ----------------------------------------------------- */

struct kb_value *kb_workload_xpodgroup(const struct kb_xpodgroup *x)
{
        struct kb_value *pg = kb__workload_podgroup_doc(x->meta.namespace, x->meta.name);
        struct kb_value *md = kb_value_get(pg, "metadata");
        /* A uid the decoder made up (a manifest without one) names nobody. */
        const char *uid = x->meta.uid && !strchr(x->meta.uid, ':') ? x->meta.uid : NULL;
        kb_value_set(
            md, "ownerReferences",
            kb_workload_owner_refs("scheduling.x-k8s.io/v1alpha1", "PodGroup", x->meta.name, uid));
        if (x->meta.nlabels) {
                struct kb_value *labels = kb_value_ensure_object(md, "labels");
                for (size_t i = 0; i < x->meta.nlabels; i++)
                        kb_value_set(labels, x->meta.labels[i].key,
                                     kb_value_new_string(x->meta.labels[i].value));
        }
        if (x->meta.creation > 0) {
                char ts[40];
                kb_format_time(x->meta.creation, ts, sizeof(ts));
                kb_value_set(md, "creationTimestamp", kb_value_new_string(ts));
        }
        if (x->schedule_timeout > 0) {
                char t[32];
                snprintf(t, sizeof(t), "%ds", x->schedule_timeout);
                kb_value_set(kb_value_ensure_object(md, "annotations"),
                             KB_INQUEUE_TIMEOUT_ANNOTATION, kb_value_new_string(t));
        }
        struct kb_value *spec = kb_value_get(pg, "spec");
        kb_value_set(spec, "minMember", kb_value_new_int(x->min_member));
        if (x->has_min_resources)
                kb_value_set(spec, "minResources", kb__workload_resources(&x->min_resources, 1));
        if (x->queue)
                kb_value_set(spec, "queue", kb_value_new_string(x->queue));
        return pg;
}
