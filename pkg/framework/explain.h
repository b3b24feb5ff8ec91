/*
 * Why a job waits: the conditions a session reports, their reasons, and
 * what actions and plugins record for them (part of framework.h, which
 * includes it; not included on its own).
 */
#ifndef KB_PKG_FRAMEWORK_EXPLAIN_H
#define KB_PKG_FRAMEWORK_EXPLAIN_H

/* Sets the PodGroup condition this session reports for j (Volcano's
 * UpdatePodGroupCondition): type "Unschedulable" or "Scheduled", status
 * "True"/"False".  Strings are copied into the session pool. */
void kb_job_set_condition(struct kb_session *s, struct kb_job *j, const char *type,
                          const char *status, const char *reason, const char *message);
/*
 * PodGroup condition reasons (README, "Why is my job pending"): Volcano's
 * where it has one, kbatch's where it does not.
 */
#define KB_WHY_RESOURCES        "NotEnoughResources"  /* Volcano: placement, cluster */
#define KB_WHY_TASKS            "NotEnoughTasks"      /* Volcano: gang size */
#define KB_WHY_ROLE_TASKS       "NotEnoughPodsOfTask" /* Volcano: a role's size */
#define KB_WHY_PODGROUP_MISSING "PodGroupNotFound"
#define KB_WHY_PODGROUP_WAIT    "WaitingForPodGroup"     /* kbatch makes it for the workload */
#define KB_WHY_GROUP_ANNOTATION "InvalidGroupAnnotation" /* so it cannot make one */
#define KB_WHY_QUEUE_MISSING    "QueueNotFound"
#define KB_WHY_OTHER_SCHEDULER  "OtherScheduler" /* its pods ask for another scheduler */
#define KB_WHY_QUEUE_CLOSED     "QueueClosed"
#define KB_WHY_QUEUE_INVALID    "QueueInvalid" /* a broken queue hierarchy */
#define KB_WHY_QUOTA            "QueueQuotaExceeded"
#define KB_WHY_NEVER            "NeverFits"             /* not even with the cluster empty */
#define KB_WHY_EVICTING         "WaitingForEvictions"   /* evicting for it now */
#define KB_WHY_BACKOFF          "InqueueTimeout"        /* sent back to Pending, waiting to retry */
#define KB_WHY_PIPELINED        "WaitingForTermination" /* pipelined onto terminating pods */

/*
 * The Inqueue timeout (inqueue.c): the condition that times it, the reason
 * of its False status; the PodGroup annotation that overrides the enqueue
 * action's inqueueTimeout is api.h's KB_INQUEUE_TIMEOUT_ANNOTATION.
 */
#define KB_INQUEUE_CONDITION      "Inqueue"
#define KB_INQUEUE_TIMEOUT_REASON "InqueueTimeout"
/* The enqueue action's inqueueTimeout and inqueueBackoff in seconds
 * (defaults 10m and 1m), the timeout as pg's annotation sets it. */
void kb_inqueue_limits(const struct kb_conf *conf, const struct kb_podgroup *pg, double *timeout,
                       double *backoff);
/* When pg's Inqueue state next changes by the clock alone (its timeout or
 * its backoff ends), wall-clock seconds; 0 when nothing is timed.  For
 * kbatch-sim's clock. */
double kb_inqueue_deadline(const struct kb_conf *conf, const struct kb_podgroup *pg);
/* The enqueue action's check of inqueueTimeout and inqueueBackoff. */
int kb_inqueue_check(const struct kb_value *args, char *err, size_t errlen);
/*
 * The sla plugin's waiting time (waiting.c): the PodGroup annotations, in
 * the order they are read, and the plugin's argument.
 */
#define KB_SLA_ANNOTATION       "volcano.sh/sla-waiting-time"
#define KB_SLA_ANNOTATION_PLAIN "sla-waiting-time"
#define KB_SLA_ARGUMENT         "sla-waiting-time"
/* A waiting time: a Go duration above zero, in seconds into *secs; 0, or
 * KB_EBADCONF with why saying what is wrong. */
int kb_sla_parse(const char *text, double *secs, char *why, size_t whylen);
/* pg's waiting time into *secs: its annotation, else the sla plugin's
 * arguments args; false when it has none.  An annotation that is no
 * waiting time is skipped (Volcano ignores it): its key into *bad_key
 * (else NULL), why into why.  Any thread. */
bool kb_sla_waiting(const struct kb_value *args, const struct kb_podgroup *pg, double *secs,
                    const char **bad_key, char *why, size_t whylen);
/* When a Pending pg's waiting time runs out (creation + waiting time,
 * wall-clock seconds), for kbatch-sim's clock; 0 when the conf has no sla
 * plugin, pg no waiting time, or pg is not Pending. */
double kb_sla_deadline(const struct kb_conf *conf, const struct kb_podgroup *pg);
/* pg's condition of type, or NULL. */
const struct kb_condition *kb_pg_condition(const struct kb_podgroup *pg, const char *type);

/* Records why j stays Pending (a plugin rejecting it at enqueue, say) and
 * the condition reason (KB_WHY_*); the first of a session is kept.  Shown in
 * its PodGroup condition. */
void kb_job_explain(struct kb_session *s, const struct kb_job *j, const char *reason,
                    const char *why);
/* Records why j's queue refuses it a task (a quota plugin, with the
 * numbers); the first of a session is kept. */
void kb_job_explain_quota(struct kb_session *s, const struct kb_job *j, const char *reason,
                          const char *why);
/* A warning about a field or annotation of j a plugin could not read (no
 * reason for j to wait): the daemon makes it a Warning event with reason
 * (InvalidAnnotation, InvalidRuntime, ...) on its PodGroup (on its pod
 * when it has none), kbatch-sim prints it.  msg is copied.  Call it once
 * per job and session. */
void kb_job_warn(struct kb_session *s, const struct kb_job *j, const char *reason, const char *msg);
/* Adds n to the session result's backfilled count (the reservation
 * plugin, at close). */
void kb_session_note_backfilled(struct kb_session *s, uint32_t n);
/* Records that t fit no node, why (kube-scheduler's summary): on t, and
 * on its job when it is the job's first (gang.c's condition message says
 * it). */
void kb_task_fit_failed(struct kb_task *t, const char *why);
/* What j needs beyond what it held when the session opened: the requests
 * of its tasks not yet on nodes (Pending, or placed in this session:
 * Allocated, Pipelined), as many as minMember lacks (all of them when it
 * lacks none), in *need; the total of what minMember tasks ask (finished
 * ones ask nothing) in *gang; and what this session placed of j so far in
 * *own. */
void kb_job_need(const struct kb_job *j, struct kb_res *need, struct kb_res *gang,
                 struct kb_res *own);

#endif /* KB_PKG_FRAMEWORK_EXPLAIN_H */
