/* Shared between the scheduler's files; not a public interface. */
#ifndef KB_PKG_SCHEDULER_INT_H
#define KB_PKG_SCHEDULER_INT_H

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>

#include <uv.h>

#include "cache/cache.h"
#include "kube/kube.h"
#include "scheduler/scheduler.h"

#define KB_GROUP_API "/apis/scheduling.volcano.sh/v1beta1"

struct kb__conf_ref {
        int refs;
        struct kb_conf conf;
};

struct kb__status_memo;  /* last written status per object (status.c) */
struct kb__events;       /* the event recorder (events.c) */
struct kb__invalid_seen; /* undecodable objects reported (status.c) */
struct kb__refusal;      /* evictions refused, recently (binds.c) */
struct kb__bind;         /* a bind from the backlog to its answer (binds.c) */
struct kb__metrics;
struct kb__workloads; /* the PodGroups made for workloads (workloads.c) */
struct MHD_Daemon;

/* Reflectors with one per kind; pods have KB__R_PODS for the bound pods of
 * every scheduler ("spec.nodeName!=") plus one per scheduler name
 * (pod_refl), so pending pods of other schedulers are never fetched. */
enum {
        KB__R_NODES,
        KB__R_PODS,
        KB__R_PODGROUPS,
        KB__R_QUEUES,
        KB__R_PRIORITYCLASSES,
        KB__R_NAMESPACES,
        KB__R_HYPERNODES,
        KB__R_PDBS,
        KB__R_VCJOBS, /* Volcano Jobs: whom their PodGroups are for */
        KB__NREFL,
};

/*
 * The daemon's state.  Everything here lives on the loop thread; the
 * metrics endpoint's thread reads only s->metrics (under its mutex) and
 * s->ready (atomically).  Each group of fields names the one file that
 * writes them; other files only read them (or pass them to the owner's
 * functions).
 */
struct kb_sched {
        /* scheduler.c: set up once in kb_sched_run, torn down at its end. */
        const struct kb_sched_opts *o;
        uv_loop_t loop;
        struct kb_kube *kube;
        struct kb_cache *cache;
        /* The session model kept between sessions (one session at a time
         * uses it, on the worker thread). */
        struct kb_model *model;
        struct kb_reflector *refl[KB__NREFL];
        struct kb_reflector **pod_refl; /* per scheduler name */
        size_t npod_refl;
        uv_timer_t tick;
        uv_timer_t stop_timer; /* bounds a stop: see stop.c */
        uv_timer_t soon;       /* a session at the next iteration */
        bool soon_armed;
        /* Signals: blocked in every thread; one thread sigwaits for them
         * and hands them to the loop through sig_async (pending bits). */
        uv_async_t sig_async;
        pthread_t sig_thread;
        bool sig_thread_started;
        unsigned sig_pending; /* atomic: 1 << signal number */
        struct kb__conf_ref *conf;
        struct stat conf_st;
        char *identity;

        /* scheduler.c: sessions and stopping. */
        bool session_running;
        bool sessions_started;  /* the first session has started */
        double trimmed_at;      /* monotonic: the last malloc_trim */
        double session_started; /* monotonic: when the last session started */
        bool stopping;
        bool stop_grace_over; /* a stop no longer waits for binds on the wire */
        bool closed;
        int exit_code;
        /* Set by scheduler.c, the loop's owner, before the loop runs, so
         * that the files below it never call up into it.  settled: an
         * answer a stop may be waiting for (a bind, an eviction, the lease)
         * came back, finish the stop if it was the last; stop: end the
         * daemon with this exit code (lost leadership, no listener). */
        void (*settled)(struct kb_sched *s);
        void (*stop)(struct kb_sched *s, int code);

        /* binds.c: binds and evictions not answered yet (the backlog too);
         * a stop drops those still waiting and waits a little for those on
         * the wire. */
        size_t binds_inflight;
        struct kb__bind *backlog, *backlog_tail; /* decided, not handed to the client */
        size_t nbacklog;
        struct kb_map evicting; /* evictions in flight: "ns/name" -> the key (char *) */
        struct kb_map refused;  /* refused evictions of the last minute: "ns/name" ->
                                   struct kb__refusal * */

        /* dispatch.c: the default queue, and discovery of whether podgroups
         * and queues have a status subresource (1), not (0: status is
         * written on the object), or not known yet (-1, set by scheduler.c
         * at start: status waits). */
        bool default_queue_requested;
        bool have_default_queue;     /* our watch has shown it */
        double default_queue_failed; /* monotonic: the last failed create, 0 if none */
        signed char pg_status_sub, queue_status_sub;
        bool discovery_inflight;
        double discovered_at; /* monotonic, 0 when never */

        /* leader.c: leader election and fencing (scheduler.c sets leader
         * when election is off). */
        bool leader;
        uv_timer_t lease_timer;
        uv_timer_t fence_timer; /* fires when the renew deadline passes */
        bool lease_inflight;
        bool lease_released;
        char *lease_holder;
        char *lease_renew;
        double lease_observed; /* monotonic: when the holder's record last changed */
        double lease_sent;     /* monotonic: when the lease write in flight left */
        double lease_renewed;  /* monotonic: when our last successful renew left */
        double lease_forbidden_warned;

        /* status.c: what was last written, so an unchanged status is not
         * written again. */
        struct kb_map memo;         /* key -> struct kb__status_memo * */
        uint64_t memo_gen;          /* sessions dispatched */
        uint64_t status_deferred;   /* status writes left to a later session */
        struct kb_map invalid_seen; /* "podgroup/ns/name" -> struct kb__invalid_seen * */

        /* events.c */
        struct kb__events *events;
        struct kb__workloads *workloads;

        /* metrics.c (ready is stored by scheduler.c once every reflector
         * has listed, read by the HTTP thread). */
        struct kb__metrics *metrics;
        struct MHD_Daemon *http;
        struct kb_connlimit *http_limit; /* the metrics server's connection limits */
        bool ready;
};

/* A string-keyed map in a struct that starts zeroed (struct kb_sched is
 * calloc'ed, or a test's fixture): an empty map takes string keys from its
 * first use on.  Every access to such a map goes through this. */
static inline struct kb_map *kb__strmap(struct kb_map *m)
{
        if (!m->cap)
                m->keys = KB_MAP_STR;
        return m;
}

/* dispatch.c: the session's result back to the server.  Loop thread, as
 * everything here. */
void kb__dispatch_result(struct kb_sched *s, const struct kb_cache_snap *snap,
                         const struct kb_result *r);
/* Whether the cache has the default queue; if not, asks the server to
 * create it (one request at a time, a failed one retried after 5 s) and
 * returns false: sessions wait until the watch brings it. */
bool kb__ensure_default_queue(struct kb_sched *s);
/* Asks discovery (again, every 30 s) whether status subresources exist. */
void kb__discover(struct kb_sched *s);
/* Frees what the dispatcher keeps (after the client is gone). */
void kb__dispatch_release(struct kb_sched *s);

/* binds.c */
/* Marks the pod binding in the cache and queues the bind in the backlog;
 * kb__binds_pump hands the backlog to the client as its bind lane drains. */
void kb__dispatch_bind(struct kb_sched *s, const struct kb_bind *bd);
void kb__binds_pump(struct kb_sched *s);
/* Forgets the backlog (a stop): those binds are never sent.  Returns how
 * many there were. */
size_t kb__binds_drop(struct kb_sched *s);
void kb__dispatch_eviction(struct kb_sched *s, const struct kb_eviction *e);
/* What the group ("ns/name") should say about evictions made for it that
 * a PodDisruptionBudget refused in the last minute ("the eviction of ns/x
 * was refused by a PodDisruptionBudget: ..."), or NULL; the caller frees
 * it.  Forgets refusals older than a minute. */
char *kb__evictions_refused(struct kb_sched *s, const char *group);
void kb__binds_release(struct kb_sched *s);

/* pgstatus.c */
void kb__pg_status(struct kb_sched *s, const struct kb_pg_status *st);
/* status.c */
void kb__queue_status(struct kb_sched *s, const struct kb_queue_status *qs);
void kb__hypernode_status(struct kb_sched *s, const struct kb_hn_status *hs);
/* What a PodGroup status write announces once the server took it: the
 * gang scheduled (the Scheduled event and the job latency metric), or sent
 * back by its Inqueue timeout (the InqueueTimeout event).  Only then: a
 * write left to a later session or refused is computed again there, and
 * announcing it each time would count one transition twice. */
struct kb__status_after {
        char *ns, *name, *uid;
        double scheduled_creation; /* > 0: the gang was scheduled */
        char *scheduled_msg;
        char *inq_reason, *inq_msg; /* NULL: no timeout */
};
/* The status writer's parts that pending.c shares: the memo of what was
 * last sent per key, a condition as JSON, the lastTransitionTime a
 * condition of status written over c carries (c's while its status
 * stands, now_ts when it flips), and a status PATCH (body consumed; rv the
 * resourceVersion precondition; after NULL or what to announce once it
 * went through). */
bool kb__status_memo_same(struct kb_sched *s, const char *key, uint64_t h);
void kb__status_memo_set(struct kb_sched *s, const char *key, uint64_t h);
/* Seconds since key was last written, or -1 when the memo has no record
 * of it (asking keeps the record). */
double kb__status_memo_age(struct kb_sched *s, const char *key);
struct kb_value *kb__status_cond_json(const char *type, const char *status, const char *reason,
                                      const char *message, const char *ts, const char *tid);
const char *kb__status_transition_time(const struct kb_condition *c, const char *status,
                                       const char *now_ts, char *buf, size_t n);
void kb__status_fire(struct kb_sched *s, const char *path, struct kb_value *body, const char *rv,
                     const char *ctype, const char *what, const char *memo_key,
                     struct kb__status_after *after);
/* pending.c: FailedScheduling and PodScheduled=False on the pending pods
 * of the gangs the session found unschedulable, and of the scheduled
 * gangs that still have pods pending. */
void kb__pod_failures(struct kb_sched *s, const struct kb_cache_snap *snap,
                      const struct kb_result *r);
void kb__dispatch_nomination(struct kb_sched *s, const struct kb_nomination *nm);
/* A Warning event and a condition naming the field on every PodGroup and
 * Queue the cache could not decode (once per object and message). */
void kb__report_invalid(struct kb_sched *s);
/* After a session's status went out: forgets what no recent session
 * reported. */
void kb__status_sweep(struct kb_sched *s);
void kb__status_release(struct kb_sched *s);

/* events.c: records an event on an object (copies every string).  O(1);
 * never blocks a bind: what cannot go now goes later or is dropped. */
void kb__event(struct kb_sched *s, const char *kind, const char *api_version, const char *ns,
               const char *name, const char *uid, const char *type, const char *reason,
               const char *message);
/* Sends what waits, as the event lane and rate allow (every tick). */
void kb__events_flush(struct kb_sched *s);
void kb__events_release(struct kb_sched *s);
/* Records kept and records with something unsent (for tests). */
void kb__events_stats(struct kb_sched *s, size_t *records, size_t *unsent);

/* eventfilter.c: whether the recorder may write an Event now.  The
 * recorder's own token bucket, and one bucket per involved object (its
 * key: kind, namespace, name, uid, apiVersion), as client-go's spam
 * filter.  Loop thread. */
struct kb__event_filter;
struct kb__event_filter *kb__event_filter_new(double now);
void kb__event_filter_free(struct kb__event_filter *f);
/* Takes a token from object's bucket and then the recorder's; false (and
 * nothing taken from the recorder's) when either is empty. */
bool kb__event_filter_admit(struct kb__event_filter *f, const char *object, double now);
/* Refills the recorder's bucket up to now; ready: it holds a token. */
void kb__event_filter_refill(struct kb__event_filter *f);
bool kb__event_filter_ready(const struct kb__event_filter *f);

/* workloads.c: the PodGroups of pods that name none and of
 * scheduler-plugins' PodGroups.  Start watches scheduler-plugins'
 * PodGroups (when the option is on); sync asks for the groups that snap
 * lacks (the leader only); stop frees the watch (with the client), release
 * the rest. */
void kb__workloads_start(struct kb_sched *s);
void kb__workloads_sync(struct kb_sched *s, const struct kb_snapshot *snap);
/* Whether kbatch is making the workload PodGroup ns/name: its write is in
 * flight, or was answered well less than 10 s ago and the watch has not
 * brought it yet.  A pod that waits only for that is not reported
 * unschedulable (kb__pod_failures). */
bool kb__workloads_making(struct kb_sched *s, const char *ns, const char *name);
void kb__workloads_stop(struct kb_sched *s);
void kb__workloads_release(struct kb_sched *s);

/* leader.c */
void kb__leader_start(struct kb_sched *s);
/*
 * The fence: whether this process may act as the leader now — it holds
 * the lease and its last successful renew left less than the renew
 * deadline ago (always, without leader election), and it is not stopping
 * for a failure.  Sessions start, results are dispatched and fenced
 * requests leave only while this holds.  Loop thread.
 */
bool kb__leading(struct kb_sched *s);
/* Leadership is lost (deadline passed, or another holder): stop at once. */
void kb__leader_lost(struct kb_sched *s, const char *why);
/* Releases the lease when held; calls done when finished. */
void kb__leader_release(struct kb_sched *s, void (*done)(struct kb_sched *s));

/* stop.c: stopping (scheduler.c gives these two to the files below it
 * as s->settled and s->stop), and the signals. */
void kb__sched_settled(struct kb_sched *s);
void kb__sched_stop(struct kb_sched *s, int code);
/* The signals the daemon takes (blocked in every thread), the loop's
 * handler of sig_async, and the thread that sigwaits for them. */
void kb__sched_signal_set(sigset_t *set);
void kb__sched_signals_arrived(uv_async_t *h);
void *kb__sched_signal_thread(void *arg);

/* metrics.c */
struct kb__metrics *kb__metrics_new(void);
void kb__metrics_free(struct kb__metrics *m);
void kb__metrics_session(struct kb_sched *s, const struct kb_result *r, double e2e);
/* A gang scheduled (its PodGroup's Scheduled condition set) by this session:
 * creation is the PodGroup's creationTimestamp (seconds since the epoch). */
void kb__metrics_job_scheduled(struct kb_sched *s, double creation);
void kb__metrics_bind(struct kb_sched *s, bool ok);
/* An event "created", "updated" or "dropped". */
void kb__metrics_event(struct kb_sched *s, const char *result);
/* The requests waiting in each client lane (from the loop thread). */
void kb__metrics_lanes(struct kb_sched *s);
void kb__metrics_set_leader(struct kb_sched *s, bool leader);
/* The conf's skipped items, for /metrics (any thread). */
void kb__metrics_conf(struct kb__metrics *m, const struct kb_conf *conf);
/* The /metrics page, a fresh string (the HTTP thread). */
char *kb__metrics_render(struct kb_sched *s);

/* http.c: /metrics, /healthz and /readyz on libmicrohttpd's thread. */
int kb__http_start(struct kb_sched *s, const char *addr);
void kb__http_stop(struct kb_sched *s);

/* A Lease as read (leader.c); its strings live in doc. */
struct kb__lease {
        struct kb_value *doc;
        const char *holder, *renew, *acquire, *rv;
        int64_t transitions, duration;
};
#ifdef KB_TESTING
/* leader.c's parser and writer of Leases (KB_TESTABLE), for the unit
 * tests and the fuzz target. */
int kb__lease_parse(const char *body, size_t len, struct kb__lease *l);
char *kb__lease_body(const char *ns, const char *name, const char *rv, const char *holder,
                     const char *acquire, int64_t transitions, int duration);
#endif

#endif /* KB_PKG_SCHEDULER_INT_H */
