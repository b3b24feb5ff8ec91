/*
 * The resource types: the built-in ones, and those CRDs register (one per
 * served version).  A type is never freed while the server runs: a deleted
 * CRD's types are marked gone and kept for the history and open watches.
 */
#include "apiserver/apiserver-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
