/*
 * Selectors as the API writes them: one requirement ({key, operator,
 * values}) of a node selector term or a label selector, and a
 * metav1.LabelSelector ({matchLabels, matchExpressions}); decoding with the
 * API server's checks, freeing, and matching a label selector against an
 * object's labels (k8s.io/apimachinery labels.Selector.Matches).  Node
 * affinity (pod.c) and the inter-pod placement fields (podplace.c), as
 * well as PodGroups and HyperNodes (objects.c, hypernode.c), read theirs
 * here.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-int.h"

/* ---- freeing ------------------------------------------------------------------- */

void kb__api_reqs_free(struct kb_selector_req *r, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(r[i].key);
                for (size_t j = 0; j < r[i].nvalues; j++)
                        free(r[i].values[j]);
                free(r[i].values);
        }
        free(r);
}

void kb__api_label_selector_release(struct kb_label_selector *s)
{
        kb__api_reqs_free(s->reqs, s->nreqs);
        memset(s, 0, sizeof(*s));
}

/* ---- one requirement ---------------------------------------------------------- */

static const struct {
        const char *name;
        enum kb_selector_op op;
} sel_ops[] = {
    {"In", KB_SEL_IN},         {"NotIn", KB_SEL_NOT_IN},
    {"Exists", KB_SEL_EXISTS}, {"DoesNotExist", KB_SEL_DOES_NOT_EXIST},
    {"Gt", KB_SEL_GT},         {"Lt", KB_SEL_LT},
};

/* Whether s is a base-10 int64 as Go's strconv.ParseInt reads it, which is
 * how the scheduler's label selector reads Gt/Lt values. */
static bool is_int64(const char *s)
{
        char *end;
        if (!*s || isspace((unsigned char)*s))
                return false;
        errno = 0;
        (void)strtoll(s, &end, 10);
        return errno == 0 && *end == '\0';
}

/*
 * One NodeSelectorRequirement or LabelSelectorRequirement.  The checks are
 * the API server's (ValidateNodeSelectorRequirement,
 * ValidateNodeFieldSelectorRequirement, ValidateLabelSelectorRequirement),
 * plus the integer check on Gt/Lt that the scheduler would otherwise make
 * at match time, silently failing the term.  A label selector knows In,
 * NotIn, Exists and DoesNotExist only.
 */
int kb__api_selector_req(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                         enum kb__sel_kind kind, struct kb_selector_req *r)
{
        bool field = kind == KB__SEL_NODE_FIELD;
        char p[KB__API_PATH];
        char *op = NULL;
        int rc;

        if ((rc = kb__api_object(d, v, path)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.key", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "key"), p, &r->key)))
                return rc;
        if (!r->key || !r->key[0])
                return kb__api_fail(d, p, "required");
        /* matchFields supports one field, the node's name. */
        if (field && strcmp(r->key, "metadata.name") != 0)
                return kb__api_fail(d, p, "must be metadata.name, got \"%s\"", r->key);

        kb__api_path(p, sizeof(p), "%s.operator", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "operator"), p, &op)))
                return rc;
        if (!op || !op[0]) {
                free(op);
                return kb__api_fail(d, p, "required");
        }
        size_t k;
        for (k = 0; k < KB_ARRAY_SIZE(sel_ops); k++)
                if (strcmp(op, sel_ops[k].name) == 0)
                        break;
        if (k == KB_ARRAY_SIZE(sel_ops)) {
                rc = kb__api_fail(d, p, "unknown operator \"%s\"", op);
                free(op);
                return rc;
        }
        free(op);
        r->op = sel_ops[k].op;
        if (kind == KB__SEL_LABEL && (r->op == KB_SEL_GT || r->op == KB_SEL_LT))
                return kb__api_fail(d, p,
                                    "must be In, NotIn, Exists or DoesNotExist in a label "
                                    "selector, got %s",
                                    sel_ops[k].name);
        if (field && r->op != KB_SEL_IN && r->op != KB_SEL_NOT_IN)
                return kb__api_fail(d, p, "must be In or NotIn for a field selector, got %s",
                                    sel_ops[k].name);

        const struct kb_value *vals = kb_value_get(v, "values");
        kb__api_path(p, sizeof(p), "%s.values", path);
        if ((rc = kb__api_list(d, vals, p)))
                return rc;
        if (kb__api_set(vals) && vals->arr.n) {
                r->values = kb_xcalloc(vals->arr.n, sizeof(*r->values));
                r->nvalues = vals->arr.n;
                for (size_t j = 0; j < vals->arr.n; j++) {
                        char pj[KB__API_PATH];
                        kb__api_path(pj, sizeof(pj), "%s[%zu]", p, j);
                        if ((rc = kb__api_str(d, vals->arr.v[j], pj, &r->values[j])))
                                return rc;
                        if (!r->values[j])
                                return kb__api_fail(d, pj, "must be a string, got null");
                }
        }

        const char *name = sel_ops[k].name;
        switch (r->op) {
        case KB_SEL_IN:
        case KB_SEL_NOT_IN:
                if (r->nvalues == 0)
                        return kb__api_fail(d, p, "must be non-empty for operator %s", name);
                if (field && r->nvalues != 1)
                        return kb__api_fail(d, p,
                                            "must hold exactly one value for a field selector, "
                                            "got %zu",
                                            r->nvalues);
                break;
        case KB_SEL_EXISTS:
        case KB_SEL_DOES_NOT_EXIST:
                if (r->nvalues != 0)
                        return kb__api_fail(d, p, "must be empty for operator %s", name);
                break;
        case KB_SEL_GT:
        case KB_SEL_LT:
                if (r->nvalues != 1)
                        return kb__api_fail(d, p,
                                            "must hold exactly one integer for operator %s, "
                                            "got %zu values",
                                            name, r->nvalues);
                if (!is_int64(r->values[0]))
                        return kb__api_fail(d, p, "must be an integer for operator %s, got \"%s\"",
                                            name, r->values[0]);
                break;
        }
        return 0;
}

/* ---- label selectors ----------------------------------------------------------------- */

void kb__api_selector_add(struct kb_label_selector *s, const char *key, enum kb_selector_op op,
                          const char *value)
{
        s->reqs = kb_xrealloc(s->reqs, (s->nreqs + 1) * sizeof(*s->reqs));
        struct kb_selector_req *r = &s->reqs[s->nreqs++];
        memset(r, 0, sizeof(*r));
        r->key = kb_xstrdup(key);
        r->op = op;
        if (value) {
                r->values = kb_xmalloc(sizeof(*r->values));
                r->values[0] = kb_xstrdup(value);
                r->nvalues = 1;
        }
}

int kb__api_label_selector(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                           struct kb_label_selector *s)
{
        char p[KB__API_PATH];
        int rc;

        if (!kb__api_set(v))
                return 0;
        if ((rc = kb__api_object(d, v, path)))
                return rc;
        s->set = true;
        struct kb_kv *labels = NULL;
        size_t nlabels = 0;
        kb__api_path(p, sizeof(p), "%s.matchLabels", path);
        rc = kb__api_kvs(d, kb_value_get(v, "matchLabels"), p, &labels, &nlabels);
        for (size_t i = 0; !rc && i < nlabels; i++) {
                if (!labels[i].key[0]) {
                        rc = kb__api_fail(d, p, "keys must not be empty");
                        break;
                }
                kb__api_selector_add(s, labels[i].key, KB_SEL_IN, labels[i].value);
        }
        kb__api_kvs_free(labels, nlabels);
        if (rc)
                return rc;
        const struct kb_value *exprs = kb_value_get(v, "matchExpressions");
        kb__api_path(p, sizeof(p), "%s.matchExpressions", path);
        if ((rc = kb__api_list(d, exprs, p)))
                return rc;
        for (size_t i = 0; kb__api_set(exprs) && i < exprs->arr.n; i++) {
                char pi[KB__API_PATH];
                kb__api_path(pi, sizeof(pi), "%s[%zu]", p, i);
                s->reqs = kb_xrealloc(s->reqs, (s->nreqs + 1) * sizeof(*s->reqs));
                struct kb_selector_req *r = &s->reqs[s->nreqs++];
                memset(r, 0, sizeof(*r));
                if ((rc = kb__api_selector_req(d, exprs->arr.v[i], pi, KB__SEL_LABEL, r)))
                        return rc;
        }
        return 0;
}

static bool has_value(const struct kb_selector_req *r, const char *v)
{
        for (size_t i = 0; i < r->nvalues; i++)
                if (strcmp(r->values[i], v) == 0)
                        return true;
        return false;
}

bool kb_selector_req_matches(const struct kb_selector_req *r, const char *val)
{
        switch (r->op) {
        case KB_SEL_IN:
                return val && has_value(r, val);
        case KB_SEL_NOT_IN:
                return !val || !has_value(r, val);
        case KB_SEL_EXISTS:
                return val != NULL;
        case KB_SEL_DOES_NOT_EXIST:
                return val == NULL;
        default:
                return false; /* Gt, Lt: refused in label selectors when decoded */
        }
}

bool kb_label_selector_matches(const struct kb_label_selector *sel, const struct kb_meta *m)
{
        if (!sel->set)
                return false;
        for (size_t i = 0; i < sel->nreqs; i++)
                if (!kb_selector_req_matches(&sel->reqs[i], kb_meta_label(m, sel->reqs[i].key)))
                        return false;
        return true;
}
