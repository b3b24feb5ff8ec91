/*
 * kbatch-scheduler's flags: one row each (name, argument, how the value is
 * read and checked, which field of struct kb_sched_opts it sets, help), so
 * that parsing and --help come from the same table.  A flag getopt_long
 * matched is found again by its name.  Flags follow Volcano's vc-scheduler
 * where it has one; docs/scheduler.md lists them.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scheduler/scheduler-int.h"

void kb_sched_opts_init(struct kb_sched_opts *o)
{
        static const char *const dflt_names[] = {"kbatch"};
        memset(o, 0, sizeof(*o));
        o->scheduler_names = dflt_names;
        o->nscheduler_names = 1;
        o->period = 1.0;
        o->default_queue = "default";
        o->workload_podgroups = true;
        o->lease_duration = 15;
        o->renew_deadline = 10;
        o->retry_period = 2;
        o->lock_namespace = "kube-system";
        o->lock_name = "kbatch";
        /* The window (max_inflight, halved by 429s) is what protects the
         * server; the token bucket only caps a runaway (docs/scheduler.md,
         * "Client defaults"). */
        o->qps = 20000;
        o->burst = 20000;
        o->max_inflight = 32;
}

void kb_sched_opts_release(struct kb_sched_opts *o)
{
        free(o->parsed_names);
        o->parsed_names = NULL;
}

enum kind {
        F_STR,   /* const char *, the argument itself */
        F_NAMES, /* repeatable: the scheduler names */
        F_SET,   /* bool, set by the flag's presence */
        F_BOOL,  /* bool, [=BOOL]: true, 1, false, 0 */
        F_DUR,   /* double seconds: "1s", "500ms", "2m", "1h", "1.5" */
        F_INT,   /* int, read as a number */
        F_VERBOSE,
        F_VERSION,
        F_HELP,
};

struct flag {
        const char *name; /* one letter: a short option */
        enum kind kind;
        size_t off;       /* into struct kb_sched_opts */
        double lo, hi;    /* F_DUR, F_INT: allowed range (hi 0: none) */
        bool lo_open;     /* lo itself is refused */
        const char *arg;  /* in --help, after the name */
        const char *help; /* NULL: not listed (an alias) */
};

#define O(f) offsetof(struct kb_sched_opts, f)
static const struct flag flags[] = {
    {"kubeconfig", F_STR, O(kubeconfig), 0, 0, 0, "FILE",
     "kubeconfig (default: $KUBECONFIG, the\nin-cluster service account, ~/.kube/config)"},
    {"master", F_STR, O(master), 0, 0, 0, "URL", "API server address (overrides the kubeconfig)"},
    {"context", F_STR, O(context), 0, 0, 0, "NAME", "kubeconfig context (default: current)"},
    {"allow-insecure-token", F_SET, O(allow_insecure_token), 0, 0, 0, "",
     "send the kubeconfig's token or exec\ncredential to a plain http:// server too\n"
     "(default: https only, as client-go)"},
    {"scheduler-name", F_NAMES, 0, 0, 0, 0, "NAME",
     "schedulerName of the pods to schedule\n(repeatable; default kbatch)"},
    {"scheduler-conf", F_STR, O(conf_path), 0, 0, 0, "FILE",
     "Volcano-format conf, reloaded when it changes\n(default: the built-in conf)"},
    {"strict-conf", F_SET, O(strict_conf), 0, 0, 0, "",
     "refuse a conf naming an action, plugin,\nflag or argument kbatch would skip"},
    {"schedule-period", F_DUR, O(period), 0.001, 0, 0, "DURATION",
     "time between sessions (default 1s)"},
    {"default-queue", F_STR, O(default_queue), 0, 0, 0, "NAME",
     "queue of PodGroups that name none (default\ndefault; created when missing)"},
    {"workload-podgroups", F_BOOL, O(workload_podgroups), 0, 0, 0, "[=BOOL]",
     "make the PodGroups of pods that name none\n(podgroup-<controller uid>) and of\n"
     "scheduler-plugins PodGroups (default true)"},
    {"leader-elect", F_BOOL, O(leader_elect), 0, 0, 0, "[=BOOL]",
     "run leader election (default false)"},
    {"leader-elect-lease-duration", F_DUR, O(lease_duration), 1, 0, 0, "D", "default 15s"},
    {"leader-elect-renew-deadline", F_DUR, O(renew_deadline), 0, 0, 1, "D", "default 10s"},
    {"leader-elect-retry-period", F_DUR, O(retry_period), 0, 0, 1, "D", "default 2s"},
    {"lock-object-namespace", F_STR, O(lock_namespace), 0, 0, 0, "NS",
     "namespace of the Lease (default kube-system)"},
    {"leader-elect-resource-namespace", F_STR, O(lock_namespace), 0, 0, 0, "NS", NULL},
    {"leader-elect-resource-name", F_STR, O(lock_name), 0, 0, 0, "NAME",
     "name of the Lease (default kbatch)"},
    {"leader-elect-identity", F_STR, O(identity), 0, 0, 0, "ID",
     "identity in the Lease (default hostname_pid)"},
    {"listen-address", F_STR, O(listen_address), 0, 0, 0, "HOST:PORT",
     "serve /metrics, /healthz, /readyz"},
    {"kube-api-qps", F_DUR, O(qps), 0, 0, 1, "N", "client rate limit (default 20000)"},
    {"kube-api-burst", F_INT, O(burst), 1, 0, 0, "N", "client burst (default 20000)"},
    {"kube-api-max-inflight", F_INT, O(max_inflight), 1, 1024, 0, "N",
     "requests on the wire at once, halved\nwhile the server answers 429 (default 32)"},
    {"dump-dir", F_STR, O(dump_dir), 0, 0, 0, "DIR",
     "where SIGUSR1 writes cache dumps (default\n$TMPDIR or /tmp)"},
    {"v", F_VERBOSE, 0, 0, 0, 0, "N", "log verbosity"},
    {"version", F_VERSION, 0, 0, 0, 0, "", "print the version"},
    {"help", F_HELP, 0, 0, 0, 0, "", ""},
};
#undef O

/* Where a one-line help would run past 80 columns, the row breaks it. */
static void usage(FILE *f)
{
        fputs("usage: kbatch-scheduler [flags]\n\n"
              "The kbatch gang batch scheduler: watches a cluster, runs a scheduling session\n"
              "every period and binds the pods of ready gangs together.\n\n",
              f);
        for (size_t i = 0; i < KB_ARRAY_SIZE(flags); i++) {
                const struct flag *fl = &flags[i];
                if (!fl->help)
                        continue;
                char head[64];
                bool sep = fl->arg[0] && fl->arg[0] != '[';
                snprintf(head, sizeof(head), "%s%s%s%s", fl->name[1] ? "--" : "-", fl->name,
                         sep ? " " : "", fl->arg);
                if (!fl->help[0]) {
                        fprintf(f, "  %s\n", head);
                        continue;
                }
                fprintf(f, "  %-36s", head);
                for (const char *p = fl->help; *p; p++) {
                        fputc(*p, f);
                        if (*p == '\n')
                                fprintf(f, "%38s", "");
                }
                fputc('\n', f);
        }
        fputs("\nSignals: SIGTERM/SIGINT stop gracefully, SIGUSR1 dumps the cache as JSON.\n", f);
}

/* "1s", "500ms", "2m", "1h", "1.5" (seconds). */
static bool parse_duration(const char *s, double *out)
{
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || end == s || v < 0)
                return false;
        if (!strcmp(end, "") || !strcmp(end, "s"))
                *out = v;
        else if (!strcmp(end, "ms"))
                *out = v / 1000;
        else if (!strcmp(end, "m"))
                *out = v * 60;
        else if (!strcmp(end, "h"))
                *out = v * 3600;
        else
                return false;
        return true;
}

static bool parse_bool(const char *s, bool *out)
{
        if (!s || !strcmp(s, "true") || !strcmp(s, "1")) {
                *out = true;
                return true;
        }
        if (!strcmp(s, "false") || !strcmp(s, "0")) {
                *out = false;
                return true;
        }
        return false;
}

static const struct flag *flag_named(const char *name)
{
        for (size_t i = 0; i < KB_ARRAY_SIZE(flags); i++)
                if (strcmp(flags[i].name, name) == 0)
                        return &flags[i];
        return NULL;
}

/* Applies one flag; false when its value is bad. */
static bool apply(struct kb_sched_opts *o, const struct flag *fl, const char *arg)
{
        char *field = (char *)o + fl->off;
        double d;
        switch (fl->kind) {
        case F_STR:
                *(const char **)field = arg;
                return true;
        case F_NAMES:
                KB_PUSH(o->parsed_names, o->nparsed_names, o->capparsed_names, arg);
                o->scheduler_names = o->parsed_names;
                o->nscheduler_names = o->nparsed_names;
                return true;
        case F_SET:
                *(bool *)field = true;
                return true;
        case F_BOOL:
                return parse_bool(arg, (bool *)field);
        case F_DUR:
        case F_INT:
                if (!parse_duration(arg, &d) || d < fl->lo || (fl->lo_open && d == fl->lo) ||
                    (fl->hi && d > fl->hi))
                        return false;
                if (fl->kind == F_DUR)
                        *(double *)field = d;
                else
                        *(int *)field = (int)d;
                return true;
        case F_VERBOSE:
                kb_verbosity = atoi(arg);
                return true;
        case F_VERSION:
        case F_HELP:
                return true;
        }
        return false;
}

int kb_sched_opts_parse(struct kb_sched_opts *o, int argc, char **argv, const char *version)
{
        struct option longopts[KB_ARRAY_SIZE(flags) + 1];
        size_t n = 0;
        for (size_t i = 0; i < KB_ARRAY_SIZE(flags); i++) {
                if (!flags[i].name[1])
                        continue;
                bool takes = flags[i].kind != F_SET && flags[i].kind < F_VERBOSE;
                longopts[n++] = (struct option){flags[i].name,
                                                flags[i].kind == F_BOOL ? optional_argument
                                                : takes                 ? required_argument
                                                                        : no_argument,
                                                NULL, 0};
        }
        longopts[n] = (struct option){NULL, 0, NULL, 0};
        int opt, li = -1;
        while ((opt = getopt_long(argc, argv, "v:h", longopts, &li)) != -1) {
                char shortname[2] = {(char)opt, 0};
                const struct flag *fl = flag_named(opt == 0 ? longopts[li].name : shortname);
                if (fl && fl->kind == F_VERSION) {
                        printf("kbatch-scheduler %s\n", version);
                        return 0;
                }
                if (opt == 'h' || (fl && fl->kind == F_HELP)) {
                        usage(stdout);
                        return 0;
                }
                if (!fl) {
                        usage(stderr);
                        return 2;
                }
                if (!apply(o, fl, optarg)) {
                        fprintf(stderr, "kbatch-scheduler: bad value for --%s: %s\n", fl->name,
                                optarg ? optarg : "");
                        return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "kbatch-scheduler: unexpected argument %s\n", argv[optind]);
                usage(stderr);
                return 2;
        }
        if (o->leader_elect &&
            !(o->retry_period < o->renew_deadline && o->renew_deadline < o->lease_duration)) {
                fprintf(stderr, "kbatch-scheduler: leader election needs retry period < renew "
                                "deadline < lease duration\n");
                return 2;
        }
        return -1;
}
