/*
 * Table columns of the config, RBAC and apps kinds, as upstream prints
 * them (table.c has the pods, nodes, jobs and the rest):
 *   configmaps          NAME DATA AGE
 *   secrets             NAME TYPE DATA AGE
 *   serviceaccounts     NAME SECRETS AGE
 *   deployments         NAME READY UP-TO-DATE AVAILABLE AGE | CONTAINERS IMAGES SELECTOR
 *   (cluster)roles      NAME CREATED AT
 *   (cluster)rolebindings NAME ROLE AGE | USERS GROUPS SERVICEACCOUNTS
 */
#include "apiserver/apiserver-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

bool kb__more_printers(struct kb_rtype *rt)
{
        static const struct {
                const char *group, *resource;
                const struct kb_col *cols;
                size_t n;
                kb_row_fn row;
        } printers[] = {
            {"", "configmaps", cm_cols, KB_ARRAY_SIZE(cm_cols), cm_row},
            {"", "secrets", secret_cols, KB_ARRAY_SIZE(secret_cols), secret_row},
            {"", "serviceaccounts", sa_cols, KB_ARRAY_SIZE(sa_cols), sa_row},
            {"apps", "deployments", deploy_cols, KB_ARRAY_SIZE(deploy_cols), deploy_row},
            {"rbac.authorization.k8s.io", "roles", role_cols, KB_ARRAY_SIZE(role_cols), role_row},
            {"rbac.authorization.k8s.io", "clusterroles", role_cols, KB_ARRAY_SIZE(role_cols),
             role_row},
            {"rbac.authorization.k8s.io", "rolebindings", binding_cols, KB_ARRAY_SIZE(binding_cols),
             binding_row},
            {"rbac.authorization.k8s.io", "clusterrolebindings", binding_cols,
             KB_ARRAY_SIZE(binding_cols), binding_row},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(printers); i++) {
                if (!strcmp(printers[i].group, rt->group) &&
                    !strcmp(printers[i].resource, rt->resource)) {
                        rt->cols = printers[i].cols;
                        rt->ncols = printers[i].n;
                        rt->row = printers[i].row;
                        return true;
                }
        }
        return false;
}
