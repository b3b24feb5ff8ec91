/*
 * cache: the scheduler's picture of the cluster — nodes, pods, PodGroups,
 * Queues, PriorityClasses and Namespaces as reflectors report them — and the
 * snapshots sessions run on.
 *
 * One writer.  Only the loop thread calls anything here.  Objects are
 * decoded once (pkg/api) and never changed: an update decodes a new object
 * and replaces the old one, which lives on while a snapshot holds it
 * (reference counts, touched on the loop thread only).  So a snapshot can be
 * handed to a session on a worker thread with no copying and no locks.
 *
 * Binding.  From the moment the dispatcher sends a bind until the watch
 * shows the pod with its nodeName (or the bind fails), the pod is *assumed*
 * on its node: snapshots show it bound there, so the node's resources stay
 * taken and no later session places it again.
 */
#ifndef KB_PKG_CACHE_H
#define KB_PKG_CACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "api/api.h"
#include "base/base.h"
#include "framework/framework.h"
#include "kube/kube.h"

struct kb_cache;

struct kb_cache *kb_cache_new(void);
/* Frees the cache; snapshots must be freed first.  NULL is fine. */
void kb_cache_free(struct kb_cache *c);

/* ---- feeding -------------------------------------------------------------------- */

/*
 * Sources: a kind may be fed by up to KB_CACHE_MAX_SOURCES reflectors that
 * each see part of it (field selectors; the parts may overlap).  An object
 * stays while some source holds it: a removal, or a relist without it,
 * only concerns the source it comes from.  An update never replaces a
 * newer copy of the same object (same uid, higher numeric
 * resourceVersion).  The functions below without a source act as source 0.
 */
#define KB_CACHE_MAX_SOURCES 16

/* Decodes obj as kind and stores it (replacing any older one).  A Node
 * equal to the one held in everything kbatch reads (kb_node_same: a
 * kubelet's heartbeat) is no change: the object held stays, and neither
 * snapshots' generation nor on_change hears of it.  Returns 0
 * or KB_EBADINPUT (logged, with the object and field, and remembered: see
 * kb_cache_invalid_each). */
int kb_cache_upsert(struct kb_cache *c, enum kb_kind kind, const struct kb_value *obj);
/* As kb_cache_upsert, but only for an object the cache holds, and without
 * changing which sources hold it: for a fresh read (GET) of an object the
 * reflectors own.  An object the cache lacks is ignored. */
int kb_cache_refresh(struct kb_cache *c, enum kb_kind kind, const struct kb_value *obj);
void kb_cache_remove(struct kb_cache *c, enum kb_kind kind, const struct kb_value *obj);
/* A full list of kind starts / ends: objects not upserted in between are
 * removed at the end. */
void kb_cache_list_begin(struct kb_cache *c, enum kb_kind kind);
void kb_cache_list_end(struct kb_cache *c, enum kb_kind kind);

/* Reflector callbacks that feed kind into c: pass kb_cache_feed(c, kind)
 * (source 0) or kb_cache_feed_source(c, kind, n) as the reflector's arg. */
extern const struct kb_reflector_ops kb_cache_reflector_ops;
void *kb_cache_feed(struct kb_cache *c, enum kb_kind kind);
void *kb_cache_feed_source(struct kb_cache *c, enum kb_kind kind, unsigned source);

/* Called on every change with the kind, and at the end of every list (for
 * tests and triggers; a list that changed nothing moves no generation);
 * NULL for none. */
typedef void (*kb_cache_change_fn)(void *arg, enum kb_kind kind);
void kb_cache_on_change(struct kb_cache *c, kb_cache_change_fn fn, void *arg);

/* ---- objects kbatch cannot decode ---------------------------------------------------- */

/*
 * An object the server accepted but kbatch could not decode (a value its
 * CRD allows and kbatch rejects, say a negative quantity).  It is not in
 * the cache as an object — a PodGroup or Queue that was valid before and
 * is updated to something undecodable leaves the cache, since its old
 * spec no longer applies; a pod or node keeps its last good version, as it
 * may hold node resources — but it is remembered here, with the message
 * naming the field, until it is fixed, deleted, or missing from a relist.
 */
struct kb_cache_invalid {
        enum kb_kind kind;
        const char *ns; /* NULL for cluster-scoped kinds */
        const char *name;
        const char *uid;
        const char *resource_version;
        const char *message; /* "podgroup ns/x: spec.minResources.cpu: must not be ..." */
};
typedef void (*kb_cache_invalid_fn)(void *arg, const struct kb_cache_invalid *inv);
/* Calls fn for each remembered object, in no particular order. */
void kb_cache_invalid_each(const struct kb_cache *c, kb_cache_invalid_fn fn, void *arg);
/* Moves on whenever the set of invalid objects (or one's message or
 * version) changes. */
unsigned kb_cache_invalid_gen(const struct kb_cache *c);
/* The remembered object of kind, ns, name, or NULL. */
const struct kb_cache_invalid *kb_cache_invalid_get(const struct kb_cache *c, enum kb_kind kind,
                                                    const char *ns, const char *name);

/* ---- reading -------------------------------------------------------------------- */

/* The current object, or NULL.  Valid until the next change of that object
 * (the cache's loop thread). ns is NULL for cluster-scoped kinds. */
const void *kb_cache_get(const struct kb_cache *c, enum kb_kind kind, const char *ns,
                         const char *name);
size_t kb_cache_count(const struct kb_cache *c, enum kb_kind kind);

/* ---- binding ------------------------------------------------------------------ */

/* Marks pod as binding to node (snapshots show it there).  The pod is the
 * one the session saw; its uid guards against a pod recreated meanwhile. */
void kb_cache_assume(struct kb_cache *c, const struct kb_pod *pod, const char *node);
/* The bind's answer: ok keeps the mark until the watch shows the nodeName
 * (at most a minute); !ok forgets it, so the pod is pending again. */
void kb_cache_bind_done(struct kb_cache *c, const char *ns, const char *name, bool ok);
/* Whether the pod is marked binding. */
bool kb_cache_binding(const struct kb_cache *c, const char *ns, const char *name);
size_t kb_cache_nbinding(const struct kb_cache *c);

/* ---- snapshots ------------------------------------------------------------------ */

struct kb_cache_snap {
        struct kb_snapshot snap;
        struct kb_cache *cache;
        void **refs; /* the objects held */
        size_t nrefs;
        const char **assumed_node;           /* snap.assumed_node (owned) */
        size_t nassumed;                     /* pods assumed on a node */
        struct kb_foreign_owner *pg_foreign; /* snap.pg_foreign (owned) */
};

/* A snapshot of the current state for a session on another thread.  The
 * scheduler names and default queue strings must outlive it. */
struct kb_cache_snap *kb_cache_snapshot(struct kb_cache *c, const char *const *names, size_t nnames,
                                        const char *default_queue);
/* Loop thread. */
void kb_cache_snapshot_free(struct kb_cache_snap *s);

/* The cache as a JSON document (caller frees): for SIGUSR1 dumps. */
char *kb_cache_dump_json(const struct kb_cache *c);

#endif /* KB_PKG_CACHE_H */
