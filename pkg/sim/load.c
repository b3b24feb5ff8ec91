/*
 * Loading manifests into the simulated cluster (kbatch-sim's input):
 * objects by kind, workloads as their controllers would make them, pods
 * that name no group joined to their workload's PodGroup, and the whole
 * load undone on an error.  Calls cluster.c, never the other way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"
#include "workload/workload.h"
/* Objects already loaded, by kind and namespace/name, to refuse duplicates. */
/* What a load has seen, by "kind ns/name" (objects) or "owner u/<uid>",
 * "owner n/<ns>/<name>" (the Jobs a workload's PodGroup is made from,
 * val). */
struct seen {
        const struct kb_value *val;
        char key[];
};

/* The set: base's kb_map from key to entry (borrowing the entry's key),
 * and every entry, to free them. */
struct seen_set {
        struct kb_map map;
        struct seen **all;
        size_t n, cap;
};

struct loader {
        struct kb_cluster *c;
        const char *label;
        char *err;
        size_t errlen;
        struct seen_set seen;
        /* Loaded by this call, for rollback on error, and the line of
         * each. */
        struct kb_object *added;
        size_t nadded, capadded;
        int *lines;
        size_t nlines, caplines;
        size_t nowners0; /* c->nowners when the call began */
};

static const char *kind_name(enum kb_kind k)
{
        switch (k) {
        case KB_KIND_NODE:
                return "node";
        case KB_KIND_POD:
                return "pod";
        case KB_KIND_PODGROUP:
                return "podgroup";
        case KB_KIND_QUEUE:
                return "queue";
        case KB_KIND_PRIORITYCLASS:
                return "priorityclass";
        case KB_KIND_NAMESPACE:
                return "namespace";
        case KB_KIND_HYPERNODE:
                return "hypernode";
        case KB_KIND_PDB:
                return "poddisruptionbudget";
        default:
                return "object";
        }
}

static const struct kb_meta *object_meta(const struct kb_object *o)
{
        switch (o->kind) {
        case KB_KIND_NODE:
                return &o->node->meta;
        case KB_KIND_POD:
                return &o->pod->meta;
        case KB_KIND_PODGROUP:
                return &o->podgroup->meta;
        case KB_KIND_QUEUE:
                return &o->queue->meta;
        case KB_KIND_PRIORITYCLASS:
                return &o->priorityclass->meta;
        case KB_KIND_NAMESPACE:
                return &o->namespace->meta;
        case KB_KIND_HYPERNODE:
                return &o->hypernode->meta;
        case KB_KIND_PDB:
                return &o->pdb->meta;
        default:
                return NULL;
        }
}

static void seen_free(struct seen_set *set)
{
        for (size_t i = 0; i < set->n; i++)
                free(set->all[i]);
        free(set->all);
        kb_map_release(&set->map);
}

static void seen_add(struct seen_set *set, const char *key)
{
        size_t n = strlen(key);
        struct seen *e = kb_xmalloc(sizeof(*e) + n + 1);
        e->val = NULL;
        memcpy(e->key, key, n + 1);
        KB_PUSH(set->all, set->n, set->cap, e);
        *kb_map_put_str(&set->map, e->key, n, NULL) = (uint64_t)(uintptr_t)e;
}

static struct seen *seen_find(const struct seen_set *set, const char *key)
{
        const uint64_t *v = kb_map_get_str(&set->map, key, strlen(key));
        return v ? (struct seen *)(uintptr_t)*v : NULL;
}

/* The key an owner is found by: its uid, else (a manifest without uids)
 * its namespace and name. */
static void owner_key(char *key, size_t n, const char *uid, const char *ns, const char *name)
{
        if (uid)
                snprintf(key, n, "owner u/%s", uid);
        else
                snprintf(key, n, "owner n/%s/%s", ns ? ns : "", name ? name : "");
}

static void owner_add(struct loader *l, const struct kb_value *owner)
{
        const struct kb_value *md = kb_value_get(owner, "metadata");
        char key[600];
        owner_key(key, sizeof(key), kb_value_str(kb_value_get(md, "uid")),
                  kb_value_str(kb_value_get(md, "namespace")),
                  kb_value_str(kb_value_get(md, "name")));
        if (seen_find(&l->seen, key))
                return; /* the first one stands, as the scan it replaces found */
        seen_add(&l->seen, key);
        seen_find(&l->seen, key)->val = owner;
}

/* Fills the seen-set with the objects the cluster already has. */
static void seen_init(struct loader *l)
{
        kb_map_init(&l->seen.map, KB_MAP_STR);
        struct kb_cluster *c = l->c;
        char key[600];
#define ADD_ALL(arr, n, kind)                                                                      \
        for (size_t i = 0; i < c->n; i++) {                                                        \
                const struct kb_meta *m = &c->arr[i]->meta;                                        \
                snprintf(key, sizeof(key), "%s %s/%s", kind, m->namespace ? m->namespace : "",     \
                         m->name);                                                                 \
                seen_add(&l->seen, key);                                                           \
        }
        ADD_ALL(nodes, nnodes, "node")
        ADD_ALL(pods, npods, "pod")
        ADD_ALL(podgroups, npodgroups, "podgroup")
        ADD_ALL(queues, nqueues, "queue")
        ADD_ALL(priorityclasses, npriorityclasses, "priorityclass")
        ADD_ALL(namespaces, nnamespaces, "namespace")
        ADD_ALL(hypernodes, nhypernodes, "hypernode")
        ADD_ALL(pdbs, npdbs, "poddisruptionbudget")
#undef ADD_ALL
        for (size_t i = 0; i < c->nowners; i++)
                owner_add(l, c->owners[i]);
}

static int add_object(struct loader *l, struct kb_object *o, int line)
{
        struct kb_cluster *c = l->c;
        const struct kb_meta *m = object_meta(o);
        char key[600];
        struct seen *found = NULL;
        snprintf(key, sizeof(key), "%s %s/%s", kind_name(o->kind), m->namespace ? m->namespace : "",
                 m->name);
        found = seen_find(&l->seen, key);
        if (found) {
                if (m->namespace)
                        snprintf(l->err, l->errlen, "%s:%d: %s %s/%s: defined twice", l->label,
                                 line, kind_name(o->kind), m->namespace, m->name);
                else
                        snprintf(l->err, l->errlen, "%s:%d: %s %s: defined twice", l->label, line,
                                 kind_name(o->kind), m->name);
                kb_object_release(o);
                return KB_EBADINPUT;
        }
        seen_add(&l->seen, key);
        switch (o->kind) {
        case KB_KIND_NODE:
                KB_PUSH(c->nodes, c->nnodes, c->capnodes, o->node);
                break;
        case KB_KIND_POD:
                KB_PUSH(c->pods, c->npods, c->cappods, o->pod);
                break;
        case KB_KIND_PODGROUP:
                KB_PUSH(c->podgroups, c->npodgroups, c->cappodgroups, o->podgroup);
                break;
        case KB_KIND_QUEUE:
                KB_PUSH(c->queues, c->nqueues, c->capqueues, o->queue);
                break;
        case KB_KIND_PRIORITYCLASS:
                KB_PUSH(c->priorityclasses, c->npriorityclasses, c->cappriorityclasses,
                        o->priorityclass);
                break;
        case KB_KIND_NAMESPACE:
                KB_PUSH(c->namespaces, c->nnamespaces, c->capnamespaces, o->namespace);
                break;
        case KB_KIND_HYPERNODE:
                KB_PUSH(c->hypernodes, c->nhypernodes, c->caphypernodes, o->hypernode);
                break;
        case KB_KIND_PDB:
                KB_PUSH(c->pdbs, c->npdbs, c->cappdbs, o->pdb);
                break;
        default:
                break;
        }
        KB_PUSH(l->added, l->nadded, l->capadded, *o);
        KB_PUSH(l->lines, l->nlines, l->caplines, line);
        return 0;
}

static int load_doc(struct loader *l, const struct kb_value *doc);

/* batch/v1 Job: its pods, as the Job controller would create them (the
 * template's labels and annotations, so a pod joins its PodGroup). */
static int load_job(struct loader *l, const struct kb_value *doc)
{
        const char *name = kb_value_str(kb_value_dig(doc, "metadata", "name"));
        const char *ns = kb_value_str(kb_value_dig(doc, "metadata", "namespace"));
        const struct kb_value *tmpl = kb_value_dig(doc, "spec", "template");
        int64_t parallelism = 1, completions = -1;
        const struct kb_value *pv = kb_value_dig(doc, "spec", "parallelism");
        const struct kb_value *cv = kb_value_dig(doc, "spec", "completions");
        if (!name) {
                snprintf(l->err, l->errlen, "%s:%d: job: metadata.name: required", l->label,
                         doc->line);
                return KB_EBADINPUT;
        }
        if (!ns)
                ns = "default";
        if ((pv && (kb_value_int(pv, &parallelism) || parallelism < 0 || parallelism > 100000)) ||
            (cv && (kb_value_int(cv, &completions) || completions < 0))) {
                snprintf(l->err, l->errlen,
                         "%s:%d: job %s/%s: spec.%s: must be a whole number >= 0", l->label,
                         doc->line, ns, name,
                         pv && parallelism < 0 ? "parallelism" : "completions");
                return KB_EBADINPUT;
        }
        if (!kb_value_is(tmpl, KB_VOBJECT)) {
                snprintf(l->err, l->errlen, "%s:%d: job %s/%s: spec.template: required", l->label,
                         doc->line, ns, name);
                return KB_EBADINPUT;
        }
        const char *uid = kb_value_str(kb_value_dig(doc, "metadata", "uid"));
        if (uid && !uid[0])
                uid = NULL;
        /* Its metadata, for the PodGroups of pods that name no group, and its
         * deadline, the gang's declared runtime (reservations). */
        struct kb_value *owner = kb_value_new(KB_VOBJECT);
        struct kb_value *om = kb_value_ensure_object(owner, "metadata");
        kb_value_set(om, "name", kb_value_new_string(name));
        kb_value_set(om, "namespace", kb_value_new_string(ns));
        if (uid)
                kb_value_set(om, "uid", kb_value_new_string(uid));
        const struct kb_value *ann = kb_value_dig(doc, "metadata", "annotations");
        if (kb_value_is(ann, KB_VOBJECT))
                kb_value_set(om, "annotations", kb_value_clone(ann));
        const struct kb_value *ads = kb_value_dig(doc, "spec", "activeDeadlineSeconds");
        if (ads)
                kb_value_set(kb_value_ensure_object(owner, "spec"), "activeDeadlineSeconds",
                             kb_value_clone(ads));
        KB_PUSH(l->c->owners, l->c->nowners, l->c->capowners, owner);
        owner_add(l, owner);
        int64_t n = completions >= 0 && completions < parallelism ? completions : parallelism;
        for (int64_t i = 0; i < n; i++) {
                struct kb_value *pod = kb_value_new(KB_VOBJECT);
                struct kb_value *meta = kb_value_clone(kb_value_get(tmpl, "metadata"));
                if (!kb_value_is(meta, KB_VOBJECT)) {
                        kb_value_free(meta);
                        meta = kb_value_new(KB_VOBJECT);
                }
                char podname[512];
                snprintf(podname, sizeof(podname), "%s-%lld", name, (long long)i);
                kb_value_set(meta, "name", kb_value_new_string(podname));
                kb_value_set(meta, "namespace", kb_value_new_string(ns));
                struct kb_value *labels = kb_value_ensure_object(meta, "labels");
                kb_value_set(labels, "job-name", kb_value_new_string(name));
                const struct kb_value *ct = kb_value_dig(doc, "metadata", "creationTimestamp");
                if (ct)
                        kb_value_set(meta, "creationTimestamp", kb_value_clone(ct));
                kb_value_set(meta, "ownerReferences",
                             kb_workload_owner_refs("batch/v1", "Job", name, uid));
                kb_value_set(pod, "apiVersion", kb_value_new_string("v1"));
                kb_value_set(pod, "kind", kb_value_new_string("Pod"));
                kb_value_set(pod, "metadata", meta);
                kb_value_set(pod, "spec", kb_value_clone(kb_value_get(tmpl, "spec")));
                pod->line = doc->line;
                int rc = load_doc(l, pod);
                kb_value_free(pod);
                if (rc)
                        return rc;
        }
        return 0;
}

/* Loads a document made from the one at line, taking it. */
static int load_made(struct loader *l, struct kb_value *made, int line)
{
        made->line = line;
        int rc = load_doc(l, made);
        kb_value_free(made);
        return rc;
}

/* scheduling.x-k8s.io/v1alpha1 PodGroup: the Volcano PodGroup its pods
 * join. */
static int load_xpodgroup(struct loader *l, const struct kb_value *doc)
{
        char msg[1024];
        struct kb_xpodgroup *x;
        if (kb_xpodgroup_decode(doc, &x, msg, sizeof(msg))) {
                snprintf(l->err, l->errlen, "%s:%d: %s", l->label, doc->line, msg);
                return KB_EBADINPUT;
        }
        struct kb_value *pg = kb_workload_xpodgroup(x);
        kb_xpodgroup_free(x);
        return load_made(l, pg, doc->line);
}

/* batch.volcano.sh/v1alpha1 Job: its PodGroup and its pods, as Volcano's
 * job controller makes them. */
static int load_vcjob(struct loader *l, const struct kb_value *doc)
{
        char msg[1024];
        struct kb_vcjob *j;
        if (kb_vcjob_decode(doc, &j, msg, sizeof(msg))) {
                snprintf(l->err, l->errlen, "%s:%d: %s", l->label, doc->line, msg);
                return KB_EBADINPUT;
        }
        struct kb_value *pg = kb_vcjob_podgroup(j, msg, sizeof(msg));
        int rc = KB_EBADINPUT;
        if (!pg)
                snprintf(l->err, l->errlen, "%s:%d: %s", l->label, doc->line, msg);
        else
                rc = load_made(l, pg, doc->line);
        for (size_t t = 0; !rc && t < j->ntasks; t++)
                for (int32_t i = 0; !rc && i < j->tasks[t].replicas; i++)
                        rc = load_made(l, kb_vcjob_pod(j, t, i), doc->line);
        kb_vcjob_free(j);
        return rc;
}

static int load_doc(struct loader *l, const struct kb_value *doc)
{
        const char *kind = kb_value_str(kb_value_get(doc, "kind"));
        const char *api = kb_value_str(kb_value_get(doc, "apiVersion"));
        if (kind && strcmp(kind, "List") == 0) {
                const struct kb_value *items = kb_value_get(doc, "items");
                for (size_t i = 0; kb_value_is(items, KB_VARRAY) && i < items->arr.n; i++) {
                        int rc = load_doc(l, items->arr.v[i]);
                        if (rc)
                                return rc;
                }
                return 0;
        }
        if (kind && api && strcmp(kind, "Job") == 0 && strcmp(api, "batch/v1") == 0)
                return load_job(l, doc);
        if (kind && api && strcmp(kind, "Job") == 0 &&
            strcmp(api, "batch.volcano.sh/v1alpha1") == 0)
                return load_vcjob(l, doc);
        if (kind && api && strcmp(kind, "PodGroup") == 0 &&
            strcmp(api, "scheduling.x-k8s.io/v1alpha1") == 0)
                return load_xpodgroup(l, doc);

        struct kb_object o;
        char msg[1024];
        int rc = kb_object_decode(doc, &o, msg, sizeof(msg));
        if (rc == KB_ENOTFOUND) {
                KB_WARN("%s:%d: %s; skipped", l->label, doc->line, msg);
                return 0;
        }
        if (rc) {
                snprintf(l->err, l->errlen, "%s:%d: %s", l->label, doc->line, msg);
                return rc;
        }
        /* A pod whose placement fields are wrong still decodes (the daemon
         * must keep counting what it holds on its node); kbatch-sim's input
         * is hand-written, so it is refused like any other bad field; so is
         * a runtime that --until-done would choke on. */
        int64_t runtime;
        if (o.kind == KB_KIND_POD &&
            (o.pod->invalid || kb_pod_runtime(o.pod, &runtime, msg, sizeof(msg)) < 0)) {
                snprintf(l->err, l->errlen, "%s:%d: %s", l->label, doc->line,
                         o.pod->invalid ? o.pod->invalid : msg);
                kb_object_release(&o);
                return KB_EBADINPUT;
        }
        return add_object(l, &o, doc->line);
}

/* ---- pods that name no group -------------------------------------------------- */

/* Whether the cluster has the PodGroup ns/name (the seen-set has every
 * object loaded so far, made ones included). */
static bool has_podgroup(const struct loader *l, const char *ns, const char *name)
{
        char key[600];
        snprintf(key, sizeof(key), "podgroup %s/%s", ns ? ns : "", name);
        return seen_find(&l->seen, key) != NULL;
}

/* The loaded Job that controls p, or NULL. */
static const struct kb_value *find_owner(const struct loader *l, const struct kb_pod *p)
{
        const struct kb_owner_ref *o = p->controller;
        if (!o || !kb_streq(o->kind, "Job") || !kb_streq(o->api_version, "batch/v1"))
                return NULL;
        char key[600];
        owner_key(key, sizeof(key), o->uid, p->meta.namespace, o->name);
        const struct seen *e = seen_find(&l->seen, key);
        return e ? e->val : NULL;
}

/*
 * Every pod of ours this load added that names no group and has not
 * finished joins the PodGroup made for its workload, which the first such
 * pod of the workload makes (the daemon creates it through the API instead,
 * pkg/workload says how both make it).
 */
static int group_workloads(struct loader *l)
{
        struct kb_cluster *c = l->c;
        size_t n = c->workload_podgroups ? l->nadded : 0;
        for (size_t i = 0; i < n; i++) {
                if (l->added[i].kind != KB_KIND_POD)
                        continue;
                struct kb_pod *p = l->added[i].pod;
                if (!p->workload_group || kb_pod_terminal(p) || !kb__cluster_ours(c, p))
                        continue;
                if (!has_podgroup(l, p->meta.namespace, p->workload_group)) {
                        char msg[1024];
                        struct kb_value *pg =
                            kb_workload_podgroup(p, find_owner(l, p), msg, sizeof(msg));
                        if (!pg) {
                                snprintf(l->err, l->errlen, "%s:%d: %s", l->label, l->lines[i],
                                         msg);
                                return KB_EBADINPUT;
                        }
                        int rc = load_made(l, pg, l->lines[i]);
                        if (rc)
                                return rc;
                }
                free(p->group_name);
                p->group_name = kb_xstrdup(p->workload_group);
        }
        return 0;
}

/* Removes the objects this load added (they are the tails of the arrays). */
static void rollback(struct loader *l)
{
        struct kb_cluster *c = l->c;
        while (c->nowners > l->nowners0)
                kb_value_free(c->owners[--c->nowners]);
        for (size_t i = l->nadded; i-- > 0;) {
                struct kb_object *o = &l->added[i];
                switch (o->kind) {
                case KB_KIND_NODE:
                        c->nnodes--;
                        break;
                case KB_KIND_POD:
                        c->npods--;
                        break;
                case KB_KIND_PODGROUP:
                        c->npodgroups--;
                        break;
                case KB_KIND_QUEUE:
                        c->nqueues--;
                        break;
                case KB_KIND_PRIORITYCLASS:
                        c->npriorityclasses--;
                        break;
                case KB_KIND_NAMESPACE:
                        c->nnamespaces--;
                        break;
                case KB_KIND_HYPERNODE:
                        c->nhypernodes--;
                        break;
                case KB_KIND_PDB:
                        c->npdbs--;
                        break;
                default:
                        break;
                }
                kb_object_release(o);
        }
}

/* A parser message ("line 3: did not find ...") as every other load error
 * reads: "jobs.yaml:3: did not find ...". */
static void parse_error(const char *label, const char *perr, char *err, size_t errlen)
{
        int line, n = 0;
        if (sscanf(perr, "line %d: %n", &line, &n) == 1 && n > 0)
                snprintf(err, errlen, "%s:%d: %s", label, line, perr + n);
        else
                snprintf(err, errlen, "%s: %s", label, perr);
}

int kb_cluster_load(struct kb_cluster *c, const char *label, const char *text, size_t len,
                    char *err, size_t errlen)
{
        kb_cluster_changed(c);
        struct kb_value **docs = NULL;
        size_t ndocs = 0;
        char perr[512];
        struct loader l = {
            .c = c, .label = label, .err = err, .errlen = errlen, .nowners0 = c->nowners};
        int rc = 0;

        /* JSON is YAML too, but a JSON document parses faster with yajl and
         * reports errors in JSON terms. */
        size_t k = 0;
        while (k < len && (text[k] == ' ' || text[k] == '\n' || text[k] == '\t' || text[k] == '\r'))
                k++;
        if (k < len && (text[k] == '{' || text[k] == '[')) {
                struct kb_value *v;
                if (kb_json_parse(text, len, &v, perr, sizeof(perr)) != 0) {
                        parse_error(label, perr, err, errlen);
                        return KB_EBADINPUT;
                }
                docs = kb_xmalloc(sizeof(*docs));
                docs[0] = v;
                ndocs = 1;
        } else if (kb_yaml_parse(text, len, &docs, &ndocs, perr, sizeof(perr)) != 0) {
                parse_error(label, perr, err, errlen);
                return KB_EBADINPUT;
        }
        seen_init(&l);
        for (size_t i = 0; i < ndocs && !rc; i++) {
                if (docs[i]->type != KB_VOBJECT) {
                        snprintf(err, errlen, "%s:%d: a manifest must be a map, not a %s", label,
                                 docs[i]->line, kb_value_type_name(docs[i]->type));
                        rc = KB_EBADINPUT;
                        break;
                }
                rc = load_doc(&l, docs[i]);
        }
        if (!rc)
                rc = group_workloads(&l);
        if (rc)
                rollback(&l);
        free(l.added);
        free(l.lines);
        seen_free(&l.seen);
        kb_value_free_docs(docs, ndocs);
        return rc;
}

bool kb_cluster_ensure_default_queue(struct kb_cluster *c)
{
        kb_cluster_changed(c);
        for (size_t i = 0; i < c->nqueues; i++)
                if (strcmp(c->queues[i]->meta.name, c->default_queue) == 0)
                        return false;
        struct kb_queue *q = kb_xcalloc(1, sizeof(*q));
        q->meta.name = kb_xstrdup(c->default_queue);
        q->meta.uid = kb_xasprintf("queue:%s", c->default_queue);
        q->weight = 1;
        q->reclaimable = true;
        q->state = KB_QUEUE_OPEN;
        kb_res_fill(&q->capability, KB_RES_UNLIMITED);
        KB_PUSH(c->queues, c->nqueues, c->capqueues, q);
        return true;
}
