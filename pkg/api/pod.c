/*
 * Pods: scheduling fields, node affinity and tolerations; the resource
 * request is requests.c's, the inter-pod placement fields podplace.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-int.h"

const char *kb_pod_phase_name(enum kb_pod_phase p)
{
        switch (p) {
        case KB_POD_PENDING:
                return "Pending";
        case KB_POD_RUNNING:
                return "Running";
        case KB_POD_SUCCEEDED:
                return "Succeeded";
        case KB_POD_FAILED:
                return "Failed";
        case KB_POD_UNKNOWN:
                return "Unknown";
        }
        return "?";
}

/* ---- freeing ---------------------------------------------------------- */

static void term_release(struct kb_node_term *t)
{
        kb__api_reqs_free(t->exprs, t->nexprs);
        kb__api_reqs_free(t->fields, t->nfields);
}

void kb_pod_free(struct kb_pod *p)
{
        if (!p)
                return;
        kb_meta_release(&p->meta);
        free(p->scheduler_name);
        free(p->node_name);
        free(p->nominated_node_name);
        free(p->priority_class_name);
        free(p->group_name);
        kb__api_owner_free(p->controller);
        free(p->workload_group);
        free(p->workload_queue);
        free(p->workload_invalid);
        free(p->unevaluated);
        free(p->runtime_invalid);
        kb__api_kvs_free(p->node_selector, p->nnode_selector);
        for (size_t i = 0; i < p->nrequired; i++)
                term_release(&p->required[i]);
        free(p->required);
        for (size_t i = 0; i < p->npreferred; i++)
                term_release(&p->preferred[i].term);
        free(p->preferred);
        for (size_t i = 0; i < p->ntolerations; i++) {
                free(p->tolerations[i].key);
                free(p->tolerations[i].value);
                free(p->tolerations[i].effect);
        }
        free(p->tolerations);
        kb__api_pod_placement_free(p);
        free(p->invalid);
        kb_condition_free(p->scheduled);
        free(p);
}

void kb_condition_free(struct kb_condition *c)
{
        if (!c)
                return;
        free(c->type);
        free(c->status);
        free(c->reason);
        free(c->message);
        free(c->transition_id);
        free(c);
}

static char *str_or_null(const struct kb_value *v)
{
        const char *s = kb_value_str(v);
        return s ? kb_xstrdup(s) : NULL;
}

/* The PodScheduled condition of an unbound pod, read leniently (a status
 * the API server accepted is the kubelet's and the scheduler's business;
 * one that does not read is treated as absent, never as a bad pod). */
static struct kb_condition *pod_scheduled(const struct kb_value *status)
{
        const struct kb_value *conds = kb_value_get(status, "conditions");
        if (!kb_value_is(conds, KB_VARRAY))
                return NULL;
        for (size_t i = 0; i < conds->arr.n; i++) {
                const struct kb_value *c = conds->arr.v[i];
                if (!kb_streq(kb_value_str(kb_value_get(c, "type")), "PodScheduled"))
                        continue;
                struct kb_condition *out = kb_xcalloc(1, sizeof(*out));
                out->type = kb_xstrdup("PodScheduled");
                out->status = str_or_null(kb_value_get(c, "status"));
                out->reason = str_or_null(kb_value_get(c, "reason"));
                out->message = str_or_null(kb_value_get(c, "message"));
                const char *lt = kb_value_str(kb_value_get(c, "lastTransitionTime"));
                if (!lt || kb_parse_time(lt, &out->last_transition))
                        out->last_transition = 0;
                return out;
        }
        return NULL;
}

/* ---- node affinity ---------------------------------------------------- */

static int decode_req(struct kb__api_dec *d, const struct kb_value *v, const char *path, void *elem,
                      void *ctx)
{
        return kb__api_selector_req(d, v, path, *(const enum kb__sel_kind *)ctx, elem);
}

static int decode_reqs(struct kb__api_dec *d, const struct kb_value *list, const char *path,
                       bool field, struct kb_selector_req **out, size_t *n)
{
        enum kb__sel_kind kind = field ? KB__SEL_NODE_FIELD : KB__SEL_NODE_LABEL;
        return kb__api_list_of(d, list, path, sizeof(**out), (void **)out, n, decode_req, &kind);
}

/* A NodeSelectorTerm.  An empty one is kept as is: it matches no node (the
 * API's documented meaning), which is the matcher's business. */
static int decode_term(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                       struct kb_node_term *t)
{
        char p[KB__API_PATH];
        int rc;

        if ((rc = kb__api_object(d, v, path)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.matchExpressions", path);
        if ((rc = decode_reqs(d, kb_value_get(v, "matchExpressions"), p, false, &t->exprs,
                              &t->nexprs)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.matchFields", path);
        return decode_reqs(d, kb_value_get(v, "matchFields"), p, true, &t->fields, &t->nfields);
}

/* The scheduling fields kbatch does not evaluate yet, when the pod sets
 * them (a list or map with something in it). */
static char *unevaluated(const struct kb_value *spec)
{
        static const char *const paths[][3] = {
            {"resourceClaims", NULL, NULL},
        };
        struct kb_buf b;
        kb_buf_init(&b);
        for (size_t i = 0; i < KB_ARRAY_SIZE(paths); i++) {
                const struct kb_value *v = kb_value_get(spec, paths[i][0]);
                for (int k = 1; k < 3 && paths[i][k]; k++)
                        v = kb_value_get(v, paths[i][k]);
                bool set = (kb_value_is(v, KB_VARRAY) && v->arr.n) ||
                           (kb_value_is(v, KB_VOBJECT) && v->obj.n);
                if (!set)
                        continue;
                kb_buf_printf(&b, "%sspec", b.len ? ", " : "");
                for (int k = 0; k < 3 && paths[i][k]; k++)
                        kb_buf_printf(&b, ".%s", paths[i][k]);
        }
        if (!b.len) {
                kb_buf_release(&b);
                return NULL;
        }
        return kb_buf_detach(&b);
}

static int decode_affinity(struct kb__api_dec *d, const struct kb_value *spec, struct kb_pod *pod)
{
        static const char na_path[] = "spec.affinity.nodeAffinity";
        const struct kb_value *aff = kb_value_get(spec, "affinity");
        const struct kb_value *na = kb_value_get(aff, "nodeAffinity");
        char p[KB__API_PATH];
        int rc;

        if ((rc = kb__api_object(d, aff, "spec.affinity")) || (rc = kb__api_object(d, na, na_path)))
                return rc;

        const struct kb_value *req =
            kb_value_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
        kb__api_path(p, sizeof(p), "%s.requiredDuringSchedulingIgnoredDuringExecution", na_path);
        if ((rc = kb__api_object(d, req, p)))
                return rc;
        if (kb__api_set(req)) {
                const struct kb_value *terms = kb_value_get(req, "nodeSelectorTerms");
                kb__api_path(p, sizeof(p),
                             "%s.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                             na_path);
                if ((rc = kb__api_list(d, terms, p)))
                        return rc;
                /* The API server rejects a required node selector without
                 * terms (ValidateNodeSelector). */
                if (!kb__api_set(terms) || !terms->arr.n)
                        return kb__api_fail(d, p, "must have at least one term");
                pod->required = kb_xcalloc(terms->arr.n, sizeof(*pod->required));
                pod->nrequired = terms->arr.n;
                for (size_t i = 0; i < terms->arr.n; i++) {
                        char pi[KB__API_PATH];
                        kb__api_path(pi, sizeof(pi), "%s[%zu]", p, i);
                        if ((rc = decode_term(d, terms->arr.v[i], pi, &pod->required[i])))
                                return rc;
                }
        }

        const struct kb_value *pref =
            kb_value_get(na, "preferredDuringSchedulingIgnoredDuringExecution");
        kb__api_path(p, sizeof(p), "%s.preferredDuringSchedulingIgnoredDuringExecution", na_path);
        if ((rc = kb__api_list(d, pref, p)))
                return rc;
        if (!kb__api_set(pref) || !pref->arr.n)
                return 0;
        pod->preferred = kb_xcalloc(pref->arr.n, sizeof(*pod->preferred));
        pod->npreferred = pref->arr.n;
        for (size_t i = 0; i < pref->arr.n; i++) {
                const struct kb_value *t = pref->arr.v[i];
                struct kb_preferred_term *pt = &pod->preferred[i];
                char pi[KB__API_PATH], pw[KB__API_PATH + 16];

                kb__api_path(pi, sizeof(pi), "%s[%zu]", p, i);
                if ((rc = kb__api_object(d, t, pi)))
                        return rc;
                /* ValidatePreferredSchedulingTerms: weight in 1..100. */
                kb__api_path(pw, sizeof(pw), "%s.weight", pi);
                const struct kb_value *w = kb_value_get(t, "weight");
                if (!kb__api_set(w))
                        return kb__api_fail(d, pw, "required");
                if ((rc = kb__api_int32(d, w, pw, 1, 100, &pt->weight)))
                        return rc;
                kb__api_path(pw, sizeof(pw), "%s.preference", pi);
                if ((rc = decode_term(d, kb_value_get(t, "preference"), pw, &pt->term)))
                        return rc;
        }
        return 0;
}

/* ---- tolerations ------------------------------------------------------ */

/* The three effects a taint or toleration may name (v1.TaintEffect). */
int kb__api_taint_effect(const char *s, enum kb_taint_effect *out)
{
        static const struct {
                const char *name;
                enum kb_taint_effect effect;
        } effects[] = {
            {"NoSchedule", KB_TAINT_NO_SCHEDULE},
            {"PreferNoSchedule", KB_TAINT_PREFER_NO_SCHEDULE},
            {"NoExecute", KB_TAINT_NO_EXECUTE},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(effects); i++)
                if (strcmp(s, effects[i].name) == 0) {
                        *out = effects[i].effect;
                        return 0;
                }
        return KB_EBADINPUT;
}

/* Checks are the API server's (ValidateTolerations). */
static int decode_toleration(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                             struct kb_toleration *t)
{
        char p[KB__API_PATH];
        char *op = NULL;
        int rc;

        if ((rc = kb__api_object(d, v, path)))
                return rc;
        kb__api_path(p, sizeof(p), "%s.key", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "key"), p, &t->key)))
                return rc;
        if (!t->key)
                t->key = kb_xstrdup("");
        kb__api_path(p, sizeof(p), "%s.value", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "value"), p, &t->value)))
                return rc;
        if (!t->value)
                t->value = kb_xstrdup("");
        kb__api_path(p, sizeof(p), "%s.effect", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "effect"), p, &t->effect)))
                return rc;
        enum kb_taint_effect e;
        if (t->effect && t->effect[0] && kb__api_taint_effect(t->effect, &e))
                return kb__api_fail(d, p,
                                    "must be NoSchedule, PreferNoSchedule or NoExecute, got \"%s\"",
                                    t->effect);

        kb__api_path(p, sizeof(p), "%s.operator", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "operator"), p, &op)))
                return rc;
        /* The operator defaults to Equal. */
        if (!op || !op[0] || strcmp(op, "Equal") == 0) {
                t->op = KB_TOL_EQUAL;
        } else if (strcmp(op, "Exists") == 0) {
                t->op = KB_TOL_EXISTS;
        } else {
                rc = kb__api_fail(d, p, "must be Equal or Exists, got \"%s\"", op);
                free(op);
                return rc;
        }
        free(op);
        /* An empty key matches every key, which only Exists can mean. */
        if (!t->key[0] && t->op != KB_TOL_EXISTS)
                return kb__api_fail(d, p, "must be Exists when key is empty");
        if (t->op == KB_TOL_EXISTS && t->value[0]) {
                kb__api_path(p, sizeof(p), "%s.value", path);
                return kb__api_fail(d, p, "must be empty when operator is Exists");
        }
        return 0;
}

/* ---- the pod ---------------------------------------------------------- */

static int decode_phase(struct kb__api_dec *d, const struct kb_value *status, struct kb_pod *pod)
{
        static const char *const names[] = {"Pending", "Running", "Succeeded", "Failed", "Unknown"};
        char *phase = NULL;
        int rc;

        pod->phase = KB_POD_PENDING; /* a pod the kubelet has not seen yet */
        if ((rc = kb__api_str(d, kb_value_get(status, "phase"), "status.phase", &phase)))
                return rc;
        if (!phase || !phase[0]) {
                free(phase);
                return 0;
        }
        for (size_t i = 0; i < KB_ARRAY_SIZE(names); i++)
                if (strcmp(phase, names[i]) == 0) {
                        pod->phase = (enum kb_pod_phase)i;
                        free(phase);
                        return 0;
                }
        rc = kb__api_fail(d, "status.phase",
                          "must be Pending, Running, Succeeded, Failed or Unknown, got \"%s\"",
                          phase);
        free(phase);
        return rc;
}

static int pod_fill(struct kb__api_dec *d, const struct kb_value *doc, struct kb_pod *pod)
{
        const struct kb_value *spec = kb_value_get(doc, "spec");
        const struct kb_value *status = kb_value_get(doc, "status");
        char *policy = NULL;
        int rc;

        if ((rc = kb__api_meta(d, doc, true, &pod->meta)))
                return rc;
        if ((rc = kb__api_object(d, spec, "spec")) || (rc = kb__api_object(d, status, "status")))
                return rc;

        if ((rc = kb__api_str(d, kb_value_get(spec, "schedulerName"), "spec.schedulerName",
                              &pod->scheduler_name)))
                return rc;
        /* SetDefaults_PodSpec: schedulerName defaults to default-scheduler. */
        if (!pod->scheduler_name || !pod->scheduler_name[0]) {
                free(pod->scheduler_name);
                pod->scheduler_name = kb_xstrdup("default-scheduler");
        }
        if ((rc = kb__api_str(d, kb_value_get(spec, "nodeName"), "spec.nodeName",
                              &pod->node_name)) ||
            (rc = kb__api_str(d, kb_value_get(status, "nominatedNodeName"),
                              "status.nominatedNodeName", &pod->nominated_node_name)) ||
            (rc = kb__api_str(d, kb_value_get(spec, "priorityClassName"), "spec.priorityClassName",
                              &pod->priority_class_name)))
                return rc;
        /* An empty nodeName is an unbound pod, as in the API. */
        if (pod->node_name && !pod->node_name[0]) {
                free(pod->node_name);
                pod->node_name = NULL;
        }
        if (pod->nominated_node_name && !pod->nominated_node_name[0]) {
                free(pod->nominated_node_name);
                pod->nominated_node_name = NULL;
        }
        if (!pod->node_name)
                pod->scheduled = pod_scheduled(status);

        const struct kb_value *prio = kb_value_get(spec, "priority");
        if ((rc = kb__api_int32(d, prio, "spec.priority", INT32_MIN, INT32_MAX, &pod->priority)))
                return rc;
        pod->has_priority = kb__api_set(prio);

        const struct kb_value *grace = kb_value_get(spec, "terminationGracePeriodSeconds");
        pod->grace_period = -1;
        if (kb__api_set(grace) &&
            (rc = kb__api_int32(d, grace, "spec.terminationGracePeriodSeconds", 0, INT32_MAX,
                                &pod->grace_period)))
                return rc;

        if ((rc = kb__api_str(d, kb_value_get(spec, "preemptionPolicy"), "spec.preemptionPolicy",
                              &policy)))
                return rc;
        if (policy && policy[0] && strcmp(policy, "Never") != 0 &&
            strcmp(policy, "PreemptLowerPriority") != 0) {
                rc = kb__api_fail(d, "spec.preemptionPolicy",
                                  "must be PreemptLowerPriority or Never, got \"%s\"", policy);
                free(policy);
                return rc;
        }
        pod->preempt_never = kb_streq(policy, "Never");
        free(policy);

        if ((rc = kb__api_kvs(d, kb_value_get(spec, "nodeSelector"), "spec.nodeSelector",
                              &pod->node_selector, &pod->nnode_selector)))
                return rc;
        if ((rc = decode_affinity(d, spec, pod)))
                return rc;
        pod->unevaluated = unevaluated(spec);
        kb__api_pod_placement(d, spec, pod);
        kb__api_pod_runtime(spec, pod);
        const struct kb_value *started = kb_value_get(status, "startTime");
        if (kb__api_set(started) &&
            (rc = kb__api_time(d, started, "status.startTime", &pod->start_time)))
                return rc;

        const struct kb_value *tols = kb_value_get(spec, "tolerations");
        if ((rc = kb__api_list(d, tols, "spec.tolerations")))
                return rc;
        if (kb__api_set(tols) && tols->arr.n) {
                pod->tolerations = kb_xcalloc(tols->arr.n, sizeof(*pod->tolerations));
                pod->ntolerations = tols->arr.n;
                for (size_t i = 0; i < tols->arr.n; i++) {
                        char p[KB__API_PATH];
                        kb__api_path(p, sizeof(p), "spec.tolerations[%zu]", i);
                        if ((rc = decode_toleration(d, tols->arr.v[i], p, &pod->tolerations[i])))
                                return rc;
                }
        }

        if ((rc = kb__api_pod_group(d, doc, pod)))
                return rc;
        if ((rc = kb__api_pod_requests(d, spec, pod)))
                return rc;
        return decode_phase(d, status, pod);
}

void kb_pod_trim(struct kb_pod *p)
{
        static const char *const keep[] = KB_POD_ANNOTATIONS_READ;
        size_t n = 0;
        for (size_t i = 0; i < p->meta.nannotations; i++) {
                struct kb_kv *kv = &p->meta.annotations[i];
                bool kept = false;
                for (size_t k = 0; k < KB_ARRAY_SIZE(keep) && !kept; k++)
                        kept = !strcmp(kv->key, keep[k]);
                if (kept) {
                        p->meta.annotations[n++] = *kv;
                } else {
                        free(kv->key);
                        free(kv->value);
                }
        }
        p->meta.nannotations = n;
        if (!n) {
                free(p->meta.annotations);
                p->meta.annotations = NULL;
        }
}

int kb_pod_decode(const struct kb_value *doc, struct kb_pod **out, char *err, size_t errlen)
{
        struct kb__api_dec d;
        struct kb_pod *pod;
        int rc;

        kb__api_dec_init(&d, "pod", err, errlen);
        *out = NULL;
        if ((rc = kb__api_doc(&d, doc)))
                return rc;
        pod = kb_xcalloc(1, sizeof(*pod));
        if ((rc = pod_fill(&d, doc, pod))) {
                kb_pod_free(pod);
                return rc;
        }
        *out = pod;
        return 0;
}
