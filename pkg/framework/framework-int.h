/* What the framework's files share; not for actions or plugins. */
#ifndef KB_PKG_FRAMEWORK_INT_H
#define KB_PKG_FRAMEWORK_INT_H

#include "framework/framework.h"

/* Typed callback storage, one list type per callback type (no casts). */
#define KB_CB_DECL(tag, fn_type)                                                                   \
        struct kb_cbl_##tag {                                                                      \
                struct {                                                                           \
                        fn_type fn;                                                                \
                        void *arg;                                                                 \
                        int tier;                                                                  \
                        unsigned flags;                                                            \
                } * v;                                                                             \
                size_t n, cap;                                                                     \
        }
KB_CB_DECL(job_order, kb_job_order_fn);
KB_CB_DECL(queue_order, kb_queue_order_fn);
KB_CB_DECL(task_order, kb_task_order_fn);
KB_CB_DECL(namespace_order, kb_namespace_order_fn);
KB_CB_DECL(predicate, kb_predicate_fn);
KB_CB_DECL(node_order, kb_node_order_fn);
KB_CB_DECL(batch_node_order, kb_batch_node_order_fn);
KB_CB_DECL(job_bool, kb_job_bool_fn);
KB_CB_DECL(job_vote, kb_job_vote_fn);
KB_CB_DECL(job_valid, kb_job_valid_fn);
KB_CB_DECL(job_event, kb_job_event_fn);
KB_CB_DECL(queue_bool, kb_queue_bool_fn);
KB_CB_DECL(allocatable, kb_allocatable_fn);
KB_CB_DECL(victims, kb_victims_fn);

struct kb_event_cb {
        kb_task_event_fn allocate;
        kb_task_event_fn deallocate;
        void *arg;
};

struct kb_select;

struct kb_session {
        struct kb_pool pool;
        const struct kb_snapshot *snap;
        const struct kb_conf *conf;
        struct kb_result *result;

        /* While plugins open: which plugin and tier registers. */
        const struct kb_plugin_conf *cur_plugin;
        int cur_tier;
        const struct kb_action_conf *cur_action;
        void **plugin_state; /* per plugin, tiers flattened */

        struct kb_node_info *nodes; /* sorted by name */
        size_t nnodes;
        struct kb_task *tasks;
        size_t ntasks;
        struct kb_job **jobs; /* PodGroup jobs first (by name), then lone pods */
        size_t njobs;
        struct kb_queue_info *queues; /* sorted by name */
        size_t nqueues;
        struct kb_res total;

        struct kb_cbl_job_order job_order;
        struct kb_cbl_queue_order queue_order;
        struct kb_cbl_task_order task_order;
        struct kb_cbl_namespace_order namespace_order;
        struct kb_cbl_predicate predicate;
        struct kb_cbl_node_order node_order;
        struct kb_cbl_batch_node_order batch_node_order;
        struct kb_cbl_job_bool job_ready;
        struct kb_cbl_job_vote job_pipelined;
        struct kb_cbl_job_valid job_valid;
        struct kb_cbl_job_vote job_enqueueable;
        struct kb_cbl_job_event job_enqueued;
        struct kb_cbl_job_bool job_starving;
        struct kb_cbl_queue_bool overused;
        struct kb_cbl_allocatable allocatable;
        struct kb_cbl_victims preemptable;
        struct kb_cbl_victims reclaimable;
        struct kb_cbl_allocatable preemptive;
        struct kb_event_cb *events;
        size_t nevents, capevents;

        /* Every change to a node's accounting appends the node's index, so
         * that caches can catch up with what changed since they last looked. */
        uint32_t *changes;
        size_t nchanges, capchanges;
        struct kb_select *select;

        /* Conditions set in this session, per job index. */
        struct kb_session_cond *conds;

        /* Statements, so that ops of ones neither committed nor discarded
         * are freed at close. */
        struct kb_statement *statements;

        /* Interned strings (fit reasons). */
        struct kb_intern *interned;
};

struct kb_session_cond {
        const char *type, *status, *reason, *message;
};

/* Node accounting as Volcano's NodeInfo.AddTask/RemoveTask; both log the
 * change. */
void kb__node_add_task(struct kb_session *s, struct kb_node_info *n, const struct kb_task *t);
void kb__node_remove_task(struct kb_session *s, struct kb_node_info *n, const struct kb_task *t);
/* Moves t to status st, keeping the job's counters and allocated sums. */
void kb__task_set_status(struct kb_task *t, enum kb_task_status st);

void kb__statements_release(struct kb_session *s);
void kb__select_init(struct kb_session *s);
void kb__select_release(struct kb_session *s);

void kb__result_add_bind(struct kb_session *s, const struct kb_task *t);
void kb__result_add_eviction(struct kb_session *s, const struct kb_task *t, const char *action,
                             const char *reason);

#endif /* KB_PKG_FRAMEWORK_INT_H */
