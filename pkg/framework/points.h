/*
 * The framework's extension points, declared once (part of framework.h, which
 * includes it; not included on its own).
 */
#ifndef KB_PKG_FRAMEWORK_POINTS_H
#define KB_PKG_FRAMEWORK_POINTS_H

/* ---- extension points, declared once ----------------------------------- */

/*
 * Every extension point is one row here; the row generates the point's enum
 * value (KB_POINT_<ENUM>), its conf flag, its storage (a member of union
 * kb_cb_fn and a list in the session), its registration function
 * kb_on_<name>() and its dispatcher's prototype.  The dispatcher itself, and
 * the rule by which it combines the plugins' answers across tiers, is
 * written once in points.c.  Columns:
 *
 *   ENUM, name   KB_POINT_<ENUM>, kb_on_<name>()
 *   fn_type      the callback's type (typedefs below)
 *   reg          PLAIN: kb_on_<name>(s, fn, arg); FLAGS: (s, fn, arg, flags)
 *                for points whose callbacks take flags (KB_PURE, KB_VETO)
 *   flag         Volcano's conf flag governing the point for a plugin
 *                ("enableX"; "enabledX" is accepted too), NULL: always on
 *   ret, dispatcher, params   the dispatcher's prototype
 *
 * Adding a point: one row, one dispatcher in points.c with its rule above it.
 */
#define KB_POINTS(XX)                                                                              \
        /* Orders: the first non-zero answer in tier and plugin order. */                          \
        XX(JOB_ORDER, job_order, kb_job_order_fn, PLAIN, "enableJobOrder", int, kb_job_order,      \
           (struct kb_session * s, const struct kb_job *l, const struct kb_job *r))                \
        XX(QUEUE_ORDER, queue_order, kb_queue_order_fn, PLAIN, "enableQueueOrder", int,            \
           kb_queue_order,                                                                         \
           (struct kb_session * s, const struct kb_queue_info *l, const struct kb_queue_info *r))  \
        XX(VICTIM_QUEUE_ORDER, victim_queue_order, kb_victim_queue_order_fn, PLAIN,                \
           "enableQueueOrder", int, kb_victim_queue_order,                                         \
           (struct kb_session * s, const struct kb_queue_info *l, const struct kb_queue_info *r,   \
            const struct kb_queue_info *preemptor))                                                \
        XX(TASK_ORDER, task_order, kb_task_order_fn, PLAIN, "enableTaskOrder", int, kb_task_order, \
           (struct kb_session * s, const struct kb_task *l, const struct kb_task *r))              \
        XX(SUBGROUP_ORDER, subgroup_order, kb_subgroup_order_fn, PLAIN, NULL, int,                 \
           kb_subgroup_order,                                                                      \
           (struct kb_session * s, const struct kb_subgroup_info *l,                               \
            const struct kb_subgroup_info *r))                                                     \
        /* All must pass, then every filter; the first failure is the reason. */                   \
        XX(PREDICATE, predicate, kb_predicate_fn, FLAGS, "enablePredicate", const char *,          \
           kb_predicate,                                                                           \
           (struct kb_session * s, const struct kb_task *t, const struct kb_node_info *n))         \
        /* Placement filters: all must pass; the first failure is the reason. */                   \
        XX(FILTER, filter, struct kb_filter, PLAIN, "enablePredicate", const char *,               \
           kb_filter_check,                                                                        \
           (struct kb_session * s, const struct kb_task *t, const struct kb_node_info *n))         \
        /* Scores add up. */                                                                       \
        XX(NODE_ORDER, node_order, kb_node_order_fn, FLAGS, "enableNodeOrder", double,             \
           kb_node_order,                                                                          \
           (struct kb_session * s, const struct kb_task *t, const struct kb_node_info *n))         \
        XX(BATCH_NODE_ORDER, batch_node_order, struct kb_batch_scorer, PLAIN, "enableNodeOrder",   \
           void, kb_batch_node_order,                                                              \
           (struct kb_session * s, const struct kb_task *t, struct kb_node_info *const *nodes,     \
            size_t n, double *scores))                                                             \
        /* All must be true. */                                                                    \
        XX(JOB_READY, job_ready, kb_job_bool_fn, PLAIN, "enableJobReady", bool, kb_job_ready,      \
           (struct kb_session * s, const struct kb_job *j))                                        \
        /* Votes by tier. */                                                                       \
        XX(JOB_PIPELINED, job_pipelined, kb_job_vote_fn, PLAIN, "enableJobPipelined", bool,        \
           kb_job_pipelined, (struct kb_session * s, const struct kb_job *j))                      \
        /* The first reason given. */                                                              \
        XX(JOB_VALID, job_valid, kb_job_valid_fn, PLAIN, NULL, const char *, kb_job_valid,         \
           (struct kb_session * s, const struct kb_job *j, const char **reason))                   \
        /* Votes by tier. */                                                                       \
        XX(JOB_ENQUEUEABLE, job_enqueueable, kb_job_vote_fn, PLAIN, "enableJobEnqueued", bool,     \
           kb_job_enqueueable, (struct kb_session * s, const struct kb_job *j))                    \
        /* Everyone is told, once every vote admitted the job. */                                  \
        XX(JOB_ENQUEUED, job_enqueued, kb_job_event_fn, PLAIN, "enableJobEnqueued", void,          \
           kb_job_enqueued, (struct kb_session * s, const struct kb_job *j))                       \
        /* Everyone is told: allocate could not place the job (its turn left it neither ready      \
         * nor pipelined), in the order it met such jobs. */                                       \
        XX(JOB_UNPLACED, job_unplaced, kb_job_event_fn, PLAIN, NULL, void, kb_job_unplaced,        \
           (struct kb_session * s, const struct kb_job *j))                                        \
        /* All true, and someone answered. */                                                      \
        XX(JOB_STARVING, job_starving, kb_job_bool_fn, PLAIN, "enableJobStarving", bool,           \
           kb_job_starving, (struct kb_session * s, const struct kb_job *j))                       \
        /* Any true. */                                                                            \
        XX(OVERUSED, overused, kb_queue_bool_fn, PLAIN, "enableOverused", bool, kb_overused,       \
           (struct kb_session * s, const struct kb_queue_info *q))                                 \
        /* All must be true. */                                                                    \
        XX(ALLOCATABLE, allocatable, kb_allocatable_fn, PLAIN, "enableAllocatable", bool,          \
           kb_allocatable,                                                                         \
           (struct kb_session * s, const struct kb_queue_info *q, const struct kb_task *t))        \
        XX(PREEMPTIVE, preemptive, kb_allocatable_fn, PLAIN, "enablePreemptive", bool,             \
           kb_preemptive,                                                                          \
           (struct kb_session * s, const struct kb_queue_info *q, const struct kb_task *t))        \
        /* Victims: see points.c (preemptable by tiers, reclaimable all). */                       \
        XX(PREEMPTABLE, preemptable, kb_victims_fn, FLAGS, "enablePreemptable", size_t,            \
           kb_preemptable,                                                                         \
           (struct kb_session * s, const struct kb_task *preemptor,                                \
            struct kb_task *const *candidates, size_t n, struct kb_task **out))                    \
        XX(RECLAIMABLE, reclaimable, kb_victims_fn, PLAIN, "enableReclaimable", size_t,            \
           kb_reclaimable,                                                                         \
           (struct kb_session * s, const struct kb_task *preemptor,                                \
            struct kb_task *const *candidates, size_t n, struct kb_task **out))                    \
        /* Victims: union within a tier; the first tier that names any. */                         \
        XX(VICTIM_TASKS, victim_tasks, kb_victim_tasks_fn, PLAIN, "enableVictim", size_t,          \
           kb_victim_tasks,                                                                        \
           (struct kb_session * s, struct kb_task *const *candidates, size_t n,                    \
            struct kb_task **out))                                                                 \
        /* Every handler, in registration order. */                                                \
        XX(EVENT, event, struct kb_event_handler, PLAIN, NULL, void, kb_event,                     \
           (struct kb_session * s, const struct kb_task *t, bool allocated))

enum kb_point {
#define XX(E, name, fnt, reg, flag, ret, disp, params) KB_POINT_##E,
        KB_POINTS(XX)
#undef XX
            KB_NPOINTS
};

#endif /* KB_PKG_FRAMEWORK_POINTS_H */
