/*
 * The daemon's loop: reflectors feed the cache; a timer every period takes a
 * snapshot and runs a session on a worker thread; the after-callback hands
 * the result to the dispatcher.  Signals: SIGTERM and SIGINT stop gracefully,
 * SIGUSR1 dumps the cache (stop.c stops the daemon and takes the signals).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "scheduler/scheduler-int.h"

static void conf_unref(struct kb__conf_ref *c)
{
        if (c && --c->refs == 0) {
                kb_conf_release(&c->conf);
                free(c);
        }
}

/* ---- conf reload --------------------------------------------------------------- */

static bool same_stat(const struct stat *a, const struct stat *b)
{
        return a->st_ino == b->st_ino && a->st_size == b->st_size &&
               a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Says once, at startup and at each reload, what the conf names that
 * kbatch skips, and lists it on /metrics. */
static void conf_announce(struct kb_sched *s)
{
        const struct kb_conf *conf = &s->conf->conf;
        if (conf->nskipped) {
                char list[1024];
                kb_conf_skipped_summary(conf, list, sizeof(list));
                KB_WARN("scheduler conf: kbatch skips %zu item(s) it does not support: %s",
                        conf->nskipped, list);
        }
        kb__metrics_conf(s->metrics, conf);
}

/* Polls the conf file (a ConfigMap volume swaps a symlink, which inotify on
 * the file would miss).  A bad file keeps the last good conf. */
static void conf_check(struct kb_sched *s)
{
        struct stat st;
        if (!s->o->conf_path || stat(s->o->conf_path, &st) != 0 || same_stat(&st, &s->conf_st))
                return;
        s->conf_st = st;
        struct kb__conf_ref *c = kb_xcalloc(1, sizeof(*c));
        char err[512];
        int rc = kb_conf_load_file(s->o->conf_path, &c->conf, err, sizeof(err));
        if (!rc && s->o->strict_conf && (rc = kb_conf_strict(&c->conf, err, sizeof(err))))
                kb_conf_release(&c->conf);
        if (rc) {
                KB_ERROR("scheduler conf %s changed but is not valid, keeping the previous one: %s",
                         s->o->conf_path, err);
                free(c);
                return;
        }
        c->refs = 1;
        conf_unref(s->conf);
        s->conf = c;
        KB_INFO("scheduler conf %s reloaded", s->o->conf_path);
        conf_announce(s);
}

/* ---- sessions -------------------------------------------------------------------- */

struct session_work {
        uv_work_t req;
        struct kb_sched *s;
        struct kb_cache_snap *snap;
        struct kb__conf_ref *conf;
        struct kb_result result;
        int rc;
        double start;
};

static void session_work(uv_work_t *req)
{
        struct session_work *w = req->data;
        w->rc = kb_session_run_model(w->s->model, &w->snap->snap, &w->conf->conf, &w->result);
}

/*
 * Memory the process no longer uses goes back to the system.  glibc keeps
 * freed memory in its arenas; a daemon that lists 140,000 pods (page trees
 * of megabytes, dropped at once) and then binds them (a record, a mark and
 * a request per bind, all gone a few seconds later) would otherwise keep
 * its peak for good, scattered among the cache's long-lived objects where
 * trimming the top of the heap cannot reach it.  malloc_trim also returns
 * the whole free pages inside the heap.  At most every TRIM_PERIOD, after a
 * session (the heap walk takes milliseconds at that size).
 */
#define TRIM_PERIOD 5.0

static void trim_memory(struct kb_sched *s)
{
#ifdef __GLIBC__
        double now = kb_now_mono();
        if (now - s->trimmed_at < TRIM_PERIOD)
                return;
        s->trimmed_at = now;
        malloc_trim(0);
#else
        (void)s;
#endif
}

static void session_after(uv_work_t *req, int status)
{
        struct session_work *w = req->data;
        struct kb_sched *s = w->s;
        s->session_running = false;
        if (status == 0) {
                if (w->rc)
                        KB_ERROR("session: %s", kb_strerror(w->rc));
                if (w->result.nbinds)
                        KB_V(1, "session: %zu binds, %zu podgroups in %.3fs", w->result.nbinds,
                             w->result.npodgroups, w->result.duration);
                else
                        KB_V(2, "session: no binds, %zu podgroups in %.3fs", w->result.npodgroups,
                             w->result.duration);
                /* The fence again: the session may have outlived it. */
                if (!s->stopping && kb__leading(s))
                        kb__dispatch_result(s, w->snap, &w->result);
                kb__metrics_session(s, &w->result, kb_now_mono() - w->start);
        }
        kb_result_release(&w->result);
        kb_cache_snapshot_free(w->snap);
        conf_unref(w->conf);
        free(w);
        trim_memory(s);
        kb__sched_settled(s);
}

static bool synced(struct kb_sched *s)
{
        for (int i = 0; i < KB__NREFL; i++)
                if (!kb_reflector_synced(s->refl[i]))
                        return false;
        for (size_t i = 0; i < s->npod_refl; i++)
                if (!kb_reflector_synced(s->pod_refl[i]))
                        return false;
        return true;
}

#define BUSY_BACKLOG 2000
#define BUSY_PERIOD  5.0

/* Starts a session when everything it needs is there: the lists synced,
 * the fence open, and the default queue in the cache — created by us if
 * need be, and seen by our own watch, so the first session never finds
 * the groups of a fresh cluster without their queue (and writes an
 * Unschedulable condition and a FailedScheduling event per pod). */
static void try_session(struct kb_sched *s)
{
        if (s->stopping || s->session_running)
                return;
        /* The default queue as soon as the queues are listed, so that its
         * round trip overlaps the other lists. */
        bool leading = kb__leading(s);
        bool have_queue =
            leading && kb_reflector_synced(s->refl[KB__R_QUEUES]) && kb__ensure_default_queue(s);
        if (!synced(s))
                return;
        __atomic_store_n(&s->ready, true, __ATOMIC_RELAXED);
        if (!leading || !have_queue)
                return;
        /* A bind storm: while thousands of binds wait in the backlog, a
         * session's binds could only queue behind them, and at 140,000
         * pods a session takes a quarter of a second of the CPU the binds
         * need.  Sessions then run every BUSY_PERIOD rather than every
         * period (status and new gangs wait at most that long). */
        if (s->nbacklog > BUSY_BACKLOG && kb_now_mono() - s->session_started < BUSY_PERIOD)
                return;
        struct session_work *w = kb_xcalloc(1, sizeof(*w));
        w->req.data = w;
        w->s = s;
        w->start = kb_now_mono();
        w->snap = kb_cache_snapshot(s->cache, s->o->scheduler_names, s->o->nscheduler_names,
                                    s->o->default_queue);
        w->snap->snap.workload_podgroups = s->o->workload_podgroups;
        /* The groups this snapshot lacks are asked for now; their pods
         * wait in this session and join them in a later one. */
        kb__workloads_sync(s, &w->snap->snap);
        w->conf = s->conf;
        w->conf->refs++;
        s->session_running = true;
        s->session_started = kb_now_mono();
        if (!s->sessions_started)
                KB_V(1, "first session: %zu pods, %zu nodes, %zu podgroups", w->snap->snap.npods,
                     w->snap->snap.nnodes, w->snap->snap.npodgroups);
        s->sessions_started = true;
        uv_queue_work(&s->loop, &w->req, session_work, session_after);
}

static void tick(uv_timer_t *t)
{
        struct kb_sched *s = t->data;
        conf_check(s);
        if (s->stopping)
                return;
        kb__discover(s);
        kb__metrics_lanes(s);
        kb__events_flush(s);
        if (kb__leading(s))
                kb__report_invalid(s);
        try_session(s);
}

static void soon_fired(uv_timer_t *t)
{
        struct kb_sched *s = t->data;
        s->soon_armed = false;
        try_session(s);
}

/* A session at the next loop iteration rather than the next tick. */
static void session_soon(struct kb_sched *s)
{
        if (s->soon_armed || s->stopping || s->closed)
                return;
        s->soon_armed = true;
        uv_timer_start(&s->soon, soon_fired, 0, 0);
}

/* The cache changed: until the first session has started, a list may
 * just have completed the set (the first session runs as soon as every
 * reflector has synced, not on the next tick), and the default queue we
 * wait for may have arrived. */
static void cache_changed(void *arg, enum kb_kind kind)
{
        struct kb_sched *s = arg;
        if (!s->sessions_started ||
            (kind == KB_KIND_QUEUE && !s->have_default_queue &&
             kb_cache_get(s->cache, KB_KIND_QUEUE, NULL, s->o->default_queue)))
                session_soon(s);
}

/* ---- run -------------------------------------------------------------------------- */

static bool fence_open(void *arg)
{
        return kb__leading(arg);
}

/* "fieldSelector=" and selector + value, percent-encoded. */
static char *field_query(const char *selector, const char *value)
{
        struct kb_buf b;
        kb_buf_init(&b);
        kb_buf_adds(&b, "fieldSelector=");
        char *text = kb_xasprintf("%s%s", selector, value);
        for (const char *p = text; *p; p++) {
                unsigned char ch = (unsigned char)*p;
                if (isalnum(ch) || ch == '.' || ch == '-' || ch == '_')
                        kb_buf_addc(&b, (char)ch);
                else
                        kb_buf_printf(&b, "%%%02X", ch);
        }
        free(text);
        return kb_buf_detach(&b);
}

int kb_scheduler_run(const struct kb_sched_opts *o, struct kb_conf *conf)
{
        struct kb_sched *s = kb_xcalloc(1, sizeof(*s));
        struct kb_kube_config cfg;
        char err[512];
        int rc = 0;
        s->o = o;
        s->pg_status_sub = s->queue_status_sub = -1;
        if (o->nscheduler_names + 1 > KB_CACHE_MAX_SOURCES) {
                fprintf(stderr, "kbatch-scheduler: --scheduler-name: at most %d names\n",
                        KB_CACHE_MAX_SOURCES - 1);
                kb_conf_release(conf);
                free(s);
                return 2;
        }
        if (kb_kube_config_load(o->kubeconfig, o->context, o->master, &cfg, err, sizeof(err))) {
                fprintf(stderr, "kbatch-scheduler: %s\n", err);
                kb_conf_release(conf);
                free(s);
                return 2;
        }
        cfg.allow_insecure_token = o->allow_insecure_token;
        s->settled = kb__sched_settled;
        s->stop = kb__sched_stop;
        s->conf = kb_xcalloc(1, sizeof(*s->conf));
        s->conf->refs = 1;
        s->conf->conf = *conf;
        memset(conf, 0, sizeof(*conf));
        if (o->conf_path)
                stat(o->conf_path, &s->conf_st);
        if (o->identity) {
                s->identity = kb_xstrdup(o->identity);
        } else {
                char host[256] = "kbatch";
                gethostname(host, sizeof(host) - 1);
                s->identity = kb_xasprintf("%s_%d", host, (int)getpid());
        }

#ifdef __GLIBC__
        /* Two malloc arenas rather than eight per core: the loop thread
         * allocates nearly everything, sessions on a worker allocate in
         * large pool chunks, and every extra arena would keep its own
         * free memory (measured: 49 MB peak RSS at 10,000 pods with the
         * default, 37 MB with one arena).  And a fixed mmap threshold:
         * glibc raises it (up to 32 MB) each time a mapped block is freed,
         * so after the first list page or session pool, those blocks came
         * from the heap and left holes among the cache's objects; fixed at
         * 128 KiB they are mapped and given back whole (140,000 pods: peak
         * RSS 298 -> 245 MiB). */
        mallopt(M_ARENA_MAX, 2);
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
        /* Before any thread starts (libuv's pool, the HTTP thread, curl's
         * resolvers, the signal thread), so that all inherit the mask. */
        sigset_t set;
        kb__sched_signal_set(&set);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
        uv_loop_init(&s->loop);
        struct kb_kube_opts ko = {.qps = o->qps, .burst = o->burst, .max_active = o->max_inflight};
        s->kube = kb_kube_new(&s->loop, &cfg, &ko);
        KB_INFO("kbatch-scheduler %s: API server %s, schedulers %s%s, period %.3gs", s->identity,
                cfg.server, o->scheduler_names[0], o->nscheduler_names > 1 ? ",..." : "",
                o->period);
        kb_kube_config_release(&cfg);
        s->cache = kb_cache_new();
        s->model = kb_model_new();
        s->metrics = kb__metrics_new();
        conf_announce(s);

        static const struct {
                const char *name, *path;
                enum kb_kind kind;
        } refl[KB__NREFL] = {
            {"nodes", "/api/v1/nodes", KB_KIND_NODE},
            {"pods (other schedulers)", "/api/v1/pods", KB_KIND_POD},
            {"podgroups", KB_GROUP_API "/podgroups", KB_KIND_PODGROUP},
            {"queues", KB_GROUP_API "/queues", KB_KIND_QUEUE},
            {"priorityclasses", "/apis/scheduling.k8s.io/v1/priorityclasses",
             KB_KIND_PRIORITYCLASS},
            {"namespaces", "/api/v1/namespaces", KB_KIND_NAMESPACE},
            {"hypernodes", "/apis/topology.volcano.sh/v1alpha1/hypernodes", KB_KIND_HYPERNODE},
            {"poddisruptionbudgets", "/apis/policy/v1/poddisruptionbudgets", KB_KIND_PDB},
            /* A PodGroup of a Volcano Job still saying schedulerName:
             * volcano is not admitted: its controller makes pods only
             * after admission, so only the Job can say (issue 23). */
            {"volcano jobs", "/apis/batch.volcano.sh/v1alpha1/jobs", KB_KIND_VCJOB},
        };
        /* Pods: the pods of each of our scheduler names as sources 1..,
         * and as source 0 every pod of the other schedulers (the bound
         * ones hold node resources too; see below for the pending ones).  The parts do not overlap,
         * so each pod event is read and decoded once (with "spec.nodeName!=" alone, every pod we
         * bind arrived on both streams: twice the watch traffic at 10,000 binds/s). */
        /* Source 0 takes the pending pods of the other schedulers too: a
         * pod that names one of our PodGroups but asks for another
         * scheduler (a Volcano Job still saying volcano) is how the
         * group learns why its pods never come (issue 23, point 1).  A
         * pod of another scheduler is then read when it is created and
         * again when bound; the pods of ours, the bulk, are unchanged. */
        struct kb_buf sel;
        kb_buf_init(&sel);
        for (size_t i = 0; i < o->nscheduler_names; i++)
                kb_buf_printf(&sel, "%sspec.schedulerName!=%s", i ? "," : "",
                              o->scheduler_names[i]);
        char *bound_query = field_query(sel.data, "");
        kb_buf_release(&sel);
        for (int i = 0; i < KB__NREFL; i++)
                s->refl[i] = kb_reflector_new(
                    s->kube, refl[i].name, refl[i].path, i == KB__R_PODS ? bound_query : NULL,
                    &kb_cache_reflector_ops, kb_cache_feed(s->cache, refl[i].kind));
        free(bound_query);
        /* CRDs clusters may lack. */
        kb_reflector_set_optional(s->refl[KB__R_HYPERNODES]);
        kb_reflector_set_optional(s->refl[KB__R_VCJOBS]);
        s->pod_refl = kb_xcalloc(o->nscheduler_names + 1, sizeof(*s->pod_refl));
        for (size_t i = 0; i < o->nscheduler_names; i++) {
                char *q = field_query("spec.schedulerName=", o->scheduler_names[i]);
                char *name = kb_xasprintf("pods (%s)", o->scheduler_names[i]);
                s->pod_refl[s->npod_refl++] =
                    kb_reflector_new(s->kube, name, "/api/v1/pods", q, &kb_cache_reflector_ops,
                                     kb_cache_feed_source(s->cache, KB_KIND_POD, (unsigned)i + 1));
                free(name);
                free(q);
        }
        kb__workloads_start(s);

        uv_timer_init(&s->loop, &s->tick);
        s->tick.data = s;
        uint64_t ms = (uint64_t)(o->period * 1000);
        uv_timer_start(&s->tick, tick, ms, ms ? ms : 1);
        uv_timer_init(&s->loop, &s->lease_timer);
        s->lease_timer.data = s;
        uv_timer_init(&s->loop, &s->fence_timer);
        s->fence_timer.data = s;
        uv_timer_init(&s->loop, &s->stop_timer);
        s->stop_timer.data = s;
        uv_timer_init(&s->loop, &s->soon);
        s->soon.data = s;
        kb_cache_on_change(s->cache, cache_changed, s);
        kb_kube_set_fence(s->kube, fence_open, s);
        uv_async_init(&s->loop, &s->sig_async, kb__sched_signals_arrived);
        s->sig_async.data = s;
        if (pthread_create(&s->sig_thread, NULL, kb__sched_signal_thread, s) == 0)
                s->sig_thread_started = true;
        else
                KB_ERROR("cannot start the signal thread: signals are ignored");

        if (o->listen_address && *o->listen_address && kb__http_start(s, o->listen_address) != 0) {
                fprintf(stderr, "kbatch-scheduler: --listen-address %s: cannot listen\n",
                        o->listen_address);
                kb__sched_stop(s, 2);
        } else if (o->leader_elect) {
                kb__leader_start(s);
        } else {
                s->leader = true;
                kb__metrics_set_leader(s, true);
        }

        uv_run(&s->loop, UV_RUN_DEFAULT);
        if (s->sig_thread_started) {
                /* The loop is gone: tell the signal thread to end. */
                __atomic_fetch_or(&s->sig_pending, 1u << 31, __ATOMIC_ACQ_REL);
                pthread_kill(s->sig_thread, SIGUSR1);
                pthread_join(s->sig_thread, NULL);
        }
        rc = s->exit_code;
        if (uv_loop_close(&s->loop) != 0) {
                KB_ERROR("the loop did not close clean");
                rc = rc ? rc : 1;
        }
        kb__dispatch_release(s);
        kb__workloads_release(s);
        kb_model_free(s->model);
        kb_cache_free(s->cache);
        kb__metrics_free(s->metrics);
        conf_unref(s->conf);
        free(s->lease_holder);
        free(s->lease_renew);
        free(s->identity);
        free(s);
        KB_INFO("kbatch-scheduler stopped");
        return rc;
}
