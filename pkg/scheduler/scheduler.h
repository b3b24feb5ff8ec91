/*
 * scheduler: the kbatch-scheduler daemon — one libuv loop thread that owns
 * the Kubernetes client, the reflectors and the cache; a session every
 * period on a worker thread; the dispatcher that writes binds, PodGroup and
 * Queue status and events back; leader election; /metrics, /healthz and
 * /readyz.
 *
 * Threads.  The loop thread does all I/O and owns all state.  A session runs
 * on a libuv worker (uv_queue_work) over a snapshot and hands its result back
 * in the after-callback, on the loop thread; sessions never overlap.  The
 * HTTP endpoints run on libmicrohttpd's thread and read only the metrics,
 * which are guarded by a mutex.
 */
#ifndef KB_PKG_SCHEDULER_H
#define KB_PKG_SCHEDULER_H

#include <stdbool.h>
#include <stddef.h>

#include "framework/framework.h"

struct kb_sched_opts {
        const char *kubeconfig; /* NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
        const char *master;
        const char *context;
        /* Send the kubeconfig's token (or exec credential) to a plain
         * http:// server too; without it they go over https only, as with
         * client-go. */
        bool allow_insecure_token;
        const char *const *scheduler_names;
        size_t nscheduler_names;
        const char *conf_path; /* NULL: the built-in default conf */
        bool strict_conf;      /* refuse a conf with skipped items (reloads too) */
        double period;         /* seconds between sessions */
        const char *default_queue;
        /* Make the PodGroups of pods of ours that name none
         * (podgroup-<controller uid>) and of scheduler-plugins' PodGroups
         * (default true; false: such a pod is a job of its own). */
        bool workload_podgroups;
        bool leader_elect;
        double lease_duration, renew_deadline, retry_period;
        const char *lock_namespace, *lock_name;
        const char *identity;       /* NULL: hostname_pid */
        const char *listen_address; /* "HOST:PORT", NULL for none */
        double qps;
        int burst;
        int max_inflight;     /* the client's window (requests on the wire) */
        const char *dump_dir; /* SIGUSR1 cache dumps; NULL: the temp directory */
        /* kb_sched_opts_parse's: the --scheduler-name values. */
        const char **parsed_names;
        size_t nparsed_names, capparsed_names;
};

/* The defaults.  kb_sched_opts_release frees what parsing added. */
void kb_sched_opts_init(struct kb_sched_opts *o);
void kb_sched_opts_release(struct kb_sched_opts *o);
/*
 * kbatch-scheduler's command line (argv[1..]) into o, which keeps pointers
 * into argv.  Returns -1 to go on, or the exit code to end with at once: 0
 * after --help or --version (printed to stdout), 2 on a bad flag or value
 * (a message naming the flag on stderr).  Main thread.
 */
int kb_sched_opts_parse(struct kb_sched_opts *o, int argc, char **argv, const char *version);

/*
 * Runs the daemon until SIGTERM or SIGINT (within 2 s: no new sessions,
 * queued writes dropped, the lease released) and returns the exit
 * code: 0 after a clean stop, 1 on a runtime failure (lost leadership, no
 * usable API), 2 on bad input (conf, kubeconfig, flags) with a message on
 * stderr.  conf is the conf already loaded (the caller checked it); it is
 * taken over.  Call from the main thread, before any other thread starts:
 * SIGTERM, SIGINT and SIGUSR1 are blocked here (and stay blocked after it
 * returns) so that every thread inherits the mask, and a thread of its own
 * takes them.
 */
int kb_scheduler_run(const struct kb_sched_opts *o, struct kb_conf *conf);

#endif /* KB_PKG_SCHEDULER_H */
