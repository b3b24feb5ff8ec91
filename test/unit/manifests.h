/*
 * Building blocks for scenario tables: manifests as YAML flow text spliced
 * together by the preprocessor, so every argument is a string literal.
 * Shared by scenario_test.c and semantics_test.c.
 */
#ifndef KB_TEST_MANIFESTS_H
#define KB_TEST_MANIFESTS_H

/* The manifests are laid out by hand, one object per line where they fit;
 * clang-format would break them at arbitrary concatenations. */
/* clang-format off */

/* Nodes: 4 cpu / 8Gi / 110 pods unless a scenario says otherwise. */
#define NODE(name) \
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n" \
        "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110'}}\n"
#define NODE_RES(name, cpu, mem, pods) \
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name "}\n" \
        "status: {allocatable: {cpu: '" cpu "', memory: " mem ", pods: '" pods "'}}\n"
/* A PodGroup and a batch/v1 Job of n pods (name-0 .. name-(n-1)) joining it. */
#define GANG(name, min, n, cpu, extra_pg) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
        "metadata: {name: " name "}\nspec: {minMember: " min extra_pg "}\n" \
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: " name "}\n" \
        "spec:\n  parallelism: " n "\n  template:\n" \
        "    metadata: {annotations: {scheduling.k8s.io/group-name: " name "}}\n" \
        "    spec:\n      schedulerName: kbatch\n" \
        "      containers: [{name: c, resources: {requests: {cpu: '" cpu "', memory: 1Gi}}}]\n"

/* More building blocks.  Fields are YAML flow text spliced
 * into place, so every argument is a string literal. */

/* A node with an allocatable map, extra metadata (", labels: {...}"), a
 * spec body ("unschedulable: true") and extra status (", conditions: [...]"). */
#define NODE_X(name, alloc, meta_extra, spec, status_extra) \
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: " name meta_extra "}\n" \
        "spec: {" spec "}\nstatus: {allocatable: {" alloc "}" status_extra "}\n"
#define ALLOC4 "cpu: '4', memory: 8Gi, pods: '110'"
/* A PodGroup created at a given time (a date), with more spec fields. */
#define PG(name, min, created, extra_spec) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
        "metadata: {name: " name ", creationTimestamp: '" created "T00:00:00Z'}\n" \
        "spec: {minMember: " min extra_spec "}\n"
/* A PodGroup as a session left it: phase, and its Inqueue condition (the
 * clock of the Inqueue timeout) since when, a time of 2027-01-15 (the
 * scenario runner's now is 2027-01-15T08:00:00Z, 1.8e9). */
#define PG_INQ(name, min, created, spec, meta, phase, istatus, ireason, since) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n" \
        "metadata: {name: " name ", creationTimestamp: '" created "T00:00:00Z'" meta "}\n" \
        "spec: {minMember: " min spec "}\n" \
        "status: {phase: " phase ", conditions: [{type: Inqueue, status: '" istatus "', " \
        "reason: " ireason ", lastTransitionTime: '2027-01-15T" since "Z'}]}\n"
/* A batch/v1 Job of n pods joining group: extra annotations
 * (", volcano.sh/task-spec: ps"), the requests map, and extra pod spec lines
 * indented by six spaces ("      nodeSelector: {zone: a}\n"). */
#define JOB(name, group, n, ann_extra, requests, spec_extra) \
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: " name "}\n" \
        "spec:\n  parallelism: " n "\n  template:\n" \
        "    metadata: {annotations: {scheduling.k8s.io/group-name: " group ann_extra "}}\n" \
        "    spec:\n      schedulerName: kbatch\n" \
        "      containers: [{name: c, resources: {requests: " requests "}}]\n" spec_extra
#define REQ1 "{cpu: '1', memory: 1Gi}"
/* Required node affinity with the given nodeSelectorTerms items. */
#define AFFINITY(terms) \
        "      affinity:\n        nodeAffinity:\n" \
        "          requiredDuringSchedulingIgnoredDuringExecution:\n" \
        "            nodeSelectorTerms:\n" terms
#define TERM(exprs) "            - matchExpressions: [" exprs "]\n"
/* A bare pod: metadata extra (", annotations: {...}"), spec lines and status
 * body, each spliced as is. */
#define POD(name, meta_extra, spec_lines, status) \
        "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " name meta_extra "}\n" \
        "spec:\n" spec_lines "status: {" status "}\n"
#define POD_REQ(cpu) "  containers: [{name: c, resources: {requests: {cpu: '" cpu "', memory: 1Gi}}}]\n"
#define IN_GROUP(g) ", annotations: {scheduling.k8s.io/group-name: " g "}"
/* Another scheduler's running pod on node, asking cpu and 1Gi. */
#define FOREIGN(name, node, cpu) \
        POD(name, "", "  schedulerName: default-scheduler\n  nodeName: " node "\n" POD_REQ(cpu), \
            "phase: Running")
#define QUEUE(name, spec, status) \
        "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: " name "}\n" \
        "spec: {" spec "}\nstatus: {" status "}\n"
#define PRIORITY_CLASS(name, value) \
        "---\napiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: " name "}\n" \
        "value: " value "\n"

/* Volcano's default conf with one plugin line replaced; the tiers are those
 * of kb_default_conf_yaml. */
#define CONF_TIERS(priority, overcommit, drf, nodeorder) \
        "actions: \"enqueue, allocate, backfill\"\n" \
        "tiers:\n- plugins:\n  - name: priority\n" priority "  - name: gang\n" \
        "  - name: conformance\n- plugins:\n  - name: overcommit\n" overcommit \
        "  - name: drf\n" drf "  - name: predicates\n  - name: proportion\n" \
        "  - name: nodeorder\n" nodeorder
/* clang-format on */

/* Declares test_<table> running a scenario table. */
#define TABLE_TEST(table)                                                                          \
        static void test_##table(void **state)                                                     \
        {                                                                                          \
                (void)state;                                                                       \
                kb_run_scenarios(table, KB_ARRAY_SIZE(table));                                     \
        }

#endif /* KB_TEST_MANIFESTS_H */
