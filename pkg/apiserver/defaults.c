/*
 * What the server fills in on create: uid and timestamps, and the defaults
 * of each built-in type (a pod's phase and QoS class, a job's selector and
 * labels, a CRD's conditions), as the real server's defaulting does.
 */
#include "apiserver/apiserver-int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void kb__name_suffix(struct kb_apiserver *srv, char out[6])
{
        static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
        for (int i = 0; i < 5; i++)
                out[i] = alphabet[kb__rand(srv) % (sizeof(alphabet) - 1)];
        out[5] = 0;
}

static const char *qos_class(const struct kb_value *spec)
{
        const struct kb_value *cs = kb_value_get(spec, "containers");
        bool any = false, guaranteed = true;
        for (size_t i = 0; kb_value_is(cs, KB_VARRAY) && i < cs->arr.n; i++) {
                const struct kb_value *req = kb_value_dig(cs->arr.v[i], "resources", "requests");
                const struct kb_value *lim = kb_value_dig(cs->arr.v[i], "resources", "limits");
                if ((kb_value_is(req, KB_VOBJECT) && req->obj.n) ||
                    (kb_value_is(lim, KB_VOBJECT) && lim->obj.n))
                        any = true;
                const char *keys[] = {"cpu", "memory"};
                for (int k = 0; k < 2; k++) {
                        const char *l = kb_value_text(kb_value_get(lim, keys[k]));
                        const char *r = kb_value_text(kb_value_get(req, keys[k]));
                        if (!l || (r && strcmp(l, r)))
                                guaranteed = false;
                }
        }
        if (!any)
                return "BestEffort";
        return guaranteed ? "Guaranteed" : "Burstable";
}

static void set_default(struct kb_value *obj, const char *key, struct kb_value *v)
{
        if (!kb_value_get(obj, key))
                kb_value_set(obj, key, v);
        else
                kb_value_free(v);
}

void kb__prepare_create(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_value *obj)
{
        kb__meta_init(srv, obj);
        if (rt->custom) {
                if (rt->has_status)
                        kb_value_del(obj, "status");
                if (kb__is_vcjobs(rt))
                        kb__vcjob_defaults(obj);
                return;
        }
        const char *uid = kb__meta_str(obj, "uid");
        if (!strcmp(rt->resource, "pods")) {
                struct kb_value *spec = kb_value_ensure_object(obj, "spec");
                set_default(spec, "schedulerName", kb_value_new_string("default-scheduler"));
                set_default(spec, "restartPolicy", kb_value_new_string("Always"));
                set_default(spec, "dnsPolicy", kb_value_new_string("ClusterFirst"));
                set_default(spec, "priority", kb_value_new_int(0));
                /* kube-apiserver's default: a bound pod deleted without a
                 * grace period of its own lingers this long. */
                set_default(spec, "terminationGracePeriodSeconds", kb_value_new_int(30));
                struct kb_value *st = kb_value_new(KB_VOBJECT);
                kb_value_set(st, "phase", kb_value_new_string("Pending"));
                kb_value_set(st, "qosClass", kb_value_new_string(qos_class(spec)));
                kb_value_set(obj, "status", st);
        } else if (!strcmp(rt->resource, "namespaces")) {
                struct kb_value *st = kb_value_new(KB_VOBJECT);
                kb_value_set(st, "phase", kb_value_new_string("Active"));
                kb_value_set(obj, "status", st);
                struct kb_value *labels =
                    kb_value_ensure_object(kb_value_ensure_object(obj, "metadata"), "labels");
                kb_value_set(labels, "kubernetes.io/metadata.name",
                             kb_value_new_string(kb__meta_str(obj, "name")));
        } else if (!strcmp(rt->resource, "jobs")) {
                struct kb_value *spec = kb_value_ensure_object(obj, "spec");
                bool none =
                    !kb_value_get(spec, "completions") && !kb_value_get(spec, "parallelism");
                if (none)
                        kb_value_set(spec, "completions", kb_value_new_int(1));
                set_default(spec, "parallelism", kb_value_new_int(1));
                set_default(spec, "backoffLimit", kb_value_new_int(6));
                set_default(spec, "completionMode", kb_value_new_string("NonIndexed"));
                set_default(spec, "suspend", kb_value_new_bool(false));
                if (!kb_value_get(spec, "selector")) {
                        struct kb_value *sel = kb_value_ensure_object(spec, "selector");
                        struct kb_value *ml = kb_value_ensure_object(sel, "matchLabels");
                        kb_value_set(ml, "batch.kubernetes.io/controller-uid",
                                     kb_value_new_string(uid));
                }
                struct kb_value *tmd =
                    kb_value_ensure_object(kb_value_ensure_object(spec, "template"), "metadata");
                struct kb_value *labels = kb_value_ensure_object(tmd, "labels");
                const char *name = kb__meta_str(obj, "name");
                kb_value_set(labels, "batch.kubernetes.io/controller-uid",
                             kb_value_new_string(uid));
                kb_value_set(labels, "batch.kubernetes.io/job-name", kb_value_new_string(name));
                kb_value_set(labels, "controller-uid", kb_value_new_string(uid));
                kb_value_set(labels, "job-name", kb_value_new_string(name));
                kb_value_del(obj, "status");
        } else if (!strcmp(rt->resource, "customresourcedefinitions")) {
                struct kb_value *st = kb_value_new(KB_VOBJECT);
                struct kb_value *conds = kb_value_new(KB_VARRAY);
                char ts[40];
                kb_format_time(kb__now(), ts, sizeof(ts));
                const char *types[][3] = {
                    {"NamesAccepted", "NoConflicts", "no conflicts found"},
                    {"Established", "InitialNamesAccepted", "the initial names have been accepted"},
                };
                for (size_t i = 0; i < 2; i++) {
                        struct kb_value *cd = kb_value_new(KB_VOBJECT);
                        kb_value_set(cd, "type", kb_value_new_string(types[i][0]));
                        kb_value_set(cd, "status", kb_value_new_string("True"));
                        kb_value_set(cd, "lastTransitionTime", kb_value_new_string(ts));
                        kb_value_set(cd, "reason", kb_value_new_string(types[i][1]));
                        kb_value_set(cd, "message", kb_value_new_string(types[i][2]));
                        kb_value_append(conds, cd);
                }
                kb_value_set(st, "conditions", conds);
                const struct kb_value *names = kb_value_dig(obj, "spec", "names");
                kb_value_set(st, "acceptedNames",
                             names ? kb_value_clone(names) : kb_value_new(KB_VOBJECT));
                struct kb_value *stored = kb_value_new(KB_VARRAY);
                const struct kb_value *vers = kb_value_dig(obj, "spec", "versions");
                for (size_t i = 0; kb_value_is(vers, KB_VARRAY) && i < vers->arr.n; i++)
                        if (kb_value_bool(kb_value_get(vers->arr.v[i], "storage"), false))
                                kb_value_append(
                                    stored, kb_value_clone(kb_value_get(vers->arr.v[i], "name")));
                kb_value_set(st, "storedVersions", stored);
                kb_value_set(obj, "status", st);
        }
}

/* What the controller manager puts in every new namespace: the "default"
 * ServiceAccount. */
void kb__namespace_created(struct kb_apiserver *srv, const char *ns)
{
        struct kb_rtype *sat = kb__type_find(srv, "", "v1", "serviceaccounts");
        if (kb__obj_find(sat, ns, "default"))
                return;
        struct kb_value *sa = kb_value_new(KB_VOBJECT);
        kb_value_set(sa, "kind", kb_value_new_string("ServiceAccount"));
        kb_value_set(sa, "apiVersion", kb_value_new_string("v1"));
        struct kb_value *md = kb_value_ensure_object(sa, "metadata");
        kb_value_set(md, "name", kb_value_new_string("default"));
        kb_value_set(md, "namespace", kb_value_new_string(ns));
        kb__prepare_create(srv, sat, sa);
        kb__store_put(srv, sat, sa);
}

double kb__pod_grace(const struct kb_apiserver *srv, const struct kb_value *pod,
                     const int64_t *asked)
{
        if (!srv->opts.kubelet || !kb_value_dig(pod, "spec", "nodeName"))
                return 0;
        const char *phase = kb_value_str(kb_value_dig(pod, "status", "phase"));
        if (kb_streq(phase, "Succeeded") || kb_streq(phase, "Failed"))
                return 0;
        int64_t g = 0;
        if (asked)
                g = *asked;
        else if (kb_value_int(kb_value_dig(pod, "spec", "terminationGracePeriodSeconds"), &g))
                g = 0;
        return g > 0 ? (double)g : 0;
}
