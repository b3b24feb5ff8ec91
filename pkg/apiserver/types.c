/*
 * The resource types: the built-in ones, and those CRDs register (one per
 * served version).  A type is never freed while the server runs: a deleted
 * CRD's types are marked gone and kept for the history and open watches.
 */
#include "apiserver/apiserver-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kb_rtype *kb__type_find(struct kb_apiserver *srv, const char *group, const char *version,
                               const char *resource)
{
        for (size_t i = 0; i < srv->ntypes; i++) {
                struct kb_rtype *rt = srv->types[i];
                if (!rt->gone && !strcmp(rt->group, group) && !strcmp(rt->version, version) &&
                    !strcmp(rt->resource, resource))
                        return rt;
        }
        return NULL;
}

struct kb_rtype *kb__type_by_kind(struct kb_apiserver *srv, const char *group, const char *kind)
{
        for (size_t i = 0; i < srv->ntypes; i++) {
                struct kb_rtype *rt = srv->types[i];
                if (!rt->gone && !strcmp(rt->group, group) && !strcmp(rt->kind, kind))
                        return rt;
        }
        return NULL;
}

struct kb_rtype *kb__type_add(struct kb_apiserver *srv)
{
        struct kb_rtype *rt = kb_xcalloc(1, sizeof(*rt));
        KB_PUSH(srv->types, srv->ntypes, srv->captypes, rt);
        return rt;
}

static char **strv_dup(const char *const *v, size_t *n)
{
        size_t k = 0;
        while (v && v[k])
                k++;
        char **out = k ? kb_xcalloc(k, sizeof(*out)) : NULL;
        for (size_t i = 0; i < k; i++)
                out[i] = kb_xstrdup(v[i]);
        *n = k;
        return out;
}

/* The built-in types, in discovery order (core first). */
struct builtin {
        const char *group, *version, *resource, *kind;
        bool namespaced, status;
        const char *shorts[3];
        bool all; /* in the "all" category */
        kb_validate_fn validate;
        kb_create_fn create;
};

static const struct builtin builtins[] = {
    {"", "v1", "namespaces", "Namespace", false, true, {"ns"}, false, kb__validate_namespace, NULL},
    {"", "v1", "nodes", "Node", false, true, {"no"}, false, kb__validate_node, NULL},
    {"", "v1", "pods", "Pod", true, true, {"po"}, true, kb__validate_pod, NULL},
    {"", "v1", "events", "Event", true, false, {"ev"}, false, NULL, NULL},
    {"", "v1", "configmaps", "ConfigMap", true, false, {"cm"}, false, kb__validate_configmap, NULL},
    {"", "v1", "secrets", "Secret", true, false, {NULL}, false, kb__validate_secret, NULL},
    {"", "v1", "serviceaccounts", "ServiceAccount", true, false, {"sa"}, false, NULL, NULL},
    {"", "v1", "bindings", "Binding", true, false, {NULL}, false, NULL, kb__create_bindings},
    {"apps", "v1", "deployments", "Deployment", true, true, {"deploy"}, true, NULL, NULL},
    {"batch", "v1", "jobs", "Job", true, true, {NULL}, true, kb__validate_job, NULL},
    {"policy",
     "v1",
     "poddisruptionbudgets",
     "PodDisruptionBudget",
     true,
     false,
     {"pdb"},
     false,
     kb__validate_pdb,
     NULL},
    {"coordination.k8s.io", "v1", "leases", "Lease", true, false, {NULL}, false, NULL, NULL},
    /* Stored and served only: nothing here routes pod traffic (deploy/
     * installs one). */
    {"networking.k8s.io",
     "v1",
     "networkpolicies",
     "NetworkPolicy",
     true,
     false,
     {"netpol"},
     false,
     NULL,
     NULL},
    {"events.k8s.io", "v1", "events", "Event", true, false, {"ev"}, false, NULL, NULL},
    {"scheduling.k8s.io",
     "v1",
     "priorityclasses",
     "PriorityClass",
     false,
     false,
     {"pc"},
     false,
     kb__validate_priorityclass,
     NULL},
    {"rbac.authorization.k8s.io",
     "v1",
     "roles",
     "Role",
     true,
     false,
     {NULL},
     false,
     kb__validate_role,
     NULL},
    {"rbac.authorization.k8s.io",
     "v1",
     "rolebindings",
     "RoleBinding",
     true,
     false,
     {NULL},
     false,
     kb__validate_rolebinding,
     NULL},
    {"rbac.authorization.k8s.io",
     "v1",
     "clusterroles",
     "ClusterRole",
     false,
     false,
     {NULL},
     false,
     kb__validate_role,
     NULL},
    {"rbac.authorization.k8s.io",
     "v1",
     "clusterrolebindings",
     "ClusterRoleBinding",
     false,
     false,
     {NULL},
     false,
     kb__validate_rolebinding,
     NULL},
    {"authorization.k8s.io",
     "v1",
     "selfsubjectaccessreviews",
     "SelfSubjectAccessReview",
     false,
     false,
     {NULL},
     false,
     NULL,
     kb__create_access_review},
    {"authorization.k8s.io",
     "v1",
     "selfsubjectrulesreviews",
     "SelfSubjectRulesReview",
     true,
     false,
     {NULL},
     false,
     NULL,
     kb__create_rules_review},
    {"authentication.k8s.io",
     "v1",
     "selfsubjectreviews",
     "SelfSubjectReview",
     false,
     false,
     {NULL},
     false,
     NULL,
     kb__create_self_review},
    {"apiextensions.k8s.io",
     "v1",
     "customresourcedefinitions",
     "CustomResourceDefinition",
     false,
     true,
     {"crd", "crds"},
     false,
     kb__validate_crd,
     NULL},
};

void kb__builtin_types(struct kb_apiserver *srv)
{
        static const char *const all[] = {"all", NULL};
        for (size_t i = 0; i < KB_ARRAY_SIZE(builtins); i++) {
                const struct builtin *b = &builtins[i];
                struct kb_rtype *rt = kb__type_add(srv);
                rt->group = kb_xstrdup(b->group);
                rt->version = kb_xstrdup(b->version);
                rt->resource = kb_xstrdup(b->resource);
                rt->kind = kb_xstrdup(b->kind);
                rt->singular = kb_xstrdup(b->kind);
                for (char *p = rt->singular; *p; p++)
                        if (*p >= 'A' && *p <= 'Z')
                                *p = (char)(*p - 'A' + 'a');
                rt->list_kind = kb_xasprintf("%sList", b->kind);
                rt->namespaced = b->namespaced;
                rt->has_status = b->status;
                rt->short_names = strv_dup(b->shorts, &rt->nshort);
                rt->categories = strv_dup(b->all ? all : NULL, &rt->ncat);
                rt->validate = b->validate;
                rt->create = b->create;
                rt->def = kb__schema_for(srv->defs, b->group, b->version, b->kind);
                kb__builtin_printers(rt);
        }
        /* events.k8s.io/v1 Events are core Events seen another way (events.c). */
        kb__type_find(srv, "events.k8s.io", "v1", "events")->view_of =
            kb__type_find(srv, "", "v1", "events");
}

void kb__type_free(struct kb_rtype *rt)
{
        kb__index_free(rt);
        kb__reqcount_free(rt);
        struct kb_obj *o, *tmp;
        HASH_ITER(hh, rt->objs, o, tmp)
        {
                HASH_DEL(rt->objs, o);
                kb__doc_unref(o->doc);
                free(o->key);
                free(o);
        }
        for (size_t i = 0; i < rt->nshort; i++)
                free(rt->short_names[i]);
        for (size_t i = 0; i < rt->ncat; i++)
                free(rt->categories[i]);
        free(rt->short_names);
        free(rt->categories);
        free(rt->group);
        free(rt->version);
        free(rt->resource);
        free(rt->kind);
        free(rt->singular);
        free(rt->list_kind);
        kb_value_free(rt->schema);
        kb_value_free(rt->columns);
        kb_value_free(rt->selectable);
        free(rt->crd_name);
        free(rt);
}

static char **str_array(const struct kb_value *a, size_t *n)
{
        *n = 0;
        if (!kb_value_is(a, KB_VARRAY) || a->arr.n == 0)
                return NULL;
        char **out = kb_xcalloc(a->arr.n, sizeof(*out));
        for (size_t i = 0; i < a->arr.n; i++)
                if (kb_value_str(a->arr.v[i]))
                        out[(*n)++] = kb_xstrdup(kb_value_str(a->arr.v[i]));
        return out;
}

/*
 * Registers (or re-registers, on update) every served version of a CRD.
 * Existing custom resources are kept across an update: the objects move to
 * the new type record.
 */
int kb__register_crd(struct kb_apiserver *srv, const struct kb_value *crd)
{
        const char *name = kb__meta_str(crd, "name");
        const struct kb_value *spec = kb_value_get(crd, "spec");
        const struct kb_value *names = kb_value_get(spec, "names");
        const char *group = kb_value_str(kb_value_get(spec, "group"));
        const struct kb_value *versions = kb_value_get(spec, "versions");
        if (!name || !group || !kb_value_is(versions, KB_VARRAY))
                return KB_EBADINPUT;
        bool namespaced = !kb_streq(kb_value_str(kb_value_get(spec, "scope")), "Cluster");
        for (size_t i = 0; i < versions->arr.n; i++) {
                const struct kb_value *ver = versions->arr.v[i];
                const char *vname = kb_value_str(kb_value_get(ver, "name"));
                if (!vname || !kb_value_bool(kb_value_get(ver, "served"), true))
                        continue;
                struct kb_rtype *rt = NULL;
                for (size_t j = 0; j < srv->ntypes; j++) {
                        struct kb_rtype *t = srv->types[j];
                        if (!t->gone && t->custom && kb_streq(t->crd_name, name) &&
                            !strcmp(t->version, vname))
                                rt = t;
                }
                if (!rt) {
                        rt = kb__type_add(srv);
                        rt->custom = true;
                        rt->crd_name = kb_xstrdup(name);
                        rt->group = kb_xstrdup(group);
                        rt->version = kb_xstrdup(vname);
                } else {
                        free(rt->resource);
                        free(rt->kind);
                        free(rt->singular);
                        free(rt->list_kind);
                        for (size_t k = 0; k < rt->nshort; k++)
                                free(rt->short_names[k]);
                        for (size_t k = 0; k < rt->ncat; k++)
                                free(rt->categories[k]);
                        free(rt->short_names);
                        free(rt->categories);
                        kb_value_free(rt->schema);
                        kb_value_free(rt->columns);
                        kb_value_free(rt->selectable);
                        rt->selectable = NULL;
                }
                const char *plural = kb_value_str(kb_value_get(names, "plural"));
                const char *kind = kb_value_str(kb_value_get(names, "kind"));
                const char *singular = kb_value_str(kb_value_get(names, "singular"));
                const char *list_kind = kb_value_str(kb_value_get(names, "listKind"));
                rt->resource = kb_xstrdup(plural ? plural : "");
                rt->kind = kb_xstrdup(kind ? kind : "");
                if (singular)
                        rt->singular = kb_xstrdup(singular);
                else {
                        rt->singular = kb_xstrdup(rt->kind);
                        for (char *p = rt->singular; *p; p++)
                                if (*p >= 'A' && *p <= 'Z')
                                        *p = (char)(*p - 'A' + 'a');
                }
                rt->list_kind =
                    list_kind ? kb_xstrdup(list_kind) : kb_xasprintf("%sList", rt->kind);
                rt->short_names = str_array(kb_value_get(names, "shortNames"), &rt->nshort);
                rt->categories = str_array(kb_value_get(names, "categories"), &rt->ncat);
                rt->namespaced = namespaced;
                rt->has_status = kb_value_dig(ver, "subresources", "status") != NULL;
                const struct kb_value *schema = kb_value_dig(ver, "schema", "openAPIV3Schema");
                rt->schema = schema ? kb_value_clone(schema) : NULL;
                const struct kb_value *cols = kb_value_get(ver, "additionalPrinterColumns");
                rt->columns = kb_value_is(cols, KB_VARRAY) ? kb_value_clone(cols) : NULL;
                /* selectableFields: [{jsonPath: .spec.x}] -> ["spec.x"]. */
                const struct kb_value *sel = kb_value_get(ver, "selectableFields");
                rt->selectable = kb_value_new(KB_VARRAY);
                for (size_t k = 0; kb_value_is(sel, KB_VARRAY) && k < sel->arr.n; k++) {
                        const char *jp = kb_value_str(kb_value_get(sel->arr.v[k], "jsonPath"));
                        if (jp && jp[0] == '.')
                                kb_value_append(rt->selectable, kb_value_new_string(jp + 1));
                }
                /* What Volcano's admission webhook refuses of its Jobs. */
                rt->validate = kb__is_vcjobs(rt) ? kb__validate_vcjob : NULL;
        }
        return 0;
}

void kb__unregister_crd(struct kb_apiserver *srv, const char *name)
{
        for (size_t i = 0; i < srv->ntypes; i++) {
                struct kb_rtype *rt = srv->types[i];
                if (rt->gone || !rt->custom || !kb_streq(rt->crd_name, name))
                        continue;
                struct kb_obj *o, *tmp;
                HASH_ITER(hh, rt->objs, o, tmp)
                kb__store_remove(srv, rt, o);
                rt->gone = true;
        }
        pthread_cond_broadcast(&srv->cond);
}
