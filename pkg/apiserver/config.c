/*
 * ConfigMaps, Secrets and RBAC objects: stored and served like any object,
 * validated as the real server validates them.  RBAC is not enforced (see
 * reviews.c).
 *
 * A Secret's data is base64; stringData is folded into data on every write
 * and never stored, as upstream does:
 *   {"stringData":{"a":"hi"}}  ->  {"data":{"a":"aGk="},"type":"Opaque"}
 */
#include "apiserver/apiserver-int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The offset of the first byte that makes s invalid standard base64 (with
 * padding, as Go's encoding/json reads []byte), or -1 when s is valid. */
static long base64_bad_at(const char *s)
{
        size_t n = strlen(s), end = n;
        while (end > 0 && n - end < 2 && s[end - 1] == '=')
                end--;
        for (size_t i = 0; i < end; i++)
                if (!strchr(b64, s[i]))
                        return (long)i;
        return n % 4 ? (long)end : -1;
}

int kb__secret_normalize(struct kb_value *obj, char *err, size_t errlen)
{
        struct kb_value *data = kb_value_get(obj, "data");
        for (size_t i = 0; kb_value_is(data, KB_VOBJECT) && i < data->obj.n; i++) {
                const char *v = kb_value_str(data->obj.m[i].val);
                long at = v ? base64_bad_at(v) : 0;
                if (at >= 0) {
                        snprintf(err, errlen,
                                 "Secret in version \"v1\" cannot be handled as a Secret: "
                                 "illegal base64 data at input byte %ld",
                                 at);
                        return KB_EBADINPUT;
                }
        }
        struct kb_value *sd = kb_value_take(obj, "stringData");
        for (size_t i = 0; kb_value_is(sd, KB_VOBJECT) && i < sd->obj.n; i++) {
                const char *v = kb_value_str(sd->obj.m[i].val);
                if (!v)
                        continue;
                char *enc = kb_base64_encode(v, strlen(v));
                kb_value_set(kb_value_ensure_object(obj, "data"), sd->obj.m[i].key,
                             kb_value_new_string(enc));
                free(enc);
        }
        kb_value_free(sd);
        if (!kb_value_str(kb_value_get(obj, "type")))
                kb_value_set(obj, "type", kb_value_new_string("Opaque"));
        return 0;
}

/* A ConfigMap or Secret key: [-._a-zA-Z0-9]+, at most 253, not "." or "..". */
static void check_keys(const struct kb_value *map, const char *field, struct kb_causes *c)
{
        for (size_t i = 0; kb_value_is(map, KB_VOBJECT) && i < map->obj.n; i++) {
                const char *k = map->obj.m[i].key;
                bool ok = k[0] && strlen(k) <= 253 && strcmp(k, ".") && strcmp(k, "..");
                for (const char *p = k; ok && *p; p++)
                        ok = isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.';
                if (ok)
                        continue;
                char *f = kb_xasprintf("%s[%s]", field, k);
                kb__cause_add(c, "FieldValueInvalid", f,
                              "Invalid value: \"%s\": a valid config key must consist of "
                              "alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or "
                              "'KEY_NAME',  or 'key-name', regex used for validation is "
                              "'[-._a-zA-Z0-9]+')",
                              k);
                free(f);
        }
}

void kb__validate_configmap(const struct kb_value *obj, struct kb_causes *c)
{
        const struct kb_value *data = kb_value_get(obj, "data");
        const struct kb_value *bin = kb_value_get(obj, "binaryData");
        check_keys(data, "data", c);
        check_keys(bin, "binaryData", c);
        for (size_t i = 0; kb_value_is(bin, KB_VOBJECT) && i < bin->obj.n; i++) {
                if (!kb_value_get(data, bin->obj.m[i].key))
                        continue;
                char *f = kb_xasprintf("data[%s]", bin->obj.m[i].key);
                kb__cause_add(c, "FieldValueInvalid", f,
                              "Invalid value: \"%s\": duplicate of key present in binaryData",
                              bin->obj.m[i].key);
                free(f);
        }
}

void kb__validate_secret(const struct kb_value *obj, struct kb_causes *c)
{
        check_keys(kb_value_get(obj, "data"), "data", c);
}

static size_t count(const struct kb_value *a)
{
        return kb_value_is(a, KB_VARRAY) ? a->arr.n : 0;
}

void kb__validate_role(const struct kb_value *obj, struct kb_causes *c)
{
        bool namespaced = kb_streq(kb_value_str(kb_value_get(obj, "kind")), "Role");
        const struct kb_value *rules = kb_value_get(obj, "rules");
        for (size_t i = 0; i < count(rules); i++) {
                const struct kb_value *r = rules->arr.v[i];
                char *f = NULL;
#define FIELD(name) (free(f), f = kb_xasprintf("rules[%zu].%s", i, name))
                if (!count(kb_value_get(r, "verbs")))
                        kb__cause_add(c, "FieldValueRequired", FIELD("verbs"),
                                      "Required value: verbs must contain at least one value");
                if (count(kb_value_get(r, "nonResourceURLs"))) {
                        if (namespaced)
                                kb__cause_add(c, "FieldValueInvalid", FIELD("nonResourceURLs"),
                                              "Invalid value: namespaced rules cannot apply to "
                                              "non-resource URLs");
                } else {
                        if (!count(kb_value_get(r, "apiGroups")))
                                kb__cause_add(c, "FieldValueRequired", FIELD("apiGroups"),
                                              "Required value: resource rules must supply at "
                                              "least one api group");
                        if (!count(kb_value_get(r, "resources")))
                                kb__cause_add(c, "FieldValueRequired", FIELD("resources"),
                                              "Required value: resource rules must supply at "
                                              "least one resource");
                }
#undef FIELD
                free(f);
        }
}

void kb__validate_rolebinding(const struct kb_value *obj, struct kb_causes *c)
{
        bool cluster = kb_streq(kb_value_str(kb_value_get(obj, "kind")), "ClusterRoleBinding");
        const struct kb_value *ref = kb_value_get(obj, "roleRef");
        const char *group = kb_value_str(kb_value_get(ref, "apiGroup"));
        const char *kind = kb_value_str(kb_value_get(ref, "kind"));
        const char *name = kb_value_str(kb_value_get(ref, "name"));
        if (!kb_streq(group, "rbac.authorization.k8s.io"))
                kb__cause_add(c, "FieldValueNotSupported", "roleRef.apiGroup",
                              "Unsupported value: \"%s\": supported values: "
                              "\"rbac.authorization.k8s.io\"",
                              group ? group : "");
        if (cluster && !kb_streq(kind, "ClusterRole"))
                kb__cause_add(c, "FieldValueNotSupported", "roleRef.kind",
                              "Unsupported value: \"%s\": supported values: \"ClusterRole\"",
                              kind ? kind : "");
        else if (!cluster && !kb_streq(kind, "Role") && !kb_streq(kind, "ClusterRole"))
                kb__cause_add(c, "FieldValueNotSupported", "roleRef.kind",
                              "Unsupported value: \"%s\": supported values: \"ClusterRole\", "
                              "\"Role\"",
                              kind ? kind : "");
        if (!name || !name[0])
                kb__cause_add(c, "FieldValueRequired", "roleRef.name", "Required value");
        const struct kb_value *subs = kb_value_get(obj, "subjects");
        for (size_t i = 0; i < count(subs); i++) {
                const struct kb_value *s = subs->arr.v[i];
                const char *sk = kb_value_str(kb_value_get(s, "kind"));
                const char *sn = kb_value_str(kb_value_get(s, "name"));
                char *f = kb_xasprintf("subjects[%zu].name", i);
                if (!sn || !sn[0])
                        kb__cause_add(c, "FieldValueRequired", f, "Required value");
                free(f);
                f = kb_xasprintf("subjects[%zu].kind", i);
                if (!kb_streq(sk, "ServiceAccount") && !kb_streq(sk, "User") &&
                    !kb_streq(sk, "Group"))
                        kb__cause_add(c, "FieldValueNotSupported", f,
                                      "Unsupported value: \"%s\": supported values: \"Group\", "
                                      "\"ServiceAccount\", \"User\"",
                                      sk ? sk : "");
                free(f);
                f = kb_xasprintf("subjects[%zu].namespace", i);
                if (cluster && kb_streq(sk, "ServiceAccount") &&
                    !kb_value_str(kb_value_get(s, "namespace")))
                        kb__cause_add(c, "FieldValueRequired", f, "Required value");
                free(f);
        }
}
