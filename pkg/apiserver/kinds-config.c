/*
 * The config, RBAC and apps kinds: one descriptor each (struct kb_apikind),
 * with their table columns as upstream prints them (KB_KIND_LIST in
 * kinds.c lists them):
 *   configmaps          NAME DATA AGE
 *   secrets             NAME TYPE DATA AGE
 *   serviceaccounts     NAME SECRETS AGE
 *   deployments         NAME READY UP-TO-DATE AVAILABLE AGE | CONTAINERS IMAGES SELECTOR
 *   (cluster)roles      NAME CREATED AT
 *   (cluster)rolebindings NAME ROLE AGE | USERS GROUPS SERVICEACCOUNTS
 */
#include "apiserver/apiserver-http.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/k8s.pb-c.h"

static int64_t members(const struct kb_value *v)
{
        if (kb_value_is(v, KB_VOBJECT))
                return (int64_t)v->obj.n;
        if (kb_value_is(v, KB_VARRAY))
                return (int64_t)v->arr.n;
        return 0;
}

static const struct kb_col cm_cols[] = {
    KB_COL_NAME,
    {"Data", "string", "", 0, "Number of data entries."},
    KB_COL_AGE,
};

static void cm_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        (void)srv;
        kb__cell_name(cells, obj);
        kb_value_append(cells, kb_value_new_int(members(kb_value_get(obj, "data")) +
                                                members(kb_value_get(obj, "binaryData"))));
        kb__cell_age(cells, obj);
}

static const struct kb_col secret_cols[] = {
    KB_COL_NAME,
    {"Type", "string", "", 0, "The type of the secret."},
    {"Data", "string", "", 0, "Number of data entries."},
    KB_COL_AGE,
};

static void secret_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        (void)srv;
        kb__cell_name(cells, obj);
        kb__cell_str(cells, kb_value_str(kb_value_get(obj, "type")));
        kb_value_append(cells, kb_value_new_int(members(kb_value_get(obj, "data"))));
        kb__cell_age(cells, obj);
}

static const struct kb_col sa_cols[] = {
    KB_COL_NAME,
    {"Secrets", "string", "", 0, "Number of secrets the service account lists."},
    KB_COL_AGE,
};

static void sa_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        (void)srv;
        kb__cell_name(cells, obj);
        kb_value_append(cells, kb_value_new_int(members(kb_value_get(obj, "secrets"))));
        kb__cell_age(cells, obj);
}

static const struct kb_col deploy_cols[] = {
    KB_COL_NAME,
    {"Ready", "string", "", 0, "Ready replicas out of desired."},
    {"Up-to-date", "string", "", 0, "Replicas updated to the latest template."},
    {"Available", "string", "", 0, "Available replicas."},
    KB_COL_AGE,
    {"Containers", "string", "", 1, "Names of the containers in the template."},
    {"Images", "string", "", 1, "Images of the containers in the template."},
    {"Selector", "string", "", 1, "The label selector of the deployment."},
};

/* "a,b" from the field key of every element of list. */
static void join(struct kb_buf *b, const struct kb_value *list, const char *key)
{
        for (size_t i = 0; kb_value_is(list, KB_VARRAY) && i < list->arr.n; i++) {
                const char *s = kb_value_str(kb_value_get(list->arr.v[i], key));
                kb_buf_printf(b, "%s%s", i ? "," : "", s ? s : "");
        }
}

static void deploy_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        (void)srv;
        int64_t want = 1, ready = 0, updated = 0, avail = 0;
        kb_value_int(kb_value_dig(obj, "spec", "replicas"), &want);
        kb_value_int(kb_value_dig(obj, "status", "readyReplicas"), &ready);
        kb_value_int(kb_value_dig(obj, "status", "updatedReplicas"), &updated);
        kb_value_int(kb_value_dig(obj, "status", "availableReplicas"), &avail);
        char buf[48];
        kb__cell_name(cells, obj);
        snprintf(buf, sizeof(buf), "%" PRId64 "/%" PRId64, ready, want);
        kb_value_append(cells, kb_value_new_string(buf));
        kb_value_append(cells, kb_value_new_int(updated));
        kb_value_append(cells, kb_value_new_int(avail));
        kb__cell_age(cells, obj);
        const struct kb_value *cs = kb_value_dig(obj, "spec", "template", "spec", "containers");
        struct kb_buf b;
        kb_buf_init(&b);
        join(&b, cs, "name");
        kb__cell_str(cells, b.data);
        kb_buf_reset(&b);
        join(&b, cs, "image");
        kb__cell_str(cells, b.data);
        kb_buf_reset(&b);
        const struct kb_value *ml = kb_value_dig(obj, "spec", "selector", "matchLabels");
        for (size_t i = 0; kb_value_is(ml, KB_VOBJECT) && i < ml->obj.n; i++) {
                const char *v = kb_value_str(ml->obj.m[i].val);
                kb_buf_printf(&b, "%s%s=%s", i ? "," : "", ml->obj.m[i].key, v ? v : "");
        }
        kb__cell_str(cells, b.data);
        kb_buf_release(&b);
}

static const struct kb_col role_cols[] = {
    KB_COL_NAME,
    {"Created At", "date", "", 0, "CreationTimestamp is a timestamp."},
};

static void role_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        (void)srv;
        kb__cell_name(cells, obj);
        kb__cell_str(cells, kb__meta_str(obj, "creationTimestamp"));
}

static const struct kb_col binding_cols[] = {
    KB_COL_NAME,
    {"Role", "string", "", 0, "The role the binding grants."},
    KB_COL_AGE,
    {"Users", "string", "", 1, "Users the binding applies to."},
    {"Groups", "string", "", 1, "Groups the binding applies to."},
    {"ServiceAccounts", "string", "", 1, "Service accounts the binding applies to."},
};

static void subjects(struct kb_value *cells, const struct kb_value *subs, const char *kind)
{
        struct kb_buf b;
        kb_buf_init(&b);
        for (size_t i = 0; kb_value_is(subs, KB_VARRAY) && i < subs->arr.n; i++) {
                const struct kb_value *s = subs->arr.v[i];
                if (!kb_streq(kb_value_str(kb_value_get(s, "kind")), kind))
                        continue;
                const char *ns = kb_value_str(kb_value_get(s, "namespace"));
                const char *n = kb_value_str(kb_value_get(s, "name"));
                kb_buf_printf(&b, "%s%s%s%s", b.len ? ", " : "",
                              ns && !strcmp(kind, "ServiceAccount") ? ns : "",
                              ns && !strcmp(kind, "ServiceAccount") ? "/" : "", n ? n : "");
        }
        kb_value_append(cells, kb_value_new_string(b.data ? b.data : ""));
        kb_buf_release(&b);
}

static void binding_row(struct kb_apiserver *srv, const struct kb_value *obj,
                        struct kb_value *cells)
{
        (void)srv;
        kb__cell_name(cells, obj);
        const char *k = kb_value_str(kb_value_dig(obj, "roleRef", "kind"));
        const char *n = kb_value_str(kb_value_dig(obj, "roleRef", "name"));
        char *role = kb_xasprintf("%s/%s", k ? k : "", n ? n : "");
        kb_value_append(cells, kb_value_new_string(role));
        free(role);
        kb__cell_age(cells, obj);
        const struct kb_value *subs = kb_value_get(obj, "subjects");
        subjects(cells, subs, "User");
        subjects(cells, subs, "Group");
        subjects(cells, subs, "ServiceAccount");
}

/* ---- the descriptors ----------------------------------------------------------- */

const struct kb_apikind kb__kind_configmaps = {
    .group = "",
    .version = "v1",
    .resource = "configmaps",
    .kind = "ConfigMap",
    .namespaced = true,
    .shorts = {"cm"},
    .validate = kb__validate_configmap,
    .cols = cm_cols,
    .ncols = KB_ARRAY_SIZE(cm_cols),
    .row = cm_row,
    .proto = &kbk8s__config_map__descriptor,
};

const struct kb_apikind kb__kind_secrets = {
    .group = "",
    .version = "v1",
    .resource = "secrets",
    .kind = "Secret",
    .namespaced = true,
    .validate = kb__validate_secret,
    .normalize = kb__secret_normalize,
    .cols = secret_cols,
    .ncols = KB_ARRAY_SIZE(secret_cols),
    .row = secret_row,
    .proto = &kbk8s__secret__descriptor,
};

const struct kb_apikind kb__kind_serviceaccounts = {
    .group = "",
    .version = "v1",
    .resource = "serviceaccounts",
    .kind = "ServiceAccount",
    .namespaced = true,
    .shorts = {"sa"},
    .cols = sa_cols,
    .ncols = KB_ARRAY_SIZE(sa_cols),
    .row = sa_row,
    .proto = &kbk8s__service_account__descriptor,
};

const struct kb_apikind kb__kind_deployments = {
    .group = "apps",
    .version = "v1",
    .resource = "deployments",
    .kind = "Deployment",
    .namespaced = true,
    .has_status = true,
    .shorts = {"deploy"},
    .all = true,
    .cols = deploy_cols,
    .ncols = KB_ARRAY_SIZE(deploy_cols),
    .row = deploy_row,
    .proto = &kbk8s__deployment__descriptor,
};

const struct kb_apikind kb__kind_roles = {
    .group = "rbac.authorization.k8s.io",
    .version = "v1",
    .resource = "roles",
    .kind = "Role",
    .namespaced = true,
    .validate = kb__validate_role,
    .cols = role_cols,
    .ncols = KB_ARRAY_SIZE(role_cols),
    .row = role_row,
    .proto = &kbk8s__role__descriptor,
};

const struct kb_apikind kb__kind_rolebindings = {
    .group = "rbac.authorization.k8s.io",
    .version = "v1",
    .resource = "rolebindings",
    .kind = "RoleBinding",
    .namespaced = true,
    .validate = kb__validate_rolebinding,
    .cols = binding_cols,
    .ncols = KB_ARRAY_SIZE(binding_cols),
    .row = binding_row,
    .proto = &kbk8s__role_binding__descriptor,
};

const struct kb_apikind kb__kind_clusterroles = {
    .group = "rbac.authorization.k8s.io",
    .version = "v1",
    .resource = "clusterroles",
    .kind = "ClusterRole",
    .validate = kb__validate_role,
    .cols = role_cols,
    .ncols = KB_ARRAY_SIZE(role_cols),
    .row = role_row,
    .proto = &kbk8s__cluster_role__descriptor,
};

const struct kb_apikind kb__kind_clusterrolebindings = {
    .group = "rbac.authorization.k8s.io",
    .version = "v1",
    .resource = "clusterrolebindings",
    .kind = "ClusterRoleBinding",
    .validate = kb__validate_rolebinding,
    .cols = binding_cols,
    .ncols = KB_ARRAY_SIZE(binding_cols),
    .row = binding_row,
    .proto = &kbk8s__cluster_role_binding__descriptor,
};

/* The access reviews: create-only, answered by reviews.c. */
const struct kb_apikind kb__kind_selfsubjectaccessreviews = {
    .group = "authorization.k8s.io",
    .version = "v1",
    .resource = "selfsubjectaccessreviews",
    .kind = "SelfSubjectAccessReview",
    .create = kb__create_access_review,
    .proto = &kbk8s__self_subject_access_review__descriptor,
};

const struct kb_apikind kb__kind_selfsubjectrulesreviews = {
    .group = "authorization.k8s.io",
    .version = "v1",
    .resource = "selfsubjectrulesreviews",
    .kind = "SelfSubjectRulesReview",
    .namespaced = true,
    .create = kb__create_rules_review,
    .proto = &kbk8s__self_subject_rules_review__descriptor,
};

const struct kb_apikind kb__kind_selfsubjectreviews = {
    .group = "authentication.k8s.io",
    .version = "v1",
    .resource = "selfsubjectreviews",
    .kind = "SelfSubjectReview",
    .create = kb__create_self_review,
    .proto = &kbk8s__self_subject_review__descriptor,
};
