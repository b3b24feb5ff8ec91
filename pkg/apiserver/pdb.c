/*
 * PodDisruptionBudgets (policy/v1): what the kind accepts, how kubectl
 * prints it, and the check an eviction (pods/NAME/eviction) makes.
 *
 * A budget counts the pods of its namespace that its selector matches:
 * expected is all of them, healthy those Running with Ready=True and not
 * being deleted.  It wants desired of them healthy: minAvailable (a number,
 * or a percentage of expected rounded up), or expected - maxUnavailable
 * (likewise); allowed = healthy - desired.  For example, minAvailable 1 over
 * pods a and b, both ready: desired 1, healthy 2, allowed 1, so a is
 * evicted; a is then being deleted, healthy is 1, allowed 0, and b is
 * refused with 429 until another matching pod is ready.
 *
 * kube-apiserver reads these numbers from the budget's status (kept by the
 * disruption controller) and takes one off disruptionsAllowed per eviction;
 * this server counts at eviction time under its one lock, and the evicted
 * pods' deletionTimestamp takes them out of healthy, which comes to the
 * same.  As there: a pod that is not Running (Pending, Succeeded, Failed)
 * or is already being deleted is evicted without asking; a Running pod that
 * is not Ready is evicted with unhealthyPodEvictionPolicy AlwaysAllow, and
 * with IfHealthyBudget (the default) while the budget holds (healthy >=
 * desired); a pod that more than one budget matches is refused with 500.
 */
#include "apiserver/apiserver-http.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/k8s.pb-c.h"

/* ---- matching and counting ------------------------------------------------------- */

static bool has_string(const struct kb_value *list, const char *s)
{
        for (size_t i = 0; kb_value_is(list, KB_VARRAY) && i < list->arr.n; i++)
                if (kb_streq(kb_value_str(list->arr.v[i]), s))
                        return true;
        return false;
}

/* Whether labels satisfy a policy/v1 selector: none selects no pod, {}
 * every pod; matchLabels and matchExpressions must all hold. */
static bool selects(const struct kb_value *sel, const struct kb_value *labels)
{
        if (!kb_value_is(sel, KB_VOBJECT))
                return false;
        const struct kb_value *ml = kb_value_get(sel, "matchLabels");
        for (size_t i = 0; kb_value_is(ml, KB_VOBJECT) && i < ml->obj.n; i++)
                if (!kb_streq(kb_value_str(kb_value_get(labels, ml->obj.m[i].key)),
                              kb_value_str(ml->obj.m[i].val)))
                        return false;
        const struct kb_value *ex = kb_value_get(sel, "matchExpressions");
        for (size_t i = 0; kb_value_is(ex, KB_VARRAY) && i < ex->arr.n; i++) {
                const struct kb_value *e = ex->arr.v[i];
                const char *key = kb_value_str(kb_value_get(e, "key"));
                const char *op = kb_value_str(kb_value_get(e, "operator"));
                const char *val = key ? kb_value_str(kb_value_get(labels, key)) : NULL;
                const struct kb_value *vals = kb_value_get(e, "values");
                bool ok = kb_streq(op, "In")             ? val && has_string(vals, val)
                          : kb_streq(op, "NotIn")        ? !val || !has_string(vals, val)
                          : kb_streq(op, "Exists")       ? val != NULL
                          : kb_streq(op, "DoesNotExist") ? val == NULL
                                                         : false;
                if (!ok)
                        return false;
        }
        return true;
}

static bool running(const struct kb_value *pod)
{
        return kb_streq(kb_value_str(kb_value_dig(pod, "status", "phase")), "Running");
}

static bool deleting(const struct kb_value *pod)
{
        return kb_value_dig(pod, "metadata", "deletionTimestamp") != NULL;
}

/* Running, Ready=True and not being deleted: what a budget counts. */
static bool healthy(const struct kb_value *pod)
{
        if (!running(pod) || deleting(pod))
                return false;
        const struct kb_value *cs = kb_value_dig(pod, "status", "conditions");
        for (size_t i = 0; kb_value_is(cs, KB_VARRAY) && i < cs->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_get(cs->arr.v[i], "type")), "Ready"))
                        return kb_streq(kb_value_str(kb_value_get(cs->arr.v[i], "status")), "True");
        return false;
}

/* An integer, or "N%" of of (rounded up); -1 when it is neither. */
static int64_t scaled(const struct kb_value *v, int64_t of)
{
        int64_t n;
        if (kb_value_is(v, KB_VNUMBER))
                return kb_value_int(v, &n) == 0 && n >= 0 ? n : -1;
        const char *s = kb_value_str(v);
        if (!s || !*s)
                return -1;
        char *end;
        long long pct = strtoll(s, &end, 10);
        if (end == s || strcmp(end, "%") || pct < 0 || pct > 100 || s[0] == '-' || s[0] == '+')
                return -1;
        return (pct * of + 99) / 100;
}

struct budget {
        int64_t expected, healthy, desired;
};

/* Counts budget's pods (srv->mu held). */
static void count(struct kb_apiserver *srv, const struct kb_value *pdb, struct budget *b)
{
        memset(b, 0, sizeof(*b));
        const char *ns = kb__meta_str(pdb, "namespace");
        const struct kb_value *spec = kb_value_get(pdb, "spec");
        const struct kb_value *sel = kb_value_get(spec, "selector");
        if (!ns || !srv->pods)
                return;
        char *first = kb_xasprintf("%s/", ns);
        size_t nslen = strlen(first);
        for (struct kb_obj *o = kb__index_seek(srv->pods, first, true);
             o && !strncmp(o->key, first, nslen); o = kb__index_seek(srv->pods, o->key, false)) {
                const struct kb_value *pod = o->doc->v;
                if (!selects(sel, kb_value_dig(pod, "metadata", "labels")))
                        continue;
                b->expected++;
                b->healthy += healthy(pod);
        }
        free(first);
        const struct kb_value *min = kb_value_get(spec, "minAvailable");
        const struct kb_value *max = kb_value_get(spec, "maxUnavailable");
        if (min && min->type != KB_VNULL)
                b->desired = scaled(min, b->expected);
        else if (max && max->type != KB_VNULL)
                b->desired = KB_MAX(0, b->expected - scaled(max, b->expected));
}

static struct kb_value *cause(const char *reason, const char *msg)
{
        struct kb_value *c = kb_value_new(KB_VOBJECT);
        kb_value_set(c, "reason", kb_value_new_string(reason));
        kb_value_set(c, "message", kb_value_new_string(msg));
        return c;
}

static struct kb_value *refusal(int code, const char *reason, const char *msg,
                                const char *cause_msg)
{
        struct kb_value *s = kb__status_obj(code, reason, msg);
        if (cause_msg) {
                struct kb_value *causes = kb_value_new(KB_VARRAY);
                kb_value_append(causes, cause("DisruptionBudget", cause_msg));
                kb_value_set(kb_value_ensure_object(s, "details"), "causes", causes);
        }
        kb_value_set(s, "code", kb_value_new_int(code));
        return s;
}

struct kb_value *kb__pdb_refusal(struct kb_apiserver *srv, const struct kb_value *pod, int *code)
{
        if (!running(pod) || deleting(pod))
                return NULL;
        struct kb_rtype *rt = kb__type_find(srv, "policy", "v1", "poddisruptionbudgets");
        const char *ns = kb__meta_str(pod, "namespace");
        if (!rt || !ns)
                return NULL;
        const struct kb_value *labels = kb_value_dig(pod, "metadata", "labels");
        const struct kb_value *pdb = NULL;
        size_t n = 0;
        char *first = kb_xasprintf("%s/", ns);
        size_t nslen = strlen(first);
        for (struct kb_obj *o = kb__index_seek(rt, first, true);
             o && !strncmp(o->key, first, nslen); o = kb__index_seek(rt, o->key, false)) {
                if (selects(kb_value_dig(o->doc->v, "spec", "selector"), labels)) {
                        pdb = o->doc->v;
                        n++;
                }
        }
        free(first);
        if (n == 0)
                return NULL;
        if (n > 1) {
                *code = 500;
                return refusal(500, "InternalError",
                               "This pod has more than one PodDisruptionBudget, which the "
                               "eviction subresource does not support.",
                               NULL);
        }
        struct budget b;
        count(srv, pdb, &b);
        if (!healthy(pod)) {
                /* Running but not ready: evicting it takes nothing healthy
                 * away, so only a budget already short keeps it (unless
                 * its policy says always). */
                const char *policy =
                    kb_value_str(kb_value_dig(pdb, "spec", "unhealthyPodEvictionPolicy"));
                if (kb_streq(policy, "AlwaysAllow") || b.healthy >= b.desired)
                        return NULL;
        } else if (b.healthy - b.desired > 0) {
                return NULL;
        }
        char msg[512];
        snprintf(msg, sizeof(msg),
                 "The disruption budget %s needs %" PRId64 " healthy pods and has %" PRId64
                 " currently",
                 kb__meta_str(pdb, "name"), b.desired, b.healthy);
        *code = 429;
        return refusal(429, "TooManyRequests",
                       "Cannot evict pod as it would violate the pod's disruption budget.", msg);
}

/* ---- validation ---------------------------------------------------------------------- */

static void int_or_percent(const struct kb_value *spec, const char *key, struct kb_causes *c)
{
        const struct kb_value *v = kb_value_get(spec, key);
        if (!v || v->type == KB_VNULL || scaled(v, 100) >= 0)
                return;
        char field[64];
        snprintf(field, sizeof(field), "spec.%s", key);
        const char *t = kb_value_text(v);
        if (kb_value_is(v, KB_VNUMBER))
                kb__cause_add(c, "FieldValueInvalid", field,
                              "Invalid value: %s: must be an integer greater than or equal to 0",
                              t ? t : "");
        else
                kb__cause_add(c, "FieldValueInvalid", field,
                              "Invalid value: \"%s\": must be an integer or a percentage between "
                              "0%% and 100%% (\"50%%\")",
                              t ? t : "");
}

void kb__validate_pdb(const struct kb_value *obj, struct kb_causes *c)
{
        const struct kb_value *spec = kb_value_get(obj, "spec");
        const struct kb_value *min = kb_value_get(spec, "minAvailable");
        const struct kb_value *max = kb_value_get(spec, "maxUnavailable");
        if (min && min->type != KB_VNULL && max && max->type != KB_VNULL)
                kb__cause_add(c, "FieldValueInvalid", "spec",
                              "Invalid value: minAvailable and maxUnavailable cannot be both set");
        int_or_percent(spec, "minAvailable", c);
        int_or_percent(spec, "maxUnavailable", c);
        const struct kb_value *ex = kb_value_dig(spec, "selector", "matchExpressions");
        for (size_t i = 0; kb_value_is(ex, KB_VARRAY) && i < ex->arr.n; i++) {
                const char *op = kb_value_str(kb_value_get(ex->arr.v[i], "operator"));
                const struct kb_value *vals = kb_value_get(ex->arr.v[i], "values");
                size_t nv = kb_value_is(vals, KB_VARRAY) ? vals->arr.n : 0;
                char field[96];
                snprintf(field, sizeof(field), "spec.selector.matchExpressions[%zu].%s", i,
                         kb_streq(op, "In") || kb_streq(op, "NotIn") || kb_streq(op, "Exists") ||
                                 kb_streq(op, "DoesNotExist")
                             ? "values"
                             : "operator");
                if (!kb_streq(op, "In") && !kb_streq(op, "NotIn") && !kb_streq(op, "Exists") &&
                    !kb_streq(op, "DoesNotExist"))
                        kb__cause_add(c, "FieldValueNotSupported", field,
                                      "Unsupported value: \"%s\": supported values: \"In\", "
                                      "\"NotIn\", \"Exists\", \"DoesNotExist\"",
                                      op ? op : "");
                else if ((kb_streq(op, "In") || kb_streq(op, "NotIn")) && nv == 0)
                        kb__cause_add(c, "FieldValueRequired", field,
                                      "Required value: must be specified when `operator` is "
                                      "'In' or 'NotIn'");
                else if ((kb_streq(op, "Exists") || kb_streq(op, "DoesNotExist")) && nv)
                        kb__cause_add(c, "FieldValueForbidden", field,
                                      "Forbidden: may not be specified when `operator` is "
                                      "'Exists' or 'DoesNotExist'");
        }
}

/* ---- printing ---------------------------------------------------------------------- */

static const struct kb_col pdb_cols[] = {
    KB_COL_NAME,
    {"Min Available", "string", "", 0, "The minimum number of pods that must be available."},
    {"Max Unavailable", "string", "", 0, "The maximum number of pods that may be unavailable."},
    {"Allowed Disruptions", "integer", "", 0,
     "Evictions allowed now (counted when asked, by this server)."},
    KB_COL_AGE,
};

static void spec_cell(struct kb_value *cells, const struct kb_value *v)
{
        const char *t = v && v->type != KB_VNULL ? kb_value_text(v) : NULL;
        kb_value_append(cells, kb_value_new_string(t ? t : "N/A"));
}

static void pdb_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        kb__cell_name(cells, obj);
        const struct kb_value *spec = kb_value_get(obj, "spec");
        spec_cell(cells, kb_value_get(spec, "minAvailable"));
        spec_cell(cells, kb_value_get(spec, "maxUnavailable"));
        struct budget b;
        count(srv, obj, &b);
        kb_value_append(cells, kb_value_new_int(KB_MAX(0, b.healthy - b.desired)));
        kb__cell_age(cells, obj);
}

const struct kb_apikind kb__kind_poddisruptionbudgets = {
    .group = "policy",
    .version = "v1",
    .resource = "poddisruptionbudgets",
    .kind = "PodDisruptionBudget",
    .namespaced = true,
    .shorts = {"pdb"},
    .validate = kb__validate_pdb,
    .cols = pdb_cols,
    .ncols = KB_ARRAY_SIZE(pdb_cols),
    .row = pdb_row,
    .proto = &kbk8s__pod_disruption_budget__descriptor,
};
