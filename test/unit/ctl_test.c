/* pkg/ctl: what kubectl-kbatch prints, from objects written by hand (odd
 * ones too); and pkg/base's tables, which it prints them with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/ctl.h"
#include "testutil.h"

/* One YAML document as a tree (the test frees it). */
static struct kb_value *obj(const char *yaml)
{
        return kb_test_yaml1(yaml);
}

/* 2m3s after the conditions below changed. */
static double now(void)
{
        double t;
        assert_int_equal(kb_parse_time("2026-01-02T03:06:08Z", &t), 0);
        return t;
}

static void test_table(void **state)
{
        struct kb_table t;
        kb_table_init(&t, 3);
        kb_table_row(&t, (const char *const[]){"NAME", "STATE", "NOTE"});
        kb_table_row(&t, (const char *const[]){"a-long-name", "Open", ""});
        kb_table_row(&t, (const char *const[]){"b", NULL, "x"});
        struct kb_buf b;
        kb_buf_init(&b);
        kb_table_print(&t, &b);
        assert_string_equal(b.data, "NAME          STATE   NOTE\n"
                                    "a-long-name   Open\n"
                                    "b                     x\n");
        kb_buf_release(&b);
        kb_table_release(&t);
}

static void test_res_compact(void **state)
{
        static const struct {
                const char *yaml, *want;
        } cases[] = {
            {"{cpu: 9300m, memory: 32Gi}", "cpu=9.3,mem=32Gi"},
            {"{memory: 1536Mi, cpu: \"4\", pods: 110}", "cpu=4,mem=1.5Gi"},
            {"{nvidia.com/gpu: 2, amd.com/gpu: \"1\", cpu: 500m}", "cpu=0.5,gpu=3"},
            {"{cpu: null, memory: null}", "NONE"}, /* a merge patch's leftovers */
            {"{pods: 3, ephemeral-storage: 1Gi}", "NONE"},
            {"{cpu: lots, memory: 1Gi}", "cpu=0,mem=1Gi,(bad quantity)"},
            {"{cpu: [1]}", "cpu=0,(bad quantity)"},
            {"[cpu]", "NONE"},
            {"{}", "NONE"},
        };
        char buf[128];
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                struct kb_value *v = obj(cases[i].yaml);
                kb_ctl_res_compact(v, "NONE", buf, sizeof(buf));
                if (strcmp(buf, cases[i].want))
                        fail_msg("%s: got %s, want %s", cases[i].yaml, buf, cases[i].want);
                kb_value_free(v);
        }
        kb_ctl_res_compact(NULL, "unlimited", buf, sizeof(buf));
        assert_string_equal(buf, "unlimited");
}

static const char queues_yaml[] =
    "kind: QueueList\n"
    "items:\n"
    "- metadata: {name: team-b}\n"
    "  spec: {weight: 1}\n"
    "  status: {state: Closing, inqueue: 1, pending: 0, running: 2,\n"
    "           deserved: {cpu: 9300m, memory: 40Gi}, allocated: {cpu: \"4\", nvidia.com/gpu: 1}}\n"
    "- metadata: {name: default}\n"
    "- not a queue\n"
    "- metadata: {}\n"
    "- metadata: {name: team-a-with-a-long-name}\n"
    "  spec: {weight: 2, capability: {cpu: 24, memory: 96Gi, nvidia.com/gpu: 8}}\n"
    "  status: {state: Open, inqueue: 0, pending: 3, running: 1, deserved: {}, allocated: {}}\n";

static void test_queues(void **state)
{
        struct kb_value *list = obj(queues_yaml);
        struct kb_buf b;
        kb_buf_init(&b);
        kb_ctl_queues(list, NULL, 0, &b);
        assert_string_equal(
            b.data, "NAME                      STATE     WEIGHT   DESERVED           ALLOCATED     "
                    "CAPABILITY              INQUEUE   PENDING   RUNNING\n"
                    "default                   Open      1        -                  -             "
                    "unlimited               -         -         -\n"
                    "team-a-with-a-long-name   Open      2        0                  0             "
                    "cpu=24,mem=96Gi,gpu=8   0         3         1\n"
                    "team-b                    Closing   1        cpu=9.3,mem=40Gi   cpu=4,gpu=1   "
                    "unlimited               1         0         2\n");
        kb_buf_reset(&b);
        const char *names[] = {"team-b", "nope"};
        kb_ctl_queues(list, names, 2, &b);
        assert_non_null(strstr(b.data, "\nteam-b "));
        assert_null(strstr(b.data, "default"));
        kb_buf_reset(&b);
        kb_ctl_queues(list, names + 1, 1, &b);
        assert_string_equal(b.data, ""); /* no header without a queue */
        kb_buf_release(&b);
        kb_value_free(list);

        /* A queue the scheduler says is below its share with nothing
         * reclaimed for it: a note under the table, from its condition. */
        list = obj("items:\n"
                   "- metadata: {name: q2}\n"
                   "  status: {state: Open, inqueue: 0, pending: 0, running: 1,\n"
                   "    deserved: {cpu: '6'}, allocated: {cpu: '1'},\n"
                   "    conditions: [{type: BelowDeserved, status: 'True', reason: "
                   "OnlyStarvingGangsReclaim,\n"
                   "      message: 'holds cpu 1 of 6 deserved; 7 pod(s) wait'}]}\n"
                   "- metadata: {name: q3}\n"
                   "  status: {conditions: [{type: BelowDeserved, status: 'False', message: x}]}\n");
        kb_buf_init(&b);
        kb_ctl_queues(list, NULL, 0, &b);
        assert_non_null(strstr(b.data, "\n\nq2: below its deserved share: holds cpu 1 of 6 "
                                       "deserved; 7 pod(s) wait\n"));
        assert_null(strstr(b.data, "q3: below"));
        kb_buf_release(&b);
        kb_value_free(list);

        /* Not a list at all. */
        list = obj("{items: 3}");
        kb_buf_init(&b);
        kb_ctl_queues(list, NULL, 0, &b);
        assert_string_equal(b.data, "");
        kb_buf_release(&b);
        kb_value_free(list);
}

static void test_close_state(void **state)
{
        static const struct {
                const char *yaml, *state, *why;
        } cases[] = {
            {"metadata: {name: q}", "Closing", "no status written yet"},
            {"status: {state: Open, pending: 0, inqueue: 0, running: 0, unknown: 0, "
             "allocated: {}}",
             "Closed", "no work left"},
            {"status: {running: 2, pending: \"1\", completed: 4, allocated: {cpu: \"3\"}}",
             "Closing", "2 running, 1 pending PodGroup(s), cpu=3 allocated: Closed once"},
            {"status: {running: 0, allocated: {memory: 1Gi}}", "Closing", "mem=1Gi allocated"},
            {"status: {running: 0, allocated: {cpu: null}}", "Closed", "no work left"},
            {"status: {running: zero}", "Closing", "no status written yet"},
            {"status: 7", "Closing", "no status written yet"},
        };
        char why[256];
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                struct kb_value *q = obj(cases[i].yaml);
                const char *st = kb_ctl_close_state(q, why, sizeof(why));
                if (strcmp(st, cases[i].state) || !strstr(why, cases[i].why))
                        fail_msg("%s: got %s (%s), want %s (%s)", cases[i].yaml, st, why,
                                 cases[i].state, cases[i].why);
                kb_value_free(q);
        }
        struct kb_value *q = obj("status: {state: \"\"}");
        assert_string_equal(kb_ctl_queue_state(q), "Open");
        kb_value_free(q);
}

static const char pods_yaml[] = "items:\n"
                                "- metadata: {annotations: {scheduling.k8s.io/group-name: g}}\n"
                                "  status: {phase: Pending}\n"
                                "- metadata: {annotations: {scheduling.k8s.io/group-name: g}}\n"
                                "  spec: {nodeName: n1}\n"
                                "  status: {phase: Pending}\n"
                                "- metadata: {annotations: {scheduling.volcano.sh/group-name: g}}\n"
                                "  spec: {nodeName: n1}\n"
                                "  status: {phase: Running}\n"
                                "- metadata: {annotations: {scheduling.k8s.io/group-name: g}}\n"
                                "  status: {phase: Succeeded}\n"
                                "- metadata: {annotations: {scheduling.k8s.io/group-name: g}}\n"
                                "  status: {phase: Failed}\n"
                                "- metadata: {annotations: {scheduling.k8s.io/group-name: g}}\n"
                                "  status: {phase: Weird}\n"
                                "- metadata: {annotations: {scheduling.k8s.io/group-name: g}}\n"
                                "- metadata: {annotations: {scheduling.k8s.io/group-name: other}}\n"
                                "  status: {phase: Running}\n"
                                "- metadata: {annotations: {scheduling.k8s.io/group-name: 3}}\n"
                                "- 42\n";

static void test_count_pods(void **state)
{
        struct kb_value *list = obj(pods_yaml);
        struct kb_ctl_pods p;
        kb_ctl_count_pods(list, "g", &p);
        assert_int_equal(p.pending, 2); /* one without any status */
        assert_int_equal(p.starting, 1);
        assert_int_equal(p.running, 1);
        assert_int_equal(p.succeeded, 1);
        assert_int_equal(p.failed, 1);
        assert_int_equal(p.unknown, 1);
        kb_value_free(list);
        list = obj("items: {a: 1}");
        kb_ctl_count_pods(list, "g", &p);
        assert_int_equal(p.pending + p.running, 0);
        kb_value_free(list);
}

/* A Job's PodGroup: the template's annotation, else kbatch's label with
 * the Job's uid, else the group the Job owns; odd lists find nothing. */
static void test_job_group(void **state)
{
        struct kb_value *groups =
            obj("items:\n"
                "- metadata: {name: other, labels: {kbatch.io/owner-uid: x}}\n"
                "- 7\n"
                "- metadata: {name: vc-1, ownerReferences: [{uid: v1}]}\n"
                "- metadata: {name: podgroup-u1, labels: "
                "{kbatch.io/owner-uid: u1}, ownerReferences: [{uid: u1}]}\n"
                "- metadata: {ownerReferences: [{uid: u1}]}\n");
        struct kb_value *job = obj("metadata: {name: tune, uid: u1}\n"
                                   "spec: {template: {spec: {schedulerName: kbatch}}}\n");
        assert_string_equal(kb_ctl_job_group(job, groups), "podgroup-u1");
        assert_string_equal(kb_ctl_job_scheduler(job), "kbatch");
        kb_value_free(job);
        job = obj("metadata: {name: tune, uid: u1}\n"
                  "spec: {template: {metadata: {annotations: "
                  "{scheduling.k8s.io/group-name: mine}}}}\n");
        assert_string_equal(kb_ctl_job_group(job, groups), "mine");
        assert_string_equal(kb_ctl_job_scheduler(job), "default-scheduler");
        kb_value_free(job);
        job = obj("metadata: {name: test-job, uid: v1}\nspec: {schedulerName: volcano}\n");
        assert_string_equal(kb_ctl_job_group(job, groups), "vc-1");
        assert_string_equal(kb_ctl_job_scheduler(job), "volcano");
        kb_value_free(job);
        job = obj("metadata: {name: none, uid: n1}\n");
        assert_null(kb_ctl_job_group(job, groups));
        assert_null(kb_ctl_job_group(job, NULL));
        kb_value_free(job);
        job = obj("metadata: {name: nouid}\n");
        assert_null(kb_ctl_job_group(job, groups));
        kb_value_free(job);
        kb_value_free(groups);
}

static void test_suggest(void **state)
{
        static const char *const cmds[] = {"why", "queues", "close", "open", NULL};
        assert_string_equal(kb_ctl_suggest("queue", cmds), "queues");
        assert_string_equal(kb_ctl_suggest("Queus", cmds), "queues");
        assert_string_equal(kb_ctl_suggest("clos", cmds), "close");
        assert_string_equal(kb_ctl_suggest("wy", cmds), "why");
        assert_string_equal(kb_ctl_suggest("q", cmds), "queues");
        assert_null(kb_ctl_suggest("describe", cmds));
        assert_null(kb_ctl_suggest("", cmds));
        assert_null(kb_ctl_suggest(NULL, cmds));
}

static char *why_pg(const char *yaml, const struct kb_ctl_pods *pods)
{
        struct kb_value *pg = obj(yaml);
        struct kb_buf b;
        kb_buf_init(&b);
        kb_ctl_why_podgroup(pg, pods, now(), &b);
        kb_value_free(pg);
        return kb_buf_detach(&b);
}

static void test_why_podgroup(void **state)
{
        struct kb_ctl_pods pods = {.pending = 3, .starting = 1};
        char *s = why_pg(
            "metadata: {name: big, namespace: ml}\n"
            "spec: {minMember: 4, queue: prioq}\n"
            "status:\n"
            "  phase: Inqueue\n"
            "  conditions:\n"
            "  - {type: Scheduled, status: \"False\", reason: x}\n"
            "  - type: Unschedulable\n"
            "    status: \"True\"\n"
            "    reason: QueueQuotaExceeded\n"
            "    lastTransitionTime: \"2026-01-02T03:04:05Z\"\n"
            "    message: \"queue prioq: gang needs cpu 21, deserved 9.3, allocated 0, capability "
            "unlimited; 2nd of 5 waiting in queue prioq\"\n",
            &pods);
        assert_string_equal(s, "PodGroup:   ml/big\n"
                               "Queue:      prioq\n"
                               "Phase:      Inqueue\n"
                               "MinMember:  4\n"
                               "Pods:       0 running, 3 pending, 1 bound and starting\n"
                               "Scheduled:  no, waiting for 2m3s (since 2026-01-02T03:04:05Z)\n"
                               "Reason:     QueueQuotaExceeded\n"
                               "Blocker:    queue prioq: gang needs cpu 21, deserved 9.3, "
                               "allocated 0, capability unlimited\n"
                               "Position:   2nd of 5 waiting in queue prioq\n");
        free(s);

        /* Another scheduler's message, with a "; " that is no position. */
        s = why_pg(
            "metadata: {name: v}\n"
            "status:\n"
            "  phase: Pending\n"
            "  conditions:\n"
            "  - {type: Unschedulable, status: \"True\", reason: NotEnoughResources,\n"
            "     message: \"3/2 tasks in gang unschedulable: a; b of 2 waiting in queue\"}\n",
            NULL);
        assert_non_null(strstr(s, "PodGroup:   default/v\nQueue:      default (none set)\n"));
        assert_non_null(strstr(s, "MinMember:  1 (none set)\n"));
        assert_non_null(strstr(s, "Pods:       0 running, 0 succeeded, 0 failed (from its status"));
        assert_non_null(strstr(s, "Scheduled:  no\n"));
        assert_non_null(strstr(s, "Blocker:    3/2 tasks in gang unschedulable: a; b of 2 "
                                  "waiting in queue\n"));
        assert_null(strstr(s, "Position"));
        free(s);

        /* A reservation: the expected start, and how far off (now is
         * 03:06:08; 41 minutes later, and 2 minutes earlier). */
        s = why_pg("status:\n  phase: Inqueue\n  expectedStartTime: \"2026-01-02T03:47:08Z\"\n"
                   "  conditions:\n  - {type: Unschedulable, status: \"True\", message: "
                   "\"expected to start at 2026-01-02T03:47:08Z on 8 node(s), when ml/a ends; "
                   "1st of 1 waiting in queue q\"}\n",
                   NULL);
        assert_non_null(strstr(s, "Blocker:    expected to start at 2026-01-02T03:47:08Z on 8 "
                                  "node(s), when ml/a ends\nPosition:   1st of 1 waiting in queue "
                                  "q\nExpected:   2026-01-02T03:47:08Z (in 41m)\n"));
        free(s);
        s = why_pg("status: {expectedStartTime: \"2026-01-02T03:04:08Z\", conditions: [{type: "
                   "Unschedulable, status: \"True\", message: x}]}",
                   NULL);
        assert_non_null(strstr(s, "Expected:   2026-01-02T03:04:08Z (overdue by 2m)\n"));
        free(s);

        /* Only the position. */
        s = why_pg("status: {phase: Pending, conditions: [{type: Unschedulable, status: \"True\", "
                   "message: \"x; 1st of 1 waiting in queue q\"}]}",
                   NULL);
        assert_non_null(strstr(s, "Blocker:    x\nPosition:   1st of 1 waiting in queue q\n"));
        free(s);

        /* Scheduled, and finished. */
        s = why_pg("metadata: {name: t, namespace: d}\n"
                   "status:\n"
                   "  phase: Completed\n"
                   "  running: 0\n"
                   "  succeeded: 4\n"
                   "  conditions:\n"
                   "  - {type: Unschedulable, status: \"False\", message: old}\n"
                   "  - {type: Scheduled, status: \"True\", lastTransitionTime: "
                   "\"2026-01-02T03:04:05Z\"}\n",
                   NULL);
        assert_non_null(strstr(s, "Pods:       0 running, 4 succeeded, 0 failed"));
        assert_non_null(strstr(s, "Scheduled:  yes, 2m3s ago (2026-01-02T03:04:05Z); its pods "
                                  "have finished\n"));
        assert_null(strstr(s, "Blocker"));
        free(s);

        /* Nothing written yet, and odd fields. */
        s = why_pg("metadata: {name: n, namespace: 5, deletionTimestamp: x}\n"
                   "spec: {minMember: \"7\", queue: [q]}\n",
                   NULL);
        assert_non_null(strstr(s, "PodGroup:   default/n\n"));
        assert_non_null(strstr(s, "MinMember:  7\n"));
        assert_non_null(strstr(s, "Phase:      none yet\n"));
        assert_non_null(strstr(s, "Deleting:"));
        assert_non_null(strstr(s, "not yet: no scheduler has written this PodGroup's status"));
        free(s);
        s = why_pg("status: {phase: Pending, conditions: {type: Unschedulable}}", NULL);
        assert_non_null(strstr(s, "no, and the scheduler has given no reason yet"));
        free(s);
        s = why_pg("status: {phase: Running, conditions: [3, {type: Scheduled}]}", NULL);
        assert_non_null(strstr(s, "Scheduled:  yes\n"));
        free(s);
        s = why_pg("[]", NULL);
        assert_non_null(strstr(s, "PodGroup:   default/?\n"));
        free(s);
}

static char *why_pod(const char *yaml, enum kb_ctl_group g)
{
        struct kb_value *pod = obj(yaml);
        struct kb_buf b;
        kb_buf_init(&b);
        kb_ctl_why_pod(pod, g, now(), &b);
        kb_value_free(pod);
        return kb_buf_detach(&b);
}

static void test_why_pod(void **state)
{
        /* A pending pod of a scheduled gang: its own condition says why,
         * before the group's report (which says Scheduled: yes). */
        char *w = why_pod("metadata: {name: w-5, namespace: d, annotations: "
                          "{scheduling.k8s.io/group-name: w}}\n"
                          "spec: {schedulerName: kbatch}\n"
                          "status:\n"
                          "  phase: Pending\n"
                          "  conditions:\n"
                          "  - type: PodScheduled\n"
                          "    status: \"False\"\n"
                          "    reason: Unschedulable\n"
                          "    lastTransitionTime: \"2026-01-02T03:04:05Z\"\n"
                          "    message: \"its gang is scheduled (minMember 4 met); this pod waits: "
                          "queue q is overused: it holds its whole deserved share\"\n",
                          KB_CTL_GROUP_FOUND);
        assert_string_equal(w, "Pod:        d/w-5\n"
                               "Scheduler:  kbatch\n"
                               "Phase:      Pending\n"
                               "Node:       none\n"
                               "PodGroup:   w\n"
                               "Scheduled:  no, waiting for 2m3s (since 2026-01-02T03:04:05Z)\n"
                               "Reason:     Unschedulable\n"
                               "Blocker:    its gang is scheduled (minMember 4 met); this pod "
                               "waits: queue q is overused: it holds its whole deserved share\n");
        free(w);

        char *s = why_pod("metadata: {name: solo, namespace: d}\n"
                          "spec: {schedulerName: kbatch}\n"
                          "status:\n"
                          "  phase: Pending\n"
                          "  conditions:\n"
                          "  - type: PodScheduled\n"
                          "    status: \"False\"\n"
                          "    reason: Unschedulable\n"
                          "    lastTransitionTime: \"2026-01-02T03:04:05Z\"\n"
                          "    message: \"0/4 nodes are available: 4 Insufficient cpu.\"\n",
                          KB_CTL_GROUP_NONE);
        assert_string_equal(s, "Pod:        d/solo\n"
                               "Scheduler:  kbatch\n"
                               "Phase:      Pending\n"
                               "Node:       none\n"
                               "PodGroup:   none (no scheduling.k8s.io/group-name annotation: "
                               "kbatch schedules it as a group of one)\n"
                               "Scheduled:  no, waiting for 2m3s (since 2026-01-02T03:04:05Z)\n"
                               "Reason:     Unschedulable\n"
                               "Blocker:    0/4 nodes are available: 4 Insufficient cpu.\n");
        free(s);

        s = why_pod("metadata: {name: p, annotations: {scheduling.volcano.sh/group-name: g}}\n"
                    "status: {conditions: [{type: PodScheduled, status: \"False\", "
                    "reason: PodGroupNotFound, message: podgroup default/g not found}]}\n",
                    KB_CTL_GROUP_MISSING);
        assert_non_null(strstr(s, "Scheduler:  default-scheduler\n"));
        assert_non_null(strstr(s, "PodGroup:   g (not found"));
        assert_non_null(strstr(s, "Reason:     PodGroupNotFound\n"));
        free(s);

        s = why_pod("metadata: {name: p, annotations: {scheduling.k8s.io/group-name: g}}\n"
                    "spec: {nodeName: n1}\nstatus: {phase: Running}\n",
                    KB_CTL_GROUP_FOUND);
        assert_non_null(strstr(s, "Node:       n1\nPodGroup:   g\n"));
        assert_null(strstr(s, "Scheduled")); /* the group's report follows */
        free(s);

        s = why_pod("metadata: {name: p}\nspec: {nodeName: n1}\n", KB_CTL_GROUP_NONE);
        assert_non_null(strstr(s, "Scheduled:  yes, bound to n1\n"));
        free(s);
        s = why_pod("metadata: {name: p}\nspec: {schedulerName: other}\n", KB_CTL_GROUP_NONE);
        assert_non_null(strstr(s, "no scheduler has written anything on this pod (is a "
                                  "scheduler named other running?)"));
        free(s);
        s = why_pod("status: {phase: Failed}", KB_CTL_GROUP_NONE);
        assert_non_null(strstr(s, "it finished without a node"));
        free(s);

        struct kb_value *pod = obj("metadata: {annotations: {scheduling.k8s.io/group-name: \"\", "
                                   "scheduling.volcano.sh/group-name: v}}");
        assert_string_equal(kb_ctl_pod_group(pod), "v");
        kb_value_free(pod);
        pod = obj("metadata: {annotations: []}");
        assert_null(kb_ctl_pod_group(pod));
        kb_value_free(pod);
        /* scheduler-plugins' label names a group too, after the annotations. */
        pod = obj("metadata: {labels: {scheduling.x-k8s.io/pod-group: x}}");
        assert_string_equal(kb_ctl_pod_group(pod), "x");
        assert_null(kb_ctl_pod_workload_group(pod));
        kb_value_free(pod);
        /* A Job's pod naming none is in the group kbatch makes for the Job:
         * podgroup-<the Job's uid> (its controller reference). */
        pod = obj("apiVersion: v1\nkind: Pod\nmetadata: {name: j-1, namespace: d, uid: u1, "
                  "ownerReferences: [{apiVersion: batch/v1, kind: Job, name: j, uid: 5c1f, "
                  "controller: true}]}\nspec: {containers: [{name: c}]}");
        assert_null(kb_ctl_pod_group(pod));
        char *g = kb_ctl_pod_workload_group(pod);
        assert_string_equal(g, "podgroup-5c1f");
        free(g);
        kb_value_free(pod);
}

static void test_errors(void **state)
{
        static const char forbidden[] =
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
            "\"queues.scheduling.volcano.sh is forbidden: User \\\"bob\\\" cannot list resource\","
            "\"reason\":\"Forbidden\",\"code\":403}";
        struct kb_buf b;
        kb_buf_init(&b);
        kb_ctl_server_error(403, forbidden, strlen(forbidden), &b);
        assert_string_equal(b.data, "Error from server (Forbidden): queues.scheduling.volcano.sh "
                                    "is forbidden: User \"bob\" cannot list resource");
        kb_buf_reset(&b);
        kb_ctl_server_error(502, "<html>bad gateway</html>", 24, &b);
        assert_string_equal(b.data, "Error from server: HTTP 502");
        kb_buf_reset(&b);
        static const char noreason[] = "{\"kind\":\"Status\",\"message\":\"m\"}";
        kb_ctl_server_error(500, noreason, strlen(noreason), &b);
        assert_string_equal(b.data, "Error from server: m");
        kb_buf_reset(&b);
        kb_ctl_server_error(500, NULL, 0, &b);
        assert_string_equal(b.data, "Error from server: HTTP 500");
        kb_buf_release(&b);

        static const char missing[] =
            "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"details\":{\"name\":\"x\","
            "\"kind\":\"podgroups\"},\"code\":404}";
        static const char unserved[] =
            "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"message\":\"the server could not find "
            "the requested resource\",\"details\":{},\"code\":404}";
        assert_true(kb_ctl_object_missing(missing, strlen(missing)));
        assert_false(kb_ctl_object_missing(unserved, strlen(unserved)));
        assert_false(kb_ctl_object_missing("404 page not found", 18));
        assert_false(kb_ctl_object_missing("{\"details\":{\"name\":\"x\"}}", 24));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_table),      cmocka_unit_test(test_res_compact),
            cmocka_unit_test(test_queues),     cmocka_unit_test(test_close_state),
            cmocka_unit_test(test_count_pods), cmocka_unit_test(test_job_group),
            cmocka_unit_test(test_suggest),    cmocka_unit_test(test_why_podgroup),
            cmocka_unit_test(test_why_pod),    cmocka_unit_test(test_errors),
        };
        return cmocka_run_group_tests_name("ctl", tests, NULL, NULL);
}
