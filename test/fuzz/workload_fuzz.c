/*
 * Fuzz target: the decoders of the objects kbatch reads besides pods and
 * PodGroups — topology.volcano.sh HyperNodes (with their regexMatch
 * patterns compiled), batch.volcano.sh Jobs and scheduler-plugins'
 * scheduling.x-k8s.io PodGroups — and the Volcano PodGroup built from a
 * Job.  Input:
 *   byte 0    which decoders (bit 0 HyperNode, 1 Volcano Job, 2 x-k8s
 *             PodGroup; none set: all three)
 *   the rest  a YAML or JSON stream, each document given to each decoder
 * A document decodes or is refused with a message naming the object; a
 * HyperNode that decodes has its members matched against a node.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "base/base.h"
#include "workload/workload.h"

static void quiet(char severity, const char *msg, void *arg)
{
        (void)severity;
        (void)msg;
        (void)arg;
}

/* Decodes a document kbatch made (a PodGroup, a pod) as the cache would,
 * and frees both. */
static void decode(struct kb_value *doc)
{
        struct kb_object o;
        char err[512];
        if (doc && kb_object_decode(doc, &o, err, sizeof(err)) == 0)
                kb_object_release(&o);
        kb_value_free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        kb_log_set_hook(quiet, NULL);
        if (size < 1)
                return 0;
        unsigned which = data[0] & 7;
        if (!which)
                which = 7;
        struct kb_value **docs = NULL;
        size_t n = 0;
        char err[1024];
        if (kb_yaml_parse((const char *)data + 1, size - 1, &docs, &n, err, sizeof(err)))
                return 0;
        struct kb_kv labels[] = {{"zone", "a"}, {"rack", "r1"}};
        struct kb_meta node = {.name = "n1", .labels = labels, .nlabels = 2};
        for (size_t i = 0; i < n; i++) {
                if (which & 1) {
                        struct kb_hypernode *hn = NULL;
                        err[0] = 0;
                        if (kb_hypernode_decode(docs[i], &hn, err, sizeof(err)) == 0) {
                                for (size_t m = 0; m < hn->nmembers; m++)
                                        kb_hn_member_matches(&hn->members[m], "n1", &node);
                                kb_hypernode_free(hn);
                        } else if (!err[0]) {
                                __builtin_trap();
                        }
                }
                if (which & 2) {
                        struct kb_vcjob *j = NULL;
                        err[0] = 0;
                        if (kb_vcjob_decode(docs[i], &j, err, sizeof(err)) == 0) {
                                /* What the scheduler and the simulator make of it:
                                 * its PodGroup and its first and last pods, decoded. */
                                free(kb_vcjob_podgroup_name(j));
                                decode(kb_vcjob_podgroup(j, err, sizeof(err)));
                                for (size_t t = 0; t < j->ntasks; t++) {
                                        decode(kb_vcjob_pod(j, t, 0));
                                        if (j->tasks[t].replicas > 1)
                                                decode(
                                                    kb_vcjob_pod(j, t, j->tasks[t].replicas - 1));
                                }
                                kb_vcjob_free(j);
                        } else if (!err[0]) {
                                __builtin_trap();
                        }
                }
                if (which & 4) {
                        struct kb_xpodgroup *pg = NULL;
                        err[0] = 0;
                        if (kb_xpodgroup_decode(docs[i], &pg, err, sizeof(err)) == 0) {
                                decode(kb_workload_xpodgroup(pg));
                                kb_xpodgroup_free(pg);
                        } else if (!err[0]) {
                                __builtin_trap();
                        }
                }
        }
        kb_value_free_docs(docs, n);
        return 0;
}
