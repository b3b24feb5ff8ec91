/*
 * Fuzz target: the scheduler conf (--scheduler-conf, the ConfigMap's
 * kbatch-scheduler.conf).  Any bytes are parsed as a conf; one that loads
 * runs sessions over a small fixed cluster, so that the actions and the
 * plugins read their arguments from it (the plugins parse their
 * `arguments:` when the session opens).  A rejection must say why; nothing
 * may crash, leak or trip a sanitizer.  The cluster is built afresh for
 * every input, so a crash reproduces from its input alone.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "framework/framework.h"
#include "sim/sim.h"
#include "test/fuzz/sessions.h"

static const char cluster[] =
    "apiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {zone: a}}\n"
    "status: {allocatable: {cpu: '4', memory: 8Gi, pods: '110', nvidia.com/gpu: '1'}}\n"
    "---\napiVersion: v1\nkind: Node\nmetadata: {name: n2, labels: {zone: b}}\n"
    "status: {allocatable: {cpu: '2', memory: 4Gi, pods: '110'}}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: q}\n"
    "spec: {weight: 2, capability: {cpu: '4'}}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata: {name: pg, namespace: default}\nspec: {minMember: 2, queue: q}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p0, namespace: default,\n"
    "  annotations: {scheduling.k8s.io/group-name: pg}}\n"
    "spec: {schedulerName: kbatch, containers: [{name: c, image: x,\n"
    "  resources: {requests: {cpu: '1', memory: 1Gi}}}]}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: default,\n"
    "  annotations: {scheduling.k8s.io/group-name: pg}}\n"
    "spec: {schedulerName: kbatch, containers: [{name: c, image: x,\n"
    "  resources: {requests: {cpu: '1', memory: 1Gi}}}]}\n"
    "---\napiVersion: v1\nkind: Pod\nmetadata: {name: r0, namespace: default,\n"
    "  annotations: {scheduling.k8s.io/group-name: pg}}\n"
    "spec: {schedulerName: kbatch, nodeName: n2, activeDeadlineSeconds: 1800,\n"
    "  containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}\n"
    "status: {phase: Running, startTime: '2027-01-15T07:50:00Z'}\n"
    "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
    "metadata: {name: wide, namespace: default}\nspec: {minMember: 3}\n"
    "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: wide, namespace: default}\n"
    "spec:\n  parallelism: 3\n  template:\n"
    "    metadata: {annotations: {scheduling.k8s.io/group-name: wide}}\n"
    "    spec:\n      schedulerName: kbatch\n      activeDeadlineSeconds: 600\n"
    "      containers: [{name: c, resources: {requests: {cpu: '2'}}}]\n";

static void quiet(char severity, const char *msg, void *arg)
{
        (void)severity;
        (void)msg;
        (void)arg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char err[1024];
        struct kb_conf conf;
        kb_log_set_hook(quiet, NULL);
        err[0] = 0;
        if (kb_conf_parse((const char *)data, size, &conf, err, sizeof(err)) != 0) {
                if (!err[0])
                        __builtin_trap(); /* a rejection always says why */
                return 0;
        }
        struct kb_cluster c;
        kb_cluster_init(&c);
        if (kb_cluster_load(&c, "fuzz", cluster, sizeof(cluster) - 1, err, sizeof(err)) != 0)
                __builtin_trap(); /* the fixed cluster always loads */
        kb_cluster_ensure_default_queue(&c);
        c.now = 1.8e9; /* r0 ends at 08:20 by its deadline; the last session is past it */
        /* Sessions on a kept model: the second sees what the first bound
         * running, later ones repeat or run as the clock moves
         * (sessions.h). */
        fuzz_sessions(&c, &conf);
        kb_cluster_release(&c);
        kb_conf_release(&conf);
        return 0;
}
