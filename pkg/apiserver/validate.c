/*
 * Validation: what the real API server rejects with 422 Invalid, for the
 * fields kbatch and its users care about.  Each problem becomes one cause
 * naming the field, so kubectl prints one "* field: message" line each.
 * Custom resources are checked against their CRD's openAPIV3Schema (type,
 * required, enum, minimum/maximum, min/maxLength, items, properties).
 */
#include "apiserver/apiserver-int.h"

#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

void kb__cause_add(struct kb_causes *c, const char *reason, const char *field, const char *fmt, ...)
{
        if (c->n == c->cap)
                kb_grow((void **)&c->v, &c->cap, c->n + 1, sizeof(*c->v));
        struct kb_buf b;
        kb_buf_init(&b);
        va_list ap;
        va_start(ap, fmt);
        kb_buf_vprintf(&b, fmt, ap);
        va_end(ap);
        c->v[c->n].reason = kb_xstrdup(reason);
        c->v[c->n].field = kb_xstrdup(field);
        c->v[c->n].message = kb_buf_detach(&b);
        c->n++;
}

void kb__causes_release(struct kb_causes *c)
{
        for (size_t i = 0; i < c->n; i++) {
                free(c->v[i].reason);
                free(c->v[i].field);
                free(c->v[i].message);
        }
        free(c->v);
        memset(c, 0, sizeof(*c));
}

static void invalid_str(struct kb_causes *c, const char *field, const char *val, const char *why)
{
        kb__cause_add(c, "FieldValueInvalid", field, "Invalid value: \"%s\": %s", val, why);
}

static void required(struct kb_causes *c, const char *field)
{
        kb__cause_add(c, "FieldValueRequired", field, "Required value");
}

static void check_resources(const struct kb_value *list, const char *field, struct kb_causes *c)
{
        if (!list)
                return;
        if (!kb_value_is(list, KB_VOBJECT)) {
                kb__cause_add(c, "FieldValueInvalid", field, "Invalid value: must be a map");
                return;
        }
        for (size_t i = 0; i < list->obj.n; i++) {
                const char *text = kb_value_text(list->obj.m[i].val);
                char *f = kb_xasprintf("%s[%s]", field, list->obj.m[i].key);
                int64_t q;
                if (!text)
                        kb__cause_add(c, "FieldValueInvalid", f,
                                      "Invalid value: must be a quantity");
                else if (kb_quantity_parse(text, true, &q) && kb_quantity_parse(text, false, &q))
                        invalid_str(c, f, text,
                                    "quantities must match the regular expression "
                                    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
                else if (q < 0)
                        invalid_str(c, f, text, "must be greater than or equal to 0");
                free(f);
        }
}

static void check_name(const struct kb_value *obj, bool label, struct kb_causes *c)
{
        const char *name = kb__meta_str(obj, "name");
        if (!name || !name[0]) {
                kb__cause_add(c, "FieldValueRequired", "metadata.name",
                              "Required value: name or generateName is required");
                return;
        }
        if (label ? !kb_dns_label(name) : !kb_dns_subdomain(name))
                invalid_str(c, "metadata.name", name,
                            label ? "a lowercase RFC 1123 label must consist of lower case "
                                    "alphanumeric characters or '-', and must start and end "
                                    "with an alphanumeric character"
                                  : "a lowercase RFC 1123 subdomain must consist of lower case "
                                    "alphanumeric characters, '-' or '.', and must start and "
                                    "end with an alphanumeric character");
}

static void check_labels(const struct kb_value *obj, struct kb_causes *c)
{
        const struct kb_value *l = kb_value_dig(obj, "metadata", "labels");
        if (!l || l->type == KB_VNULL)
                return;
        if (!kb_value_is(l, KB_VOBJECT)) {
                kb__cause_add(c, "FieldValueInvalid", "metadata.labels",
                              "Invalid value: must be a map of strings");
                return;
        }
        for (size_t i = 0; i < l->obj.n; i++) {
                const char *v = kb_value_str(l->obj.m[i].val);
                bool ok = v && strlen(v) <= 63;
                for (const char *p = v; ok && *p; p++)
                        ok = isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.';
                if (!ok) {
                        char *f = kb_xasprintf("metadata.labels.%s", l->obj.m[i].key);
                        invalid_str(c, f, v ? v : "",
                                    "a valid label must be an empty string or consist of "
                                    "alphanumeric characters, '-', '_' or '.'");
                        free(f);
                }
        }
}

/* Kubernetes caps an object's annotations at 256 KiB, keys and values
 * counted together (apimachinery's ValidateAnnotationsSize). */
#define ANNOTATIONS_MAX (256 * 1024)

static void check_annotations(const struct kb_value *obj, struct kb_causes *c)
{
        const struct kb_value *a = kb_value_dig(obj, "metadata", "annotations");
        if (!kb_value_is(a, KB_VOBJECT))
                return;
        size_t total = 0;
        for (size_t i = 0; i < a->obj.n; i++) {
                const char *v = kb_value_str(a->obj.m[i].val);
                total += strlen(a->obj.m[i].key) + (v ? strlen(v) : 0);
        }
        if (total > ANNOTATIONS_MAX)
                kb__cause_add(c, "FieldValueTooLong", "metadata.annotations",
                              "Too long: may not be more than %d bytes", ANNOTATIONS_MAX);
}

void kb__validate_pod_spec(const struct kb_value *spec, const char *path, struct kb_causes *c)
{
        const struct kb_value *cs = kb_value_get(spec, "containers");
        char *f = kb_xasprintf("%s.containers", path);
        if (!kb_value_is(cs, KB_VARRAY) || cs->arr.n == 0) {
                required(c, f);
                free(f);
                return;
        }
        for (size_t i = 0; i < cs->arr.n; i++) {
                const struct kb_value *ct = cs->arr.v[i];
                char *cf = kb_xasprintf("%s[%zu]", f, i);
                char *ff;
                const char *name = kb_value_str(kb_value_get(ct, "name"));
                ff = kb_xasprintf("%s.name", cf);
                if (!name || !name[0])
                        required(c, ff);
                else if (!kb_dns_label(name))
                        invalid_str(c, ff, name, "a lowercase RFC 1123 label is required");
                free(ff);
                ff = kb_xasprintf("%s.image", cf);
                const char *image = kb_value_str(kb_value_get(ct, "image"));
                if (!image || !image[0])
                        required(c, ff);
                free(ff);
                ff = kb_xasprintf("%s.resources.requests", cf);
                check_resources(kb_value_dig(ct, "resources", "requests"), ff, c);
                free(ff);
                ff = kb_xasprintf("%s.resources.limits", cf);
                check_resources(kb_value_dig(ct, "resources", "limits"), ff, c);
                free(ff);
                free(cf);
        }
        free(f);
}

void kb__validate_pod(const struct kb_value *obj, struct kb_causes *c)
{
        kb__validate_pod_spec(kb_value_get(obj, "spec"), "spec", c);
}

void kb__validate_node(const struct kb_value *obj, struct kb_causes *c)
{
        check_resources(kb_value_dig(obj, "status", "capacity"), "status.capacity", c);
        check_resources(kb_value_dig(obj, "status", "allocatable"), "status.allocatable", c);
}

static void nonneg(const struct kb_value *spec, const char *key, const char *field,
                   struct kb_causes *c)
{
        const struct kb_value *v = kb_value_get(spec, key);
        int64_t i;
        if (!v || v->type == KB_VNULL)
                return;
        if (kb_value_int(v, &i) || v->type != KB_VNUMBER)
                kb__cause_add(c, "FieldValueInvalid", field, "Invalid value: must be an integer");
        else if (i < 0)
                kb__cause_add(c, "FieldValueInvalid", field,
                              "Invalid value: %lld: must be greater than or equal to 0",
                              (long long)i);
}

void kb__validate_job(const struct kb_value *obj, struct kb_causes *c)
{
        const struct kb_value *spec = kb_value_get(obj, "spec");
        const struct kb_value *tspec = kb_value_dig(spec, "template", "spec");
        if (!tspec) {
                required(c, "spec.template");
                return;
        }
        nonneg(spec, "parallelism", "spec.parallelism", c);
        nonneg(spec, "completions", "spec.completions", c);
        nonneg(spec, "backoffLimit", "spec.backoffLimit", c);
        kb__validate_pod_spec(tspec, "spec.template.spec", c);
        const char *rp = kb_value_str(kb_value_get(tspec, "restartPolicy"));
        if (!rp)
                required(c, "spec.template.spec.restartPolicy");
        else if (!strcmp(rp, "Always")) /* other values: the pod spec's enum */
                kb__cause_add(c, "FieldValueNotSupported", "spec.template.spec.restartPolicy",
                              "Unsupported value: \"%s\": supported values: \"OnFailure\", "
                              "\"Never\"",
                              rp);
}

void kb__validate_priorityclass(const struct kb_value *obj, struct kb_causes *c)
{
        const struct kb_value *v = kb_value_get(obj, "value");
        int64_t i;
        if (!v)
                required(c, "value");
        else if (v->type != KB_VNUMBER || kb_value_int(v, &i))
                kb__cause_add(c, "FieldValueInvalid", "value", "Invalid value: must be an integer");
        else if (i > 1000000000 && !kb_has_prefix(kb__meta_str(obj, "name"), "system-"))
                kb__cause_add(c, "FieldValueForbidden", "value",
                              "Forbidden: maximum allowed value of a user defined priority "
                              "is 1000000000");
}

void kb__validate_namespace(const struct kb_value *obj, struct kb_causes *c)
{
        (void)obj;
        (void)c;
}

void kb__validate_crd(const struct kb_value *obj, struct kb_causes *c)
{
        const struct kb_value *spec = kb_value_get(obj, "spec");
        const char *group = kb_value_str(kb_value_get(spec, "group"));
        const char *plural = kb_value_str(kb_value_dig(spec, "names", "plural"));
        const char *kind = kb_value_str(kb_value_dig(spec, "names", "kind"));
        const char *scope = kb_value_str(kb_value_get(spec, "scope"));
        const struct kb_value *vers = kb_value_get(spec, "versions");
        if (!group || !group[0])
                required(c, "spec.group");
        else if (!strchr(group, '.'))
                invalid_str(c, "spec.group", group, "should be a domain with at least one dot");
        if (!plural || !plural[0])
                required(c, "spec.names.plural");
        else if (!kb_dns_label(plural))
                invalid_str(c, "spec.names.plural", plural,
                            "a lowercase RFC 1123 label is required");
        if (!kind || !kind[0])
                required(c, "spec.names.kind");
        if (!scope)
                required(c, "spec.scope");
        else if (strcmp(scope, "Namespaced") && strcmp(scope, "Cluster"))
                kb__cause_add(c, "FieldValueNotSupported", "spec.scope",
                              "Unsupported value: \"%s\": supported values: \"Cluster\", "
                              "\"Namespaced\"",
                              scope);
        if (!kb_value_is(vers, KB_VARRAY) || vers->arr.n == 0)
                required(c, "spec.versions");
        else {
                int storage = 0;
                for (size_t i = 0; i < vers->arr.n; i++) {
                        if (!kb_value_str(kb_value_get(vers->arr.v[i], "name"))) {
                                char *f = kb_xasprintf("spec.versions[%zu].name", i);
                                required(c, f);
                                free(f);
                        }
                        storage += kb_value_bool(kb_value_get(vers->arr.v[i], "storage"), false);
                }
                if (storage != 1)
                        kb__cause_add(c, "FieldValueInvalid", "spec.versions",
                                      "Invalid value: must have exactly one version marked as "
                                      "storage version");
        }
        const char *name = kb__meta_str(obj, "name");
        if (group && plural && name) {
                char *want = kb_xasprintf("%s.%s", plural, group);
                if (strcmp(name, want))
                        invalid_str(c, "metadata.name", name,
                                    "must be spec.names.plural+\".\"+spec.group");
                free(want);
        }
}

/* ---- OpenAPI schema (the subset CRDs use for validation) ------------------ */

static bool type_ok(const char *type, const struct kb_value *v)
{
        if (!type)
                return true;
        if (!strcmp(type, "object"))
                return v->type == KB_VOBJECT;
        if (!strcmp(type, "array"))
                return v->type == KB_VARRAY;
        if (!strcmp(type, "string"))
                return v->type == KB_VSTRING;
        if (!strcmp(type, "boolean"))
                return v->type == KB_VBOOL;
        if (!strcmp(type, "number"))
                return v->type == KB_VNUMBER;
        if (!strcmp(type, "integer")) {
                int64_t i;
                return v->type == KB_VNUMBER && kb_value_int(v, &i) == 0 && !strpbrk(v->s, ".eE");
        }
        return true;
}

/* OpenAPI patterns are ECMA/RE2 syntax; the CRDs we meet use the part
 * that POSIX extended expressions share.  A pattern that does not compile
 * is not enforced, as it cannot be judged. */
static void check_pattern(const struct kb_value *schema, const char *s, const char *path,
                          struct kb_causes *c)
{
        const char *pat = kb_value_str(kb_value_get(schema, "pattern"));
        regex_t re;
        if (!pat || regcomp(&re, pat, REG_EXTENDED | REG_NOSUB))
                return;
        if (regexec(&re, s, 0, NULL, 0))
                kb__cause_add(c, "FieldValueInvalid", path,
                              "Invalid value: \"%s\": %s in body should match '%s'", s, path, pat);
        regfree(&re);
}

static double num(const struct kb_value *v)
{
        const char *t = kb_value_text(v);
        return t ? strtod(t, NULL) : 0;
}

void kb__validate_schema(const struct kb_value *schema, const struct kb_value *v, const char *path,
                         struct kb_causes *c)
{
        if (!kb_value_is(schema, KB_VOBJECT) || !v)
                return;
        if (v->type == KB_VNULL) {
                if (!kb_value_bool(kb_value_get(schema, "nullable"), false) &&
                    kb_value_get(schema, "type"))
                        kb__cause_add(c, "FieldValueTypeInvalid", path,
                                      "Invalid value: \"null\": %s in body must be of type %s: "
                                      "\"null\"",
                                      path, kb_value_str(kb_value_get(schema, "type")));
                return;
        }
        const char *type = kb_value_str(kb_value_get(schema, "type"));
        bool int_or_string =
            kb_value_bool(kb_value_get(schema, "x-kubernetes-int-or-string"), false);
        if (int_or_string) {
                if (v->type != KB_VNUMBER && v->type != KB_VSTRING)
                        kb__cause_add(c, "FieldValueTypeInvalid", path,
                                      "Invalid value: %s in body must be of type "
                                      "int-or-string",
                                      path);
                else if (v->type == KB_VSTRING)
                        check_pattern(schema, v->s, path, c);
                return;
        }
        if (!type_ok(type, v)) {
                kb__cause_add(c, "FieldValueTypeInvalid", path,
                              "Invalid value: \"%s\": %s in body must be of type %s: \"%s\"",
                              v->type == KB_VSTRING ? v->s : kb_value_type_name(v->type), path,
                              type, kb_value_type_name(v->type));
                return;
        }
        const struct kb_value *en = kb_value_get(schema, "enum");
        if (kb_value_is(en, KB_VARRAY)) {
                bool found = false;
                for (size_t i = 0; i < en->arr.n; i++)
                        found |= kb_value_equal(en->arr.v[i], v);
                if (!found) {
                        struct kb_buf b;
                        kb_buf_init(&b);
                        for (size_t i = 0; i < en->arr.n; i++) {
                                const char *t = kb_value_text(en->arr.v[i]);
                                kb_buf_printf(&b, "%s\"%s\"", i ? ", " : "", t ? t : "");
                        }
                        const char *t = kb_value_text(v);
                        kb__cause_add(c, "FieldValueNotSupported", path,
                                      "Unsupported value: \"%s\": supported values: %s", t ? t : "",
                                      b.data);
                        kb_buf_release(&b);
                }
        }
        if (v->type == KB_VNUMBER) {
                const struct kb_value *mn = kb_value_get(schema, "minimum");
                const struct kb_value *mx = kb_value_get(schema, "maximum");
                if (mn && num(v) < num(mn))
                        kb__cause_add(c, "FieldValueInvalid", path,
                                      "Invalid value: %s: %s in body should be greater than or "
                                      "equal to %s",
                                      v->s, path, kb_value_text(mn));
                if (mx && num(v) > num(mx))
                        kb__cause_add(c, "FieldValueInvalid", path,
                                      "Invalid value: %s: %s in body should be less than or "
                                      "equal to %s",
                                      v->s, path, kb_value_text(mx));
        }
        if (v->type == KB_VSTRING) {
                const struct kb_value *mn = kb_value_get(schema, "minLength");
                const struct kb_value *mx = kb_value_get(schema, "maxLength");
                double len = (double)strlen(v->s);
                if (mn && len < num(mn))
                        kb__cause_add(c, "FieldValueInvalid", path,
                                      "Invalid value: \"%s\": %s in body should be at least %s "
                                      "chars long",
                                      v->s, path, kb_value_text(mn));
                if (mx && len > num(mx))
                        kb__cause_add(c, "TooLong", path, "Too long: may not be more than %s bytes",
                                      kb_value_text(mx));
                check_pattern(schema, v->s, path, c);
        }
        if (v->type == KB_VOBJECT) {
                const struct kb_value *req = kb_value_get(schema, "required");
                for (size_t i = 0; kb_value_is(req, KB_VARRAY) && i < req->arr.n; i++) {
                        const char *k = kb_value_str(req->arr.v[i]);
                        if (k && !kb_value_get(v, k)) {
                                char *f = kb_xasprintf("%s.%s", path, k);
                                required(c, f);
                                free(f);
                        }
                }
                const struct kb_value *props = kb_value_get(schema, "properties");
                const struct kb_value *addl = kb_value_get(schema, "additionalProperties");
                for (size_t i = 0; i < v->obj.n; i++) {
                        const struct kb_value *sub = kb_value_get(props, v->obj.m[i].key);
                        if (!sub && kb_value_is(addl, KB_VOBJECT))
                                sub = addl;
                        if (!sub)
                                continue;
                        char *f = kb_xasprintf("%s.%s", path, v->obj.m[i].key);
                        kb__validate_schema(sub, v->obj.m[i].val, f, c);
                        free(f);
                }
        }
        if (v->type == KB_VARRAY) {
                const struct kb_value *items = kb_value_get(schema, "items");
                for (size_t i = 0; i < v->arr.n; i++) {
                        char *f = kb_xasprintf("%s[%zu]", path, i);
                        kb__validate_schema(items, v->arr.v[i], f, c);
                        free(f);
                }
        }
}

/* The structural schema's defaults, as the real server applies them when
 * it decodes a custom resource (after pruning, before validation): a
 * property the object lacks takes its schema's `default`; objects present
 * and the items of arrays are defaulted in turn.  metadata is the
 * server's. */
static void schema_defaults(const struct kb_value *schema, struct kb_value *v, bool root)
{
        if (kb_value_is(v, KB_VARRAY)) {
                const struct kb_value *items = kb_value_get(schema, "items");
                for (size_t i = 0; items && i < v->arr.n; i++)
                        schema_defaults(items, v->arr.v[i], false);
                return;
        }
        const struct kb_value *props = kb_value_get(schema, "properties");
        if (!kb_value_is(v, KB_VOBJECT) || !kb_value_is(props, KB_VOBJECT))
                return;
        for (size_t i = 0; i < props->obj.n; i++) {
                const struct kb_member *p = &props->obj.m[i];
                if (root && !strcmp(p->key, "metadata"))
                        continue;
                struct kb_value *have = kb_value_get(v, p->key);
                const struct kb_value *d = kb_value_get(p->val, "default");
                if (!have && d)
                        kb_value_set(v, p->key, kb_value_clone(d));
                else if (have)
                        schema_defaults(p->val, have, false);
        }
}

void kb__schema_defaults(const struct kb_rtype *rt, struct kb_value *obj)
{
        if (rt->custom && rt->schema)
                schema_defaults(rt->schema, obj, true);
}

void kb__validate_object(const struct kb_rtype *rt, const struct kb_value *obj, struct kb_causes *c)
{
        bool label = rt->k && rt->k->name_is_label;
        check_name(obj, label, c);
        check_labels(obj, c);
        check_annotations(obj, c);
        if (rt->validate)
                rt->validate(obj, c);
        if (rt->custom && rt->schema) {
                /* metadata is the server's business; the schema covers the rest.
                 * Paths start without the root, as upstream prints them. */
                const struct kb_value *props = kb_value_get(rt->schema, "properties");
                for (size_t i = 0; kb_value_is(obj, KB_VOBJECT) && i < obj->obj.n; i++) {
                        const struct kb_member *m = &obj->obj.m[i];
                        if (!strcmp(m->key, "metadata") || !strcmp(m->key, "kind") ||
                            !strcmp(m->key, "apiVersion"))
                                continue;
                        kb__validate_schema(kb_value_get(props, m->key), m->val, m->key, c);
                }
                const struct kb_value *req = kb_value_get(rt->schema, "required");
                for (size_t i = 0; kb_value_is(req, KB_VARRAY) && i < req->arr.n; i++) {
                        const char *k = kb_value_str(req->arr.v[i]);
                        if (k && !kb_value_get(obj, k))
                                required(c, k);
                }
        }
}
