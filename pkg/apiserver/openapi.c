/*
 * OpenAPI v3: one document per group-version, as /openapi/v3 lists them.
 * Each has a path per kind whose PATCH takes fieldValidation (kubectl 1.29+
 * reads it before create and apply), and the component schemas `kubectl
 * explain` walks:
 *   - a built-in kind's schema from schemas-core.c / schemas-more.c, with
 *     every schema it refers to ($ref), so ObjectMeta and PodSpec come along;
 *   - a custom resource's own openAPIV3Schema, named as upstream names it
 *     (the group reversed: io.volcano.scheduling.v1beta1.PodGroup), with
 *     apiVersion, kind and metadata (a reference to ObjectMeta) added.
 * Every schema that is a kind carries x-kubernetes-group-version-kind,
 * which is how kubectl finds it.
 *   kubectl explain podgroup.spec.minMember
 *   -> /openapi/v3/apis/scheduling.volcano.sh/v1beta1
 *   -> components.schemas["io.volcano.scheduling.v1beta1.PodGroup"]
 *      .properties.spec.properties.minMember
 */
#include "apiserver/apiserver-http.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_PREFIX  "#/components/schemas/"
#define OBJECT_META "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

static struct kb_value *patch_op(const struct kb_rtype *rt)
{
        struct kb_value *op = kb_value_new(KB_VOBJECT);
        struct kb_value *params = kb_value_new(KB_VARRAY);
        struct kb_value *p = kb_value_new(KB_VOBJECT);
        kb_value_set(p, "name", kb_value_new_string("fieldValidation"));
        kb_value_set(p, "in", kb_value_new_string("query"));
        struct kb_value *sch = kb_value_new(KB_VOBJECT);
        kb_value_set(sch, "type", kb_value_new_string("string"));
        kb_value_set(p, "schema", sch);
        kb_value_append(params, p);
        kb_value_set(op, "parameters", params);
        kb_value_set(op, "x-kubernetes-group-version-kind",
                     kb__gvk(rt->group, rt->version, rt->kind));
        struct kb_value *path = kb_value_new(KB_VOBJECT);
        kb_value_set(path, "patch", op);
        return path;
}

/* Adds the component name from defs, then every component it refers to. */
static void add_component(struct kb_value *out, const struct kb_value *defs, const char *name);

static void add_refs(struct kb_value *out, const struct kb_value *defs, const struct kb_value *v)
{
        if (kb_value_is(v, KB_VARRAY)) {
                for (size_t i = 0; i < v->arr.n; i++)
                        add_refs(out, defs, v->arr.v[i]);
                return;
        }
        if (!kb_value_is(v, KB_VOBJECT))
                return;
        for (size_t i = 0; i < v->obj.n; i++) {
                const char *ref = kb_value_str(v->obj.m[i].val);
                if (!strcmp(v->obj.m[i].key, "$ref") && ref && kb_has_prefix(ref, REF_PREFIX))
                        add_component(out, defs, ref + strlen(REF_PREFIX));
                else
                        add_refs(out, defs, v->obj.m[i].val);
        }
}

static void add_component(struct kb_value *out, const struct kb_value *defs, const char *name)
{
        const struct kb_value *d = kb_value_get(defs, name);
        if (!d || kb_value_get(out, name))
                return;
        kb_value_set(out, name, kb_value_clone(d));
        add_refs(out, defs, d);
}

/* "scheduling.volcano.sh" -> "sh.volcano.scheduling". */
static char *reversed(const char *group)
{
        struct kb_buf b;
        kb_buf_init(&b);
        const char *end = group + strlen(group);
        while (end > group) {
                const char *dot = end;
                while (dot > group && dot[-1] != '.')
                        dot--;
                kb_buf_printf(&b, "%s%.*s", b.len ? "." : "", (int)(end - dot), dot);
                end = dot > group ? dot - 1 : group;
        }
        return kb_buf_detach(&b);
}

static struct kb_value *str_prop(const char *desc)
{
        struct kb_value *p = kb_value_new(KB_VOBJECT);
        kb_value_set(p, "type", kb_value_new_string("string"));
        kb_value_set(p, "description", kb_value_new_string(desc));
        return p;
}

static void add_custom(struct kb_apiserver *srv, const struct kb_rtype *rt, struct kb_value *out)
{
        struct kb_value *s = rt->schema ? kb_value_clone(rt->schema) : kb_value_new(KB_VOBJECT);
        if (!kb_value_get(s, "type"))
                kb_value_set(s, "type", kb_value_new_string("object"));
        struct kb_value *props = kb_value_ensure_object(s, "properties");
        kb_value_set(props, "apiVersion", str_prop("The versioned schema of this object."));
        kb_value_set(props, "kind", str_prop("The kind of this object."));
        struct kb_value *meta = kb_value_new(KB_VOBJECT);
        struct kb_value *all = kb_value_new(KB_VARRAY);
        struct kb_value *ref = kb_value_new(KB_VOBJECT);
        kb_value_set(ref, "$ref", kb_value_new_string(REF_PREFIX OBJECT_META));
        kb_value_append(all, ref);
        kb_value_set(meta, "allOf", all);
        kb_value_set(meta, "description", kb_value_new_string("Standard object metadata."));
        kb_value_set(props, "metadata", meta);
        struct kb_value *g = kb_value_new(KB_VARRAY);
        kb_value_append(g, kb__gvk(rt->group, rt->version, rt->kind));
        kb_value_set(s, "x-kubernetes-group-version-kind", g);
        char *rg = reversed(rt->group);
        char *name = kb_xasprintf("%s.%s.%s", rg, rt->version, rt->kind);
        kb_value_set(out, name, s);
        free(name);
        free(rg);
        add_component(out, srv->defs, OBJECT_META);
}

int kb__openapi_gv(struct kb_apiserver *srv, const char *group, const char *version,
                   struct kb_value *out)
{
        struct kb_value *paths = kb_value_new(KB_VOBJECT);
        struct kb_value *schemas = kb_value_new(KB_VOBJECT);
        for (size_t i = 0; i < srv->ntypes; i++) {
                const struct kb_rtype *rt = srv->types[i];
                if (rt->gone || strcmp(rt->group, group) || strcmp(rt->version, version))
                        continue;
                char *prefix =
                    group[0] ? kb_xasprintf("/apis/%s/%s", group, version) : kb_xstrdup("/api/v1");
                char *p =
                    kb_xasprintf("%s%s/%s/{name}", prefix,
                                 rt->namespaced ? "/namespaces/{namespace}" : "", rt->resource);
                kb_value_set(paths, p, patch_op(rt));
                free(p);
                free(prefix);
                if (rt->custom) {
                        add_custom(srv, rt, schemas);
                } else if (rt->def) {
                        for (size_t k = 0; k < srv->defs->obj.n; k++)
                                if (srv->defs->obj.m[k].val == rt->def)
                                        add_component(schemas, srv->defs, srv->defs->obj.m[k].key);
                }
        }
        if (paths->obj.n == 0) {
                kb_value_free(paths);
                kb_value_free(schemas);
                return KB_ENOTFOUND;
        }
        struct kb_value *info = kb_value_new(KB_VOBJECT);
        kb_value_set(info, "title", kb_value_new_string("kbatch-apiserver"));
        kb_value_set(info, "version", kb_value_new_string("v1.32.0"));
        kb_value_set(out, "openapi", kb_value_new_string("3.0.0"));
        kb_value_set(out, "info", info);
        kb_value_set(out, "paths", paths);
        struct kb_value *comp = kb_value_new(KB_VOBJECT);
        kb_value_set(comp, "schemas", schemas);
        kb_value_set(out, "components", comp);
        return 0;
}

void kb__openapi_index(struct kb_apiserver *srv, struct kb_value *out)
{
        struct kb_value *paths = kb_value_new(KB_VOBJECT);
        const char *gs[64];
        size_t ng = kb__api_groups(srv, gs, KB_ARRAY_SIZE(gs));
        for (size_t g = 0; g < ng; g++) {
                const char *vs[16];
                size_t nv = kb__api_versions(srv, gs[g], vs, KB_ARRAY_SIZE(vs));
                for (size_t v = 0; v < nv; v++) {
                        struct kb_value *doc = kb_value_new(KB_VOBJECT);
                        kb__openapi_gv(srv, gs[g], vs[v], doc);
                        char *text = kb_json_emit(doc, false);
                        uint64_t h = kb_hash(text, strlen(text), KB_HASH_SEED);
                        free(text);
                        kb_value_free(doc);
                        char *key = gs[g][0] ? kb_xasprintf("apis/%s/%s", gs[g], vs[v])
                                             : kb_xasprintf("api/%s", vs[v]);
                        char *url = kb_xasprintf("/openapi/v3/%s?hash=%016" PRIX64, key, h);
                        struct kb_value *e = kb_value_new(KB_VOBJECT);
                        kb_value_set(e, "serverRelativeURL", kb_value_new_string(url));
                        kb_value_set(paths, key, e);
                        free(key);
                        free(url);
                }
        }
        kb_value_set(out, "paths", paths);
}
