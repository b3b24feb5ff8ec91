/*
 * The batch, scheduling, coordination, networking and apiextensions kinds:
 * one descriptor each (struct kb_apikind), with their printer columns and
 * rows and their defaults.  KB_KIND_LIST in kinds.c lists them.
 */
#include "apiserver/apiserver-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/k8s.pb-c.h"

/* ---- jobs ------------------------------------------------------------------ */

static const struct kb_col job_cols[] = {
    KB_COL_NAME,
    {"Status", "string", "", 0, "Status of the job."},
    {"Completions", "string", "", 0, "The completion status of the job."},
    {"Duration", "string", "", 0, "Time required to complete the job."},
    KB_COL_AGE,
    {"Containers", "string", "", 1, "Names of each container in the template."},
    {"Images", "string", "", 1, "Images referenced by each container in the template."},
    {"Selector", "string", "", 1, "Label query against the pods of the job."},
};

static bool has_condition(const struct kb_value *obj, const char *type)
{
        const struct kb_value *conds = kb_value_dig(obj, "status", "conditions");
        for (size_t i = 0; kb_value_is(conds, KB_VARRAY) && i < conds->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_get(conds->arr.v[i], "type")), type) &&
                    kb_streq(kb_value_str(kb_value_get(conds->arr.v[i], "status")), "True"))
                        return true;
        return false;
}

static void job_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        char buf[128];
        int64_t comp = 1, succ = 0, par = 1;
        kb_value_int(kb_value_dig(obj, "spec", "completions"), &comp);
        kb_value_int(kb_value_dig(obj, "spec", "parallelism"), &par);
        kb_value_int(kb_value_dig(obj, "status", "succeeded"), &succ);
        kb__cell_name(cells, obj);
        const char *status = "Running";
        if (has_condition(obj, "Complete"))
                status = "Complete";
        else if (has_condition(obj, "Failed"))
                status = "Failed";
        else if (kb_value_bool(kb_value_dig(obj, "spec", "suspend"), false))
                status = "Suspended";
        kb__cell_str(cells, status);
        if (kb_value_dig(obj, "spec", "completions"))
                snprintf(buf, sizeof(buf), "%" PRId64 "/%" PRId64, succ, comp);
        else
                snprintf(buf, sizeof(buf), "%" PRId64 "/1 of %" PRId64, succ, par);
        kb__cell_str(cells, buf);
        double start, end;
        const char *st = kb_value_str(kb_value_dig(obj, "status", "startTime"));
        const char *ct = kb_value_str(kb_value_dig(obj, "status", "completionTime"));
        if (st && !kb_parse_time(st, &start)) {
                if (!ct || kb_parse_time(ct, &end))
                        end = kb__now();
                kb_human_duration(end - start, buf, sizeof(buf));
                kb__cell_str(cells, buf);
        } else
                kb_value_append(cells, kb_value_new_string(""));
        kb__cell_age(cells, obj);
        struct kb_buf names, images;
        kb_buf_init(&names);
        kb_buf_init(&images);
        const struct kb_value *cs = kb_value_dig(obj, "spec", "template", "spec", "containers");
        for (size_t i = 0; kb_value_is(cs, KB_VARRAY) && i < cs->arr.n; i++) {
                const char *n = kb_value_str(kb_value_get(cs->arr.v[i], "name"));
                const char *im = kb_value_str(kb_value_get(cs->arr.v[i], "image"));
                kb_buf_printf(&names, "%s%s", i ? "," : "", n ? n : "");
                kb_buf_printf(&images, "%s%s", i ? "," : "", im ? im : "");
        }
        kb__cell_str(cells, names.data);
        kb__cell_str(cells, images.data);
        kb_buf_reset(&names);
        const struct kb_value *ml = kb_value_dig(obj, "spec", "selector", "matchLabels");
        for (size_t i = 0; kb_value_is(ml, KB_VOBJECT) && i < ml->obj.n; i++) {
                const char *v = kb_value_str(ml->obj.m[i].val);
                kb_buf_printf(&names, "%s%s=%s", i ? "," : "", ml->obj.m[i].key, v ? v : "");
        }
        kb__cell_str(cells, names.data);
        kb_buf_release(&names);
        kb_buf_release(&images);
        (void)srv;
}

/* ---- the rest -------------------------------------------------------------------- */

static const struct kb_col crd_cols[] = {
    KB_COL_NAME,
    {"Created At", "date", "", 0, "CreationTimestamp is a timestamp."},
};

static void crd_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        kb__cell_name(cells, obj);
        kb__cell_str(cells, kb__meta_str(obj, "creationTimestamp"));
        (void)srv;
}

static const struct kb_col lease_cols[] = {
    KB_COL_NAME,
    {"Holder", "string", "", 0, "The holder of the lease."},
    KB_COL_AGE,
};

static void lease_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        kb__cell_name(cells, obj);
        kb__cell_str(cells, kb_value_str(kb_value_dig(obj, "spec", "holderIdentity")));
        kb__cell_age(cells, obj);
        (void)srv;
}

static const struct kb_col pc_cols[] = {
    KB_COL_NAME,
    {"Value", "integer", "", 0, "The value of the priority class."},
    {"Global-Default", "boolean", "", 0, "Whether this is the global default."},
    KB_COL_AGE,
    {"Preemption-Policy", "string", "", 0, "Policy for preempting pods."},
};

static void pc_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        kb__cell_name(cells, obj);
        const char *v = kb_value_text(kb_value_get(obj, "value"));
        kb_value_append(cells, kb_value_new_number(v && kb_json_is_number(v) ? v : "0"));
        kb_value_append(
            cells, kb_value_new_bool(kb_value_bool(kb_value_get(obj, "globalDefault"), false)));
        kb__cell_age(cells, obj);
        const char *pp = kb_value_str(kb_value_get(obj, "preemptionPolicy"));
        kb__cell_str(cells, pp ? pp : "PreemptLowerPriority");
        (void)srv;
}

/* ---- defaults and hooks ------------------------------------------------------- */

static void job_defaults(struct kb_apiserver *srv, struct kb_value *obj)
{
        const char *uid = kb__meta_str(obj, "uid");
        struct kb_value *spec = kb_value_ensure_object(obj, "spec");
        bool none = !kb_value_get(spec, "completions") && !kb_value_get(spec, "parallelism");
        if (none)
                kb_value_set(spec, "completions", kb_value_new_int(1));
        kb__set_default(spec, "parallelism", kb_value_new_int(1));
        kb__set_default(spec, "backoffLimit", kb_value_new_int(6));
        kb__set_default(spec, "completionMode", kb_value_new_string("NonIndexed"));
        kb__set_default(spec, "suspend", kb_value_new_bool(false));
        if (!kb_value_get(spec, "selector")) {
                struct kb_value *sel = kb_value_ensure_object(spec, "selector");
                struct kb_value *ml = kb_value_ensure_object(sel, "matchLabels");
                kb_value_set(ml, "batch.kubernetes.io/controller-uid", kb_value_new_string(uid));
        }
        struct kb_value *tmd =
            kb_value_ensure_object(kb_value_ensure_object(spec, "template"), "metadata");
        struct kb_value *labels = kb_value_ensure_object(tmd, "labels");
        const char *name = kb__meta_str(obj, "name");
        kb_value_set(labels, "batch.kubernetes.io/controller-uid", kb_value_new_string(uid));
        kb_value_set(labels, "batch.kubernetes.io/job-name", kb_value_new_string(name));
        kb_value_set(labels, "controller-uid", kb_value_new_string(uid));
        kb_value_set(labels, "job-name", kb_value_new_string(name));
        kb_value_del(obj, "status");
        (void)srv;
}

static void crd_defaults(struct kb_apiserver *srv, struct kb_value *obj)
{
        struct kb_value *st = kb_value_new(KB_VOBJECT);
        struct kb_value *conds = kb_value_new(KB_VARRAY);
        char ts[40];
        kb_format_time(kb__now(), ts, sizeof(ts));
        const char *types[][3] = {
            {"NamesAccepted", "NoConflicts", "no conflicts found"},
            {"Established", "InitialNamesAccepted", "the initial names have been accepted"},
        };
        for (size_t i = 0; i < 2; i++) {
                struct kb_value *cd = kb_value_new(KB_VOBJECT);
                kb_value_set(cd, "type", kb_value_new_string(types[i][0]));
                kb_value_set(cd, "status", kb_value_new_string("True"));
                kb_value_set(cd, "lastTransitionTime", kb_value_new_string(ts));
                kb_value_set(cd, "reason", kb_value_new_string(types[i][1]));
                kb_value_set(cd, "message", kb_value_new_string(types[i][2]));
                kb_value_append(conds, cd);
        }
        kb_value_set(st, "conditions", conds);
        const struct kb_value *names = kb_value_dig(obj, "spec", "names");
        kb_value_set(st, "acceptedNames", names ? kb_value_clone(names) : kb_value_new(KB_VOBJECT));
        struct kb_value *stored = kb_value_new(KB_VARRAY);
        const struct kb_value *vers = kb_value_dig(obj, "spec", "versions");
        for (size_t i = 0; kb_value_is(vers, KB_VARRAY) && i < vers->arr.n; i++)
                if (kb_value_bool(kb_value_get(vers->arr.v[i], "storage"), false))
                        kb_value_append(stored,
                                        kb_value_clone(kb_value_get(vers->arr.v[i], "name")));
        kb_value_set(st, "storedVersions", stored);
        kb_value_set(obj, "status", st);
        (void)srv;
}

/* A CRD's types go once it does (their objects with them). */
static void crd_delete(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_obj *o)
{
        char *name = kb_xstrdup(kb__meta_str(o->doc->v, "name"));
        kb__store_remove(srv, rt, o);
        kb__unregister_crd(srv, name);
        free(name);
}

/* ---- the descriptors ----------------------------------------------------------- */

const struct kb_apikind kb__kind_jobs = {
    .group = "batch",
    .version = "v1",
    .resource = "jobs",
    .kind = "Job",
    .namespaced = true,
    .has_status = true,
    .all = true,
    .validate = kb__validate_job,
    .defaults = job_defaults,
    .cols = job_cols,
    .ncols = KB_ARRAY_SIZE(job_cols),
    .row = job_row,
    .proto = &kbk8s__job__descriptor,
};

const struct kb_apikind kb__kind_leases = {
    .group = "coordination.k8s.io",
    .version = "v1",
    .resource = "leases",
    .kind = "Lease",
    .namespaced = true,
    .cols = lease_cols,
    .ncols = KB_ARRAY_SIZE(lease_cols),
    .row = lease_row,
};

/* Stored and served only: nothing here routes pod traffic (deploy/
 * installs one). */
const struct kb_apikind kb__kind_networkpolicies = {
    .group = "networking.k8s.io",
    .version = "v1",
    .resource = "networkpolicies",
    .kind = "NetworkPolicy",
    .namespaced = true,
    .shorts = {"netpol"},
};

const struct kb_apikind kb__kind_priorityclasses = {
    .group = "scheduling.k8s.io",
    .version = "v1",
    .resource = "priorityclasses",
    .kind = "PriorityClass",
    .shorts = {"pc"},
    .validate = kb__validate_priorityclass,
    .cols = pc_cols,
    .ncols = KB_ARRAY_SIZE(pc_cols),
    .row = pc_row,
    .proto = &kbk8s__priority_class__descriptor,
};

const struct kb_apikind kb__kind_customresourcedefinitions = {
    .group = "apiextensions.k8s.io",
    .version = "v1",
    .resource = "customresourcedefinitions",
    .kind = "CustomResourceDefinition",
    .has_status = true,
    .shorts = {"crd", "crds"},
    .validate = kb__validate_crd,
    .defaults = crd_defaults,
    .cols = crd_cols,
    .ncols = KB_ARRAY_SIZE(crd_cols),
    .row = crd_row,
    .on_write = kb__crd_register,
    .on_delete = crd_delete,
};
