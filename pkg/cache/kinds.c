/*
 * What the cache knows of each kind: its name in messages and how an
 * object of it is decoded (and what of it is kept).
 */
#include <stdio.h>

#include "cache/cache-int.h"

const char *kb__cache_kind_name(enum kb_kind k)
{
        static const char *const names[KB__NKINDS] = {
            "object",    "node",      "pod",
            "podgroup",  "queue",     "priorityclass",
            "namespace", "hypernode", "poddisruptionbudget",
            "vcjob"};
        return (unsigned)k < KB__NKINDS ? names[k] : "object";
}

int kb__cache_decode(enum kb_kind kind, const struct kb_value *obj, void **out, char *err,
                     size_t errlen)
{
        switch (kind) {
        case KB_KIND_NODE:
                return kb_node_decode(obj, (struct kb_node **)out, err, errlen);
        case KB_KIND_POD:
                return kb_pod_decode(obj, (struct kb_pod **)out, err, errlen);
        case KB_KIND_PODGROUP:
                return kb_podgroup_decode(obj, (struct kb_podgroup **)out, err, errlen);
        case KB_KIND_QUEUE:
                return kb_queue_decode(obj, (struct kb_queue **)out, err, errlen);
        case KB_KIND_PRIORITYCLASS:
                return kb_priorityclass_decode(obj, (struct kb_priorityclass **)out, err, errlen);
        case KB_KIND_NAMESPACE:
                return kb_namespace_decode(obj, (struct kb_namespace **)out, err, errlen);
        case KB_KIND_HYPERNODE:
                return kb_hypernode_decode(obj, (struct kb_hypernode **)out, err, errlen);
        case KB_KIND_PDB:
                return kb_pdb_decode(obj, (struct kb_pdb **)out, err, errlen);
        case KB_KIND_VCJOB: {
                /* Kept only to say whom a Job's PodGroup is for
                 * (snapshot.c's pg_foreign): its pod templates go. */
                int rc = kb_vcjob_decode(obj, (struct kb_vcjob **)out, err, errlen);
                if (!rc)
                        kb_vcjob_trim(*out);
                return rc;
        }
        default:
                snprintf(err, errlen, "unknown kind");
                return KB_EBADINPUT;
        }
}
