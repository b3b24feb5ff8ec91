/*
 * The registry of built-in kinds.  Adding one is one descriptor (struct
 * kb_kind, in a kinds-*.c file) named kb__kind_<name>, and one line in the
 * list below, which gives the order discovery shows them in (core first).
 * Custom resources are the CRDs' business (store.c).
 */
#include "apiserver/apiserver-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KB_KIND_LIST(XX)                                                                           \
        XX(namespaces)                                                                             \
        XX(nodes)                                                                                  \
        XX(pods)                                                                                   \
        XX(events)                                                                                 \
        XX(configmaps)                                                                             \
        XX(secrets)                                                                                \
        XX(serviceaccounts)                                                                        \
        XX(bindings)                                                                               \
        XX(deployments)                                                                            \
        XX(jobs)                                                                                   \
        XX(poddisruptionbudgets)                                                                   \
        XX(leases)                                                                                 \
        XX(networkpolicies)                                                                        \
        XX(events_v1)                                                                              \
        XX(priorityclasses)                                                                        \
        XX(roles)                                                                                  \
        XX(rolebindings)                                                                           \
        XX(clusterroles)                                                                           \
        XX(clusterrolebindings)                                                                    \
        XX(selfsubjectaccessreviews)                                                               \
        XX(selfsubjectrulesreviews)                                                                \
        XX(selfsubjectreviews)                                                                     \
        XX(customresourcedefinitions)

#define XX(name) extern const struct kb_apikind kb__kind_##name;
KB_KIND_LIST(XX)
#undef XX

static const struct kb_apikind *const kinds[] = {
#define XX(name) &kb__kind_##name,
    KB_KIND_LIST(XX)
#undef XX
};

const struct kb_apikind *const *kb__kinds(size_t *n)
{
        *n = KB_ARRAY_SIZE(kinds);
        return kinds;
}

/* The printer of a kind that has none of its own. */
static const struct kb_col age_only_cols[] = {KB_COL_NAME, KB_COL_AGE};

static void age_only_row(struct kb_apiserver *srv, const struct kb_value *obj,
                         struct kb_value *cells)
{
        kb__cell_name(cells, obj);
        kb__cell_age(cells, obj);
        (void)srv;
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

void kb__builtin_types(struct kb_apiserver *srv)
{
        static const char *const all[] = {"all", NULL};
        for (size_t i = 0; i < KB_ARRAY_SIZE(kinds); i++) {
                const struct kb_apikind *b = kinds[i];
                struct kb_rtype *rt = kb__type_add(srv);
                rt->k = b;
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
                rt->has_status = b->has_status;
                rt->short_names = strv_dup(b->shorts, &rt->nshort);
                rt->categories = strv_dup(b->all ? all : NULL, &rt->ncat);
                rt->validate = b->validate;
                rt->create = b->create;
                rt->def = kb__schema_for(srv->defs, b->group, b->version, b->kind);
                rt->cols = b->row ? b->cols : age_only_cols;
                rt->ncols = b->row ? b->ncols : KB_ARRAY_SIZE(age_only_cols);
                rt->row = b->row ? b->row : age_only_row;
        }
        /* events.k8s.io/v1 Events are core Events seen another way (events.c). */
        kb__type_find(srv, "events.k8s.io", "v1", "events")->view_of =
            kb__type_find(srv, "", "v1", "events");
}
