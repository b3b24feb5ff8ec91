/*
 * Workloads that come without a Volcano PodGroup: which group a pod joins,
 * and the decoders of the two workload APIs kbatch reads besides Volcano's
 * PodGroup, scheduler-plugins' PodGroup (scheduling.x-k8s.io/v1alpha1) and
 * Volcano's Job (batch.volcano.sh/v1alpha1).
 *
 * A pod's group, in the order they are looked up:
 *   1. its annotation scheduling.k8s.io/group-name (then Volcano's
 *      scheduling.volcano.sh/group-name);
 *   2. its label scheduling.x-k8s.io/pod-group (coscheduling): the Volcano
 *      PodGroup of that name, which kbatch makes from the scheduler-plugins
 *      PodGroup;
 *   3. neither: the PodGroup kbatch makes for its workload, named as
 *      Volcano's podgroup controller names it, "podgroup-" and the uid of the
 *      pod's controller (a Job, a ReplicaSet...) or of the pod itself.
 * For example a pod of Job train (uid 5c1f...) with no annotation joins
 * podgroup-5c1f..., which every pod of the Job joins too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-int.h"

int kb_min_member_parse(const char *s, int32_t *out, char *why, size_t whylen)
{
        const char *p = s ? s : "";
        if (*p == '+')
                p++;
        int64_t v = 0;
        bool ok = *p != '\0';
        for (; ok && *p; p++) {
                if (*p < '0' || *p > '9' || v > INT32_MAX)
                        ok = false;
                else
                        v = v * 10 + (*p - '0');
        }
        if (!ok || v > INT32_MAX) {
                snprintf(why, whylen, "must be a whole number >= 0, got \"%s\"", s ? s : "");
                return KB_EBADINPUT;
        }
        *out = (int32_t)v;
        return 0;
}

void kb__api_owner_free(struct kb_owner_ref *o)
{
        if (!o)
                return;
        free(o->api_version);
        free(o->kind);
        free(o->name);
        free(o->uid);
        free(o);
}

/* Whether ownerReference r is what kb__api_owner looks for: with kind
 * NULL, the controller; else one of kind in an apiVersion of group. */
static bool owner_wanted(const struct kb_value *r, bool ctl, const char *group, const char *kind)
{
        if (!kind)
                return ctl;
        const char *av = kb_value_str(kb_value_get(r, "apiVersion"));
        size_t n = strlen(group);
        return kb_streq(kb_value_str(kb_value_get(r, "kind")), kind) && av &&
               strncmp(av, group, n) == 0 && av[n] == '/';
}

int kb__api_owner(struct kb__api_dec *d, const struct kb_value *doc, const char *group,
                  const char *kind, struct kb_owner_ref **out)
{
        const struct kb_value *refs = kb_value_dig(doc, "metadata", "ownerReferences");
        int rc;
        if ((rc = kb__api_list(d, refs, "metadata.ownerReferences")))
                return rc;
        for (size_t i = 0; kb__api_set(refs) && i < refs->arr.n && !*out; i++) {
                const struct kb_value *r = refs->arr.v[i];
                char p[KB__API_PATH];
                bool ctl = false;
                kb__api_path(p, sizeof(p), "metadata.ownerReferences[%zu]", i);
                if ((rc = kb__api_object(d, r, p)))
                        return rc;
                kb__api_path(p, sizeof(p), "metadata.ownerReferences[%zu].controller", i);
                if ((rc = kb__api_bool(d, kb_value_get(r, "controller"), p, &ctl)))
                        return rc;
                if (!owner_wanted(r, ctl, group, kind))
                        continue;
                struct kb_owner_ref *o = kb_xcalloc(1, sizeof(*o));
                *out = o;
                static const char *const fields[] = {"apiVersion", "kind", "name", "uid"};
                char **dst[] = {&o->api_version, &o->kind, &o->name, &o->uid};
                for (size_t k = 0; k < KB_ARRAY_SIZE(fields); k++) {
                        kb__api_path(p, sizeof(p), "metadata.ownerReferences[%zu].%s", i,
                                     fields[k]);
                        if ((rc = kb__api_str(d, kb_value_get(r, fields[k]), p, dst[k])))
                                return rc;
                }
                if (o->uid && !o->uid[0]) {
                        free(o->uid);
                        o->uid = NULL;
                }
                if (!o->kind || !o->name) {
                        kb__api_path(p, sizeof(p), "metadata.ownerReferences[%zu].%s", i,
                                     o->kind ? "name" : "kind");
                        return kb__api_fail(d, p, "%s reference needs a kind and a name",
                                            kind ? "an owner" : "a controller");
                }
        }
        return 0;
}

/* "podgroup-<uid>", or with no uid, the kind and the name in its place. */
static char *workload_group(const struct kb_pod *pod, bool has_uid)
{
        const struct kb_owner_ref *o = pod->controller;
        if (o && o->uid)
                return kb_xasprintf(KB_WORKLOAD_GROUP_PREFIX "%s", o->uid);
        if (!o && has_uid)
                return kb_xasprintf(KB_WORKLOAD_GROUP_PREFIX "%s", pod->meta.uid);
        const char *kind = o ? o->kind : "pod";
        const char *name = o ? o->name : pod->meta.name;
        char *s = kb_xasprintf(KB_WORKLOAD_GROUP_PREFIX "%s-%s", kind, name);
        for (char *c = s; *c; c++)
                if (*c >= 'A' && *c <= 'Z')
                        *c = (char)(*c - 'A' + 'a');
        return s;
}

int kb__api_pod_group(struct kb__api_dec *d, const struct kb_value *doc, struct kb_pod *pod)
{
        int rc;
        if ((rc = kb__api_owner(d, doc, NULL, NULL, &pod->controller)))
                return rc;
        /* Volcano reads the group from scheduling.k8s.io/group-name and
         * falls back to its own spelling of the key. */
        const char *g = kb_meta_annotation(&pod->meta, KB_GROUP_ANNOTATION);
        if (!g || !g[0])
                g = kb_meta_annotation(&pod->meta, KB_GROUP_ANNOTATION_VOLCANO);
        if (!g || !g[0]) {
                g = kb_meta_label(&pod->meta, KB_GROUP_LABEL_COSCHEDULING);
                pod->group_from_label = g && g[0];
        }
        if (g && g[0]) {
                pod->group_name = kb_xstrdup(g);
                return 0;
        }

        const char *uid = kb_value_str(kb_value_dig(doc, "metadata", "uid"));
        pod->workload_group = workload_group(pod, uid && uid[0]);
        const char *q = kb_meta_annotation(&pod->meta, KB_ANNOTATION_QUEUE);
        if (q && q[0])
                pod->workload_queue = kb_xstrdup(q);
        const char *mm = kb_meta_annotation(&pod->meta, KB_ANNOTATION_MIN_MEMBER);
        char why[200];
        if (mm && !kb_min_member_parse(mm, &pod->workload_min_member, why, sizeof(why)))
                pod->has_workload_min_member = true;
        else if (mm)
                pod->workload_invalid =
                    kb_xasprintf("pod %s/%s: annotation %s: %s", pod->meta.namespace,
                                 pod->meta.name, KB_ANNOTATION_MIN_MEMBER, why);
        return 0;
}

/* ---- scheduler-plugins' PodGroup ------------------------------------------- */

void kb_xpodgroup_free(struct kb_xpodgroup *pg)
{
        if (!pg)
                return;
        kb_meta_release(&pg->meta);
        free(pg->queue);
        free(pg->status_phase);
        free(pg);
}

static int xpodgroup_fill(struct kb__api_dec *d, const struct kb_value *doc,
                          struct kb_xpodgroup *pg)
{
        const struct kb_value *spec = kb_value_get(doc, "spec");
        int rc;
        if ((rc = kb__api_meta(d, doc, true, &pg->meta)) || (rc = kb__api_object(d, spec, "spec")))
                return rc;
        if ((rc = kb__api_int32(d, kb_value_get(spec, "minMember"), "spec.minMember", 0, INT32_MAX,
                                &pg->min_member)))
                return rc;
        const struct kb_value *minres = kb_value_get(spec, "minResources");
        if ((rc = kb__api_res(d, minres, "spec.minResources", &pg->min_resources, NULL)))
                return rc;
        pg->has_min_resources = kb__api_set(minres);
        pg->schedule_timeout = -1;
        if ((rc =
                 kb__api_int32(d, kb_value_get(spec, "scheduleTimeoutSeconds"),
                               "spec.scheduleTimeoutSeconds", 0, INT32_MAX, &pg->schedule_timeout)))
                return rc;
        const char *q = kb_meta_annotation(&pg->meta, KB_ANNOTATION_QUEUE);
        if (q && q[0])
                pg->queue = kb_xstrdup(q);
        const struct kb_value *st = kb_value_get(doc, "status");
        const char *phase = kb_value_str(kb_value_get(st, "phase"));
        pg->status_phase = phase ? kb_xstrdup(phase) : NULL;
        pg->status_running = pg->status_succeeded = pg->status_failed = -1;
        kb_value_int(kb_value_get(st, "running"), &pg->status_running);
        kb_value_int(kb_value_get(st, "succeeded"), &pg->status_succeeded);
        kb_value_int(kb_value_get(st, "failed"), &pg->status_failed);
        return 0;
}

int kb_xpodgroup_decode(const struct kb_value *doc, struct kb_xpodgroup **out, char *err,
                        size_t errlen)
{
        KB__DECODE("podgroup.scheduling.x-k8s.io", struct kb_xpodgroup, xpodgroup_fill,
                   kb_xpodgroup_free);
}

/* ---- Volcano's Job ------------------------------------------------------------ */

void kb_vcjob_free(struct kb_vcjob *j)
{
        if (!j)
                return;
        kb_meta_release(&j->meta);
        free(j->queue);
        free(j->priority_class_name);
        free(j->scheduler_name);
        for (size_t i = 0; i < j->ntasks; i++) {
                free(j->tasks[i].name);
                kb_value_free(j->tasks[i].template);
        }
        free(j->tasks);
        free(j);
}

void kb_vcjob_trim(struct kb_vcjob *j)
{
        for (size_t i = 0; i < j->ntasks; i++) {
                free(j->tasks[i].name);
                kb_value_free(j->tasks[i].template);
        }
        free(j->tasks);
        j->tasks = NULL;
        j->ntasks = 0;
        kb__api_kvs_free(j->meta.labels, j->meta.nlabels);
        kb__api_kvs_free(j->meta.annotations, j->meta.nannotations);
        j->meta.labels = j->meta.annotations = NULL;
        j->meta.nlabels = j->meta.nannotations = 0;
}

static int vctask_fill(struct kb__api_dec *d, const struct kb_value *v, const char *path,
                       void *elem, void *ctx)
{
        struct kb_vctask *t = elem;
        size_t index = *(size_t *)ctx;
        *(size_t *)ctx = index + 1;
        char p[KB__API_PATH];
        int rc;
        if ((rc = kb__api_object(d, v, path)))
                return rc;
        if (!kb__api_set(v))
                return kb__api_fail(d, path, "must be an object, got null");
        kb__api_path(p, sizeof(p), "%s.name", path);
        if ((rc = kb__api_str(d, kb_value_get(v, "name"), p, &t->name)))
                return rc;
        if (!t->name || !t->name[0]) {
                free(t->name);
                t->name = kb_xasprintf("default%zu", index);
        }
        /* Volcano's webhook asks IsDNS1123Label of task names. */
        if (!kb_dns_label(t->name))
                return kb__api_fail(d, p,
                                    "must be a DNS-1123 label (lower case letters, digits and "
                                    "'-', at most 63), got \"%s\"",
                                    t->name);
        kb__api_path(p, sizeof(p), "%s.replicas", path);
        if ((rc = kb__api_int32(d, kb_value_get(v, "replicas"), p, 0, INT32_MAX, &t->replicas)))
                return rc;
        t->min_available = t->replicas;
        kb__api_path(p, sizeof(p), "%s.minAvailable", path);
        if ((rc = kb__api_int32(d, kb_value_get(v, "minAvailable"), p, 0, INT32_MAX,
                                &t->min_available)))
                return rc;
        if (t->min_available > t->replicas)
                return kb__api_fail(d, p, "must be <= replicas (%d), got %d", t->replicas,
                                    t->min_available);
        const struct kb_value *tmpl = kb_value_get(v, "template");
        kb__api_path(p, sizeof(p), "%s.template", path);
        if ((rc = kb__api_object(d, tmpl, p)))
                return rc;
        if (!kb__api_set(tmpl))
                return kb__api_fail(d, p, "required");
        kb__api_path(p, sizeof(p), "%s.template.spec", path);
        if ((rc = kb__api_object(d, kb_value_get(tmpl, "spec"), p)))
                return rc;
        t->template = kb_value_clone(tmpl);
        return 0;
}

static int vcjob_fill(struct kb__api_dec *d, const struct kb_value *doc, struct kb_vcjob *j)
{
        const struct kb_value *spec = kb_value_get(doc, "spec");
        int rc;
        if ((rc = kb__api_meta(d, doc, true, &j->meta)) || (rc = kb__api_object(d, spec, "spec")))
                return rc;
        const char *uid = kb_value_str(kb_value_dig(doc, "metadata", "uid"));
        j->has_uid = uid && uid[0];
        if ((rc = kb__api_int32(d, kb_value_get(spec, "minAvailable"), "spec.minAvailable", 0,
                                INT32_MAX, &j->min_available)))
                return rc;
        if ((rc = kb__api_str(d, kb_value_get(spec, "queue"), "spec.queue", &j->queue)) ||
            (rc = kb__api_str(d, kb_value_get(spec, "priorityClassName"), "spec.priorityClassName",
                              &j->priority_class_name)) ||
            (rc = kb__api_str(d, kb_value_get(spec, "schedulerName"), "spec.schedulerName",
                              &j->scheduler_name)))
                return rc;
        /* The defaults of Volcano's mutating webhook. */
        if (!j->queue || !j->queue[0]) {
                free(j->queue);
                j->queue = kb_xstrdup("default");
        }
        if (!j->scheduler_name || !j->scheduler_name[0]) {
                free(j->scheduler_name);
                j->scheduler_name = kb_xstrdup("volcano");
        }
        if (j->priority_class_name && !j->priority_class_name[0]) {
                free(j->priority_class_name);
                j->priority_class_name = NULL;
        }

        const struct kb_value *tasks = kb_value_get(spec, "tasks");
        size_t index = 0;
        if ((rc = kb__api_list_of(d, tasks, "spec.tasks", sizeof(*j->tasks), (void **)&j->tasks,
                                  &j->ntasks, vctask_fill, &index)))
                return rc;
        /* And what its validating webhook refuses. */
        if (!j->ntasks)
                return kb__api_fail(d, "spec.tasks", "must list at least one task");
        int64_t replicas = 0, mins = 0;
        for (size_t i = 0; i < j->ntasks; i++) {
                replicas += j->tasks[i].replicas;
                mins += j->tasks[i].min_available;
                for (size_t k = 0; k < i; k++)
                        if (strcmp(j->tasks[k].name, j->tasks[i].name) == 0) {
                                char p[KB__API_PATH];
                                kb__api_path(p, sizeof(p), "spec.tasks[%zu].name", i);
                                return kb__api_fail(d, p, "duplicate task name \"%s\"",
                                                    j->tasks[i].name);
                        }
        }
        if (replicas > INT32_MAX)
                return kb__api_fail(d, "spec.tasks", "more than %d replicas in all", INT32_MAX);
        if (!j->min_available)
                j->min_available = (int32_t)mins;
        if (j->min_available > replicas)
                return kb__api_fail(d, "spec.minAvailable",
                                    "must be <= the tasks' replicas (%lld in all), got %d",
                                    (long long)replicas, j->min_available);
        return 0;
}

int kb_vcjob_decode(const struct kb_value *doc, struct kb_vcjob **out, char *err, size_t errlen)
{
        KB__DECODE("vcjob", struct kb_vcjob, vcjob_fill, kb_vcjob_free);
}
