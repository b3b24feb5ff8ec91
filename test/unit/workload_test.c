/*
 * Workloads without hand-written PodGroups (pkg/api/workload.c, pkg/workload,
 * kbatch-sim's loader, the session's grouping): which group a pod joins, the
 * PodGroups and pods kbatch makes, the decoders' errors, and scenarios whose
 * binds are worked out by hand in the comment above each.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "framework/framework.h"
#include "manifests.h"
#include "sim/sim.h"
#include "value/value.h"
#include "workload/workload.h"

static struct kb_pod *pod(const char *text)
{
        struct kb_value *v = kb_test_yaml1(text);
        struct kb_pod *p;
        char err[512];
        int rc = kb_pod_decode(v, &p, err, sizeof(err));
        kb_value_free(v);
        if (rc)
                print_error("pod: %s\n", err);
        assert_int_equal(rc, 0);
        return p;
}

static const char *str(const struct kb_value *doc, const char *a, const char *b, const char *c)
{
        const struct kb_value *v = c ? kb_value_dig(doc, a, b, c) : kb_value_dig(doc, a, b);
        return kb_value_text(v);
}

/* ---- which group a pod joins ------------------------------------------------------- */

#define POD_HEAD "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"

static void test_pod_group(void **state)
{
        (void)state;
        /* The annotation wins over scheduler-plugins' label. */
        struct kb_pod *p = pod(POD_HEAD "  annotations: {scheduling.k8s.io/group-name: a}\n"
                                        "  labels: {scheduling.x-k8s.io/pod-group: b}\n");
        assert_string_equal(p->group_name, "a");
        assert_false(p->group_from_label);
        assert_null(p->workload_group);
        kb_pod_free(p);
        /* Volcano's own spelling of the annotation. */
        p = pod(POD_HEAD "  annotations: {scheduling.volcano.sh/group-name: v}\n");
        assert_string_equal(p->group_name, "v");
        kb_pod_free(p);
        /* The label alone names the Volcano PodGroup kbatch makes from
         * scheduler-plugins' one of that name. */
        p = pod(POD_HEAD "  labels: {scheduling.x-k8s.io/pod-group: b}\n");
        assert_string_equal(p->group_name, "b");
        assert_true(p->group_from_label);
        assert_null(p->workload_group);
        kb_pod_free(p);
        /* No group: its controller's uid names the workload's group; an
         * owner that is not the controller does not count. */
        p = pod(POD_HEAD "  uid: pod-uid\n  ownerReferences:\n"
                         "  - {apiVersion: v1, kind: Node, name: n, uid: not-it}\n"
                         "  - {apiVersion: batch/v1, kind: Job, name: train, uid: 5c1f, "
                         "controller: true}\n");
        assert_null(p->group_name);
        assert_string_equal(p->workload_group, "podgroup-5c1f");
        assert_string_equal(p->controller->kind, "Job");
        assert_string_equal(p->controller->name, "train");
        assert_string_equal(p->controller->uid, "5c1f");
        assert_false(p->has_workload_min_member);
        kb_pod_free(p);
        /* No controller: the pod's own uid. */
        p = pod(POD_HEAD "  uid: 9e2d\n");
        assert_string_equal(p->workload_group, "podgroup-9e2d");
        assert_null(p->controller);
        kb_pod_free(p);
        /* Hand-written manifests without uids: the kind and name stand in. */
        p = pod(POD_HEAD);
        assert_string_equal(p->workload_group, "podgroup-pod-p");
        kb_pod_free(p);
        p = pod(POD_HEAD "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, "
                         "controller: true}]\n");
        assert_string_equal(p->workload_group, "podgroup-replicaset-web");
        kb_pod_free(p);
}

static void test_pod_group_annotations(void **state)
{
        (void)state;
        struct kb_pod *p = pod(POD_HEAD "  annotations: {scheduling.volcano.sh/group-min-member: "
                                        "'4', scheduling.volcano.sh/queue-name: team-a}\n");
        assert_true(p->has_workload_min_member);
        assert_int_equal(p->workload_min_member, 4);
        assert_string_equal(p->workload_queue, "team-a");
        assert_null(p->workload_invalid);
        kb_pod_free(p);
        static const struct {
                const char *value;
                int32_t want; /* -1: invalid */
        } cases[] = {{"0", 0},   {"+3", 3}, {"2147483647", 2147483647}, {"abc", -1},
                     {"-1", -1}, {"", -1},  {"2147483648", -1},         {"1.5", -1},
                     {" 2", -1}, {"+", -1}};
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                char text[256];
                snprintf(text, sizeof(text),
                         POD_HEAD "  annotations: {scheduling.volcano.sh/group-min-member: '%s'}\n",
                         cases[i].value);
                p = pod(text);
                if (cases[i].want >= 0) {
                        assert_true(p->has_workload_min_member);
                        assert_int_equal(p->workload_min_member, cases[i].want);
                        assert_null(p->workload_invalid);
                } else {
                        char want[256];
                        snprintf(
                            want, sizeof(want),
                            "pod default/p: annotation scheduling.volcano.sh/group-min-member: "
                            "must be a whole number >= 0, got \"%s\"",
                            cases[i].value);
                        assert_false(p->has_workload_min_member);
                        assert_string_equal(p->workload_invalid, want);
                }
                kb_pod_free(p);
        }
        /* The annotations of a pod that names its group are not read. */
        p = pod(POD_HEAD "  annotations: {scheduling.k8s.io/group-name: g, "
                         "scheduling.volcano.sh/group-min-member: abc}\n");
        assert_null(p->workload_invalid);
        kb_pod_free(p);
}

static void test_pod_owner_errors(void **state)
{
        (void)state;
        static const struct {
                const char *text, *err;
        } cases[] = {
            {POD_HEAD "  ownerReferences: {kind: Job}\n",
             "pod default/p: metadata.ownerReferences: must be a list, got object"},
            {POD_HEAD "  ownerReferences: [{kind: Job, name: j, controller: 'yes'}]\n",
             "pod default/p: metadata.ownerReferences[0].controller: must be a boolean, got "
             "string"},
            {POD_HEAD "  ownerReferences: [{name: j, controller: true}]\n",
             "pod default/p: metadata.ownerReferences[0].kind: a controller reference needs a "
             "kind and a name"},
            {POD_HEAD "  ownerReferences: [{kind: Job, controller: true}]\n",
             "pod default/p: metadata.ownerReferences[0].name: a controller reference needs a "
             "kind and a name"},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                struct kb_value *v = kb_test_yaml1(cases[i].text);
                struct kb_pod *p;
                char err[512];
                assert_int_equal(kb_pod_decode(v, &p, err, sizeof(err)), KB_EBADINPUT);
                assert_string_equal(err, cases[i].err);
                kb_value_free(v);
        }
}

/* ---- the PodGroup of a pod that names none ------------------------------------------ */

#define JOB_POD(ann)                                                                               \
        POD_HEAD "  namespace: ml\n  uid: u-p" ann "\n"                                            \
                 "  ownerReferences: [{apiVersion: batch/v1, kind: Job, name: train, uid: 5c1f, "  \
                 "controller: true}]\n"                                                            \
                 "spec:\n  priorityClassName: high\n"                                              \
                 "  containers: [{name: c, resources: {requests: {cpu: 500m, memory: 1Gi}}}]\n"

static void test_workload_podgroup(void **state)
{
        (void)state;
        char err[512];
        /* minMember 3 from the Job's annotation: minResources are the pod's
         * requests three times, 1500m and 3Gi. */
        struct kb_pod *p = pod(JOB_POD("\n  annotations: {scheduling.volcano.sh/queue-name: q}"));
        struct kb_value *owner = kb_test_yaml1("metadata: {name: train, annotations: "
                                               "{scheduling.volcano.sh/group-min-member: '3'}}\n"
                                               "spec: {activeDeadlineSeconds: 7200}\n");
        char path[256];
        assert_true(kb_workload_owner_path(p, path, sizeof(path)));
        assert_string_equal(path, "/apis/batch/v1/namespaces/ml/jobs/train");
        struct kb_value *pg = kb_workload_podgroup(p, owner, err, sizeof(err));
        assert_non_null(pg);
        assert_string_equal(str(pg, "apiVersion", NULL, NULL), "scheduling.volcano.sh/v1beta1");
        assert_string_equal(str(pg, "kind", NULL, NULL), "PodGroup");
        assert_string_equal(str(pg, "metadata", "name", NULL), "podgroup-5c1f");
        assert_string_equal(str(pg, "metadata", "namespace", NULL), "ml");
        const struct kb_value *refs = kb_value_dig(pg, "metadata", "ownerReferences");
        assert_int_equal(refs->arr.n, 1);
        assert_string_equal(kb_value_str(kb_value_get(refs->arr.v[0], "kind")), "Job");
        assert_string_equal(kb_value_str(kb_value_get(refs->arr.v[0], "apiVersion")), "batch/v1");
        assert_string_equal(kb_value_str(kb_value_get(refs->arr.v[0], "uid")), "5c1f");
        assert_true(kb_value_bool(kb_value_get(refs->arr.v[0], "controller"), false));
        assert_string_equal(str(pg, "spec", "minMember", NULL), "3");
        assert_string_equal(str(pg, "spec", "queue", NULL), "q");
        assert_string_equal(str(pg, "spec", "priorityClassName", NULL), "high");
        assert_string_equal(str(pg, "spec", "minResources", "cpu"), "1500m");
        assert_string_equal(str(pg, "spec", "minResources", "memory"), "3Gi");
        assert_null(kb_value_dig(pg, "spec", "minResources", "pods"));
        /* It decodes as a PodGroup. */
        struct kb_podgroup *dec;
        assert_int_equal(kb_podgroup_decode(pg, &dec, err, sizeof(err)), 0);
        assert_int_equal(dec->min_member, 3);
        /* The Job's activeDeadlineSeconds, which its pods do not carry, is
         * the gang's declared runtime (issue 19). */
        assert_string_equal(
            str(pg, "metadata", "annotations", "kbatch.io/job-active-deadline-seconds"), "7200");
        assert_int_equal(dec->job_deadline, 7200 * 1000000000LL);
        assert_int_equal(kb_pod_declared_runtime(p, dec), 7200 * 1000000000LL);
        kb_podgroup_free(dec);
        kb_value_free(pg);
        kb_pod_free(p);

        /* The pod's own annotation wins, and its controller is not read. */
        p = pod(JOB_POD("\n  annotations: {scheduling.volcano.sh/group-min-member: '2'}"));
        assert_false(kb_workload_owner_path(p, path, sizeof(path)));
        pg = kb_workload_podgroup(p, owner, err, sizeof(err));
        assert_string_equal(str(pg, "spec", "minMember", NULL), "2");
        assert_string_equal(str(pg, "spec", "minResources", "cpu"), "1");
        assert_null(kb_value_dig(pg, "spec", "queue"));
        kb_value_free(pg);
        kb_pod_free(p);
        kb_value_free(owner);

        /* A bad annotation on the Job names the Job. */
        p = pod(JOB_POD(""));
        owner = kb_test_yaml1(
            "metadata: {annotations: {scheduling.volcano.sh/group-min-member: abc}}\n");
        assert_null(kb_workload_podgroup(p, owner, err, sizeof(err)));
        assert_string_equal(err, "job ml/train: annotation scheduling.volcano.sh/group-min-member: "
                                 "must be a whole number >= 0, got \"abc\"");
        kb_value_free(owner);
        /* Without the Job (not known): minMember 1. */
        pg = kb_workload_podgroup(p, NULL, err, sizeof(err));
        assert_string_equal(str(pg, "spec", "minMember", NULL), "1");
        kb_value_free(pg);
        kb_pod_free(p);

        /* On the pod: the pod's message. */
        p = pod(JOB_POD("\n  annotations: {scheduling.volcano.sh/group-min-member: '-2'}"));
        assert_null(kb_workload_podgroup(p, NULL, err, sizeof(err)));
        assert_string_equal(err, "pod ml/p: annotation scheduling.volcano.sh/group-min-member: "
                                 "must be a whole number >= 0, got \"-2\"");
        kb_pod_free(p);

        /* An owner's name that would steer the request elsewhere is not
         * read: the group is the pod's own. */
        static const char *const forged[] = {"../../../pods", "..", "a%2F..", "x/y",
                                             "Job", "a?watch=1", "a b", "-x"};
        for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
                char *y = kb_xasprintf(POD_HEAD "  namespace: ml\n  uid: u-f\n"
                                                "  ownerReferences: [{apiVersion: batch/v1, kind: "
                                                "Job, name: '%s', uid: 5c1f, controller: true}]\n",
                                       forged[i]);
                p = pod(y);
                free(y);
                assert_false(kb_workload_owner_path(p, path, sizeof(path)));
                kb_pod_free(p);
        }

        /* A bare pod owns its group. */
        p = pod(POD_HEAD "  uid: 9e2d\n");
        assert_false(kb_workload_owner_path(p, path, sizeof(path)));
        pg = kb_workload_podgroup(p, NULL, err, sizeof(err));
        refs = kb_value_dig(pg, "metadata", "ownerReferences");
        assert_string_equal(kb_value_str(kb_value_get(refs->arr.v[0], "kind")), "Pod");
        assert_string_equal(kb_value_str(kb_value_get(refs->arr.v[0], "uid")), "9e2d");
        assert_null(kb_value_dig(pg, "spec", "minResources", "cpu"));
        kb_value_free(pg);
        kb_pod_free(p);

        /* A controller whose annotations Volcano does not read. */
        p = pod(POD_HEAD "  ownerReferences: [{apiVersion: kubeflow.org/v1, kind: MPIJob, "
                         "name: m, uid: x, controller: true}]\n");
        assert_false(kb_workload_owner_path(p, path, sizeof(path)));
        kb_pod_free(p);
        /* A pod that names its group has none made. */
        p = pod(POD_HEAD "  annotations: {scheduling.k8s.io/group-name: g}\n");
        assert_null(kb_workload_podgroup(p, NULL, err, sizeof(err)));
        kb_pod_free(p);
}

/* ---- scheduler-plugins' PodGroup --------------------------------------------------- */

#define XPG_HEAD                                                                                   \
        "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"                               \
        "metadata: {name: x, namespace: ml, uid: xu, labels: {team: a}"

static struct kb_value *mirror(const char *text, char *err, size_t errlen)
{
        struct kb_value *v = kb_test_yaml1(text);
        struct kb_xpodgroup *x;
        int rc = kb_xpodgroup_decode(v, &x, err, errlen);
        kb_value_free(v);
        if (rc)
                return NULL;
        struct kb_value *pg = kb_workload_xpodgroup(x);
        kb_xpodgroup_free(x);
        return pg;
}

static void test_xpodgroup(void **state)
{
        (void)state;
        char err[512];
        struct kb_value *pg =
            mirror(XPG_HEAD ", annotations: {scheduling.volcano.sh/queue-name: q}}\n"
                            "spec: {minMember: 3, minResources: {cpu: '3'}, "
                            "scheduleTimeoutSeconds: 60}\n",
                   err, sizeof(err));
        assert_non_null(pg);
        assert_string_equal(str(pg, "metadata", "name", NULL), "x");
        assert_string_equal(str(pg, "metadata", "labels", "team"), "a");
        assert_string_equal(str(pg, "metadata", "annotations", "kbatch.io/inqueue-timeout"), "60s");
        const struct kb_value *refs = kb_value_dig(pg, "metadata", "ownerReferences");
        assert_string_equal(kb_value_str(kb_value_get(refs->arr.v[0], "apiVersion")),
                            "scheduling.x-k8s.io/v1alpha1");
        assert_string_equal(kb_value_str(kb_value_get(refs->arr.v[0], "uid")), "xu");
        assert_string_equal(str(pg, "spec", "minMember", NULL), "3");
        assert_string_equal(str(pg, "spec", "minResources", "cpu"), "3");
        assert_string_equal(str(pg, "spec", "queue", NULL), "q");
        kb_value_free(pg);
        /* 0 and unset mean coscheduling's default: kbatch's timeout. */
        pg = mirror(XPG_HEAD "}\nspec: {scheduleTimeoutSeconds: 0}\n", err, sizeof(err));
        assert_null(kb_value_dig(pg, "metadata", "annotations"));
        assert_string_equal(str(pg, "spec", "minMember", NULL), "0");
        assert_null(kb_value_dig(pg, "spec", "minResources"));
        assert_null(kb_value_dig(pg, "spec", "queue"));
        kb_value_free(pg);
        static const struct {
                const char *spec, *err;
        } bad[] = {
            {"minMember: -1",
             "podgroup.scheduling.x-k8s.io ml/x: spec.minMember: must be >= 0, got -1"},
            {"scheduleTimeoutSeconds: -5", "podgroup.scheduling.x-k8s.io ml/x: "
                                           "spec.scheduleTimeoutSeconds: must be >= 0, got -5"},
            {"minResources: {cpu: lots}", "podgroup.scheduling.x-k8s.io ml/x: "
                                          "spec.minResources.cpu: malformed quantity \"lots\""},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(bad); i++) {
                char text[512];
                snprintf(text, sizeof(text), XPG_HEAD "}\nspec: {%s}\n", bad[i].spec);
                assert_null(mirror(text, err, sizeof(err)));
                assert_string_equal(err, bad[i].err);
        }
}

/* ---- Volcano's Job -------------------------------------------------------------------- */

#define VCJOB(spec)                                                                                \
        "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\n"                                       \
        "metadata: {name: mpi, namespace: ml, uid: 77aa, labels: {team: a}}\nspec:\n" spec
#define TASK(name, replicas, extra, cpu)                                                           \
        "  - name: " name "\n    replicas: " replicas "\n" extra                                   \
        "    template:\n      spec:\n        containers: [{name: c, resources: {requests: {cpu: "  \
        "'" cpu "'}}}]\n"

static struct kb_vcjob *vcjob(const char *text)
{
        struct kb_value *v = kb_test_yaml1(text);
        struct kb_vcjob *j;
        char err[512];
        int rc = kb_vcjob_decode(v, &j, err, sizeof(err));
        kb_value_free(v);
        if (rc)
                print_error("vcjob: %s\n", err);
        assert_int_equal(rc, 0);
        return j;
}

static void test_vcjob_decode(void **state)
{
        (void)state;
        /* The webhook's defaults: task names, each task's minAvailable its
         * replicas, the Job's their sum (1 + 2), queue, scheduler. */
        struct kb_vcjob *j =
            vcjob(VCJOB("  tasks:\n" TASK("\"\"", "1", "", "1") TASK("", "2", "", "1")));
        assert_string_equal(j->tasks[0].name, "default0");
        assert_string_equal(j->tasks[1].name, "default1");
        assert_int_equal(j->tasks[1].min_available, 2);
        assert_int_equal(j->min_available, 3);
        assert_string_equal(j->queue, "default");
        assert_string_equal(j->scheduler_name, "volcano");
        assert_null(j->priority_class_name);
        assert_true(j->has_uid);
        kb_vcjob_free(j);
        static const struct {
                const char *text, *err;
        } bad[] = {
            {VCJOB("  minAvailable: 1\n  tasks: []\n"),
             "vcjob ml/mpi: spec.tasks: must list at least one task"},
            {VCJOB("  minAvailable: 1\n"), "vcjob ml/mpi: spec.tasks: must list at least one task"},
            {VCJOB("  minAvailable: -1\n  tasks:\n" TASK("a", "1", "", "1")),
             "vcjob ml/mpi: spec.minAvailable: must be >= 0, got -1"},
            {VCJOB("  minAvailable: 3\n  tasks:\n" TASK("a", "2", "", "1")),
             "vcjob ml/mpi: spec.minAvailable: must be <= the tasks' replicas (2 in all), got 3"},
            {VCJOB("  tasks:\n" TASK("a", "1", "    minAvailable: 2\n", "1")),
             "vcjob ml/mpi: spec.tasks[0].minAvailable: must be <= replicas (1), got 2"},
            {VCJOB("  tasks:\n" TASK("a", "1", "", "1") TASK("a", "1", "", "1")),
             "vcjob ml/mpi: spec.tasks[1].name: duplicate task name \"a\""},
            {VCJOB("  tasks:\n" TASK("Big_Task", "1", "", "1")),
             "vcjob ml/mpi: spec.tasks[0].name: must be a DNS-1123 label (lower case letters, "
             "digits and '-', at most 63), got \"Big_Task\""},
            {VCJOB("  tasks:\n  - {name: a, replicas: 1}\n"),
             "vcjob ml/mpi: spec.tasks[0].template: required"},
            {VCJOB("  tasks:\n  - {name: a, replicas: -1, template: {}}\n"),
             "vcjob ml/mpi: spec.tasks[0].replicas: must be >= 0, got -1"},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(bad); i++) {
                struct kb_value *v = kb_test_yaml1(bad[i].text);
                char err[512];
                assert_int_equal(kb_vcjob_decode(v, &j, err, sizeof(err)), KB_EBADINPUT);
                assert_string_equal(err, bad[i].err);
                kb_value_free(v);
        }
}

/* The Job of the banner of pkg/workload/vcjob.c, master asking 2 cpu and
 * workers 1. */
#define MPI                                                                                        \
        VCJOB("  queue: team-a\n  tasks:\n" TASK("master", "1", "", "2")                           \
                  TASK("worker", "3", "    minAvailable: 2\n", "1"))

static void test_vcjob_objects(void **state)
{
        (void)state;
        char err[512];
        struct kb_vcjob *j = vcjob(MPI);
        assert_int_equal(j->min_available, 3);
        char *name = kb_vcjob_podgroup_name(j);
        assert_string_equal(name, "mpi-77aa");
        free(name);
        /* minResources: master-0 (2) and the two workers of its
         * minAvailable (1 + 1): 4 cpu. */
        struct kb_value *pg = kb_vcjob_podgroup(j, err, sizeof(err));
        assert_non_null(pg);
        assert_string_equal(str(pg, "metadata", "name", NULL), "mpi-77aa");
        assert_string_equal(str(pg, "metadata", "labels", "team"), "a");
        assert_string_equal(str(pg, "spec", "minMember", NULL), "3");
        assert_string_equal(str(pg, "spec", "minTaskMember", "master"), "1");
        assert_string_equal(str(pg, "spec", "minTaskMember", "worker"), "2");
        assert_string_equal(str(pg, "spec", "queue", NULL), "team-a");
        assert_string_equal(str(pg, "spec", "minResources", "cpu"), "4");
        const struct kb_value *refs = kb_value_dig(pg, "metadata", "ownerReferences");
        assert_string_equal(kb_value_str(kb_value_get(refs->arr.v[0], "apiVersion")),
                            "batch.volcano.sh/v1alpha1");
        kb_value_free(pg);

        struct kb_value *p = kb_vcjob_pod(j, 1, 2);
        assert_string_equal(str(p, "metadata", "name", NULL), "mpi-worker-2");
        assert_string_equal(str(p, "metadata", "namespace", NULL), "ml");
        assert_string_equal(str(p, "metadata", "annotations", "scheduling.k8s.io/group-name"),
                            "mpi-77aa");
        assert_string_equal(str(p, "metadata", "annotations", "volcano.sh/task-spec"), "worker");
        assert_string_equal(str(p, "metadata", "annotations", "volcano.sh/task-index"), "2");
        assert_string_equal(str(p, "metadata", "labels", "volcano.sh/job-name"), "mpi");
        assert_string_equal(str(p, "spec", "schedulerName", NULL), "volcano");
        struct kb_pod *dec;
        assert_int_equal(kb_pod_decode(p, &dec, err, sizeof(err)), 0);
        assert_string_equal(dec->group_name, "mpi-77aa");
        assert_string_equal(dec->controller->kind, "Job");
        kb_pod_free(dec);
        kb_value_free(p);

        /* Status: pending until three run; running; once all four finish,
         * completed when the master and two workers succeeded. */
        struct kb_vcjob_counts n;
        kb_vcjob_counts_init(&n, j);
        assert_string_equal(kb_vcjob_phase(j, &n, NULL), "Pending");
        n.phase[KB_VC_RUNNING] = 2;
        assert_string_equal(kb_vcjob_phase(j, &n, "Pending"), "Pending");
        n.phase[KB_VC_RUNNING] = 3;
        assert_string_equal(kb_vcjob_phase(j, &n, "Pending"), "Running");
        n.phase[KB_VC_RUNNING] = 1;
        n.phase[KB_VC_SUCCEEDED] = 3;
        assert_string_equal(kb_vcjob_phase(j, &n, "Running"), "Running");
        n.phase[KB_VC_RUNNING] = 0;
        n.phase[KB_VC_SUCCEEDED] = 3;
        n.phase[KB_VC_FAILED] = 1;
        n.task[0][KB_VC_SUCCEEDED] = 1;
        n.task[1][KB_VC_SUCCEEDED] = 2;
        n.task[1][KB_VC_FAILED] = 1;
        assert_string_equal(kb_vcjob_phase(j, &n, "Running"), "Completed");
        /* The master failed: a task below its minAvailable fails the Job. */
        n.task[0][KB_VC_SUCCEEDED] = 0;
        n.task[0][KB_VC_FAILED] = 1;
        n.task[1][KB_VC_SUCCEEDED] = 3;
        n.task[1][KB_VC_FAILED] = 0;
        assert_string_equal(kb_vcjob_phase(j, &n, "Running"), "Failed");
        assert_string_equal(kb_vcjob_phase(j, &n, "Completed"), "Completed");
        struct kb_value *st = kb_vcjob_status(j, &n, NULL, "2027-01-01T00:00:00Z");
        assert_string_equal(str(st, "state", "phase", NULL), "Failed");
        assert_string_equal(str(st, "succeeded", NULL, NULL), "3");
        assert_string_equal(str(st, "failed", NULL, NULL), "1");
        assert_string_equal(str(st, "minAvailable", NULL, NULL), "3");
        assert_int_equal(kb_value_get(st, "conditions")->arr.n, 1);
        kb_value_free(st);
        kb_vcjob_counts_release(&n);
        kb_vcjob_free(j);
}

/* ---- scenarios through kbatch-sim's loader ------------------------------------------- */

/* clang-format off */

/* A batch/v1 Job of n pods with no PodGroup: its template's annotations
 * (", scheduling.volcano.sh/group-min-member: '4'"), the Job's own
 * metadata extra, and cpu per pod. */
#define PLAIN_JOB(name, n, job_meta, tmpl_ann, cpu) \
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: " name job_meta "}\n" \
        "spec:\n  parallelism: " n "\n  template:\n" \
        "    metadata: {annotations: {kbatch.io/x: y" tmpl_ann "}}\n" \
        "    spec:\n      schedulerName: kbatch\n" \
        "      containers: [{name: c, resources: {requests: {cpu: '" cpu "', memory: 1Gi}}}]\n"
#define XPG(name, spec) \
        "---\napiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n" \
        "metadata: {name: " name "}\nspec: {" spec "}\n"
#define LABELLED(name, g, cpu) \
        POD(name, ", labels: {scheduling.x-k8s.io/pod-group: " g "}", \
            "  schedulerName: kbatch\n" POD_REQ(cpu), "")

static const struct kb_scenario scenarios[] = {
    {
        /* Two 4-cpu nodes.  Job train: three pods of 2.5 cpu, min-member 3
         * on its template, so kbatch makes podgroup-job-train with
         * minMember 3 and minResources 7.5 cpu, which the queue (8 cpu)
         * admits.  Each node holds one 2.5-cpu pod (two need 5): 2 of 3
         * placed, the gang is undone and nothing binds. */
        .name = "a Job with group-min-member on its template is one gang",
        .manifests = NODE("n1") NODE("n2")
            PLAIN_JOB("train", "3", "", ", scheduling.volcano.sh/group-min-member: '3'", "2.5"),
        .binds = "",
        .phases = "default/podgroup-job-train=Inqueue ",
        .reasons = "default/podgroup-job-train=NotEnoughResources ",
        .message = "default/podgroup-job-train: its minMember 3 pods do not all fit the free room: 0/2 nodes are available: 2 "
                   "Insufficient cpu.",
    },
    {
        /* The same without the workload's PodGroup (each pod a job of its
         * own): one pod binds on each node. */
        .name = "the same pods one by one bind two",
        .manifests = NODE("n1") NODE("n2")
            PLAIN_JOB("train", "3", "", ", scheduling.volcano.sh/group-min-member: '3'", "2.5"),
        .binds = "train-0=n1 train-1=n2",
        .lone = true,
    },
    {
        /* With three 4-cpu nodes the gang fits, one pod per node (ties go
         * to the name that sorts first, then least requested spreads
         * them), and the group runs. */
        .name = "the gang binds whole when it fits",
        .manifests = NODE("n1") NODE("n2") NODE("n3")
            PLAIN_JOB("train", "3", "", ", scheduling.volcano.sh/group-min-member: '3'", "2.5"),
        .binds = "train-0=n1 train-1=n2 train-2=n3",
        .phases = "default/podgroup-job-train=Running ",
    },
    {
        /* min-member 3 on the Job itself, not its template: the same two
         * nodes and three pods, the same outcome. */
        .name = "group-min-member on the Job object",
        .manifests = NODE("n1") NODE("n2")
            PLAIN_JOB("big", "3", ", annotations: {scheduling.volcano.sh/group-min-member: '3'}",
                      "", "2.5"),
        .binds = "",
        .phases = "default/podgroup-job-big=Inqueue ",
    },
    {
        /* A Job whose PodGroup would be made with minMember 1: pods placed
         * as they fit, and a bare pod owns a group of its own. */
        .name = "without the annotation minMember is 1",
        .manifests = NODE("n1") PLAIN_JOB("big", "3", "", "", "1.5")
            POD("solo", "", "  schedulerName: kbatch\n" POD_REQ("1"), ""),
        .binds = "big-0=n1 big-1=n1 solo=n1",
        .phases = "default/podgroup-job-big=Running default/podgroup-pod-solo=Running ",
    },
    {
        /* A pod that names a queue that does not exist: its group says so,
         * and the rest is scheduled. */
        .name = "an unknown queue is named on the group",
        .manifests = NODE("n1")
            POD("lost", ", annotations: {scheduling.volcano.sh/queue-name: nope}",
                "  schedulerName: kbatch\n" POD_REQ("1"), "")
            POD("found", "", "  schedulerName: kbatch\n" POD_REQ("1"), ""),
        .binds = "found=n1",
        .reasons = "default/podgroup-pod-lost=QueueNotFound ",
        .message = "default/podgroup-pod-lost: queue nope not found",
    },
    {
        /* scheduler-plugins: PodGroup x (minMember 3) and three labelled
         * 1-cpu pods on a 4-cpu node: they bind together; y (minMember 3)
         * has two pods, fewer than it needs. */
        .name = "pods labelled scheduling.x-k8s.io/pod-group are gangs",
        .manifests = NODE("n1") XPG("x", "minMember: 3, scheduleTimeoutSeconds: 60")
            LABELLED("x-0", "x", "1") LABELLED("x-1", "x", "1") LABELLED("x-2", "x", "1")
            XPG("y", "minMember: 3") LABELLED("y-0", "y", "0.1") LABELLED("y-1", "y", "0.1"),
        .binds = "x-0=n1 x-1=n1 x-2=n1",
        .phases = "default/x=Running default/y=Inqueue ",
        .reasons = "default/y=NotEnoughTasks ",
        .message = "default/y: Not enough valid tasks for gang-scheduling, valid: 2, min: 3",
    },
    {
        /* A 3-cpu node and the Volcano Job of vcjob.c's banner (master 1,
         * workers 3 with minAvailable 2; 1 cpu each here): minAvailable 3.
         * Task order is by name among equals: mpi-master-0, mpi-worker-0,
         * mpi-worker-1 fill the node and satisfy both tasks' minimum;
         * mpi-worker-2 waits. */
        .name = "a Volcano Job is one gang of its tasks",
        .manifests = NODE_RES("n1", "3", "8Gi", "110")
            "---\napiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: mpi}\n"
            "spec:\n  schedulerName: kbatch\n  tasks:\n"
            "  - {name: master, replicas: 1, template: {spec: {containers: [{name: c, "
            "resources: {requests: {cpu: '1'}}}]}}}\n"
            "  - {name: worker, replicas: 3, minAvailable: 2, template: {spec: {containers: "
            "[{name: c, resources: {requests: {cpu: '1'}}}]}}}\n",
        .binds = "mpi-master-0=n1 mpi-worker-0=n1 mpi-worker-1=n1",
        .phases = "default/mpi=Running ",
    },
};

/* clang-format on */

static void test_scenarios(void **state)
{
        (void)state;
        kb_run_scenarios(scenarios, KB_ARRAY_SIZE(scenarios));
}

/* kbatch-sim refuses what it cannot make a group of, naming the file, the
 * line, the object and the field. */
static void test_sim_refuses(void **state)
{
        (void)state;
        static const struct {
                const char *text, *err;
        } cases[] = {
            {NODE("n1")
                 PLAIN_JOB("j", "2", "", ", scheduling.volcano.sh/group-min-member: abc", "1"),
             "t.yaml:7: pod default/j-0: annotation scheduling.volcano.sh/group-min-member: must "
             "be a whole number >= 0, got \"abc\""},
            {NODE("n1") PLAIN_JOB("j", "2",
                                  ", annotations: {scheduling.volcano.sh/group-min-member: '-1'}",
                                  "", "1"),
             "t.yaml:7: job default/j: annotation scheduling.volcano.sh/group-min-member: must "
             "be a whole number >= 0, got \"-1\""},
            {"apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: e}\n"
             "spec: {minAvailable: 1}\n",
             "t.yaml:1: vcjob default/e: spec.tasks: must list at least one task"},
            {XPG("x", "minMember: -2"),
             "t.yaml:2: podgroup.scheduling.x-k8s.io default/x: spec.minMember: must be >= 0, got "
             "-2"},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                struct kb_cluster c;
                char err[1024];
                kb_cluster_init(&c);
                assert_int_equal(kb_cluster_load(&c, "t.yaml", cases[i].text, strlen(cases[i].text),
                                                 err, sizeof(err)),
                                 KB_EBADINPUT);
                assert_string_equal(err, cases[i].err);
                /* Nothing of the text is kept. */
                assert_int_equal(c.npods, 0);
                assert_int_equal(c.npodgroups, 0);
                kb_cluster_release(&c);
        }
}

/* The daemon's way: pods keep no group of their own, and the session finds
 * the workload's PodGroup (snap.workload_podgroups), or waits for it. */
static void test_session_workload_groups(void **state)
{
        (void)state;
        const char *text = NODE(
            "n1") "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
                  "metadata: {name: podgroup-u1}\nspec: {minMember: 2}\n"
                  "---\napiVersion: v1\nkind: Pod\nmetadata: {name: a-0, ownerReferences: "
                  "[{apiVersion: "
                  "batch/v1, kind: Job, name: a, uid: u1, controller: true}]}\n"
                  "spec:\n  schedulerName: kbatch\n" POD_REQ(
                      "1") "---\napiVersion: v1\nkind: Pod\nmetadata: {name: a-1, ownerReferences: "
                           "[{apiVersion: "
                           "batch/v1, kind: Job, name: a, uid: u1, controller: true}]}\n"
                           "spec:\n  schedulerName: kbatch\n" POD_REQ(
                               "1") "---\napiVersion: v1\nkind: Pod\nmetadata: {name: b, uid: u2}\n"
                                    "spec:\n  schedulerName: kbatch\n" POD_REQ(
                                        "1") "---\napiVersion: v1\nkind: Pod\nmetadata: {name: c, "
                                             "uid: u3, annotations: "
                                             "{scheduling.volcano.sh/group-min-member: abc}}\n"
                                             "spec:\n  schedulerName: kbatch\n" POD_REQ("1");
        struct kb_cluster c;
        struct kb_conf conf;
        struct kb_snapshot snap;
        struct kb_result r;
        char err[512];
        kb_cluster_init(&c);
        c.workload_podgroups = false;
        assert_int_equal(kb_cluster_load(&c, "t", text, strlen(text), err, sizeof(err)), 0);
        kb_cluster_ensure_default_queue(&c);
        assert_int_equal(kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml), &conf,
                                       err, sizeof(err)),
                         0);
        kb_cluster_snapshot(&c, &snap);
        snap.workload_podgroups = true;
        assert_int_equal(kb_session_run(&snap, &conf, &r), 0);
        /* a-0 and a-1 are the gang podgroup-u1. */
        assert_int_equal(r.nbinds, 2);
        assert_string_equal(r.binds[0].pod->meta.name, "a-0");
        assert_string_equal(r.binds[1].pod->meta.name, "a-1");
        assert_int_equal(r.npodgroups, 1);
        assert_string_equal(r.podgroups[0].name, "default/podgroup-u1");
        /* b waits for its group, c's annotation keeps it from having one;
         * both are told on the pod. */
        assert_int_equal(r.nunschedulable, 2);
        assert_string_equal(r.unschedulable[0].pod->meta.name, "b");
        assert_string_equal(r.unschedulable[0].message,
                            "waiting for kbatch to create podgroup default/podgroup-u2, which it "
                            "makes for the workload of pod b");
        assert_string_equal(r.unschedulable[1].pod->meta.name, "c");
        assert_string_equal(r.unschedulable[1].message,
                            "pod default/c: annotation scheduling.volcano.sh/group-min-member: "
                            "must be a whole number >= 0, got \"abc\"");
        kb_result_release(&r);
        /* Without the switch, each is a job of its own. */
        snap.workload_podgroups = false;
        assert_int_equal(kb_session_run(&snap, &conf, &r), 0);
        assert_int_equal(r.nbinds, 4);
        kb_result_release(&r);
        kb_conf_release(&conf);
        kb_cluster_release(&c);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_pod_group),        cmocka_unit_test(test_pod_group_annotations),
            cmocka_unit_test(test_pod_owner_errors), cmocka_unit_test(test_workload_podgroup),
            cmocka_unit_test(test_xpodgroup),        cmocka_unit_test(test_vcjob_decode),
            cmocka_unit_test(test_vcjob_objects),    cmocka_unit_test(test_scenarios),
            cmocka_unit_test(test_sim_refuses),      cmocka_unit_test(test_session_workload_groups),
        };
        return cmocka_run_group_tests_name("workload", tests, NULL, NULL);
}
