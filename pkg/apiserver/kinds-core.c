/*
 * The core kinds (namespaces, nodes, pods, events, bindings): one
 * descriptor each (struct kb_apikind), with the printer columns and rows and
 * the defaults that are theirs alone.  KB_KIND_LIST in kinds.c lists them.
 * Printing follows upstream's printers (kubectl get): ages are humanised
 * (kb__age_of).
 */
#include "apiserver/apiserver-http.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/k8s.pb-c.h"

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

/* ---- namespaces ------------------------------------------------------------ */

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

/* ---- defaults and hooks ------------------------------------------------------- */

static const char *qos_class(const struct kb_value *spec)
{
        const struct kb_value *cs = kb_value_get(spec, "containers");
        bool any = false, guaranteed = true;
        for (size_t i = 0; kb_value_is(cs, KB_VARRAY) && i < cs->arr.n; i++) {
                const struct kb_value *req = kb_value_dig(cs->arr.v[i], "resources", "requests");
                const struct kb_value *lim = kb_value_dig(cs->arr.v[i], "resources", "limits");
                if ((kb_value_is(req, KB_VOBJECT) && req->obj.n) ||
                    (kb_value_is(lim, KB_VOBJECT) && lim->obj.n))
                        any = true;
                const char *keys[] = {"cpu", "memory"};
                for (int k = 0; k < 2; k++) {
                        const char *l = kb_value_text(kb_value_get(lim, keys[k]));
                        const char *r = kb_value_text(kb_value_get(req, keys[k]));
                        if (!l || (r && strcmp(l, r)))
                                guaranteed = false;
                }
        }
        if (!any)
                return "BestEffort";
        return guaranteed ? "Guaranteed" : "Burstable";
}

static void pod_defaults(struct kb_apiserver *srv, struct kb_value *obj)
{
        struct kb_value *spec = kb_value_ensure_object(obj, "spec");
        kb__set_default(spec, "schedulerName", kb_value_new_string("default-scheduler"));
        kb__set_default(spec, "restartPolicy", kb_value_new_string("Always"));
        kb__set_default(spec, "dnsPolicy", kb_value_new_string("ClusterFirst"));
        kb__set_default(spec, "priority", kb_value_new_int(0));
        /* kube-apiserver's default: a bound pod deleted without a
         * grace period of its own lingers this long. */
        kb__set_default(spec, "terminationGracePeriodSeconds", kb_value_new_int(30));
        struct kb_value *st = kb_value_new(KB_VOBJECT);
        kb_value_set(st, "phase", kb_value_new_string("Pending"));
        kb_value_set(st, "qosClass", kb_value_new_string(qos_class(spec)));
        kb_value_set(obj, "status", st);
        (void)srv;
}

static void namespace_defaults(struct kb_apiserver *srv, struct kb_value *obj)
{
        struct kb_value *st = kb_value_new(KB_VOBJECT);
        kb_value_set(st, "phase", kb_value_new_string("Active"));
        kb_value_set(obj, "status", st);
        struct kb_value *labels =
            kb_value_ensure_object(kb_value_ensure_object(obj, "metadata"), "labels");
        kb_value_set(labels, "kubernetes.io/metadata.name",
                     kb_value_new_string(kb__meta_str(obj, "name")));
        (void)srv;
}

static void namespace_created(struct kb_apiserver *srv, const struct kb_value *obj)
{
        kb__namespace_created(srv, kb__meta_str(obj, "name"));
}

/* Everything in a namespace goes with it. */
static void namespace_delete(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_obj *o)
{
        char *ns = kb_xstrdup(kb__meta_str(o->doc->v, "name"));
        kb__store_cascade_namespace(srv, ns);
        free(ns);
        kb__store_remove(srv, rt, o);
}

static bool protected_namespace(const char *name)
{
        return !strcmp(name, "default") || !strcmp(name, "kube-system") ||
               !strcmp(name, "kube-public") || !strcmp(name, "kube-node-lease");
}

/* ---- the descriptors ----------------------------------------------------------- */

const struct kb_apikind kb__kind_namespaces = {
    .group = "",
    .version = "v1",
    .resource = "namespaces",
    .kind = "Namespace",
    .has_status = true,
    .shorts = {"ns"},
    .name_is_label = true,
    .validate = kb__validate_namespace,
    .defaults = namespace_defaults,
    .cols = ns_cols,
    .ncols = KB_ARRAY_SIZE(ns_cols),
    .row = ns_row,
    .proto = &kbk8s__namespace__descriptor,
    .on_create = namespace_created,
    .on_delete = namespace_delete,
    .protected_name = protected_namespace,
};

const struct kb_apikind kb__kind_nodes = {
    .group = "",
    .version = "v1",
    .resource = "nodes",
    .kind = "Node",
    .has_status = true,
    .shorts = {"no"},
    .validate = kb__validate_node,
    .cols = node_cols,
    .ncols = KB_ARRAY_SIZE(node_cols),
    .row = node_row,
};

const struct kb_apikind kb__kind_pods = {
    .group = "",
    .version = "v1",
    .resource = "pods",
    .kind = "Pod",
    .namespaced = true,
    .has_status = true,
    .shorts = {"po"},
    .all = true,
    .pod_subresources = true,
    .validate = kb__validate_pod,
    .defaults = pod_defaults,
    .cols = pod_cols,
    .ncols = KB_ARRAY_SIZE(pod_cols),
    .row = pod_row,
    .proto = &kbk8s__pod__descriptor,
    .grace = kb__pod_grace,
};

const struct kb_apikind kb__kind_events = {
    .group = "",
    .version = "v1",
    .resource = "events",
    .kind = "Event",
    .namespaced = true,
    .shorts = {"ev"},
    .cols = event_cols,
    .ncols = KB_ARRAY_SIZE(event_cols),
    .row = event_row,
};

/* The same Events in events.k8s.io/v1 (events.c converts them). */
const struct kb_apikind kb__kind_events_v1 = {
    .group = "events.k8s.io",
    .version = "v1",
    .resource = "events",
    .kind = "Event",
    .namespaced = true,
    .shorts = {"ev"},
    .cols = event_cols,
    .ncols = KB_ARRAY_SIZE(event_cols),
    .row = event_row,
};

const struct kb_apikind kb__kind_bindings = {
    .group = "",
    .version = "v1",
    .resource = "bindings",
    .kind = "Binding",
    .namespaced = true,
    .create = kb__create_bindings,
};
