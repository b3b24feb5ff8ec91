/*
 * Metrics in the Prometheus text format, with Volcano's metric names under a
 * kbatch_ prefix.  The loop thread updates the numbers and the HTTP thread
 * (http.c) renders them, both under one mutex.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>

#include "scheduler/scheduler-int.h"

/* Volcano's buckets for e2e latency (milliseconds): 5ms doubling.  The
 * action and plugin histograms (microseconds) use the same bounds, as
 * Volcano's do (5us doubling), with two more buckets at the top. */
#define NBUCKETS 12
static const double e2e_buckets[NBUCKETS] = {5,   10,  20,   40,   80,   160,
                                             320, 640, 1280, 2560, 5120, 10240};
/* A job waits for seconds to hours, not milliseconds: 100 ms to an hour
 * (Volcano's own job latency buckets end at 16 s, which says little about
 * a gang that waited for a queue's share). */
static const double job_buckets[NBUCKETS] = {100,   250,   500,   1000,   2500,   5000,
                                             10000, 30000, 60000, 300000, 900000, 3600000};
/* How much later than first promised a reserved gang started (seconds):
 * a second to a day. */
static const double delay_buckets[NBUCKETS] = {1,    5,    15,   60,    300,   900,
                                               1800, 3600, 7200, 21600, 43200, 86400};

/* A waiting gang's first expected start, by PodGroup uid, until it starts
 * (or leaves the sessions). */
struct promise {
        char *uid;
        double first;
        uint64_t seen; /* the session that last listed it */
};

struct hist {
        const double *bounds; /* NBUCKETS upper bounds; NULL: e2e_buckets */
        uint64_t b[NBUCKETS];
        uint64_t count;
        double sum;
};

/* A histogram per label set ("action=\"allocate\""). */
struct labeled_hist {
        char labels[160];
        struct hist h;
};

struct queue_m {
        char name[128];
        double share;
        double pending, inqueue, running, unknown, completed;
        double reservations; /* its waiting gangs with an expected start */
        struct kb_res allocated, deserved, capability; /* for the other resources */
};

struct kb__metrics {
        pthread_mutex_t lock;
        struct hist e2e;     /* milliseconds */
        struct hist session; /* milliseconds, the session alone */
        struct hist job;     /* milliseconds from a PodGroup's creation to its gang scheduled */
        uint64_t attempts_scheduled, attempts_unschedulable, attempts_error;
        uint64_t binds_ok, binds_failed;
        uint64_t events_created, events_updated, events_dropped;
        uint64_t lane_waiting[KB_KUBE_NLANES];
        double window;
        uint64_t unschedulable_jobs, unschedulable_tasks;
        struct queue_m *queues;
        size_t nqueues, capqueues;
        bool leader;
        uint64_t sessions;
        uint64_t model_built, model_reused, model_updated; /* the kept model's counts */
        uint64_t model_repeated;      /* sessions that repeated the last result */
        struct labeled_hist *actions; /* microseconds */
        size_t nactions, capactions;
        struct labeled_hist *plugins; /* microseconds */
        size_t nplugins, capplugins;
        char *conf_skipped;     /* kbatch_conf_skipped lines of the current conf */
        uint64_t backfilled;    /* tasks placed with a reservation ahead */
        struct hist resv_delay; /* seconds */
        struct kb_map promises; /* uid -> struct promise *; the loop thread's alone */
};

static struct hist *labeled(struct labeled_hist **v, size_t *n, size_t *cap, const char *labels)
{
        for (size_t i = 0; i < *n; i++)
                if (!strcmp((*v)[i].labels, labels))
                        return &(*v)[i].h;
        struct labeled_hist e = {0};
        snprintf(e.labels, sizeof(e.labels), "%s", labels);
        KB_PUSH(*v, *n, *cap, e);
        return &(*v)[*n - 1].h;
}

static void hist_add(struct hist *h, double v)
{
        const double *bounds = h->bounds ? h->bounds : e2e_buckets;
        for (int i = 0; i < NBUCKETS; i++)
                if (v <= bounds[i])
                        h->b[i]++;
        h->count++;
        h->sum += v;
}

struct kb__metrics *kb__metrics_new(void)
{
        struct kb__metrics *m = kb_xcalloc(1, sizeof(*m));
        pthread_mutex_init(&m->lock, NULL);
        m->job.bounds = job_buckets;
        m->resv_delay.bounds = delay_buckets;
        kb_map_init(&m->promises, KB_MAP_STR);
        return m;
}

void kb__metrics_free(struct kb__metrics *m)
{
        if (!m)
                return;
        pthread_mutex_destroy(&m->lock);
        for (size_t i = 0; i < m->promises.cap; i++) {
                if (!m->promises.slots[i].hash)
                        continue;
                struct promise *p = (struct promise *)(uintptr_t)m->promises.slots[i].val;
                free(p->uid);
                free(p);
        }
        kb_map_release(&m->promises);
        free(m->queues);
        free(m->actions);
        free(m->plugins);
        free(m->conf_skipped);
        free(m);
}

void kb__metrics_conf(struct kb__metrics *m, const struct kb_conf *conf)
{
        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_adds(&b, "");
        for (size_t i = 0; i < conf->nskipped; i++)
                kb_buf_printf(&b, "kbatch_conf_skipped{kind=\"%s\",name=\"%s\"} 1\n",
                              conf->skipped[i].kind, conf->skipped[i].name);
        pthread_mutex_lock(&m->lock);
        free(m->conf_skipped);
        m->conf_skipped = kb_buf_detach(&b);
        pthread_mutex_unlock(&m->lock);
}

/*
 * The reservation plugin's promises: a waiting gang's first expected start
 * is remembered, and when the gang is scheduled, how much later than that
 * it was goes into the histogram (0 when on time or early).  A gang that
 * leaves the sessions unscheduled (deleted) is forgotten.  Loop thread.
 */
static void promises(struct kb__metrics *m, const struct kb_result *r)
{
        double now = kb_now_wall();
        uint64_t gen = m->sessions + 1;
        for (size_t i = 0; i < r->npodgroups; i++) {
                const struct kb_pg_status *st = &r->podgroups[i];
                const char *uid = st->pg ? st->pg->meta.uid : NULL;
                if (!uid)
                        continue;
                uint64_t *found = kb_map_get_str(&m->promises, uid, strlen(uid));
                struct promise *p = found ? (struct promise *)(uintptr_t)*found : NULL;
                if (!p && st->expected_start > 0) {
                        p = kb_xcalloc(1, sizeof(*p));
                        p->uid = kb_xstrdup(uid);
                        p->first = st->expected_start;
                        *kb_map_put_str(&m->promises, p->uid, strlen(p->uid), NULL) = (uintptr_t)p;
                }
                if (!p)
                        continue;
                p->seen = gen;
                if (kb_streq(st->cond_type, "Scheduled") && kb_streq(st->cond_status, "True")) {
                        hist_add(&m->resv_delay, now > p->first ? now - p->first : 0);
                        kb_map_del_str(&m->promises, p->uid, strlen(p->uid));
                        free(p->uid);
                        free(p);
                }
        }
        /* Those no session listed: found first, forgotten after (the map
         * takes no deletes while it is walked). */
        struct promise **gone = kb_xmalloc((kb_map_count(&m->promises) + 1) * sizeof(*gone));
        size_t ngone = 0;
        for (size_t i = 0; i < m->promises.cap; i++) {
                struct promise *p = (struct promise *)(uintptr_t)m->promises.slots[i].val;
                if (m->promises.slots[i].hash && p->seen != gen)
                        gone[ngone++] = p;
        }
        for (size_t i = 0; i < ngone; i++) {
                kb_map_del_str(&m->promises, gone[i]->uid, strlen(gone[i]->uid));
                free(gone[i]->uid);
                free(gone[i]);
        }
        free(gone);
}

void kb__metrics_session(struct kb_sched *s, const struct kb_result *r, double e2e)
{
        struct kb__metrics *m = s->metrics;
        uint64_t ujobs = 0, utasks = 0;
        for (size_t i = 0; i < r->npodgroups; i++) {
                const struct kb_pg_status *st = &r->podgroups[i];
                if (st->cond_type && !strcmp(st->cond_type, "Unschedulable") &&
                    kb_streq(st->cond_status, "True")) {
                        ujobs++;
                        utasks += (uint64_t)st->pending;
                }
        }
        /* The worker is done with the model: its counts are still. */
        uint64_t built = 0, reused = 0, updated = 0, repeated = 0;
        if (s->model) {
                kb_model_counts(s->model, &built, &reused);
                updated = kb_model_updates(s->model);
                repeated = kb_model_repeats(s->model);
        }
        pthread_mutex_lock(&m->lock);
        promises(m, r);
        m->backfilled += r->backfilled;
        m->sessions++;
        m->model_built = built;
        m->model_reused = reused;
        m->model_updated = updated;
        m->model_repeated = repeated;
        hist_add(&m->e2e, e2e * 1000);
        hist_add(&m->session, r->duration * 1000);
        char labels[160];
        for (size_t i = 0; i < r->naction_times; i++) {
                snprintf(labels, sizeof(labels), "action=\"%s\"", r->action_times[i].name);
                hist_add(labeled(&m->actions, &m->nactions, &m->capactions, labels),
                         r->action_times[i].seconds * 1e6);
        }
        for (size_t i = 0; i < r->nplugin_times; i++) {
                const struct kb_plugin_time *pt = &r->plugin_times[i];
                snprintf(labels, sizeof(labels), "plugin=\"%s\",OnSession=\"OnSessionOpen\"",
                         pt->name);
                hist_add(labeled(&m->plugins, &m->nplugins, &m->capplugins, labels),
                         pt->open * 1e6);
                snprintf(labels, sizeof(labels), "plugin=\"%s\",OnSession=\"OnSessionClose\"",
                         pt->name);
                hist_add(labeled(&m->plugins, &m->nplugins, &m->capplugins, labels),
                         pt->close * 1e6);
        }
        m->attempts_scheduled += r->nbinds;
        m->attempts_unschedulable += utasks;
        m->unschedulable_jobs = ujobs;
        m->unschedulable_tasks = utasks;
        m->nqueues = 0;
        for (size_t i = 0; i < r->nqueues; i++) {
                const struct kb_queue_status *q = &r->queues[i];
                struct queue_m qm = {0};
                snprintf(qm.name, sizeof(qm.name), "%s", q->name);
                qm.share = q->share;
                qm.pending = q->pending;
                qm.inqueue = q->inqueue;
                qm.running = q->running;
                qm.unknown = q->unknown;
                qm.completed = q->completed;
                qm.allocated = q->allocated;
                qm.deserved = q->deserved;
                qm.capability = q->capability;
                KB_PUSH(m->queues, m->nqueues, m->capqueues, qm);
        }
        for (size_t i = 0; i < r->npodgroups; i++) {
                const struct kb_pg_status *st = &r->podgroups[i];
                if (st->expected_start <= 0 || !st->pg)
                        continue;
                for (size_t q = 0; q < m->nqueues; q++)
                        if (kb_streq(m->queues[q].name, st->pg->queue)) {
                                m->queues[q].reservations++;
                                break;
                        }
        }
        pthread_mutex_unlock(&m->lock);
}

void kb__metrics_job_scheduled(struct kb_sched *s, double creation)
{
        if (creation <= 0)
                return;
        double ms = (kb_now_wall() - creation) * 1000;
        pthread_mutex_lock(&s->metrics->lock);
        hist_add(&s->metrics->job, ms < 0 ? 0 : ms);
        pthread_mutex_unlock(&s->metrics->lock);
}

void kb__metrics_bind(struct kb_sched *s, bool ok)
{
        pthread_mutex_lock(&s->metrics->lock);
        if (ok)
                s->metrics->binds_ok++;
        else
                s->metrics->binds_failed++;
        pthread_mutex_unlock(&s->metrics->lock);
}

void kb__metrics_event(struct kb_sched *s, const char *result)
{
        struct kb__metrics *m = s->metrics;
        pthread_mutex_lock(&m->lock);
        if (!strcmp(result, "created"))
                m->events_created++;
        else if (!strcmp(result, "updated"))
                m->events_updated++;
        else
                m->events_dropped++;
        pthread_mutex_unlock(&m->lock);
}

void kb__metrics_lanes(struct kb_sched *s)
{
        struct kb__metrics *m = s->metrics;
        pthread_mutex_lock(&m->lock);
        for (int i = 0; i < KB_KUBE_NLANES; i++)
                m->lane_waiting[i] = kb_kube_waiting(s->kube, (enum kb_kube_lane)i);
        m->window = kb_kube_window(s->kube);
        pthread_mutex_unlock(&m->lock);
}

void kb__metrics_set_leader(struct kb_sched *s, bool leader)
{
        pthread_mutex_lock(&s->metrics->lock);
        s->metrics->leader = leader;
        pthread_mutex_unlock(&s->metrics->lock);
}

/* One histogram's series; labels "" or "k=\"v\",..." */
static void hist_series(struct kb_buf *b, const char *name, const char *labels,
                        const struct hist *h)
{
        const char *sep = *labels ? "," : "";
        const double *bounds = h->bounds ? h->bounds : e2e_buckets;
        for (int i = 0; i < NBUCKETS; i++)
                kb_buf_printf(b, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep, bounds[i],
                              (unsigned long long)h->b[i]);
        kb_buf_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
                      (unsigned long long)h->count);
        if (*labels)
                kb_buf_printf(b, "%s_sum{%s} %g\n%s_count{%s} %llu\n", name, labels, h->sum, name,
                              labels, (unsigned long long)h->count);
        else
                kb_buf_printf(b, "%s_sum %g\n%s_count %llu\n", name, h->sum, name,
                              (unsigned long long)h->count);
}

static void hist_render(struct kb_buf *b, const char *name, const char *help, const struct hist *h)
{
        kb_buf_printf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
        hist_series(b, name, "", h);
}

static void labeled_render(struct kb_buf *b, const char *name, const char *help,
                           const struct labeled_hist *v, size_t n)
{
        kb_buf_printf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
        for (size_t i = 0; i < n; i++)
                hist_series(b, name, v[i].labels, &v[i].h);
}

static void api_stat(void *arg, const char *verb, long code, uint64_t n)
{
        kb_buf_printf(arg, "kbatch_api_requests_total{verb=\"%s\",code=\"%ld\"} %llu\n", verb, code,
                      (unsigned long long)n);
}

/* The other resources (GPUs and any extended resource), as Volcano's
 * queue_*_scalar_resources: in milli-units for counted resources (a GPU is
 * 1000), in bytes for byte-sized ones; a resource at 0 or unlimited is no
 * series. */
static void scalar_render(struct kb_buf *b, const struct kb__metrics *m)
{
        static const struct {
                const char *name, *help;
                size_t off;
        } sm[] = {
            {"kbatch_queue_allocated_scalar_resources",
             "Allocated extended resources of the queue (milli-units; bytes for byte-sized)",
             offsetof(struct queue_m, allocated)},
            {"kbatch_queue_deserved_scalar_resources",
             "Deserved extended resources of the queue (milli-units; bytes for byte-sized)",
             offsetof(struct queue_m, deserved)},
            {"kbatch_queue_capacity_scalar_resources",
             "Capability of the queue in extended resources (milli-units; bytes for byte-sized)",
             offsetof(struct queue_m, capability)},
        };
        int nres = kb_res_count();
        for (size_t k = 0; k < KB_ARRAY_SIZE(sm); k++) {
                kb_buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n", sm[k].name, sm[k].help,
                              sm[k].name);
                for (size_t i = 0; i < m->nqueues; i++) {
                        const struct kb_res *r =
                            (const struct kb_res *)((const char *)&m->queues[i] + sm[k].off);
                        for (int j = 0; j < nres; j++) {
                                if (j == KB_RES_CPU || j == KB_RES_MEMORY || j == KB_RES_PODS ||
                                    !r->q[j] || r->q[j] == KB_RES_UNLIMITED)
                                        continue;
                                kb_buf_printf(b, "%s{queue_name=\"%s\",resource=\"%s\"} %lld\n",
                                              sm[k].name, m->queues[i].name, kb_res_name(j),
                                              (long long)r->q[j]);
                        }
                }
        }
}

char *kb__metrics_render(struct kb_sched *s)
{
        struct kb__metrics *m = s->metrics;
        struct kb_buf b;
        kb_buf_init(&b);
        pthread_mutex_lock(&m->lock);
        hist_render(&b, "kbatch_e2e_scheduling_latency_milliseconds",
                    "E2e scheduling latency in milliseconds (snapshot, session and hand-off)",
                    &m->e2e);
        hist_render(&b, "kbatch_e2e_job_scheduling_latency_milliseconds",
                    "Time from a PodGroup's creation to the session that scheduled its gang, "
                    "in milliseconds",
                    &m->job);
        hist_render(&b, "kbatch_session_latency_milliseconds",
                    "Latency of the session alone (open, actions, close) in milliseconds",
                    &m->session);
        labeled_render(&b, "kbatch_action_scheduling_latency_microseconds",
                       "Action scheduling latency in microseconds", m->actions, m->nactions);
        labeled_render(&b, "kbatch_plugin_scheduling_latency_microseconds",
                       "Plugin scheduling latency in microseconds (session open and close)",
                       m->plugins, m->nplugins);
        kb_buf_adds(&b, "# HELP kbatch_schedule_attempts_total Number of attempts to schedule "
                        "pods, by the result\n# TYPE kbatch_schedule_attempts_total counter\n");
        kb_buf_printf(&b, "kbatch_schedule_attempts_total{result=\"scheduled\"} %llu\n",
                      (unsigned long long)m->attempts_scheduled);
        kb_buf_printf(&b, "kbatch_schedule_attempts_total{result=\"unschedulable\"} %llu\n",
                      (unsigned long long)m->attempts_unschedulable);
        kb_buf_printf(&b, "kbatch_schedule_attempts_total{result=\"error\"} %llu\n",
                      (unsigned long long)m->binds_failed);
        kb_buf_printf(&b,
                      "# HELP kbatch_unschedule_task_count Number of tasks that could not be "
                      "scheduled\n# TYPE kbatch_unschedule_task_count gauge\n"
                      "kbatch_unschedule_task_count %llu\n"
                      "# HELP kbatch_unschedule_job_count Number of jobs that could not be "
                      "scheduled\n# TYPE kbatch_unschedule_job_count gauge\n"
                      "kbatch_unschedule_job_count %llu\n",
                      (unsigned long long)m->unschedulable_tasks,
                      (unsigned long long)m->unschedulable_jobs);
        kb_buf_printf(&b,
                      "# HELP kbatch_pod_bind_total Binds sent, by the result\n# TYPE "
                      "kbatch_pod_bind_total counter\nkbatch_pod_bind_total{result=\"ok\"} "
                      "%llu\nkbatch_pod_bind_total{result=\"failed\"} %llu\n",
                      (unsigned long long)m->binds_ok, (unsigned long long)m->binds_failed);
        kb_buf_printf(&b,
                      "# HELP kbatch_session_model_total Sessions by how their model of the "
                      "cluster was made: built whole, used again unchanged, or updated where "
                      "objects changed\n# TYPE kbatch_session_model_total counter\n"
                      "kbatch_session_model_total{how=\"built\"} %llu\n"
                      "kbatch_session_model_total{how=\"reused\"} %llu\n"
                      "kbatch_session_model_total{how=\"updated\"} %llu\n",
                      (unsigned long long)m->model_built, (unsigned long long)m->model_reused,
                      (unsigned long long)m->model_updated);
        kb_buf_printf(&b,
                      "# HELP kbatch_session_repeated_total Sessions that repeated the last "
                      "session's result instead of running: nothing changed, the same conf, no "
                      "clock read (counted among the reused too)\n"
                      "# TYPE kbatch_session_repeated_total counter\n"
                      "kbatch_session_repeated_total %llu\n",
                      (unsigned long long)m->model_repeated);
        kb_buf_printf(&b,
                      "# HELP kbatch_events_total Events by what became of them (dropped: "
                      "never sent, the recorder gave way)\n# TYPE kbatch_events_total counter\n"
                      "kbatch_events_total{result=\"created\"} %llu\n"
                      "kbatch_events_total{result=\"updated\"} %llu\n"
                      "kbatch_events_total{result=\"dropped\"} %llu\n",
                      (unsigned long long)m->events_created, (unsigned long long)m->events_updated,
                      (unsigned long long)m->events_dropped);
        kb_buf_adds(&b, "# HELP kbatch_api_requests_waiting API requests waiting in the "
                        "client, by lane\n# TYPE kbatch_api_requests_waiting gauge\n");
        for (int i = 0; i < KB_KUBE_NLANES; i++)
                kb_buf_printf(&b, "kbatch_api_requests_waiting{lane=\"%s\"} %llu\n",
                              kb_kube_lane_name((enum kb_kube_lane)i),
                              (unsigned long long)m->lane_waiting[i]);
        kb_buf_printf(
            &b,
            "# HELP kbatch_api_window Requests the client keeps on the wire at most "
            "now (halved by 429s)\n# TYPE kbatch_api_window gauge\nkbatch_api_window %.0f\n",
            m->window);
        /* cpu and memory of allocated, deserved and capability; an
         * unlimited capability is no series (Volcano reports none either for
         * a queue without one). */
        static const struct {
                const char *name, *help;
                size_t off;
                int res;
        } qr[] = {
            {"kbatch_queue_allocated_milli_cpu", "Allocated CPU of the queue in millicores",
             offsetof(struct queue_m, allocated), KB_RES_CPU},
            {"kbatch_queue_allocated_memory_bytes", "Allocated memory of the queue in bytes",
             offsetof(struct queue_m, allocated), KB_RES_MEMORY},
            {"kbatch_queue_deserved_milli_cpu", "Deserved CPU of the queue in millicores",
             offsetof(struct queue_m, deserved), KB_RES_CPU},
            {"kbatch_queue_deserved_memory_bytes", "Deserved memory of the queue in bytes",
             offsetof(struct queue_m, deserved), KB_RES_MEMORY},
            {"kbatch_queue_capacity_milli_cpu", "Capability of the queue in CPU millicores",
             offsetof(struct queue_m, capability), KB_RES_CPU},
            {"kbatch_queue_capacity_memory_bytes", "Capability of the queue in memory bytes",
             offsetof(struct queue_m, capability), KB_RES_MEMORY},
        };
        for (size_t k = 0; k < KB_ARRAY_SIZE(qr); k++) {
                kb_buf_printf(&b, "# HELP %s %s\n# TYPE %s gauge\n", qr[k].name, qr[k].help,
                              qr[k].name);
                for (size_t i = 0; i < m->nqueues; i++) {
                        const struct kb_res *r =
                            (const struct kb_res *)((const char *)&m->queues[i] + qr[k].off);
                        if (r->q[qr[k].res] != KB_RES_UNLIMITED)
                                kb_buf_printf(&b, "%s{queue_name=\"%s\"} %lld\n", qr[k].name,
                                              m->queues[i].name, (long long)r->q[qr[k].res]);
                }
        }
        static const struct {
                const char *name, *help;
                size_t off;
        } qm[] = {
            {"kbatch_queue_share", "Share of the queue (allocated over deserved)",
             offsetof(struct queue_m, share)},
            {"kbatch_queue_pod_group_pending_count", "PodGroups of the queue in phase Pending",
             offsetof(struct queue_m, pending)},
            {"kbatch_queue_pod_group_inqueue_count", "PodGroups of the queue in phase Inqueue",
             offsetof(struct queue_m, inqueue)},
            {"kbatch_queue_pod_group_running_count", "PodGroups of the queue in phase Running",
             offsetof(struct queue_m, running)},
            {"kbatch_queue_pod_group_unknown_count", "PodGroups of the queue in phase Unknown",
             offsetof(struct queue_m, unknown)},
            {"kbatch_queue_pod_group_completed_count", "PodGroups of the queue in phase Completed",
             offsetof(struct queue_m, completed)},
            {"kbatch_reservations",
             "Waiting gangs of the queue holding a reservation (the reservation plugin)",
             offsetof(struct queue_m, reservations)},
        };
        for (size_t k = 0; k < KB_ARRAY_SIZE(qm); k++) {
                kb_buf_printf(&b, "# HELP %s %s\n# TYPE %s gauge\n", qm[k].name, qm[k].help,
                              qm[k].name);
                for (size_t i = 0; i < m->nqueues; i++)
                        kb_buf_printf(&b, "%s{queue_name=\"%s\"} %.17g\n", qm[k].name,
                                      m->queues[i].name,
                                      *(const double *)((const char *)&m->queues[i] + qm[k].off));
        }
        scalar_render(&b, m);
        kb_buf_printf(&b,
                      "# HELP kbatch_backfilled_tasks_total Tasks placed while a reservation "
                      "was held for a gang ahead of them\n# TYPE kbatch_backfilled_tasks_total "
                      "counter\nkbatch_backfilled_tasks_total %llu\n",
                      (unsigned long long)m->backfilled);
        hist_render(&b, "kbatch_reservation_delay_seconds",
                    "How much later than first promised a reserved gang started, in seconds",
                    &m->resv_delay);
        kb_buf_printf(&b,
                      "# HELP kbatch_leader Whether this instance leads (1) or stands by (0)\n"
                      "# TYPE kbatch_leader gauge\nkbatch_leader %d\n"
                      "# HELP kbatch_sessions_total Sessions run\n# TYPE kbatch_sessions_total "
                      "counter\nkbatch_sessions_total %llu\n",
                      m->leader ? 1 : 0, (unsigned long long)m->sessions);
        kb_buf_adds(&b, "# HELP kbatch_conf_skipped What the scheduler conf names that kbatch "
                        "reads but does not act on (1 each)\n# TYPE kbatch_conf_skipped gauge\n");
        kb_buf_adds(&b, m->conf_skipped ? m->conf_skipped : "");
        pthread_mutex_unlock(&m->lock);
        kb_buf_adds(&b, "# HELP kbatch_api_requests_total API requests by verb and HTTP code "
                        "(0: no answer)\n# TYPE kbatch_api_requests_total counter\n");
        struct kb_kube *k = s->kube;
        if (k)
                kb_kube_stats(k, api_stat, &b);
        return kb_buf_detach(&b);
}
