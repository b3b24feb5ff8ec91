/*
 * The store: resource types, objects, the global resourceVersion and the
 * watch history.  Every function here runs with srv->mu held.
 *
 * One counter numbers every write of every type, as etcd's revision does for
 * the real server; a list's resourceVersion is the counter's value, and a
 * watch from N replays the retained events with rv > N.  The history is a
 * ring of the last opts.history events; a watch from an rv older than the
 * ring gets 410 Expired and lists again.
 */
#include "apiserver/apiserver-int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double kb__now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* xorshift64*: fault rolls and generated names need no more. */
uint64_t kb__rand(struct kb_apiserver *srv)
{
        uint64_t x = srv->rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        srv->rng = x;
        return x * 2685821657736338717ULL;
}

bool kb__fault_roll(struct kb_apiserver *srv, double rate)
{
        return (double)(kb__rand(srv) >> 11) / 9007199254740992.0 < rate;
}

/*
 * What a template repeats in every object made from it, kept once
 * store-wide (kb_value_freeze_shared): managedFields' field sets, a pod's
 * containers, labels and annotations, the conditions and container states
 * written in one tick.
 * Any member of these names is looked up by its content, so a rare one
 * costs a table entry and nothing else.
 */
static bool shared_key(const char *key)
{
        static const char *const keys[] = {
            "fieldsV1",    "containers", "initContainers",  "labels",       "annotations",
            "tolerations", "volumes",    "affinity",        "nodeSelector", "securityContext",
            "conditions",  "source",     "ownerReferences", "template",     "state"};
        for (size_t i = 0; i < KB_ARRAY_SIZE(keys); i++)
                if (!strcmp(key, keys[i]))
                        return true;
        return false;
}

/*
 * Keys and values that most stored objects hold (pods, their Events,
 * nodes, leases, Jobs, PodGroups): each document points at one copy of
 * these rather than hold its own text and leaf (32 bytes and the text).
 */
static const char *const common_texts[] = {
    /* keys */
    "apiVersion", "kind", "metadata", "name", "namespace", "uid", "resourceVersion",
    "creationTimestamp", "generation", "labels", "annotations", "ownerReferences", "finalizers",
    "deletionTimestamp", "deletionGracePeriodSeconds", "generateName", "managedFields", "manager",
    "operation", "time", "fieldsType", "fieldsV1", "subresource", "spec", "status", "schedulerName",
    "restartPolicy", "containers", "image", "resources", "requests", "limits", "cpu", "memory",
    "pods", "dnsPolicy", "priority", "terminationGracePeriodSeconds", "nodeName",
    "serviceAccountName", "tolerations", "phase", "qosClass", "conditions", "type", "lastProbeTime",
    "lastTransitionTime", "lastHeartbeatTime", "reason", "message", "hostIP", "hostIPs", "podIP",
    "podIPs", "ip", "startTime", "containerStatuses", "imageID", "containerID", "ready", "started",
    "restartCount", "state", "running", "terminated", "waiting", "startedAt", "finishedAt",
    "exitCode", "controller", "blockOwnerDeletion", "involvedObject", "count", "firstTimestamp",
    "lastTimestamp", "source", "component", "host", "reportingComponent", "reportingInstance",
    "eventTime", "capacity", "allocatable", "addresses", "address", "nodeInfo", "holderIdentity",
    "leaseDurationSeconds", "renewTime", "minMember", "queue", "minResources", "parallelism",
    "completions", "backoffLimit", "template", "selector", "matchLabels", "active", "succeeded",
    "failed", "completionTime",
    /* values */
    "v1", "Pod", "Event", "Node", "Lease", "Binding", "Job", "PodGroup", "batch/v1",
    "scheduling.volcano.sh/v1beta1", "coordination.k8s.io/v1", "default", "kube-system",
    "kube-node-lease", "Update", "Apply", "FieldsV1", "kbatch", "default-scheduler", "volcano",
    "Never", "OnFailure", "Always", "ClusterFirst", "Pending", "Running", "Succeeded", "Failed",
    "Unknown", "Burstable", "BestEffort", "Guaranteed", "True", "False", "PodScheduled",
    "PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "Normal", "Warning",
    "Started", "Scheduled", "Completed", "SuccessfulCreate", "kubelet", "job-controller",
    "kube-controller-manager", "kubectl-create", "kubectl-client-side-apply", "kubectl", "Inqueue",
    "0", "1", "30", "",
    /* what the simulated kubelet writes (pkg/kubesim/kubelet.c) */
    "Started the pod's containers (simulated)"};

/* The document is stored frozen (kb_value_freeze_shared): one block,
 * exactly sized, each distinct text once, what templates repeat shared with
 * other documents; v is freed. */
struct kb_doc *kb__doc_new(struct kb_apiserver *srv, struct kb_value *v)
{
        if (!srv->shares)
                srv->shares =
                    kb_value_shares_new(shared_key, common_texts, KB_ARRAY_SIZE(common_texts));
        struct kb_doc *d = kb_xmalloc(sizeof(*d));
        d->refs = 1;
        d->v = kb_value_freeze_shared(v, srv->shares);
        kb_value_free(v);
        return d;
}

void kb__doc_unref(struct kb_doc *d)
{
        if (d && --d->refs == 0) {
                kb_value_free_frozen(d->v);
                free(d);
        }
}

const char *kb__meta_str(const struct kb_value *obj, const char *key)
{
        return kb_value_str(kb_value_dig(obj, "metadata", key));
}

char *kb__api_version(const struct kb_rtype *rt)
{
        if (!rt->group[0])
                return kb_xstrdup(rt->version);
        return kb_xasprintf("%s/%s", rt->group, rt->version);
}

static char *obj_key(const char *ns, const char *name)
{
        if (ns && ns[0])
                return kb_xasprintf("%s/%s", ns, name);
        return kb_xstrdup(name);
}

struct kb_obj *kb__obj_find(struct kb_rtype *rt, const char *ns, const char *name)
{
        struct kb_obj *o = NULL;
        char *key = obj_key(rt->namespaced ? ns : NULL, name);
        HASH_FIND_STR(rt->objs, key, o);
        free(key);
        return o;
}

static void hist_push(struct kb_apiserver *srv, enum kb_evtype type, struct kb_rtype *rt,
                      struct kb_doc *obj, struct kb_doc *old)
{
        size_t cap = srv->opts.history;
        if (srv->hist_len == cap) {
                struct kb_event *e = &srv->hist[srv->hist_start];
                srv->compacted_rv = e->rv;
                kb__doc_unref(e->obj);
                kb__doc_unref(e->old);
                srv->hist_start = (srv->hist_start + 1) % cap;
                srv->hist_len--;
        }
        struct kb_event *e = &srv->hist[(srv->hist_start + srv->hist_len) % cap];
        srv->hist_len++;
        e->rv = srv->rv;
        e->type = type;
        e->rt = rt;
        e->obj = obj;
        obj->refs++;
        e->old = old;
        if (old)
                old->refs++;
        pthread_cond_broadcast(&srv->cond);
}

static void set_rv(struct kb_value *v, uint64_t rv)
{
        char buf[32];
        snprintf(buf, sizeof(buf), "%" PRIu64, rv);
        kb_value_set(kb_value_ensure_object(v, "metadata"), "resourceVersion",
                     kb_value_new_string(buf));
}

void kb__store_observe(struct kb_apiserver *srv, const struct kb_store_observer *ob)
{
        if (srv->nobservers == KB_ARRAY_SIZE(srv->observers))
                kb_die("apiserver: more than %zu store observers", KB_ARRAY_SIZE(srv->observers));
        srv->observers[srv->nobservers++] = *ob;
}

static void notify_write(struct kb_apiserver *srv, const struct kb_rtype *rt, const char *key,
                         const struct kb_value *old, const struct kb_value *now)
{
        for (size_t i = 0; i < srv->nobservers; i++)
                if (srv->observers[i].write)
                        srv->observers[i].write(srv->observers[i].arg, rt, key, old, now);
}

struct kb_doc *kb__store_put(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_value *v)
{
        const char *ns = kb__meta_str(v, "namespace");
        const char *name = kb__meta_str(v, "name");
        char *key = obj_key(rt->namespaced ? ns : NULL, name);
        struct kb_obj *o = NULL;
        HASH_FIND_STR(rt->objs, key, o);
        srv->rv++;
        set_rv(v, srv->rv);
        struct kb_doc *d = kb__doc_new(srv, v);
        if (o) {
                free(key);
                struct kb_doc *old = o->doc;
                notify_write(srv, rt, o->key, old->v, d->v);
                o->doc = d;
                hist_push(srv, KB_EV_MODIFIED, rt, d, old);
                kb__doc_unref(old);
        } else {
                o = kb_xcalloc(1, sizeof(*o));
                o->key = key;
                o->doc = d;
                HASH_ADD_KEYPTR(hh, rt->objs, o->key, strlen(o->key), o);
                kb__index_insert(rt, o);
                notify_write(srv, rt, o->key, NULL, d->v);
                hist_push(srv, KB_EV_ADDED, rt, d, NULL);
        }
        return d;
}

void kb__store_remove(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_obj *o)
{
        char *uid = srv->orphan ? NULL : kb_xstrdup(kb__meta_str(o->doc->v, "uid"));
        HASH_DEL(rt->objs, o);
        kb__index_remove(rt, o);
        notify_write(srv, rt, o->key, o->doc->v, NULL);
        /* The DELETED event carries the last state under a new rv. */
        srv->rv++;
        struct kb_value *last = kb_value_clone(o->doc->v);
        set_rv(last, srv->rv);
        struct kb_doc *d = kb__doc_new(srv, last);
        hist_push(srv, KB_EV_DELETED, rt, d, NULL);
        kb__doc_unref(d);
        kb__doc_unref(o->doc);
        free(o->key);
        free(o);
        for (size_t i = 0; uid && i < srv->nobservers; i++)
                if (srv->observers[i].owner_gone)
                        srv->observers[i].owner_gone(srv->observers[i].arg, uid);
        free(uid);
}

void kb__store_cascade_namespace(struct kb_apiserver *srv, const char *ns)
{
        /* Everything in it goes anyway, and the walks below must not see
         * the collector remove what they are about to visit. */
        bool orphan = srv->orphan;
        srv->orphan = true;
        for (size_t i = 0; i < srv->ntypes; i++) {
                struct kb_rtype *rt = srv->types[i];
                if (rt->gone || !rt->namespaced)
                        continue;
                struct kb_obj *o, *tmp;
                HASH_ITER(hh, rt->objs, o, tmp)
                {
                        if (kb_streq(kb__meta_str(o->doc->v, "namespace"), ns))
                                kb__store_remove(srv, rt, o);
                }
        }
        srv->orphan = orphan;
}

void kb__store_delete(struct kb_apiserver *srv, struct kb_rtype *rt, struct kb_obj *o, double grace)
{
        const struct kb_value *fin = kb_value_dig(o->doc->v, "metadata", "finalizers");
        bool has_fin = kb_value_is(fin, KB_VARRAY) && fin->arr.n > 0;
        if (has_fin || grace > 0) {
                if (kb_value_dig(o->doc->v, "metadata", "deletionTimestamp"))
                        return; /* already being deleted */
                struct kb_value *v = kb_value_clone(o->doc->v);
                struct kb_value *md = kb_value_ensure_object(v, "metadata");
                char ts[40];
                kb_format_time(kb__now() + grace, ts, sizeof(ts));
                kb_value_set(md, "deletionTimestamp", kb_value_new_string(ts));
                kb_value_set(md, "deletionGracePeriodSeconds", kb_value_new_int((int64_t)grace));
                kb__store_put(srv, rt, v);
                return;
        }
        if (rt->k && rt->k->on_delete)
                rt->k->on_delete(srv, rt, o);
        else
                kb__store_remove(srv, rt, o);
}

static void new_uid(struct kb_apiserver *srv, char *buf, size_t n)
{
        uint64_t a = kb__rand(srv), b = kb__rand(srv);
        snprintf(buf, n, "%08x-%04x-4%03x-%04x-%012" PRIx64, (unsigned)(a >> 32),
                 (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xfff,
                 (unsigned)(0x8000 | ((b >> 48) & 0x3fff)), (uint64_t)(b & 0xffffffffffffULL));
}

void kb__meta_init(struct kb_apiserver *srv, struct kb_value *obj)
{
        struct kb_value *md = kb_value_ensure_object(obj, "metadata");
        char buf[64];
        new_uid(srv, buf, sizeof(buf));
        kb_value_set(md, "uid", kb_value_new_string(buf));
        kb_format_time(kb__now(), buf, sizeof(buf));
        kb_value_set(md, "creationTimestamp", kb_value_new_string(buf));
        kb_value_del(md, "deletionTimestamp");
        kb_value_del(md, "deletionGracePeriodSeconds");
        kb_value_del(md, "managedFields");
        if (kb_value_get(obj, "spec"))
                kb_value_set(md, "generation", kb_value_new_int(1));
}

void kb__event_record(struct kb_apiserver *srv, const struct kb_rtype *rt,
                      const struct kb_value *obj, const char *type, const char *reason,
                      const char *component, const char *fmt, ...)
{
        struct kb_rtype *evt = kb__type_find(srv, "", "v1", "events");
        const char *ns = kb__meta_str(obj, "namespace");
        const char *name = kb__meta_str(obj, "name");
        if (!evt || !name)
                return;
        if (!ns || !ns[0])
                ns = "default";
        va_list ap;
        va_start(ap, fmt);
        struct kb_buf msg;
        kb_buf_init(&msg);
        kb_buf_vprintf(&msg, fmt, ap);
        va_end(ap);

        struct kb_value *ev = kb_value_new(KB_VOBJECT);
        kb_value_set(ev, "kind", kb_value_new_string("Event"));
        kb_value_set(ev, "apiVersion", kb_value_new_string("v1"));
        struct kb_value *md = kb_value_ensure_object(ev, "metadata");
        char *evname = kb_xasprintf("%s.%016" PRIx64, name, kb__rand(srv));
        kb_value_set(md, "name", kb_value_new_string(evname));
        free(evname);
        kb_value_set(md, "namespace", kb_value_new_string(ns));
        kb__meta_init(srv, ev);
        struct kb_value *io = kb_value_ensure_object(ev, "involvedObject");
        char *av = kb__api_version(rt);
        kb_value_set(io, "apiVersion", kb_value_new_string(av));
        free(av);
        kb_value_set(io, "kind", kb_value_new_string(rt->kind));
        kb_value_set(io, "name", kb_value_new_string(name));
        if (kb__meta_str(obj, "namespace"))
                kb_value_set(io, "namespace", kb_value_new_string(ns));
        const char *uid = kb__meta_str(obj, "uid");
        kb_value_set(io, "uid", kb_value_new_string(uid ? uid : ""));
        kb_value_set(ev, "reason", kb_value_new_string(reason));
        kb_value_set(ev, "message", kb_value_new_string(msg.data));
        kb_value_set(ev, "type", kb_value_new_string(type));
        kb_value_set(ev, "count", kb_value_new_int(1));
        char ts[40];
        kb_format_time(kb__now(), ts, sizeof(ts));
        kb_value_set(ev, "firstTimestamp", kb_value_new_string(ts));
        kb_value_set(ev, "lastTimestamp", kb_value_new_string(ts));
        struct kb_value *src = kb_value_ensure_object(ev, "source");
        kb_value_set(src, "component", kb_value_new_string(component));
        kb__store_put(srv, evt, ev);
        kb_buf_release(&msg);
}

static void reqcount_free(struct kb_rtype *rt)
{
        for (size_t i = 0; i < rt->ncounts; i++)
                free(rt->counts[i].sub);
        free(rt->counts);
        rt->counts = NULL;
        rt->ncounts = rt->capcounts = 0;
}

void kb__type_free(struct kb_rtype *rt)
{
        kb__index_free(rt);
        reqcount_free(rt);
        struct kb_obj *o, *tmp;
        HASH_ITER(hh, rt->objs, o, tmp)
        {
                HASH_DEL(rt->objs, o);
                kb__doc_unref(o->doc);
                free(o->key);
                free(o);
        }
        for (size_t i = 0; i < rt->nshort; i++)
                free(rt->short_names[i]);
        for (size_t i = 0; i < rt->ncat; i++)
                free(rt->categories[i]);
        free(rt->short_names);
        free(rt->categories);
        free(rt->group);
        free(rt->version);
        free(rt->resource);
        free(rt->kind);
        free(rt->singular);
        free(rt->list_kind);
        kb_value_free(rt->schema);
        kb_value_free(rt->columns);
        kb_value_free(rt->selectable);
        free(rt->crd_name);
        free(rt);
}

static char **str_array(const struct kb_value *a, size_t *n)
{
        *n = 0;
        if (!kb_value_is(a, KB_VARRAY) || a->arr.n == 0)
                return NULL;
        char **out = kb_xcalloc(a->arr.n, sizeof(*out));
        for (size_t i = 0; i < a->arr.n; i++)
                if (kb_value_str(a->arr.v[i]))
                        out[(*n)++] = kb_xstrdup(kb_value_str(a->arr.v[i]));
        return out;
}

/*
 * Registers (or re-registers, on update) every served version of a CRD.
 * Existing custom resources are kept across an update: the objects move to
 * the new type record.
 */
int kb__register_crd(struct kb_apiserver *srv, const struct kb_value *crd)
{
        const char *name = kb__meta_str(crd, "name");
        const struct kb_value *spec = kb_value_get(crd, "spec");
        const struct kb_value *names = kb_value_get(spec, "names");
        const char *group = kb_value_str(kb_value_get(spec, "group"));
        const struct kb_value *versions = kb_value_get(spec, "versions");
        if (!name || !group || !kb_value_is(versions, KB_VARRAY))
                return KB_EBADINPUT;
        bool namespaced = !kb_streq(kb_value_str(kb_value_get(spec, "scope")), "Cluster");
        for (size_t i = 0; i < versions->arr.n; i++) {
                const struct kb_value *ver = versions->arr.v[i];
                const char *vname = kb_value_str(kb_value_get(ver, "name"));
                if (!vname || !kb_value_bool(kb_value_get(ver, "served"), true))
                        continue;
                struct kb_rtype *rt = NULL;
                for (size_t j = 0; j < srv->ntypes; j++) {
                        struct kb_rtype *t = srv->types[j];
                        if (!t->gone && t->custom && kb_streq(t->crd_name, name) &&
                            !strcmp(t->version, vname))
                                rt = t;
                }
                if (!rt) {
                        rt = kb__type_add(srv);
                        rt->custom = true;
                        rt->crd_name = kb_xstrdup(name);
                        rt->group = kb_xstrdup(group);
                        rt->version = kb_xstrdup(vname);
                } else {
                        free(rt->resource);
                        free(rt->kind);
                        free(rt->singular);
                        free(rt->list_kind);
                        for (size_t k = 0; k < rt->nshort; k++)
                                free(rt->short_names[k]);
                        for (size_t k = 0; k < rt->ncat; k++)
                                free(rt->categories[k]);
                        free(rt->short_names);
                        free(rt->categories);
                        kb_value_free(rt->schema);
                        kb_value_free(rt->columns);
                        kb_value_free(rt->selectable);
                        rt->selectable = NULL;
                }
                const char *plural = kb_value_str(kb_value_get(names, "plural"));
                const char *kind = kb_value_str(kb_value_get(names, "kind"));
                const char *singular = kb_value_str(kb_value_get(names, "singular"));
                const char *list_kind = kb_value_str(kb_value_get(names, "listKind"));
                rt->resource = kb_xstrdup(plural ? plural : "");
                rt->kind = kb_xstrdup(kind ? kind : "");
                if (singular)
                        rt->singular = kb_xstrdup(singular);
                else {
                        rt->singular = kb_xstrdup(rt->kind);
                        for (char *p = rt->singular; *p; p++)
                                if (*p >= 'A' && *p <= 'Z')
                                        *p = (char)(*p - 'A' + 'a');
                }
                rt->list_kind =
                    list_kind ? kb_xstrdup(list_kind) : kb_xasprintf("%sList", rt->kind);
                rt->short_names = str_array(kb_value_get(names, "shortNames"), &rt->nshort);
                rt->categories = str_array(kb_value_get(names, "categories"), &rt->ncat);
                rt->namespaced = namespaced;
                rt->has_status = kb_value_dig(ver, "subresources", "status") != NULL;
                const struct kb_value *schema = kb_value_dig(ver, "schema", "openAPIV3Schema");
                rt->schema = schema ? kb_value_clone(schema) : NULL;
                const struct kb_value *cols = kb_value_get(ver, "additionalPrinterColumns");
                rt->columns = kb_value_is(cols, KB_VARRAY) ? kb_value_clone(cols) : NULL;
                /* selectableFields: [{jsonPath: .spec.x}] -> ["spec.x"]. */
                const struct kb_value *sel = kb_value_get(ver, "selectableFields");
                rt->selectable = kb_value_new(KB_VARRAY);
                for (size_t k = 0; kb_value_is(sel, KB_VARRAY) && k < sel->arr.n; k++) {
                        const char *jp = kb_value_str(kb_value_get(sel->arr.v[k], "jsonPath"));
                        if (jp && jp[0] == '.')
                                kb_value_append(rt->selectable, kb_value_new_string(jp + 1));
                }
                rt->validate = NULL; /* the kinds set it (kb__crd_register) */
        }
        return 0;
}

void kb__unregister_crd(struct kb_apiserver *srv, const char *name)
{
        for (size_t i = 0; i < srv->ntypes; i++) {
                struct kb_rtype *rt = srv->types[i];
                if (rt->gone || !rt->custom || !kb_streq(rt->crd_name, name))
                        continue;
                struct kb_obj *o, *tmp;
                HASH_ITER(hh, rt->objs, o, tmp)
                kb__store_remove(srv, rt, o);
                rt->gone = true;
        }
        pthread_cond_broadcast(&srv->cond);
}

void kb__store_free(struct kb_apiserver *srv)
{
        for (size_t i = 0; i < srv->hist_len; i++) {
                struct kb_event *e = &srv->hist[(srv->hist_start + i) % srv->opts.history];
                kb__doc_unref(e->obj);
                kb__doc_unref(e->old);
        }
        free(srv->hist);
        for (size_t i = 0; i < srv->ntypes; i++)
                kb__type_free(srv->types[i]);
        free(srv->types);
        kb_value_shares_free(srv->shares);
}
