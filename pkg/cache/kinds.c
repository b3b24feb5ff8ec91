/*
 * What the cache knows of each kind: its name in messages, how an object
 * of it is decoded (and what of it is kept), and which copy of an object
 * an update leaves in place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- which copy stays ---------------------------------------------------------- */

const char *kb__cache_entry_rv(const struct kb__entry *e)
{
        return e->rv ? e->rv : meta_of(e->o->ptr)->resource_version;
}

/* Whether b is an older copy of the entry's object: the same uid and a
 * lower resourceVersion than the newest seen, when both versions are
 * decimal numbers (as etcd's and kbatch-apiserver's are; anything else
 * counts as not older). */
bool kb__cache_older(const struct kb__entry *e, const struct kb_meta *b)
{
        const struct kb_meta *a = meta_of(e->o->ptr);
        const char *rva = kb__cache_entry_rv(e);
        if (!a->uid || !b->uid || strcmp(a->uid, b->uid) || !rva || !b->resource_version)
                return false;
        char *ea, *eb;
        unsigned long long va = strtoull(rva, &ea, 10);
        unsigned long long vb = strtoull(b->resource_version, &eb, 10);
        if (*ea || *eb || ea == rva || eb == b->resource_version)
                return false;
        return vb < va;
}

/* Whether the decoded ptr changes nothing kbatch reads of the entry's
 * object, which then stays (nodes only: a kubelet posts its Node's status
 * at least every 5 minutes, nodeStatusReportFrequency, even when nothing
 * but the conditions' lastHeartbeatTime moved: 17 updates a second at
 * 5,000 nodes).  The snapshots and the kept model
 * keep pointing at the object, a session on another thread may be reading
 * it, and the cache's generation stays, so a session on an unchanged
 * cluster finds it unchanged.  The newer resourceVersion is kept beside
 * the object (e->rv) for kb__cache_older() and the cache's dump. */
bool kb__cache_keep_same(struct kb__entry *e, enum kb_kind kind, const void *ptr)
{
        if (kind != KB_KIND_NODE || !kb_node_same(e->o->ptr, ptr))
                return false;
        const char *rv = meta_of(ptr)->resource_version;
        free(e->rv);
        e->rv = NULL;
        if (!kb_streq(rv, meta_of(e->o->ptr)->resource_version))
                e->rv = kb_xstrdup(rv ? rv : "");
        return true;
}
