/*
 * The field check of a write (see schema.c for what it judges and the
 * words it uses).  Worked example, a Pod with fieldValidation=Warn:
 *   {"spec":{"bogus":1,"containers":[{"name":"c","image":"i","imagePullPolicy":"Sometimes"}]}}
 *   -> unknown: spec.bogus (dropped; Warning: unknown field "spec.bogus")
 *   -> cause:   spec.containers[0].imagePullPolicy: Unsupported value:
 *               "Sometimes": supported values: "Always", "IfNotPresent", "Never"
 */
#include "apiserver/apiserver-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *json_type(const struct kb_value *v)
{
        switch (v->type) {
        case KB_VSTRING:
                return "string";
        case KB_VNUMBER:
                return "number";
        case KB_VBOOL:
                return "bool";
        case KB_VARRAY:
                return "array";
        case KB_VOBJECT:
                return "object";
        default:
                return "null";
        }
}

/* Go's name for what a schema decodes into, as its JSON errors say. */
static const char *go_type(const struct kb_value *s, const char *def)
{
        const char *t = kb_value_str(kb_value_get(s, "type"));
        if (def)
                return def;
        if (kb_streq(t, "integer"))
                return "int64";
        if (kb_streq(t, "number"))
                return "float64";
        if (kb_streq(t, "boolean"))
                return "bool";
        if (kb_streq(t, "array"))
                return "[]interface {}";
        if (kb_streq(t, "object"))
                return "map[string]interface {}";
        return "string";
}

static bool fits(const struct kb_value *s, const struct kb_value *v)
{
        if (kb_value_bool(kb_value_get(s, "x-kubernetes-int-or-string"), false))
                return v->type == KB_VSTRING || v->type == KB_VNUMBER;
        const char *t = kb_value_str(kb_value_get(s, "type"));
        if (!t)
                return true;
        if (!strcmp(t, "string"))
                return v->type == KB_VSTRING;
        if (!strcmp(t, "integer"))
                return v->type == KB_VNUMBER && !strpbrk(v->s, ".eE");
        if (!strcmp(t, "number"))
                return v->type == KB_VNUMBER;
        if (!strcmp(t, "boolean"))
                return v->type == KB_VBOOL;
        if (!strcmp(t, "array"))
                return v->type == KB_VARRAY;
        if (!strcmp(t, "object"))
                return v->type == KB_VOBJECT;
        return true;
}

/* The last component of a definition's name: "PodSpec". */
static const char *short_name(const char *full)
{
        const char *dot = full ? strrchr(full, '.') : NULL;
        return dot ? dot + 1 : full;
}

/* The path without list indexes, as Go's JSON errors name a field. */
static char *go_path(const char *path)
{
        char *out = kb_xstrdup(path);
        char *w = out;
        for (const char *p = path; *p; p++) {
                if (*p == '[') {
                        p = strchr(p, ']');
                        if (!p)
                                break;
                        continue;
                }
                *w++ = *p;
        }
        *w = 0;
        return out;
}

static void check_enum(struct kb_fieldcheck *fc, const struct kb_value *s, const struct kb_value *v,
                       const char *path)
{
        const struct kb_value *en = kb_value_get(s, "enum");
        if (!kb_value_is(en, KB_VARRAY) || v->type != KB_VSTRING)
                return;
        for (size_t i = 0; i < en->arr.n; i++)
                if (kb_value_equal(en->arr.v[i], v))
                        return;
        struct kb_buf b;
        kb_buf_init(&b);
        for (size_t i = 0; i < en->arr.n; i++)
                kb_buf_printf(&b, "%s\"%s\"", i ? ", " : "", kb_value_str(en->arr.v[i]));
        kb__cause_add(fc->causes, "FieldValueNotSupported", path,
                      "Unsupported value: \"%s\": supported values: %s", v->s, b.data);
        kb_buf_release(&b);
}

static void unknown(struct kb_fieldcheck *fc, const char *path)
{
        kb_buf_printf(&fc->unknown, "%sunknown field \"%s\"", fc->nunknown ? ", " : "", path);
        if (fc->nunknown < KB_ARRAY_SIZE(fc->paths))
                fc->paths[fc->nunknown] = kb_xstrdup(path);
        fc->nunknown++;
}

static char *join(const char *path, const char *key)
{
        return path[0] ? kb_xasprintf("%s.%s", path, key) : kb_xstrdup(key);
}

void kb__field_check(struct kb_fieldcheck *fc, const struct kb_value *schema, struct kb_value *v,
                     const struct kb_value *old, const char *path, const char *parent)
{
        const char *def = NULL;
        const struct kb_value *s = kb__schema_resolve(fc->defs, schema, &def);
        if (!s || !v || v->type == KB_VNULL || fc->decode_err)
                return;
        if (def)
                parent = short_name(def);
        if (fc->builtin && !fits(s, v)) {
                char *gp = go_path(path);
                fc->decode_err = kb_xasprintf(
                    "json: cannot unmarshal %s into Go struct field %s.%s of type %s", json_type(v),
                    parent ? parent : "", gp, go_type(s, def ? short_name(def) : NULL));
                free(gp);
                return;
        }
        if (fc->builtin)
                check_enum(fc, s, v, path);
        if (v->type == KB_VARRAY) {
                const struct kb_value *items = kb_value_get(s, "items");
                for (size_t i = 0; items && i < v->arr.n; i++) {
                        char *p = kb_xasprintf("%s[%zu]", path, i);
                        const struct kb_value *o =
                            kb_value_is(old, KB_VARRAY) && i < old->arr.n ? old->arr.v[i] : NULL;
                        kb__field_check(fc, items, v->arr.v[i], o, p, parent);
                        free(p);
                }
                return;
        }
        if (v->type != KB_VOBJECT)
                return;
        if (kb_value_bool(kb_value_get(s, "x-kubernetes-preserve-unknown-fields"), false) &&
            !kb_value_get(s, "properties"))
                return;
        bool open = kb_value_bool(kb_value_get(s, "x-kubernetes-preserve-unknown-fields"), false);
        const struct kb_value *props = kb_value_get(s, "properties");
        const struct kb_value *addl = kb_value_get(s, "additionalProperties");
        for (size_t i = 0; i < v->obj.n;) {
                const char *key = v->obj.m[i].key;
                const struct kb_value *sub = kb_value_get(props, key);
                if (!sub && kb_value_is(addl, KB_VOBJECT))
                        sub = addl;
                const struct kb_value *o = kb_value_get(old, key);
                char *p = join(path, key);
                if (sub) {
                        kb__field_check(fc, sub, v->obj.m[i].val, o, p, parent);
                } else if (!open && !(o && kb_value_equal(o, v->obj.m[i].val)) &&
                           !(kb_value_is(addl, KB_VBOOL) && addl->b)) {
                        unknown(fc, p);
                        free(p);
                        /* Dropped, as upstream drops what it cannot decode. */
                        char *k = kb_xstrdup(key);
                        kb_value_del(v, k);
                        free(k);
                        continue;
                }
                free(p);
                i++;
        }
}

void kb__fieldcheck_release(struct kb_fieldcheck *fc)
{
        kb_buf_release(&fc->unknown);
        free(fc->decode_err);
        for (size_t i = 0; i < fc->nunknown && i < KB_ARRAY_SIZE(fc->paths); i++)
                free(fc->paths[i]);
}
