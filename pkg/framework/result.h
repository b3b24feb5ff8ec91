/*
 * What a session decided: kb_result and its parts (part of framework.h,
 * which includes it; not included on its own).
 */
#ifndef KB_PKG_FRAMEWORK_RESULT_H
#define KB_PKG_FRAMEWORK_RESULT_H

/* ---- results ------------------------------------------------------------- */

struct kb_bind {
        const struct kb_pod *pod;
        const char *node;
};

struct kb_eviction {
        const struct kb_pod *pod;
        const char *action; /* "preempt", "reclaim" */
        const char *reason;
        /* "namespace/name" of the PodGroup the room is for, NULL when none
         * (a pod without a group): where the daemon reports a refusal. */
        const char *group;
};

/* A task left Pipelined when the session closed: it waits on node for
 * resources being released there.  The daemon writes the node to the pod's
 * status.nominatedNodeName (as Volcano does for pipelined tasks), so that
 * users and other schedulers see the claim. */
struct kb_nomination {
        const struct kb_pod *pod;
        const char *node;
};

struct kb_pg_status {
        const struct kb_podgroup *pg; /* NULL: no PodGroup object (a lone pod) */
        const char *name;             /* namespace/name */
        enum kb_pg_phase phase;
        int32_t running, succeeded, failed, pending;
        /* The condition set by this session: Unschedulable (status True)
         * with reason and message, or Scheduled.  type NULL when none. */
        const char *cond_type;
        const char *cond_status;
        const char *cond_reason;
        const char *cond_message;
        /* Its place among the waiting groups of its queue (1 first) and how
         * many wait there; 0 when it is not waiting (kb_job.position). */
        uint32_t position, waiting;
        /* When the reservation plugin expects the waiting group to start
         * (seconds since the epoch), 0 when it gives no time. */
        double expected_start;
        /* The lowest network topology domain holding all of the group's
         * tasks on nodes, and its tier; NULL when the session has no
         * topology, the group has nothing on nodes, or it spans domains. */
        const char *domain;
        int32_t domain_tier;
        /* The Inqueue timeout's condition (type Inqueue) when this session
         * changed it: status "True" (reason Admitted) when the group was
         * admitted and holds a reservation, "False" (reason InqueueTimeout)
         * when its timeout sent it back to Pending; since is when (the
         * session's now).  inq_status NULL: unchanged. */
        const char *inq_status, *inq_reason, *inq_message;
        double inq_since;
        /* For a scheduled group (cond_type Scheduled) that still has
         * pending pods of ours: why they wait (the queue's quota, the fit
         * error, ...), for their PodScheduled=False condition; NULL when
         * none wait (issue 23, point 3). */
        const char *pending_message;
        /* The group's spec.priorityClassName when no PriorityClass has that
         * name (the group then counts as the global default's priority,
         * else 0), NULL otherwise. */
        const char *unknown_priority_class;
};

/* A pod without a PodGroup (a job of its own) left Pending by this
 * session: the daemon sets its PodScheduled condition False with reason
 * Unschedulable and records a FailedScheduling event, as kube-scheduler
 * does; kbatch-sim lists it. */
struct kb_pod_status {
        const struct kb_pod *pod;
        const char *message; /* "0/4 nodes are available: 4 Insufficient cpu." */
};

/* What a session read but did not evaluate (a PodGroup's subGroupPolicy,
 * a pod's required pod anti-affinity, ...), one per job that has any, and
 * what it could not use of a HyperNode (a missing member, a cycle): the
 * daemon makes it a Warning event on the PodGroup (or on the pod, for a pod
 * without one, or the HyperNode), kbatch-sim prints it. */
struct kb_warning {
        const struct kb_podgroup *pg; /* NULL for a pod without a group */
        const struct kb_pod *pod;     /* the pod, when pg is NULL */
        const char *object;           /* "podgroup ns/name", "pod ns/name", "hypernode name" */
        const char *message;
        const struct kb_hypernode *hn; /* a HyperNode that does not fit (then pg, pod NULL) */
        const char *reason;            /* the event's reason; NULL: "Unsupported" */
};

/* A HyperNode's nodes as the session resolved them (its status.nodeCount,
 * which the daemon writes as Volcano's HyperNode controller does). */
struct kb_hn_status {
        const struct kb_hypernode *hn;
        int64_t node_count;
};

struct kb_queue_status {
        const char *name;
        /* After the session: a Closing queue whose pods all finished (no
         * group waiting for pods) is Closed; state_changed when the session
         * set it (or the queue had none): only then the daemon writes it. */
        enum kb_queue_state state;
        bool state_changed;
        int32_t pending, inqueue, running, unknown, completed;
        struct kb_res allocated;
        struct kb_res deserved;
        struct kb_res capability;
        double share;
        /* Pods waiting in the queue's scheduled gangs (minMember met) for
         * which no room was found: reclaim takes nothing back for them, as
         * only a gang below its minMember reclaims (Volcano master's gang
         * plugin, jobStarvingFn).  With allocated below deserved, this is
         * why the queue stays below its share (issue 23, point 4). */
        int32_t unreclaimed;
};

/* How long parts of a session took, for the daemon's latency histograms
 * (Volcano's action_ and plugin_scheduling_latency_microseconds).  name
 * points at the conf (valid while the conf is), seconds are monotonic. */
struct kb_action_time {
        const char *name;
        double seconds; /* execute */
};
struct kb_plugin_time {
        const char *name;
        double open, close; /* seconds in open (OnSessionOpen), close (OnSessionClose) */
};

/* Everything a session decided.  Strings and pointers stay valid until
 * kb_result_release (they point into the result's own pool or at snapshot
 * objects). */
struct kb_result {
        struct kb_pool pool;
        struct kb_bind *binds;
        size_t nbinds, capbinds;
        struct kb_eviction *evictions;
        size_t nevictions, capevictions;
        struct kb_pg_status *podgroups;
        size_t npodgroups;
        struct kb_queue_status *queues;
        size_t nqueues;
        /* Pipelined tasks at close, in task order (only tasks of statements
         * kept, since a discarded statement undoes its pipelines). */
        struct kb_nomination *nominations;
        size_t nnominations;
        struct kb_warning *warnings; /* in job order, then HyperNodes' */
        size_t nwarnings, capwarnings;
        struct kb_hn_status *hypernodes; /* by name; none without HyperNodes */
        size_t nhypernodes;
        struct kb_pod_status *unschedulable; /* lone pods left Pending, in job order */
        size_t nunschedulable;
        double duration; /* seconds, the session alone */
        /* The last session's result repeated, the session not run
         * (kb_model_repeats): no action or plugin times. */
        bool repeated;
        /* Set when the lists and strings are shared with a kept model
         * (repeat.c), which kb_result_release then leaves to the last
         * holder; NULL: the result's own. */
        struct kb__result_hold *hold;
        /* Tasks placed while a reservation was held for a gang ahead of
         * them (the reservation plugin's count: backfill by declared
         * runtime). */
        uint32_t backfilled;
        /* One entry per action run, in conf order, and per plugin, in tier
         * order (from the result's pool). */
        struct kb_action_time *action_times;
        size_t naction_times;
        struct kb_plugin_time *plugin_times;
        size_t nplugin_times;
};
void kb_result_release(struct kb_result *r);

#endif /* KB_PKG_FRAMEWORK_RESULT_H */
