/*
 * Workloads: the PodGroups kbatch-scheduler makes itself, so that a cluster
 * needs no other controller for gangs to work (pkg/workload says what each
 * holds; kbatch-sim makes the same ones as it loads manifests):
 *
 *  - for the pods of ours that name no group, "podgroup-<controller uid>",
 *    as Volcano's podgroup controller makes it: minMember from the
 *    annotation scheduling.volcano.sh/group-min-member on the pod, else on
 *    its controller (a batch/v1 Job, a ReplicaSet...), which is read once
 *    with a GET;
 *  - for each scheduler-plugins PodGroup (scheduling.x-k8s.io/v1alpha1,
 *    watched when its CRD is there), the Volcano PodGroup of the same name
 *    that its labelled pods join, made and kept in step with it.
 *
 * Level-triggered, from the snapshot each session takes: a PodGroup that
 * should exist and is not in the cache is asked for, one request per group
 * at a time; after an answer the group is left alone for a while (10 s
 * after a create, for the watch to bring it; 5 s after a failure; 30 s
 * after a bad annotation, which a Warning event names on the pod and its
 * controller).  A pod whose group is not there yet waits in the session
 * with WaitingForPodGroup.
 *
 * Worked example: a batch/v1 Job train (uid 5c1f) of parallelism 4 whose
 * pod template says group-min-member "4".  The first snapshot with its
 * pods finds podgroup-5c1f missing: the pod's own annotation gives
 * minMember 4, so the group is POSTed at once (no GET of the Job).  The
 * other three pods name the same group and are skipped while it is in
 * flight.  The next sessions see the PodGroup through the watch and
 * schedule the four pods as one gang.
 *
 * Loop thread, as the rest of the daemon.  Creates go in the BIND lane
 * (the binds of their pods wait for them), updates in the STATUS lane,
 * both fenced like every write of a leader; the GETs in the READ lane.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "scheduler/scheduler-int.h"
#include "workload/workload.h"

#define RETRY_CREATED 10.0 /* after a create, for our watch to show it */
#define RETRY_FAILED  5.0
#define RETRY_INVALID 30.0 /* a bad annotation, until someone fixes it */

#define XPG_API "/apis/scheduling.x-k8s.io/v1alpha1"

/* A PodGroup being made or updated ("ns/name"). */
struct rec {
        char *key;
        bool inflight;
        bool made;       /* the last write was answered well */
        double next_try; /* monotonic */
        uint64_t sent;   /* hash of the last body written, 0 for none */
};

/* A scheduler-plugins PodGroup, as the watch shows it.  In uthash, not a
 * kb_map: sync_xpodgroups sends its writes in the order the watch brought
 * them, where a map's order would differ from run to run. */
struct xpg {
        UT_hash_handle hh;
        char *key; /* "ns/name" */
        struct kb_xpodgroup *x;
        bool seen; /* in the list under way */
};

struct kb__workloads {
        struct kb_sched *s;
        struct kb_reflector *refl;
        struct xpg *xpgs;
        struct kb_map recs; /* "ns/name" -> struct rec * */
};

/* What an answer needs to find its way back. */
struct call {
        struct kb_sched *s;
        char *key;      /* the rec's */
        char *ns, *pod; /* the pod a workload's group is made for, or NULL */
        /* The owner a created group is announced on (an event naming it),
         * or kind NULL. */
        char *o_kind, *o_api, *o_name, *o_uid;
};

static struct call *call_new(struct kb_sched *s, const char *key, const char *ns, const char *pod)
{
        struct call *c = kb_xcalloc(1, sizeof(*c));
        c->s = s;
        c->key = kb_xstrdup(key);
        c->ns = ns ? kb_xstrdup(ns) : NULL;
        c->pod = pod ? kb_xstrdup(pod) : NULL;
        return c;
}

static void call_free(struct call *c)
{
        free(c->key);
        free(c->ns);
        free(c->pod);
        free(c->o_kind);
        free(c->o_api);
        free(c->o_name);
        free(c->o_uid);
        free(c);
}

static struct rec *rec_get(struct kb__workloads *w, const char *key, bool add)
{
        uint64_t *found = kb_map_get_str(&w->recs, key, strlen(key));
        struct rec *r = found ? (struct rec *)(uintptr_t)*found : NULL;
        if (!r && add) {
                r = kb_xcalloc(1, sizeof(*r));
                r->key = kb_xstrdup(key);
                *kb_map_put_str(&w->recs, r->key, strlen(r->key), NULL) = (uintptr_t)r;
        }
        return r;
}

/* Forgets the recs at rest (all: every one), found first and freed after
 * (no deletes while the map is walked; the order decides nothing). */
static void recs_forget(struct kb__workloads *w, double now, bool all)
{
        struct kb_map *m = &w->recs;
        struct rec **rest = kb_xmalloc((kb_map_count(m) + 1) * sizeof(*rest));
        size_t n = 0;
        for (size_t i = 0; i < m->cap; i++) {
                struct rec *r = (struct rec *)(uintptr_t)m->slots[i].val;
                if (m->slots[i].hash && (all || (!r->inflight && now >= r->next_try)))
                        rest[n++] = r;
        }
        for (size_t i = 0; i < n; i++) {
                kb_map_del_str(m, rest[i]->key, strlen(rest[i]->key));
                free(rest[i]->key);
                free(rest[i]);
        }
        free(rest);
}

/* The rec of a call's answer, no longer in flight, due again after
 * delay; NULL when it is gone (the client is being freed). */
static struct rec *settle(struct call *c, double delay)
{
        struct kb__workloads *w = c->s->workloads;
        struct rec *r = w ? rec_get(w, c->key, false) : NULL;
        if (r) {
                r->inflight = false;
                r->next_try = kb_now_mono() + delay;
        }
        return r;
}

/* ---- scheduler-plugins' PodGroups, watched ---------------------------------------- */

static void xpg_free(struct xpg *e)
{
        kb_xpodgroup_free(e->x);
        free(e->key);
        free(e);
}

static void x_list_begin(void *arg)
{
        struct kb__workloads *w = arg;
        struct xpg *e, *t;
        HASH_ITER(hh, w->xpgs, e, t)
        e->seen = false;
}

static void x_upsert(void *arg, const struct kb_value *obj)
{
        struct kb__workloads *w = arg;
        struct kb_xpodgroup *x;
        char err[512];
        if (kb_xpodgroup_decode(obj, &x, err, sizeof(err))) {
                /* It stays as it was (or absent): its pods wait, and the
                 * object says why. */
                KB_WARN("%s", err);
                const char *ns = kb_value_str(kb_value_dig(obj, "metadata", "namespace"));
                const char *name = kb_value_str(kb_value_dig(obj, "metadata", "name"));
                const char *uid = kb_value_str(kb_value_dig(obj, "metadata", "uid"));
                if (name && kb__leading(w->s))
                        kb__event(w->s, "PodGroup", "scheduling.x-k8s.io/v1alpha1",
                                  kb_ns_or_default(ns), name, uid, "Warning", "Invalid", err);
                return;
        }
        char *key = kb_xasprintf("%s/%s", x->meta.namespace, x->meta.name);
        struct xpg *e = NULL;
        HASH_FIND_STR(w->xpgs, key, e);
        if (e) {
                free(key);
                kb_xpodgroup_free(e->x);
        } else {
                e = kb_xcalloc(1, sizeof(*e));
                e->key = key;
                HASH_ADD_KEYPTR(hh, w->xpgs, e->key, strlen(e->key), e);
        }
        e->x = x;
        e->seen = true;
}

static void x_remove(void *arg, const struct kb_value *obj)
{
        struct kb__workloads *w = arg;
        const char *ns = kb_value_str(kb_value_dig(obj, "metadata", "namespace"));
        const char *name = kb_value_str(kb_value_dig(obj, "metadata", "name"));
        char *key = kb_xasprintf("%s/%s", kb_ns_or_default(ns), name ? name : "");
        struct xpg *e = NULL;
        HASH_FIND_STR(w->xpgs, key, e);
        free(key);
        if (e) {
                HASH_DEL(w->xpgs, e);
                xpg_free(e);
        }
}

static void x_list_end(void *arg)
{
        struct kb__workloads *w = arg;
        struct xpg *e, *t;
        HASH_ITER(hh, w->xpgs, e, t)
        {
                if (e->seen)
                        continue;
                HASH_DEL(w->xpgs, e);
                xpg_free(e);
        }
}

static const struct kb_reflector_ops x_ops = {
    .list_begin = x_list_begin, .upsert = x_upsert, .remove = x_remove, .list_end = x_list_end};

void kb__workloads_start(struct kb_sched *s)
{
        struct kb__workloads *w = kb_xcalloc(1, sizeof(*w));
        w->s = s;
        kb_map_init(&w->recs, KB_MAP_STR);
        s->workloads = w;
        if (!s->o->workload_podgroups)
                return;
        w->refl = kb_reflector_new(s->kube, "podgroups (scheduling.x-k8s.io)", XPG_API "/podgroups",
                                   NULL, &x_ops, w);
        kb_reflector_set_optional(w->refl); /* only where scheduler-plugins' CRD is */
}

void kb__workloads_stop(struct kb_sched *s)
{
        if (s->workloads) {
                kb_reflector_free(s->workloads->refl);
                s->workloads->refl = NULL;
        }
}

void kb__workloads_release(struct kb_sched *s)
{
        struct kb__workloads *w = s->workloads;
        if (!w)
                return;
        struct xpg *e, *et;
        HASH_ITER(hh, w->xpgs, e, et)
        {
                HASH_DEL(w->xpgs, e);
                xpg_free(e);
        }
        recs_forget(w, 0, true);
        kb_map_release(&w->recs);
        free(w);
        s->workloads = NULL;
}

/* ---- writing PodGroups ------------------------------------------------------------- */

static void written(void *arg, const struct kb_kube_resp *r)
{
        struct call *c = arg;
        if (r->cancelled) {
                call_free(c);
                return;
        }
        /* 409: made meanwhile (another scheduler, Volcano's controller):
         * the same group by the same name, as good as ours. */
        bool ok = (r->status >= 200 && r->status < 300) || r->status == 409;
        if (ok)
                KB_V(1, "podgroup %s %s for its workload", c->key,
                     r->status == 409 ? "exists" : "written");
        else
                KB_WARN("making podgroup %s for its workload: %ld %.200s", c->key, r->status,
                        r->status ? r->body : r->error);
        /* The owner hears which group its pods join, as Kueue's job
         * reconciler records a CreatedWorkload event on the job: a user who
         * describes the Job finds the PodGroup to ask about. */
        if (c->o_kind && r->status >= 200 && r->status < 300) {
                const char *slash = strchr(c->key, '/');
                char *msg =
                    kb_xasprintf("made PodGroup %s for its pods (label " KB_OWNER_UID_LABEL
                                 "=%s); kubectl kbatch why %s",
                                 c->key, c->o_uid ? c->o_uid : "", slash ? slash + 1 : c->key);
                kb__event(c->s, c->o_kind, c->o_api, c->ns, c->o_name, c->o_uid, "Normal",
                          "PodGroupCreated", msg);
                free(msg);
        }
        struct rec *rec = settle(c, ok ? RETRY_CREATED : RETRY_FAILED);
        if (rec)
                rec->made = ok;
        call_free(c);
}

/* POSTs doc (a Volcano PodGroup), or with patch a merge patch of it; a
 * create made for pod p's workload is announced on p's controller (on p
 * when it has none). */
static void write_podgroup(struct kb_sched *s, struct rec *r, const struct kb_value *doc,
                           const char *ns, const char *name, bool patch, const struct kb_pod *p)
{
        char *body = kb_json_emit(doc, false);
        r->sent = kb_hash(body, strlen(body), KB_HASH_SEED);
        char *path = patch ? kb_xasprintf(KB_GROUP_API "/namespaces/%s/podgroups/%s", ns, name)
                           : kb_xasprintf(KB_GROUP_API "/namespaces/%s/podgroups", ns);
        struct kb_kube_req req = {
            .method = patch ? "PATCH" : "POST",
            .path = path,
            .body = body,
            .content_type = patch ? "application/merge-patch+json" : NULL,
            /* A create gates the binds of its pods: it goes with the
             * binds, not behind the status patches of the groups already
             * running (at 10,000 bare pods that queue held the creates,
             * and so the binds, for seconds). */
            .lane = patch ? KB_KUBE_LANE_STATUS : KB_KUBE_LANE_BIND,
        };
        r->inflight = true;
        struct call *c = call_new(s, r->key, ns, NULL);
        if (p) {
                const struct kb_owner_ref *o = p->controller;
                c->o_kind = kb_xstrdup(o ? o->kind : "Pod");
                c->o_api = kb_xstrdup(o && o->api_version ? o->api_version : "v1");
                c->o_name = kb_xstrdup(o ? o->name : p->meta.name);
                const char *uid = o ? o->uid : p->meta.uid;
                c->o_uid = uid ? kb_xstrdup(uid) : NULL;
        }
        kb_kube_request(s->kube, &req, written, c);
        free(path);
        free(body);
}

/* ---- pods that name no group ---------------------------------------------------------- */

/* Makes p's group with owner (its controller's document, or NULL). */
static void make_for_pod(struct kb_sched *s, struct rec *r, const struct kb_pod *p,
                         const struct kb_value *owner)
{
        char err[512];
        struct kb_value *doc = kb_workload_podgroup(p, owner, err, sizeof(err));
        if (doc) {
                /* The owner's uid as a label, as Kueue labels a Workload
                 * with kueue.x-k8s.io/job-uid: `kubectl get pg -l` finds
                 * the group of a Job. */
                const char *uid = p->controller ? p->controller->uid : p->meta.uid;
                if (uid)
                        kb_value_set(kb_value_ensure_object(kb_value_ensure_object(doc, "metadata"),
                                                            "labels"),
                                     KB_OWNER_UID_LABEL, kb_value_new_string(uid));
                write_podgroup(s, r, doc, kb_meta_ns(&p->meta), p->workload_group, false, p);
                kb_value_free(doc);
                return;
        }
        /* The controller's annotation is not a number: say so on it and on
         * the pod, and look again later. */
        KB_WARN("cannot make podgroup %s: %s", r->key, err);
        const struct kb_owner_ref *o = p->controller;
        const char *ns = kb_meta_ns(&p->meta);
        if (o)
                kb__event(s, o->kind, o->api_version ? o->api_version : "v1", ns, o->name, o->uid,
                          "Warning", KB_WHY_GROUP_ANNOTATION, err);
        kb__event(s, "Pod", "v1", ns, p->meta.name, p->meta.uid, "Warning", KB_WHY_GROUP_ANNOTATION,
                  err);
        r->inflight = false;
        r->next_try = kb_now_mono() + RETRY_INVALID;
}

static void owner_read(void *arg, const struct kb_kube_resp *r)
{
        struct call *c = arg;
        if (r->cancelled) {
                call_free(c);
                return;
        }
        struct kb_sched *s = c->s;
        struct kb_value *owner = NULL;
        /* 404: the controller is gone; the pod's own reading stands. */
        if (r->status != 404 &&
            (r->status != 200 || kb_json_parse(r->body, r->len, &owner, NULL, 0) != 0)) {
                KB_WARN("podgroup %s: reading the controller of pod %s/%s: %ld %.200s", c->key,
                        c->ns, c->pod, r->status, r->status ? r->body : r->error);
                settle(c, RETRY_FAILED);
                call_free(c);
                return;
        }
        /* The pod as it is now; gone or changed, the next session looks
         * again. */
        const struct kb_pod *p = kb_cache_get(s->cache, KB_KIND_POD, c->ns, c->pod);
        struct rec *rec = settle(c, 0);
        char *want = p && p->workload_group
                         ? kb_xasprintf("%s/%s", kb_meta_ns(&p->meta), p->workload_group)
                         : NULL;
        if (rec && want && !strcmp(want, c->key) && kb__leading(s))
                make_for_pod(s, rec, p, owner);
        free(want);
        kb_value_free(owner);
        call_free(c);
}

static bool ours(const struct kb_snapshot *snap, const struct kb_pod *p)
{
        for (size_t k = 0; k < snap->nscheduler_names; k++)
                if (kb_streq(p->scheduler_name, snap->scheduler_names[k]))
                        return true;
        return false;
}

static void sync_pods(struct kb_sched *s, const struct kb_snapshot *snap, double now)
{
        struct kb__workloads *w = s->workloads;
        const struct kb_pod *last = NULL;
        for (size_t i = 0; i < snap->npods; i++) {
                const struct kb_pod *p = snap->pods[i];
                /* A pod whose own annotation is bad gets no group: the
                 * session says why on it (InvalidGroupAnnotation). */
                if (!p->workload_group || p->workload_invalid || p->meta.deletion ||
                    kb_pod_terminal(p) || !ours(snap, p))
                        continue;
                const char *ns = kb_meta_ns(&p->meta);
                /* The pods of a workload sit together in the snapshot. */
                if (last && !strcmp(last->workload_group, p->workload_group) &&
                    !strcmp(kb_meta_ns(&last->meta), ns))
                        continue;
                last = p;
                if (kb_cache_get(s->cache, KB_KIND_PODGROUP, ns, p->workload_group) ||
                    kb_cache_invalid_get(s->cache, KB_KIND_PODGROUP, ns, p->workload_group))
                        continue;
                char *key = kb_xasprintf("%s/%s", ns, p->workload_group);
                struct rec *r = rec_get(w, key, true);
                free(key);
                if (r->inflight || now < r->next_try)
                        continue;
                char path[1024];
                if (kb_workload_owner_path(p, path, sizeof(path))) {
                        r->inflight = true;
                        struct kb_kube_req req = {.method = "GET", .path = path};
                        kb_kube_request(s->kube, &req, owner_read,
                                        call_new(s, r->key, ns, p->meta.name));
                } else {
                        make_for_pod(s, r, p, NULL);
                }
        }
}

/* ---- scheduler-plugins' PodGroups, mirrored ------------------------------------------- */

/* Whether pg (the Volcano PodGroup) holds what x asks. */
static bool mirrors(const struct kb_podgroup *pg, const struct kb_xpodgroup *x)
{
        if (pg->min_member != x->min_member || (x->queue && !kb_streq(pg->queue, x->queue)))
                return false;
        if (pg->has_min_resources != x->has_min_resources)
                return false;
        if (x->has_min_resources && !(kb_res_le(&pg->min_resources, &x->min_resources) &&
                                      kb_res_le(&x->min_resources, &pg->min_resources)))
                return false;
        char want[32] = "";
        if (x->schedule_timeout > 0)
                snprintf(want, sizeof(want), "%ds", x->schedule_timeout);
        const char *have = kb_meta_annotation(&pg->meta, KB_INQUEUE_TIMEOUT_ANNOTATION);
        return kb_streq(have ? have : "", want);
}

/* A merge patch that makes the Volcano PodGroup hold what x asks (doc is
 * the PodGroup kb_workload_xpodgroup makes from x): its spec, and the
 * timeout annotation set or removed. */
static struct kb_value *mirror_patch(const struct kb_value *doc, const struct kb_xpodgroup *x)
{
        struct kb_value *patch = kb_value_new(KB_VOBJECT);
        struct kb_value *spec = kb_value_clone(kb_value_get(doc, "spec"));
        if (!x->has_min_resources)
                kb_value_set(spec, "minResources", kb_value_new(KB_VNULL));
        kb_value_set(patch, "spec", spec);
        const struct kb_value *t =
            kb_value_dig(doc, "metadata", "annotations", KB_INQUEUE_TIMEOUT_ANNOTATION);
        struct kb_value *ann =
            kb_value_ensure_object(kb_value_ensure_object(patch, "metadata"), "annotations");
        kb_value_set(ann, KB_INQUEUE_TIMEOUT_ANNOTATION,
                     t ? kb_value_clone(t) : kb_value_new(KB_VNULL));
        return patch;
}

/* The scheduler-plugins phase for a Volcano PodGroup's: its controller's
 * names (Pending, Scheduling, Running, Finished, Unknown; sigs.k8s.io/
 * scheduler-plugins apis/scheduling/v1alpha1 PodGroupPhase), Inqueue
 * (admitted, being placed) as Scheduling. */
static const char *x_phase(const char *volcano)
{
        static const struct {
                const char *v, *x;
        } map[] = {{"Pending", "Pending"},
                   {"Inqueue", "Scheduling"},
                   {"Running", "Running"},
                   {"Completed", "Finished"},
                   {"Unknown", "Unknown"}};
        for (size_t i = 0; volcano && i < KB_ARRAY_SIZE(map); i++)
                if (!strcmp(volcano, map[i].v))
                        return map[i].x;
        return NULL;
}

/* x's status as its mirror's (pg) says: phase and counts, so that `kubectl
 * get podgroups.scheduling.x-k8s.io` shows PHASE and RUNNING as
 * scheduler-plugins' controller would fill them (issue 23, point 7).  Only
 * when it differs from what x shows and from what was last sent. */
static void x_status(struct kb_sched *s, const struct kb_xpodgroup *x, const struct kb_podgroup *pg)
{
        const char *phase = x_phase(pg->phase);
        if (!phase || (kb_streq(x->status_phase, phase) && x->status_running == pg->running &&
                       x->status_succeeded == pg->succeeded && x->status_failed == pg->failed))
                return;
        char *mkey = kb_xasprintf("xpg/%s/%s", x->meta.namespace, x->meta.name);
        char *desc = kb_xasprintf("%s/%d/%d/%d", phase, (int)pg->running, (int)pg->succeeded,
                                  (int)pg->failed);
        uint64_t h = kb_hash(desc, strlen(desc), KB_HASH_SEED);
        free(desc);
        if (!kb__status_memo_same(s, mkey, h)) {
                kb__status_memo_set(s, mkey, h);
                struct kb_value *body = kb_value_new(KB_VOBJECT);
                struct kb_value *st = kb_value_ensure_object(body, "status");
                kb_value_set(st, "phase", kb_value_new_string(phase));
                kb_value_set(st, "running", kb_value_new_int(pg->running));
                kb_value_set(st, "succeeded", kb_value_new_int(pg->succeeded));
                kb_value_set(st, "failed", kb_value_new_int(pg->failed));
                char *path = kb_xasprintf(XPG_API "/namespaces/%s/podgroups/%s/status",
                                          x->meta.namespace, x->meta.name);
                char *what = kb_xasprintf("podgroup.scheduling.x-k8s.io %s/%s status",
                                          x->meta.namespace, x->meta.name);
                kb__status_fire(s, path, body, x->meta.resource_version,
                                "application/merge-patch+json", what, mkey, NULL);
                free(what);
                free(path);
        }
        free(mkey);
}

static void sync_xpodgroups(struct kb_sched *s, double now)
{
        struct kb__workloads *w = s->workloads;
        struct xpg *e, *t;
        HASH_ITER(hh, w->xpgs, e, t)
        {
                const struct kb_xpodgroup *x = e->x;
                const struct kb_podgroup *pg =
                    kb_cache_get(s->cache, KB_KIND_PODGROUP, x->meta.namespace, x->meta.name);
                if (pg && pg->phase)
                        x_status(s, x, pg);
                if (pg && mirrors(pg, x))
                        continue;
                struct rec *r = rec_get(w, e->key, true);
                if (r->inflight)
                        continue;
                struct kb_value *doc = kb_workload_xpodgroup(x);
                struct kb_value *body = pg ? mirror_patch(doc, x) : kb_value_clone(doc);
                /* While the watch has not brought back what was written,
                 * the same write waits; a different one (x changed) goes
                 * now. */
                char *text = kb_json_emit(body, false);
                bool same = r->sent == kb_hash(text, strlen(text), KB_HASH_SEED);
                free(text);
                if (!same || now >= r->next_try)
                        write_podgroup(s, r, body, x->meta.namespace, x->meta.name, pg != NULL,
                                       NULL);
                kb_value_free(body);
                kb_value_free(doc);
        }
}

bool kb__workloads_making(struct kb_sched *s, const char *ns, const char *name)
{
        struct kb__workloads *w = s->workloads;
        if (!w || !name)
                return false;
        char *key = kb_xasprintf("%s/%s", ns, name);
        struct rec *r = rec_get(w, key, false);
        free(key);
        return r && (r->inflight || r->made);
}

void kb__workloads_sync(struct kb_sched *s, const struct kb_snapshot *snap)
{
        struct kb__workloads *w = s->workloads;
        if (!w || !s->o->workload_podgroups || !kb__leading(s))
                return;
        double now = kb_now_mono();
        sync_pods(s, snap, now);
        sync_xpodgroups(s, now);
        recs_forget(w, now, false); /* what rests comes back while still wanted */
}
