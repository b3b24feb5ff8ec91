/*
 * Who am I and what may I do: SelfSubjectAccessReview and
 * SelfSubjectRulesReview (authorization.k8s.io/v1, `kubectl auth can-i`)
 * and SelfSubjectReview (authentication.k8s.io/v1, `kubectl auth whoami`).
 *
 * kbatch-apiserver has no authorization: every request that passes the
 * optional bearer token may do everything.  The answers say so rather than
 * pretend to evaluate RBAC (Roles and bindings are stored, not enforced).
 */
#include "apiserver/apiserver-http.h"

#include <stdlib.h>
#include <string.h>

#define NO_AUTHZ                                                                                   \
        "kbatch-apiserver has no authorization: every request is allowed (RBAC objects are "       \
        "stored, not enforced)"

/* The user every client is: one identity, with or without the token. */
#define USER "kbatch-local"

static struct kb_value *strs(const char *const *v, size_t n)
{
        struct kb_value *a = kb_value_new(KB_VARRAY);
        for (size_t i = 0; i < n; i++)
                kb_value_append(a, kb_value_new_string(v[i]));
        return a;
}

/* The body back with status set, as the real server answers a review. */
static void answer(struct kb_ctx *c, struct kb_value *body, struct kb_value *status)
{
        kb_value_set(body, "status", status);
        struct kb_value *md = kb_value_ensure_object(body, "metadata");
        char ts[40];
        kb_format_time(kb__now(), ts, sizeof(ts));
        kb_value_set(md, "creationTimestamp", kb_value_new_string(ts));
        kb__reply(c->resp, 201, body);
}

void kb__create_access_review(struct kb_ctx *c, struct kb_value *body)
{
        const struct kb_value *spec = kb_value_get(body, "spec");
        if (!kb_value_get(spec, "resourceAttributes") &&
            !kb_value_get(spec, "nonResourceAttributes")) {
                struct kb_causes causes = {0};
                kb__cause_add(&causes, "FieldValueRequired", "spec.resourceAttributes",
                              "Required value: exactly one of nonResourceAttributes or "
                              "resourceAttributes must be specified");
                kb__invalid(c, "", &causes);
                kb__causes_release(&causes);
                kb_value_free(body);
                return;
        }
        struct kb_value *st = kb_value_new(KB_VOBJECT);
        kb_value_set(st, "allowed", kb_value_new_bool(true));
        kb_value_set(st, "reason", kb_value_new_string(NO_AUTHZ));
        answer(c, body, st);
}

void kb__create_rules_review(struct kb_ctx *c, struct kb_value *body)
{
        static const char *const all[] = {"*"};
        struct kb_value *st = kb_value_new(KB_VOBJECT);
        struct kb_value *rr = kb_value_new(KB_VARRAY);
        struct kb_value *r = kb_value_new(KB_VOBJECT);
        kb_value_set(r, "verbs", strs(all, 1));
        kb_value_set(r, "apiGroups", strs(all, 1));
        kb_value_set(r, "resources", strs(all, 1));
        kb_value_append(rr, r);
        kb_value_set(st, "resourceRules", rr);
        struct kb_value *nr = kb_value_new(KB_VARRAY);
        r = kb_value_new(KB_VOBJECT);
        kb_value_set(r, "verbs", strs(all, 1));
        kb_value_set(r, "nonResourceURLs", strs(all, 1));
        kb_value_append(nr, r);
        kb_value_set(st, "nonResourceRules", nr);
        kb_value_set(st, "incomplete", kb_value_new_bool(false));
        kb_value_set(st, "evaluationError", kb_value_new_string(NO_AUTHZ));
        answer(c, body, st);
}

void kb__create_self_review(struct kb_ctx *c, struct kb_value *body)
{
        static const char *const groups[] = {"system:masters", "system:authenticated"};
        struct kb_value *st = kb_value_new(KB_VOBJECT);
        struct kb_value *ui = kb_value_ensure_object(st, "userInfo");
        kb_value_set(ui, "username", kb_value_new_string(USER));
        kb_value_set(ui, "groups", strs(groups, KB_ARRAY_SIZE(groups)));
        struct kb_value *extra = kb_value_ensure_object(ui, "extra");
        const char *how[] = {c->srv->token ? "bearer token" : "none (no token is required)"};
        kb_value_set(extra, "kbatch.io/authentication", strs(how, 1));
        answer(c, body, st);
}
