/*
 * The extension points' callback types and their registration rules (part
 * of framework.h, which includes it; not included on its own).  The points
 * themselves are declared in points.h.
 */
#ifndef KB_PKG_FRAMEWORK_CALLBACKS_H
#define KB_PKG_FRAMEWORK_CALLBACKS_H

/* ---- extension points ----------------------------------------------------- */

/* Orders return < 0 when l goes first, > 0 when r goes first, 0 no opinion. */
typedef int (*kb_job_order_fn)(void *arg, const struct kb_job *l, const struct kb_job *r);
typedef int (*kb_queue_order_fn)(void *arg, const struct kb_queue_info *l,
                                 const struct kb_queue_info *r);
/* Which of two victims' queues gives up its tasks first to preemptor's
 * queue (< 0: l), 0 for no opinion (Volcano's VictimQueueOrderFn). */
typedef int (*kb_victim_queue_order_fn)(void *arg, const struct kb_queue_info *l,
                                        const struct kb_queue_info *r,
                                        const struct kb_queue_info *preemptor);
typedef int (*kb_task_order_fn)(void *arg, const struct kb_task *l, const struct kb_task *r);
/* A sub-group of a gang (PodGroup spec.subGroupPolicy) as the sub-group
 * order sees it (Volcano's SubJobInfo): its tasks' highest priority,
 * whether subGroupSize of its tasks are ready, its first match value read
 * as a number (0 when none) and its id ("" for the default sub-group). */
struct kb_subgroup_info {
        const struct kb_job *job;
        int32_t priority;
        bool ready;
        long match_index;
        const char *id;
};
typedef int (*kb_subgroup_order_fn)(void *arg, const struct kb_subgroup_info *l,
                                    const struct kb_subgroup_info *r);
/* NULL when the task may go to the node, else the reason in kube-scheduler's
 * words ("node(s) didn't match Pod's node affinity/selector"), a string that
 * lives for the session (static or from kb_session_intern). */
typedef const char *(*kb_predicate_fn)(void *arg, const struct kb_task *t,
                                       const struct kb_node_info *n);
typedef double (*kb_node_order_fn)(void *arg, const struct kb_task *t,
                                   const struct kb_node_info *n);
/* Adds a score per node into scores[i] for nodes[i]: nodes are the
 * candidates (feasible, in the gradient node selection chose), and scores
 * may be normalised over them, as kube-scheduler's NormalizeScore does. */
typedef void (*kb_batch_node_order_fn)(void *arg, const struct kb_task *t,
                                       struct kb_node_info *const *nodes, size_t n, double *scores);
/* A batch scorer: score() as above; varies() says false when every node
 * would score the same for t (a constant changes no choice), else true
 * with *nodes NULL (scores may differ anywhere) or listing the only nodes
 * (*n indices, the plugin's until its next call) whose scores may differ
 * from the rest, which all score alike.  varies NULL: may differ anywhere. */
struct kb_batch_scorer {
        bool (*varies)(void *arg, const struct kb_task *t, const uint32_t **nodes, size_t *n);
        kb_batch_node_order_fn score;
};

/* Where the nodes a placement filter may pass can be: in the domains of
 * one key that allowed[] marks (and keyless nodes if keyless), and/or
 * among nodes[].  A hint may be wider than the truth, never narrower; its
 * arrays are the plugin's until its next call. */
struct kb_filter_hint {
        const struct kb_domains *domains; /* NULL: no domain hint */
        const uint8_t *allowed;           /* per domain of domains */
        bool keyless;
        const uint32_t *nodes; /* NULL: no node list */
        size_t nnodes;
};
/*
 * A placement filter: a predicate whose verdict depends on the tasks
 * already on nodes — inter-pod affinity, topology spread, host ports —
 * this session's assumed and pipelined tasks included.  check() answers as
 * a predicate does (kb_predicate_fn).  scope() is asked once per node
 * selection: false when the filter passes t everywhere (nothing to check),
 * else true, with a hint of where passing nodes can be (leave *hint zeroed
 * for none).  Such verdicts are never cached: node selection evaluates
 * them on the candidates it considers, in score order (select.c).
 */
struct kb_filter {
        bool (*scope)(void *arg, const struct kb_task *t, struct kb_filter_hint *hint);
        kb_predicate_fn check;
};
typedef bool (*kb_job_bool_fn)(void *arg, const struct kb_job *j);
/* Votes: > 0 permit, 0 abstain, < 0 reject. */
typedef int (*kb_job_vote_fn)(void *arg, const struct kb_job *j);
/* NULL when valid, else the message, and *reason set to the condition
 * reason (KB_WHY_*). */
typedef const char *(*kb_job_valid_fn)(void *arg, const struct kb_job *j, const char **reason);
typedef void (*kb_job_event_fn)(void *arg, const struct kb_job *j);
typedef bool (*kb_queue_bool_fn)(void *arg, const struct kb_queue_info *q);
/* Whether queue q may take t (allocatable, preemptive).  allocatable's
 * answer must depend on q's state and t's request (and its job) alone:
 * allocate takes one refusal for every pending task of the job that asks
 * for the same (actions/tasks.c). */
typedef bool (*kb_allocatable_fn)(void *arg, const struct kb_queue_info *q,
                                  const struct kb_task *t);
/* Writes the permitted subset of candidates into out (at most n) and returns
 * its size; returns -1 for "no opinion". */
typedef int (*kb_victims_fn)(void *arg, const struct kb_task *preemptor,
                             struct kb_task *const *candidates, size_t n, struct kb_task **out);
/* Volcano's victimTasks: the tasks among candidates a plugin wants evicted
 * (rescheduling), written into out; returns their count. */
typedef int (*kb_victim_tasks_fn)(void *arg, struct kb_task *const *candidates, size_t n,
                                  struct kb_task **out);
typedef void (*kb_task_event_fn)(void *arg, const struct kb_task *t);
/* Called after a task is allocated or pipelined (allocate) or given back
 * (deallocate: evicted, or an allocation undone), inside statements and
 * their undo, so shares and counts stay current.  In both, t->node is the
 * node concerned (the one it is leaving, for an undone allocation).
 * Either may be NULL. */
struct kb_event_handler {
        kb_task_event_fn allocate;
        kb_task_event_fn deallocate;
};

/*
 * Purity, for the node-selection caches.  A predicate or node order flagged
 * KB_PURE reads only the task's placement spec — its pod's requests,
 * nodeSelector, node affinity, tolerations and images, which tasks of one
 * placement class share — and the node (for predicates: only its static
 * attributes: labels, taints, conditions, unschedulable, images; for node
 * orders: also its resource accounting).  Such answers are computed once
 * per class and node and kept current as nodes change.  A predicate or
 * node order registered without the flag makes every selection a full
 * scan.  Verdicts and scores that depend on other pods — pod affinity,
 * topology spread, host ports, normalised scores — are never shared: they
 * are placement filters and batch scorers, evaluated per task on the
 * candidates (see struct kb_filter, struct kb_batch_scorer).  Test builds
 * check the contract as they go (select.c): a pure callback that answers
 * differently for two tasks of one class, or a pure predicate whose answer
 * changes with the node's accounting, is reported and aborts the test, and
 * on small clusters every cached answer is compared with a full scan.
 */
#define KB_PURE 1u

/*
 * A preemptable vote registered with KB_VETO protects: the candidates it
 * does not name are never victims, whatever the tiers say (conformance's
 * kube-system and critical pods).  Without it a vote is an opinion that
 * Volcano's tier rule may pass over: a plugin naming no victim hands the
 * question to the next tier.
 */
#define KB_VETO 2u

/* Registration, one function per point (generated from KB_POINTS):
 * kb_on_<name>(s, fn, arg) or, for predicate, node_order and preemptable,
 * kb_on_<name>(s, fn, arg, flags).  A callback registered while a plugin
 * opens belongs to that plugin and its tier, and is dropped when the conf
 * disables the point for the plugin. */
#define KB_ON_PROTO_PLAIN(name, fnt) void kb_on_##name(struct kb_session *s, fnt fn, void *arg);
#define KB_ON_PROTO_FLAGS(name, fnt)                                                               \
        void kb_on_##name(struct kb_session *s, fnt fn, void *arg, unsigned flags);
#define XX(E, name, fnt, reg, flag, ret, disp, params) KB_ON_PROTO_##reg(name, fnt) ret disp params;
KB_POINTS(XX)
#undef XX

#endif /* KB_PKG_FRAMEWORK_CALLBACKS_H */
