/*
 * Discovery (aggregated apidiscovery.k8s.io v2/v2beta1, and the legacy
 * /api/v1, /apis/{g}/{v} documents) and the minimal OpenAPI v3 that kubectl
 * 1.29+ needs before create and apply: one path per kind whose PATCH takes a
 * fieldValidation parameter and carries the GVK extension.  All built from
 * the type table, so a CRD shows up as soon as its POST returns.
 */
#include "apiserver/apiserver-http.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const verbs[] = {"create", "delete", "deletecollection", "get",
                                    "list",   "patch",  "update",           "watch"};

static struct kb_value *strs(char *const *v, size_t n)
{
        struct kb_value *a = kb_value_new(KB_VARRAY);
        for (size_t i = 0; i < n; i++)
                kb_value_append(a, kb_value_new_string(v[i]));
        return a;
}

static struct kb_value *verb_list(void)
{
        return strs((char *const *)verbs, KB_ARRAY_SIZE(verbs));
}

/* What a type allows: everything, or only create (bindings, reviews). */
static struct kb_value *type_verbs(const struct kb_rtype *rt)
{
        if (!rt->create)
                return verb_list();
        struct kb_value *v = kb_value_new(KB_VARRAY);
        kb_value_append(v, kb_value_new_string("create"));
        return v;
}

struct kb_value *kb__gvk(const char *group, const char *version, const char *kind)
{
        struct kb_value *k = kb_value_new(KB_VOBJECT);
        kb_value_set(k, "group", kb_value_new_string(group));
        kb_value_set(k, "version", kb_value_new_string(version));
        kb_value_set(k, "kind", kb_value_new_string(kind));
        return k;
}

/* Groups in the order they were first registered (core first). */
size_t kb__api_groups(struct kb_apiserver *srv, const char **out, size_t max)
{
        size_t n = 0;
        for (size_t i = 0; i < srv->ntypes; i++) {
                const struct kb_rtype *rt = srv->types[i];
                if (rt->gone)
                        continue;
                bool seen = false;
                for (size_t j = 0; j < n; j++)
                        seen |= !strcmp(out[j], rt->group);
                if (!seen && n < max)
                        out[n++] = rt->group;
        }
        return n;
}

size_t kb__api_versions(struct kb_apiserver *srv, const char *group, const char **out, size_t max)
{
        size_t n = 0;
        for (size_t i = 0; i < srv->ntypes; i++) {
                const struct kb_rtype *rt = srv->types[i];
                if (rt->gone || strcmp(rt->group, group))
                        continue;
                bool seen = false;
                for (size_t j = 0; j < n; j++)
                        seen |= !strcmp(out[j], rt->version);
                if (!seen && n < max)
                        out[n++] = rt->version;
        }
        return n;
}

static struct kb_value *subresource(const struct kb_rtype *rt, const char *name, const char *kind,
                                    bool create_only)
{
        struct kb_value *s = kb_value_new(KB_VOBJECT);
        kb_value_set(s, "subresource", kb_value_new_string(name));
        kb_value_set(s, "responseKind", kb__gvk(rt->group, rt->version, kind));
        struct kb_value *v = kb_value_new(KB_VARRAY);
        if (create_only)
                kb_value_append(v, kb_value_new_string("create"));
        else {
                kb_value_append(v, kb_value_new_string("get"));
                kb_value_append(v, kb_value_new_string("patch"));
                kb_value_append(v, kb_value_new_string("update"));
        }
        kb_value_set(s, "verbs", v);
        return s;
}

void kb__discovery_aggregated(struct kb_apiserver *srv, bool core, const char *ver,
                              struct kb_value *out)
{
        char *av = kb_xasprintf("apidiscovery.k8s.io/%s", ver);
        kb_value_set(out, "kind", kb_value_new_string("APIGroupDiscoveryList"));
        kb_value_set(out, "apiVersion", kb_value_new_string(av));
        free(av);
        kb_value_set(out, "metadata", kb_value_new(KB_VOBJECT));
        struct kb_value *items = kb_value_new(KB_VARRAY);
        const char *gs[64];
        size_t ng = kb__api_groups(srv, gs, KB_ARRAY_SIZE(gs));
        for (size_t g = 0; g < ng; g++) {
                if (core != (gs[g][0] == 0))
                        continue;
                struct kb_value *item = kb_value_new(KB_VOBJECT);
                struct kb_value *md = kb_value_ensure_object(item, "metadata");
                if (!core)
                        kb_value_set(md, "name", kb_value_new_string(gs[g]));
                kb_value_set(md, "creationTimestamp", kb_value_new(KB_VNULL));
                struct kb_value *vers = kb_value_new(KB_VARRAY);
                const char *vs[16];
                size_t nv = kb__api_versions(srv, gs[g], vs, KB_ARRAY_SIZE(vs));
                for (size_t v = 0; v < nv; v++) {
                        struct kb_value *ve = kb_value_new(KB_VOBJECT);
                        kb_value_set(ve, "version", kb_value_new_string(vs[v]));
                        struct kb_value *res = kb_value_new(KB_VARRAY);
                        for (size_t i = 0; i < srv->ntypes; i++) {
                                const struct kb_rtype *rt = srv->types[i];
                                if (rt->gone || strcmp(rt->group, gs[g]) ||
                                    strcmp(rt->version, vs[v]))
                                        continue;
                                struct kb_value *r = kb_value_new(KB_VOBJECT);
                                kb_value_set(r, "resource", kb_value_new_string(rt->resource));
                                kb_value_set(r, "responseKind",
                                             kb__gvk(rt->group, rt->version, rt->kind));
                                kb_value_set(
                                    r, "scope",
                                    kb_value_new_string(rt->namespaced ? "Namespaced" : "Cluster"));
                                kb_value_set(r, "singularResource",
                                             kb_value_new_string(rt->singular));
                                kb_value_set(r, "verbs", type_verbs(rt));
                                if (rt->nshort)
                                        kb_value_set(r, "shortNames",
                                                     strs(rt->short_names, rt->nshort));
                                if (rt->ncat)
                                        kb_value_set(r, "categories",
                                                     strs(rt->categories, rt->ncat));
                                struct kb_value *subs = kb_value_new(KB_VARRAY);
                                if (rt->has_status)
                                        kb_value_append(subs,
                                                        subresource(rt, "status", rt->kind, false));
                                if (rt->k && rt->k->pod_subresources) {
                                        kb_value_append(
                                            subs, subresource(rt, "binding", "Binding", true));
                                        /* An Eviction is policy/v1's, as a real
                                         * server says (kubectl drain looks). */
                                        struct kb_value *ev =
                                            subresource(rt, "eviction", "Eviction", true);
                                        kb_value_set(ev, "responseKind",
                                                     kb__gvk("policy", "v1", "Eviction"));
                                        kb_value_append(subs, ev);
                                }
                                if (subs->arr.n)
                                        kb_value_set(r, "subresources", subs);
                                else
                                        kb_value_free(subs);
                                kb_value_append(res, r);
                        }
                        kb_value_set(ve, "resources", res);
                        kb_value_set(ve, "freshness", kb_value_new_string("Current"));
                        kb_value_append(vers, ve);
                }
                kb_value_set(item, "versions", vers);
                kb_value_append(items, item);
        }
        kb_value_set(out, "items", items);
}

void kb__discovery_versions(struct kb_apiserver *srv, struct kb_value *out)
{
        kb_value_set(out, "kind", kb_value_new_string("APIVersions"));
        struct kb_value *v = kb_value_new(KB_VARRAY);
        kb_value_append(v, kb_value_new_string("v1"));
        kb_value_set(out, "versions", v);
        struct kb_value *a = kb_value_new(KB_VARRAY);
        struct kb_value *e = kb_value_new(KB_VOBJECT);
        kb_value_set(e, "clientCIDR", kb_value_new_string("0.0.0.0/0"));
        char *addr = kb_xasprintf("127.0.0.1:%d", srv->port);
        kb_value_set(e, "serverAddress", kb_value_new_string(addr));
        free(addr);
        kb_value_append(a, e);
        kb_value_set(out, "serverAddressByClientCIDRs", a);
}

static struct kb_value *group_entry(struct kb_apiserver *srv, const char *group)
{
        struct kb_value *g = kb_value_new(KB_VOBJECT);
        kb_value_set(g, "name", kb_value_new_string(group));
        struct kb_value *vers = kb_value_new(KB_VARRAY);
        const char *vs[16];
        size_t nv = kb__api_versions(srv, group, vs, KB_ARRAY_SIZE(vs));
        for (size_t v = 0; v < nv; v++) {
                struct kb_value *e = kb_value_new(KB_VOBJECT);
                char *gv = kb_xasprintf("%s/%s", group, vs[v]);
                kb_value_set(e, "groupVersion", kb_value_new_string(gv));
                free(gv);
                kb_value_set(e, "version", kb_value_new_string(vs[v]));
                kb_value_append(vers, e);
        }
        if (nv)
                kb_value_set(g, "preferredVersion", kb_value_clone(vers->arr.v[0]));
        kb_value_set(g, "versions", vers);
        return g;
}

void kb__discovery_groups(struct kb_apiserver *srv, struct kb_value *out)
{
        kb_value_set(out, "kind", kb_value_new_string("APIGroupList"));
        kb_value_set(out, "apiVersion", kb_value_new_string("v1"));
        struct kb_value *list = kb_value_new(KB_VARRAY);
        const char *gs[64];
        size_t ng = kb__api_groups(srv, gs, KB_ARRAY_SIZE(gs));
        for (size_t g = 0; g < ng; g++)
                if (gs[g][0])
                        kb_value_append(list, group_entry(srv, gs[g]));
        kb_value_set(out, "groups", list);
}

int kb__discovery_group(struct kb_apiserver *srv, const char *group, struct kb_value *out)
{
        const char *vs[16];
        if (!kb__api_versions(srv, group, vs, KB_ARRAY_SIZE(vs)))
                return KB_ENOTFOUND;
        struct kb_value *g = group_entry(srv, group);
        kb_value_set(out, "kind", kb_value_new_string("APIGroup"));
        kb_value_set(out, "apiVersion", kb_value_new_string("v1"));
        for (size_t i = 0; i < g->obj.n; i++)
                kb_value_set(out, g->obj.m[i].key, kb_value_clone(g->obj.m[i].val));
        kb_value_free(g);
        return 0;
}

static struct kb_value *legacy_entry(const char *name, const char *kind, bool namespaced, bool full)
{
        struct kb_value *r = kb_value_new(KB_VOBJECT);
        kb_value_set(r, "name", kb_value_new_string(name));
        kb_value_set(r, "singularName", kb_value_new_string(""));
        kb_value_set(r, "namespaced", kb_value_new_bool(namespaced));
        kb_value_set(r, "kind", kb_value_new_string(kind));
        struct kb_value *v = kb_value_new(KB_VARRAY);
        if (full) {
                kb_value_free(v);
                v = verb_list();
        } else if (!strcmp(kind, "Binding") || !strcmp(kind, "Eviction")) {
                kb_value_append(v, kb_value_new_string("create"));
        } else {
                kb_value_append(v, kb_value_new_string("get"));
                kb_value_append(v, kb_value_new_string("patch"));
                kb_value_append(v, kb_value_new_string("update"));
        }
        kb_value_set(r, "verbs", v);
        return r;
}

int kb__discovery_resources(struct kb_apiserver *srv, const char *group, const char *version,
                            struct kb_value *out)
{
        struct kb_value *res = kb_value_new(KB_VARRAY);
        for (size_t i = 0; i < srv->ntypes; i++) {
                const struct kb_rtype *rt = srv->types[i];
                if (rt->gone || strcmp(rt->group, group) || strcmp(rt->version, version))
                        continue;
                struct kb_value *r = legacy_entry(rt->resource, rt->kind, rt->namespaced, true);
                kb_value_set(r, "singularName", kb_value_new_string(rt->singular));
                kb_value_set(r, "verbs", type_verbs(rt));
                if (rt->nshort)
                        kb_value_set(r, "shortNames", strs(rt->short_names, rt->nshort));
                if (rt->ncat)
                        kb_value_set(r, "categories", strs(rt->categories, rt->ncat));
                kb_value_append(res, r);
                if (rt->has_status) {
                        char *n = kb_xasprintf("%s/status", rt->resource);
                        kb_value_append(res, legacy_entry(n, rt->kind, rt->namespaced, false));
                        free(n);
                }
                if (rt->k && rt->k->pod_subresources) {
                        kb_value_append(res, legacy_entry("pods/binding", "Binding", true, false));
                        /* group and version say an Eviction is policy/v1's:
                         * kubectl drain evicts only when it finds them
                         * (else it deletes, ignoring disruption budgets). */
                        struct kb_value *ev =
                            legacy_entry("pods/eviction", "Eviction", true, false);
                        kb_value_set(ev, "group", kb_value_new_string("policy"));
                        kb_value_set(ev, "version", kb_value_new_string("v1"));
                        kb_value_append(res, ev);
                        struct kb_value *log = legacy_entry("pods/log", "Pod", true, false);
                        struct kb_value *get = kb_value_new(KB_VARRAY);
                        kb_value_append(get, kb_value_new_string("get"));
                        kb_value_set(log, "verbs", get);
                        kb_value_append(res, log);
                }
        }
        if (res->arr.n == 0) {
                kb_value_free(res);
                return KB_ENOTFOUND;
        }
        kb_value_set(out, "kind", kb_value_new_string("APIResourceList"));
        kb_value_set(out, "apiVersion", kb_value_new_string("v1"));
        char *gv = group[0] ? kb_xasprintf("%s/%s", group, version) : kb_xstrdup(version);
        kb_value_set(out, "groupVersion", kb_value_new_string(gv));
        free(gv);
        kb_value_set(out, "resources", res);
        return 0;
}
