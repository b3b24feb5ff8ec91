/*
 * Server-side printing: the meta.k8s.io/v1 Table kubectl asks for with
 * "Accept: application/json;as=Table".  kubectl prints the cells as given,
 * so ages are humanised here (kb_human_duration, as upstream's
 * HumanDuration: 59s, 2m3s, 15m, 3h5m, 12h, 3d4h, 689d, 2y5d).
 */
#include "apiserver/apiserver-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- pods ------------------------------------------------------------------ */

static const struct kb_col pod_cols[] = {
    KB_COL_NAME,
    {"Ready", "string", "", 0, "The aggregate readiness state of this pod."},
    {"Status", "string", "", 0, "The aggregate status of the containers in this pod."},
    {"Restarts", "string", "", 0, "The number of times the containers have restarted."},
    KB_COL_AGE,
    {"IP", "string", "", 1, "IP address allocated to the pod."},
    {"Node", "string", "", 1, "Name of the node where the pod is running."},
    {"Nominated Node", "string", "", 1, "Node the scheduler nominated for the pod."},
    {"Readiness Gates", "string", "", 1, "Pod readiness gates."},
};

static void pod_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        const struct kb_value *cs = kb_value_dig(obj, "spec", "containers");
        const struct kb_value *st = kb_value_dig(obj, "status", "containerStatuses");
        size_t total = kb_value_is(cs, KB_VARRAY) ? cs->arr.n : 0, ready = 0;
        int64_t restarts = 0;
        const char *reason = kb_value_str(kb_value_dig(obj, "status", "reason"));
        for (size_t i = 0; kb_value_is(st, KB_VARRAY) && i < st->arr.n; i++) {
                int64_t r = 0;
                ready += kb_value_bool(kb_value_get(st->arr.v[i], "ready"), false);
                if (!kb_value_int(kb_value_get(st->arr.v[i], "restartCount"), &r))
                        restarts += r;
                const char *tr =
                    kb_value_str(kb_value_dig(st->arr.v[i], "state", "terminated", "reason"));
                if (tr)
                        reason = tr;
        }
        char buf[64];
        kb__cell_name(cells, obj);
        snprintf(buf, sizeof(buf), "%zu/%zu", ready, total);
        kb_value_append(cells, kb_value_new_string(buf));
        const char *phase = kb_value_str(kb_value_dig(obj, "status", "phase"));
        if (kb_value_dig(obj, "metadata", "deletionTimestamp"))
                phase = "Terminating";
        else if (reason)
                phase = reason;
        kb__cell_str(cells, phase ? phase : "Pending");
        snprintf(buf, sizeof(buf), "%" PRId64, restarts);
        kb_value_append(cells, kb_value_new_string(buf));
        kb__cell_age(cells, obj);
        kb__cell_str(cells, kb_value_str(kb_value_dig(obj, "status", "podIP")));
        kb__cell_str(cells, kb_value_str(kb_value_dig(obj, "spec", "nodeName")));
        kb__cell_str(cells, kb_value_str(kb_value_dig(obj, "status", "nominatedNodeName")));
        kb__cell_str(cells, NULL);
        (void)srv;
}

/* ---- nodes ----------------------------------------------------------------- */

static const struct kb_col node_cols[] = {
    KB_COL_NAME,
    {"Status", "string", "", 0, "The status of the node"},
    {"Roles", "string", "", 0, "The roles of the node"},
    KB_COL_AGE,
    {"Version", "string", "", 0, "Kubelet Version reported by the node."},
    {"Internal-IP", "string", "", 1, "List of internal IPs for the node."},
    {"External-IP", "string", "", 1, "List of external IPs for the node."},
    {"OS-Image", "string", "", 1, "OS image reported by the node."},
    {"Kernel-Version", "string", "", 1, "Kernel version reported by the node."},
    {"Container-Runtime", "string", "", 1, "Container runtime reported by the node."},
};

static const char *address(const struct kb_value *obj, const char *type)
{
        const struct kb_value *a = kb_value_dig(obj, "status", "addresses");
        for (size_t i = 0; kb_value_is(a, KB_VARRAY) && i < a->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_get(a->arr.v[i], "type")), type))
                        return kb_value_str(kb_value_get(a->arr.v[i], "address"));
        return NULL;
}

static void node_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        const char *ready = "Unknown";
        const struct kb_value *conds = kb_value_dig(obj, "status", "conditions");
        for (size_t i = 0; kb_value_is(conds, KB_VARRAY) && i < conds->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_get(conds->arr.v[i], "type")), "Ready"))
                        ready =
                            kb_streq(kb_value_str(kb_value_get(conds->arr.v[i], "status")), "True")
                                ? "Ready"
                                : "NotReady";
        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_adds(&b, ready);
        if (kb_value_bool(kb_value_dig(obj, "spec", "unschedulable"), false))
                kb_buf_adds(&b, ",SchedulingDisabled");
        kb__cell_name(cells, obj);
        kb__cell_str(cells, b.data);
        kb_buf_reset(&b);
        const struct kb_value *labels = kb_value_dig(obj, "metadata", "labels");
        for (size_t i = 0; kb_value_is(labels, KB_VOBJECT) && i < labels->obj.n; i++) {
                const char *k = labels->obj.m[i].key;
                if (kb_has_prefix(k, "node-role.kubernetes.io/"))
                        kb_buf_printf(&b, "%s%s", b.len ? "," : "", k + 24);
        }
        kb__cell_str(cells, b.data);
        kb_buf_release(&b);
        kb__cell_age(cells, obj);
        kb__cell_str(cells,
                     kb_value_str(kb_value_dig(obj, "status", "nodeInfo", "kubeletVersion")));
        kb__cell_str(cells, address(obj, "InternalIP"));
        kb__cell_str(cells, address(obj, "ExternalIP"));
        kb__cell_str(cells, kb_value_str(kb_value_dig(obj, "status", "nodeInfo", "osImage")));
        kb__cell_str(cells, kb_value_str(kb_value_dig(obj, "status", "nodeInfo", "kernelVersion")));
        kb__cell_str(cells, kb_value_str(kb_value_dig(obj, "status", "nodeInfo",
                                                      "containerRuntimeVersion", NULL)));
        (void)srv;
}

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

/* ---- events ---------------------------------------------------------------- */

static const struct kb_col event_cols[] = {
    {"Last Seen", "string", "", 0, "Time when last event occurred."},
    {"Type", "string", "", 0, "Type of this event."},
    {"Reason", "string", "", 0, "Why the action was taken."},
    {"Object", "string", "", 0, "The object this event is about."},
    {"Subobject", "string", "", 1, "The subobject of the object."},
    {"Source", "string", "", 1, "The component reporting this event."},
    {"Message", "string", "", 0, "A human-readable description of the status."},
    {"First Seen", "string", "", 1, "Time when the event first occurred."},
    {"Count", "string", "", 1, "The number of times this event has occurred."},
    {"Name", "string", "name", 1, "Name of the event."},
};

static void event_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        char buf[512];
        /* Events written through events.k8s.io have only eventTime (and a
         * series); upstream's printer falls back to those. */
        const char *last = kb_value_str(kb_value_get(obj, "lastTimestamp"));
        if (!last)
                last = kb_value_str(kb_value_dig(obj, "series", "lastObservedTime"));
        if (!last)
                last = kb_value_str(kb_value_get(obj, "eventTime"));
        kb__age_of(last, buf, sizeof(buf));
        kb__cell_str(cells, buf);
        kb__cell_str(cells, kb_value_str(kb_value_get(obj, "type")));
        kb__cell_str(cells, kb_value_str(kb_value_get(obj, "reason")));
        const char *kind = kb_value_str(kb_value_dig(obj, "involvedObject", "kind"));
        const char *name = kb_value_str(kb_value_dig(obj, "involvedObject", "name"));
        snprintf(buf, sizeof(buf), "%s/%s", kind ? kind : "", name ? name : "");
        for (char *p = buf; *p && *p != '/'; p++)
                if (*p >= 'A' && *p <= 'Z')
                        *p = (char)(*p - 'A' + 'a');
        kb__cell_str(cells, buf);
        kb__cell_str(cells, kb_value_str(kb_value_dig(obj, "involvedObject", "fieldPath")));
        kb__cell_str(cells, kb_value_str(kb_value_dig(obj, "source", "component")));
        kb__cell_str(cells, kb_value_str(kb_value_get(obj, "message")));
        const char *first = kb_value_str(kb_value_get(obj, "firstTimestamp"));
        kb__age_of(first ? first : kb_value_str(kb_value_get(obj, "eventTime")), buf, sizeof(buf));
        kb__cell_str(cells, buf);
        const char *count = kb_value_text(kb_value_get(obj, "count"));
        kb__cell_str(cells, count ? count : "1");
        kb__cell_name(cells, obj);
        (void)srv;
}

/* ---- the rest ----------------------------------------------------------------- */

static const struct kb_col ns_cols[] = {
    KB_COL_NAME,
    {"Status", "string", "", 0, "The status of the namespace"},
    KB_COL_AGE,
};

static void ns_row(struct kb_apiserver *srv, const struct kb_value *obj, struct kb_value *cells)
{
        kb__cell_name(cells, obj);
        const char *phase = kb_value_str(kb_value_dig(obj, "status", "phase"));
        if (kb_value_dig(obj, "metadata", "deletionTimestamp"))
                phase = "Terminating";
        kb__cell_str(cells, phase ? phase : "Active");
        kb__cell_age(cells, obj);
        (void)srv;
}

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

static const struct kb_col age_only_cols[] = {KB_COL_NAME, KB_COL_AGE};

static void age_only_row(struct kb_apiserver *srv, const struct kb_value *obj,
                         struct kb_value *cells)
{
        kb__cell_name(cells, obj);
        kb__cell_age(cells, obj);
        (void)srv;
}

void kb__builtin_printers(struct kb_rtype *rt)
{
        static const struct {
                const char *resource;
                const struct kb_col *cols;
                size_t n;
                kb_row_fn row;
        } printers[] = {
            {"pods", pod_cols, KB_ARRAY_SIZE(pod_cols), pod_row},
            {"nodes", node_cols, KB_ARRAY_SIZE(node_cols), node_row},
            {"jobs", job_cols, KB_ARRAY_SIZE(job_cols), job_row},
            {"events", event_cols, KB_ARRAY_SIZE(event_cols), event_row},
            {"namespaces", ns_cols, KB_ARRAY_SIZE(ns_cols), ns_row},
            {"customresourcedefinitions", crd_cols, KB_ARRAY_SIZE(crd_cols), crd_row},
            {"leases", lease_cols, KB_ARRAY_SIZE(lease_cols), lease_row},
            {"priorityclasses", pc_cols, KB_ARRAY_SIZE(pc_cols), pc_row},
        };
        if (kb__more_printers(rt) || kb__pdb_printer(rt))
                return;
        rt->cols = age_only_cols;
        rt->ncols = KB_ARRAY_SIZE(age_only_cols);
        rt->row = age_only_row;
        for (size_t i = 0; i < KB_ARRAY_SIZE(printers); i++) {
                if (!strcmp(printers[i].resource, rt->resource)) {
                        rt->cols = printers[i].cols;
                        rt->ncols = printers[i].n;
                        rt->row = printers[i].row;
                }
        }
}

/* ---- custom resources ----------------------------------------------------------- */

/* Evaluates the simple JSONPath that printer columns use: ".a.b[0].c". */
static const struct kb_value *jsonpath(const struct kb_value *obj, const char *path)
{
        const struct kb_value *v = obj;
        const char *p = path;
        if (*p == '{')
                p++;
        if (*p == '$')
                p++;
        while (v && *p && *p != '}') {
                if (*p == '.') {
                        p++;
                        size_t len = strcspn(p, ".[}");
                        char key[256];
                        if (len == 0 || len >= sizeof(key))
                                return NULL;
                        memcpy(key, p, len);
                        key[len] = 0;
                        v = kb_value_get(v, key);
                        p += len;
                } else if (*p == '[') {
                        char *end;
                        long idx = strtol(p + 1, &end, 10);
                        if (*end != ']' || !kb_value_is(v, KB_VARRAY))
                                return NULL;
                        if (idx < 0)
                                idx += (long)v->arr.n;
                        v = idx >= 0 && (size_t)idx < v->arr.n ? v->arr.v[idx] : NULL;
                        p = end + 1;
                } else {
                        return NULL;
                }
        }
        return v;
}

static void cr_cell(const struct kb_value *col, const struct kb_value *obj, struct kb_value *cells)
{
        const char *type = kb_value_str(kb_value_get(col, "type"));
        const char *path = kb_value_str(kb_value_get(col, "jsonPath"));
        const struct kb_value *v = path ? jsonpath(obj, path) : NULL;
        if (!v || v->type == KB_VNULL) {
                kb_value_append(cells, kb_value_new(KB_VNULL));
                return;
        }
        if (kb_streq(type, "date") && v->type == KB_VSTRING) {
                char buf[32];
                kb__age_of(v->s, buf, sizeof(buf));
                kb_value_append(cells, kb_value_new_string(buf));
                return;
        }
        if (v->type == KB_VOBJECT || v->type == KB_VARRAY) {
                char *t = kb_json_emit(v, false);
                kb_value_append(cells, kb_value_new_string(t));
                free(t);
                return;
        }
        kb_value_append(cells, kb_value_clone(v));
}

static void add_coldef(struct kb_value *defs, const char *name, const char *type,
                       const char *format, int64_t priority, const char *desc)
{
        struct kb_value *d = kb_value_new(KB_VOBJECT);
        kb_value_set(d, "name", kb_value_new_string(name));
        kb_value_set(d, "type", kb_value_new_string(type ? type : "string"));
        kb_value_set(d, "format", kb_value_new_string(format ? format : ""));
        kb_value_set(d, "description", kb_value_new_string(desc ? desc : ""));
        kb_value_set(d, "priority", kb_value_new_int(priority));
        kb_value_append(defs, d);
}

static void row_object(const struct kb_value *obj, const char *include, struct kb_value *row)
{
        if (kb_streq(include, "None"))
                return;
        if (kb_streq(include, "Object")) {
                kb_value_set(row, "object", kb_value_clone(obj));
                return;
        }
        struct kb_value *pom = kb_value_new(KB_VOBJECT);
        kb_value_set(pom, "kind", kb_value_new_string("PartialObjectMetadata"));
        kb_value_set(pom, "apiVersion", kb_value_new_string("meta.k8s.io/v1"));
        const struct kb_value *md = kb_value_get(obj, "metadata");
        kb_value_set(pom, "metadata", md ? kb_value_clone(md) : kb_value_new(KB_VOBJECT));
        kb_value_set(row, "object", pom);
}

void kb__table(struct kb_apiserver *srv, const struct kb_rtype *rt, const struct kb_value **objs,
               size_t n, const char *include, bool with_columns, const char *rv,
               struct kb_value *out)
{
        kb_value_set(out, "kind", kb_value_new_string("Table"));
        kb_value_set(out, "apiVersion", kb_value_new_string("meta.k8s.io/v1"));
        struct kb_value *md = kb_value_ensure_object(out, "metadata");
        if (rv)
                kb_value_set(md, "resourceVersion", kb_value_new_string(rv));
        if (with_columns) {
                struct kb_value *defs = kb_value_new(KB_VARRAY);
                if (rt->custom) {
                        add_coldef(defs, "Name", "string", "name", 0,
                                   "Name must be unique within a namespace.");
                        const struct kb_value *cols = rt->columns;
                        if (!cols || cols->arr.n == 0)
                                add_coldef(defs, "Age", "date", "", 0,
                                           "CreationTimestamp is a timestamp.");
                        for (size_t i = 0; cols && i < cols->arr.n; i++) {
                                const struct kb_value *c = cols->arr.v[i];
                                int64_t prio = 0;
                                kb_value_int(kb_value_get(c, "priority"), &prio);
                                const char *name = kb_value_str(kb_value_get(c, "name"));
                                add_coldef(defs, name ? name : "",
                                           kb_value_str(kb_value_get(c, "type")),
                                           kb_value_str(kb_value_get(c, "format")), prio,
                                           kb_value_str(kb_value_get(c, "description")));
                        }
                } else {
                        for (size_t i = 0; i < rt->ncols; i++)
                                add_coldef(defs, rt->cols[i].name, rt->cols[i].type,
                                           rt->cols[i].format, rt->cols[i].priority,
                                           rt->cols[i].desc);
                }
                kb_value_set(out, "columnDefinitions", defs);
        } else {
                kb_value_set(out, "columnDefinitions", kb_value_new(KB_VNULL));
        }
        struct kb_value *rows = kb_value_new(KB_VARRAY);
        for (size_t i = 0; i < n; i++) {
                struct kb_value *row = kb_value_new(KB_VOBJECT);
                struct kb_value *cells = kb_value_new(KB_VARRAY);
                if (rt->custom) {
                        kb__cell_name(cells, objs[i]);
                        const struct kb_value *cols = rt->columns;
                        if (!cols || cols->arr.n == 0)
                                kb__cell_age(cells, objs[i]);
                        for (size_t j = 0; cols && j < cols->arr.n; j++)
                                cr_cell(cols->arr.v[j], objs[i], cells);
                } else {
                        rt->row(srv, objs[i], cells);
                }
                kb_value_set(row, "cells", cells);
                row_object(objs[i], include, row);
                kb_value_append(rows, row);
        }
        kb_value_set(out, "rows", rows);
}
