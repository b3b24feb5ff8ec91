/*
 * Schemas: the built-in kinds' definitions (schemas-core.c, schemas-more.c)
 * read into OpenAPI v3 component schemas, and the field check every write
 * goes through.
 *
 * The check walks an object against its schema, as the real server's
 * decoder does for built-ins and its structural-schema pruning does for
 * custom resources:
 *   - a field the schema does not declare is unknown: with
 *     fieldValidation=Strict the write fails with 400
 *       Pod in version "v1" cannot be handled as a Pod: strict decoding
 *       error: unknown field "spec.bogus"
 *     with Warn (the default) or Ignore it is dropped, and Warn says so in
 *     a Warning header per field: unknown field "spec.bogus";
 *   - for built-ins, a value of the wrong JSON type cannot be decoded: 400
 *       json: cannot unmarshal string into Go struct field
 *       PodSpec.spec.priority of type int64
 *   - for built-ins, a value outside an enum is 422 (FieldValueNotSupported).
 * Custom resources' types and enums are checked by validate.c, as before.
 * A field already stored (set by the server, say the simulated kubelet's
 * status) is never reported: only what a request brings in is judged.
 */
#include "apiserver/apiserver-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_PREFIX "#/components/schemas/"

extern const char *const kb__schemas_core[];
extern const char *const kb__schemas_more[];

/* ---- reading the notation ------------------------------------------------ */

struct reader {
        struct kb_value *defs;    /* full name -> schema */
        struct kb_value *aliases; /* short name -> full name */
};

static struct kb_value *str(const char *s)
{
        return kb_value_new_string(s);
}

static struct kb_value *ref_to(const char *full)
{
        struct kb_value *r = kb_value_new(KB_VOBJECT);
        char *t = kb_xasprintf(REF_PREFIX "%s", full);
        kb_value_set(r, "$ref", str(t));
        free(t);
        return r;
}

/* The schema of a type in the notation ("[]Container", "map[quantity]"). */
static struct kb_value *type_schema(const struct reader *rd, const char *t)
{
        struct kb_value *s;
        if (!strncmp(t, "[]", 2)) {
                s = kb_value_new(KB_VOBJECT);
                kb_value_set(s, "type", str("array"));
                kb_value_set(s, "items", type_schema(rd, t + 2));
                return s;
        }
        if (!strncmp(t, "map[", 4)) {
                char *inner = kb_xstrndup(t + 4, strlen(t + 4) - 1);
                s = kb_value_new(KB_VOBJECT);
                kb_value_set(s, "type", str("object"));
                kb_value_set(s, "additionalProperties", type_schema(rd, inner));
                free(inner);
                return s;
        }
        if (!strcmp(t, "quantity"))
                return ref_to(kb_value_str(kb_value_get(rd->aliases, "Quantity")));
        s = kb_value_new(KB_VOBJECT);
        if (!strcmp(t, "string") || !strcmp(t, "integer") || !strcmp(t, "number") ||
            !strcmp(t, "boolean")) {
                kb_value_set(s, "type", str(t));
                if (!strcmp(t, "integer"))
                        kb_value_set(s, "format", str("int64"));
        } else if (!strcmp(t, "time")) {
                kb_value_set(s, "type", str("string"));
                kb_value_set(s, "format", str("date-time"));
        } else if (!strcmp(t, "intstr")) {
                kb_value_set(s, "x-kubernetes-int-or-string", kb_value_new_bool(true));
        } else if (!strcmp(t, "object")) {
                kb_value_set(s, "type", str("object"));
                kb_value_set(s, "x-kubernetes-preserve-unknown-fields", kb_value_new_bool(true));
        } else {
                const char *full = kb_value_str(kb_value_get(rd->aliases, t));
                if (!full)
                        kb_die("apiserver schemas: unknown type %s", t);
                kb_value_free(s);
                return ref_to(full);
        }
        return s;
}

/* Splits "a b c | text" into words (at most max) and the text after '|'. */
static size_t words(char *line, char **w, size_t max, char **desc)
{
        *desc = NULL;
        char *bar = strstr(line, " | ");
        if (bar) {
                *bar = 0;
                *desc = bar + 3;
        }
        size_t n = 0;
        for (char *save = NULL, *t = strtok_r(line, " ", &save); t && n < max;
             t = strtok_r(NULL, " ", &save))
                w[n++] = t;
        return n;
}

static void gvk_ext(struct kb_value *def, const char *spec)
{
        /* "group/version/Kind", the group empty for core. */
        const char *a = strchr(spec, '/'), *b = a ? strchr(a + 1, '/') : NULL;
        if (!b)
                kb_die("apiserver schemas: bad gvk %s", spec);
        struct kb_value *g = kb_value_new(KB_VOBJECT);
        kb_value_set(g, "group", kb_value_new_stringn(spec, (size_t)(a - spec)));
        kb_value_set(g, "kind", str(b + 1));
        kb_value_set(g, "version", kb_value_new_stringn(a + 1, (size_t)(b - a - 1)));
        struct kb_value *arr = kb_value_new(KB_VARRAY);
        kb_value_append(arr, g);
        kb_value_set(def, "x-kubernetes-group-version-kind", arr);
}

static void read_text(struct reader *rd, const char *const *text, bool names_only)
{
        struct kb_value *def = NULL;
        for (size_t li = 0; text[li]; li++) {
                char *line = kb_xstrdup(text[li]);
                bool field = line[0] == ' ';
                char *w[6], *desc;
                size_t n = words(line, w, KB_ARRAY_SIZE(w), &desc);
                if (n < 2)
                        kb_die("apiserver schemas: bad line %s", line);
                if (!field) {
                        if (names_only) {
                                kb_value_set(rd->aliases, w[0], str(w[1]));
                                free(line);
                                continue;
                        }
                        def = kb_value_new(KB_VOBJECT);
                        if (desc)
                                kb_value_set(def, "description", str(desc));
                        kb_value_set(def, "type",
                                     str(!strcmp(w[0], "Quantity") ? "string" : "object"));
                        if (!strcmp(w[0], "Quantity"))
                                kb_value_set(def, "x-kubernetes-int-or-string",
                                             kb_value_new_bool(true));
                        for (size_t i = 2; i < n; i++) {
                                if (kb_has_prefix(w[i], "gvk="))
                                        gvk_ext(def, w[i] + 4);
                                else if (!strcmp(w[i], "open"))
                                        kb_value_set(def, "x-kubernetes-preserve-unknown-fields",
                                                     kb_value_new_bool(true));
                        }
                        kb_value_set(rd->defs, w[1], def);
                        free(line);
                        continue;
                }
                if (names_only) {
                        free(line);
                        continue;
                }
                struct kb_value *fs = type_schema(rd, w[1]);
                if (kb_value_get(fs, "$ref") && desc) {
                        /* A reference cannot carry a description of its own. */
                        struct kb_value *wrap = kb_value_new(KB_VOBJECT);
                        struct kb_value *all = kb_value_new(KB_VARRAY);
                        kb_value_append(all, fs);
                        kb_value_set(wrap, "allOf", all);
                        fs = wrap;
                }
                if (desc)
                        kb_value_set(fs, "description", str(desc));
                for (size_t i = 2; i < n; i++) {
                        if (!kb_has_prefix(w[i], "enum="))
                                continue;
                        struct kb_value *en = kb_value_new(KB_VARRAY);
                        char *vals = w[i] + 5;
                        for (char *s2 = NULL, *t = strtok_r(vals, ",", &s2); t;
                             t = strtok_r(NULL, ",", &s2))
                                kb_value_append(en, str(t));
                        kb_value_set(fs, "enum", en);
                }
                kb_value_set(kb_value_ensure_object(def, "properties"), w[0], fs);
                free(line);
        }
}

struct kb_value *kb__schemas_new(void)
{
        struct reader rd = {kb_value_new(KB_VOBJECT), kb_value_new(KB_VOBJECT)};
        read_text(&rd, kb__schemas_core, true);
        read_text(&rd, kb__schemas_more, true);
        read_text(&rd, kb__schemas_core, false);
        read_text(&rd, kb__schemas_more, false);
        kb_value_free(rd.aliases);
        return rd.defs;
}

const struct kb_value *kb__schema_for(const struct kb_value *defs, const char *group,
                                      const char *version, const char *kind)
{
        for (size_t i = 0; kb_value_is(defs, KB_VOBJECT) && i < defs->obj.n; i++) {
                const struct kb_value *g =
                    kb_value_get(defs->obj.m[i].val, "x-kubernetes-group-version-kind");
                if (!kb_value_is(g, KB_VARRAY) || !g->arr.n)
                        continue;
                const struct kb_value *e = g->arr.v[0];
                if (kb_streq(kb_value_str(kb_value_get(e, "group")), group) &&
                    kb_streq(kb_value_str(kb_value_get(e, "version")), version) &&
                    kb_streq(kb_value_str(kb_value_get(e, "kind")), kind))
                        return defs->obj.m[i].val;
        }
        return NULL;
}

/* The schema a $ref (or a one-element allOf of one) stands for. */
const struct kb_value *kb__schema_resolve(const struct kb_value *defs, const struct kb_value *s,
                                          const char **name)
{
        for (int depth = 0; s && depth < 8; depth++) {
                const struct kb_value *all = kb_value_get(s, "allOf");
                if (kb_value_is(all, KB_VARRAY) && all->arr.n == 1) {
                        s = all->arr.v[0];
                        continue;
                }
                const char *ref = kb_value_str(kb_value_get(s, "$ref"));
                if (!ref || !kb_has_prefix(ref, REF_PREFIX))
                        return s;
                ref += strlen(REF_PREFIX);
                if (name)
                        *name = ref;
                s = kb_value_get(defs, ref);
        }
        return s;
}
