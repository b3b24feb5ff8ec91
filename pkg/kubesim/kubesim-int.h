/*
 * Internals shared by the files of the simulated cluster: the indexes the
 * controllers keep (simindex.c, fed by the store's observer list), the
 * kubelets (kubelet.c), the Job and Volcano Job controllers (jobctl.c,
 * vcjobctl.c), the garbage collector (gc.c), synthetic nodes (nodes.c) and
 * the tick (sim.c).
 *
 * The simulated cluster is a client of the API server's storage: it reads
 * and writes objects through the store's functions (apiserver-int.h, with
 * srv->mu held) and hears of every write through kb_store_observer.
 * Storage never calls in here by name.
 */
#ifndef KB_PKG_KUBESIM_INT_H
#define KB_PKG_KUBESIM_INT_H

#include "apiserver/apiserver-int.h"
#include "kubesim/kubesim.h"

/* ---- the controllers' indexes (simindex.c) ---------------------------- */

struct kb_owner_counts {
        int64_t active, ready, succeeded, failed;
};
/* The controllers that sync the objects they own when those change. */
enum kb_sim_ctl {
        KB_SIM_JOBS,   /* batch/v1 Jobs (jobctl.c) */
        KB_SIM_VCJOBS, /* batch.volcano.sh/v1alpha1 Jobs (vcjobctl.c) */
        KB_SIM_NCTL
};
/* The garbage collector (gc.c): deletes the pods and Volcano PodGroups the
 * owner uid owned (background propagation); arg is the server. */
void kb__gc_owner_gone(void *arg, const char *uid);
/* Records a write of a pod, a Job, a Volcano Job or a Volcano PodGroup
 * (a kb_store_observer's write; arg is the server); any other type is
 * ignored. */
void kb__sim_observe(void *arg, const struct kb_rtype *rt, const char *key,
                     const struct kb_value *old, const struct kb_value *now);
/* The keys of the bound, Pending pods, emptying that set; kb__strv_free. */
char **kb__sim_take_to_start(struct kb_apiserver *srv, size_t *n);
/* Puts back what a tick over its budget leaves for the next one. */
void kb__sim_requeue_start(struct kb_apiserver *srv, const char *key);
void kb__sim_requeue(struct kb_apiserver *srv, enum kb_sim_ctl ctl, const char *key);
/* Writes one controller makes in a tick at most, so that a burst (140,000
 * pods bound at once) is spread over ticks and requests get the lock in
 * between: at 0.2 s a tick, 25,000 writes a second. */
#define KB_SIM_TICK_BUDGET 5000
/* The key of a pod whose sim-duration (or deletion grace) may be over by
 * now, or NULL; the caller frees it and checks the pod. */
char *kb__sim_next_finish(struct kb_apiserver *srv, double now);
char *kb__sim_next_reap(struct kb_apiserver *srv, double now);
/* The keys of the jobs of controller ctl to sync, emptying that set. */
char **kb__sim_take_dirty(struct kb_apiserver *srv, enum kb_sim_ctl ctl, size_t *n);
/* The counts of the pods an owner uid owns, or NULL when it owns none. */
const struct kb_owner_counts *kb__sim_owner_counts(struct kb_apiserver *srv, const char *uid);
/* The keys of the pods, and of the Volcano PodGroups, an owner uid owns. */
char **kb__sim_owned_pods(struct kb_apiserver *srv, const char *uid, size_t *n);
char **kb__sim_owned_podgroups(struct kb_apiserver *srv, const char *uid, size_t *n);
void kb__strv_free(char **v, size_t n);
/* When a pod's state asks something of the kubelet. */
bool kb__pod_wants_start(const struct kb_value *p);
bool kb__pod_finish_at(const struct kb_value *p, double *at);
bool kb__pod_reap_at(const struct kb_value *p, double *at);
/* A Go duration ("30s", "2m", "1h30m", "1.5s"), as kbatch-sim reads one; a
 * bare number ("10") and a negative one are refused (false). */
bool kb__parse_duration(const char *s, double *out);

/* ---- simulation (sim.c) ------------------------------------------------ */

void kb__sim_reap(struct kb_apiserver *srv, struct kb_rtype *pods, double now);
void kb__sim_kubelet(struct kb_apiserver *srv, struct kb_rtype *pods, double now);
void kb__sim_job_controller(struct kb_apiserver *srv, struct kb_rtype *jobs, struct kb_rtype *pods);
/* The Volcano Job controller's tick (vcjobctl.c); nothing until the
 * batch.volcano.sh Job CRD is applied. */
void kb__sim_vcjob_controller(struct kb_apiserver *srv, struct kb_rtype *pods);
/* A condition {type, status, lastProbeTime: null, lastTransitionTime: ts,
 * reason}; reason may be NULL. */
struct kb_value *kb__condition(const char *type, const char *status, const char *reason,
                               const char *ts);
/* Replaces the condition of c's type in conds, or appends c (owned). */
void kb__set_condition(struct kb_value *conds, struct kb_value *c);
/* st.conditions, made an empty array when missing. */
struct kb_value *kb__conds_of(struct kb_value *st);

#endif /* KB_PKG_KUBESIM_INT_H */
