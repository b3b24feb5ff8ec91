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

void kb__set_default(struct kb_value *obj, const char *key, struct kb_value *v)
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
        if (rt->k && rt->k->defaults)
                rt->k->defaults(srv, obj);
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
