/*
 * Label and field selectors, as list and watch take them.
 *
 * Labels: "a=b,c!=d,e,!f,g in (x,y),h notin (z)".  Fields: "a=b,a==b,a!=b"
 * where a is a dotted path into the object (spec.nodeName,
 * involvedObject.kind); a missing field reads as "", so "x=" matches objects
 * without x, as describe node relies on for involvedObject.namespace.
 */
#include "apiserver/apiserver-int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op { OP_EQ, OP_NE, OP_IN, OP_NOTIN, OP_EXISTS, OP_NOTEXISTS };

struct term {
        char *key;
        enum op op;
        char **vals;
        size_t nvals;
};

struct kb_selector {
        bool fields;
        struct term *t;
        size_t n, cap;
};

static void skip_ws(const char **p)
{
        while (**p == ' ' || **p == '\t')
                (*p)++;
}

static bool key_char(char c)
{
        return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '.' || c == '/';
}

static char *read_token(const char **p, bool value)
{
        const char *s = *p;
        while (**p && (key_char(**p) || (value && **p != ',' && **p != ')' && **p != ' ' &&
                                         **p != '!' && **p != '=' && **p != '(')))
                (*p)++;
        return kb_xstrndup(s, (size_t)(*p - s));
}

static void term_release(struct term *t)
{
        free(t->key);
        for (size_t i = 0; i < t->nvals; i++)
                free(t->vals[i]);
        free(t->vals);
}

void kb__selector_free(struct kb_selector *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->n; i++)
                term_release(&s->t[i]);
        free(s->t);
        free(s);
}

static void add_val(struct term *t, char *v)
{
        t->vals = kb_xrealloc(t->vals, (t->nvals + 1) * sizeof(*t->vals));
        t->vals[t->nvals++] = v;
}

int kb__selector_parse(const char *text, bool fields, struct kb_selector **out, char *err,
                       size_t errlen)
{
        struct kb_selector *s = kb_xcalloc(1, sizeof(*s));
        s->fields = fields;
        const char *p = text ? text : "";
        skip_ws(&p);
        while (*p) {
                struct term t = {0};
                bool neg = false;
                if (*p == '!' && !fields) {
                        neg = true;
                        p++;
                        skip_ws(&p);
                }
                t.key = read_token(&p, false);
                if (!t.key[0])
                        goto bad;
                skip_ws(&p);
                if (neg) {
                        t.op = OP_NOTEXISTS;
                } else if (p[0] == '!' && p[1] == '=') {
                        t.op = OP_NE;
                        p += 2;
                } else if (p[0] == '=' && p[1] == '=') {
                        t.op = OP_EQ;
                        p += 2;
                } else if (p[0] == '=') {
                        t.op = OP_EQ;
                        p++;
                } else if (!fields && (!strncmp(p, "in", 2) || !strncmp(p, "notin", 5))) {
                        t.op = p[0] == 'i' ? OP_IN : OP_NOTIN;
                        p += t.op == OP_IN ? 2 : 5;
                        skip_ws(&p);
                        if (*p != '(')
                                goto bad;
                        p++;
                        for (;;) {
                                skip_ws(&p);
                                add_val(&t, read_token(&p, true));
                                skip_ws(&p);
                                if (*p == ',') {
                                        p++;
                                        continue;
                                }
                                if (*p == ')') {
                                        p++;
                                        break;
                                }
                                goto bad;
                        }
                } else if (!fields && (*p == ',' || !*p)) {
                        t.op = OP_EXISTS;
                } else {
                        goto bad;
                }
                if (t.op == OP_EQ || t.op == OP_NE) {
                        skip_ws(&p);
                        add_val(&t, read_token(&p, true));
                }
                skip_ws(&p);
                if (*p == ',')
                        p++;
                else if (*p)
                        goto bad;
                skip_ws(&p);
                if (s->n == s->cap)
                        kb_grow((void **)&s->t, &s->cap, s->n + 1, sizeof(*s->t));
                s->t[s->n++] = t;
                continue;
        bad:
                term_release(&t);
                snprintf(err, errlen, "unable to parse requirement: invalid %s selector: %s",
                         fields ? "field" : "label", text);
                kb__selector_free(s);
                return KB_EBADINPUT;
        }
        *out = s;
        return 0;
}

const char *kb__field_text(const struct kb_value *obj, const char *path, char *buf, size_t n)
{
        const struct kb_value *v = obj;
        const char *p = path;
        while (v && *p) {
                const char *dot = strchr(p, '.');
                size_t len = dot ? (size_t)(dot - p) : strlen(p);
                char key[256];
                if (len >= sizeof(key))
                        return "";
                memcpy(key, p, len);
                key[len] = 0;
                v = kb_value_get(v, key);
                p += len + (dot ? 1 : 0);
        }
        if (!v)
                return "";
        if (v->type == KB_VBOOL)
                return v->b ? "true" : "false";
        const char *t = kb_value_text(v);
        if (!t)
                return "";
        snprintf(buf, n, "%s", t);
        return buf;
}

static bool term_match(const struct kb_selector *s, const struct term *t,
                       const struct kb_value *obj)
{
        const char *val = NULL;
        char buf[512];
        if (s->fields) {
                val = kb__field_text(obj, t->key, buf, sizeof(buf));
        } else {
                val = kb_value_str(kb_value_dig(obj, "metadata", "labels", t->key));
        }
        switch (t->op) {
        case OP_EQ:
                return val ? !strcmp(val, t->vals[0]) : false;
        case OP_NE:
                return val ? strcmp(val, t->vals[0]) != 0 : true;
        case OP_EXISTS:
                return val != NULL;
        case OP_NOTEXISTS:
                return val == NULL;
        case OP_IN:
        case OP_NOTIN: {
                bool in = false;
                for (size_t i = 0; val && i < t->nvals; i++)
                        in |= !strcmp(val, t->vals[i]);
                return t->op == OP_IN ? in : !in;
        }
        }
        return false;
}

bool kb__selector_match(const struct kb_selector *s, const struct kb_value *obj)
{
        if (!s)
                return true;
        for (size_t i = 0; i < s->n; i++)
                if (!term_match(s, &s->t[i], obj))
                        return false;
        return true;
}

/*
 * The field selectors the real server accepts: metadata.name and
 * metadata.namespace on every type, and per type the fields its field
 * label conversion knows; a custom resource's are its CRD's
 * selectableFields.  Anything else is 400 "field label not supported".
 */
static const char *const pod_fields[] = {
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.podIPs",
    "status.nominatedNodeName",
    NULL,
};
static const char *const event_fields[] = {
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
    NULL,
};
static const char *const node_fields[] = {"spec.unschedulable", NULL};
static const char *const ns_fields[] = {"status.phase", NULL};
static const char *const secret_fields[] = {"type", NULL};
static const char *const job_fields[] = {"status.successful", NULL};

static const char *const *type_fields(const struct kb_rtype *rt)
{
        static const struct {
                const char *group, *resource;
                const char *const *fields;
        } types[] = {
            {"", "pods", pod_fields},       {"", "events", event_fields},
            {"", "nodes", node_fields},     {"", "namespaces", ns_fields},
            {"", "secrets", secret_fields}, {"batch", "jobs", job_fields},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(types); i++)
                if (!strcmp(types[i].group, rt->group) && !strcmp(types[i].resource, rt->resource))
                        return types[i].fields;
        return NULL;
}

const char *kb__selector_unsupported(const struct kb_selector *s, const struct kb_rtype *rt)
{
        for (size_t i = 0; s && i < s->n; i++) {
                const char *k = s->t[i].key;
                bool ok = !strcmp(k, "metadata.name") || !strcmp(k, "metadata.namespace");
                const char *const *f = rt->custom ? NULL : type_fields(rt);
                for (size_t j = 0; !ok && f && f[j]; j++)
                        ok = !strcmp(f[j], k);
                for (size_t j = 0; !ok && rt->custom && kb_value_is(rt->selectable, KB_VARRAY) &&
                                   j < rt->selectable->arr.n;
                     j++)
                        ok = kb_streq(kb_value_str(rt->selectable->arr.v[j]), k);
                if (!ok)
                        return k;
        }
        return NULL;
}
