/*
 * kbatch-sim: runs kbatch's scheduling sessions offline, over Kubernetes
 * manifests or a synthetic cluster, and prints what the scheduler would do.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

#include "framework/framework.h"
#include "sim/sim.h"

#define KB_VERSION "0.1.0"

struct gang_count {
        UT_hash_handle hh;
        char *key;
        const struct kb_podgroup *pg;
        int32_t bound;
};

static void usage(FILE *out)
{
        fprintf(out,
                "usage: kbatch-sim [options] [MANIFEST...]\n"
                "\n"
                "Runs kbatch scheduling sessions over Kubernetes manifests (files, or - for\n"
                "stdin: nodes, pods, batch/v1 Jobs, PodGroups, Queues, PriorityClasses,\n"
                "Volcano Jobs, scheduler-plugins PodGroups) or a synthetic cluster, and\n"
                "prints the decisions.\n"
                "\n"
                "  --scheduler-conf FILE   Volcano-format conf (default: Volcano's default)\n"
                "  --strict-conf           refuse a conf naming an action, plugin, flag or\n"
                "                          argument kbatch would skip (exit 2)\n"
                "  --scheduler-name NAME   schedule pods with this schedulerName (repeatable;\n"
                "                          default kbatch)\n"
                "  --default-queue NAME    queue of groups and pods that name none (default)\n"
                "  --workload-podgroups=false\n"
                "                          leave pods that name no group jobs of their own\n"
                "                          (default: each joins podgroup-<controller uid>)\n"
                "  --sessions N            sessions to run; decisions apply between them (1);\n"
                "                          with --until-done, the most sessions to run\n"
                "  --output json|table     output format (table on a terminal, else json)\n"
                "  --synthetic SPEC        build a cluster (repeatable), SPEC a list of\n"
                "                          key=value; the defaults add no node and no pod:\n"
                "                            nodes=0 node-cpu=32 node-memory=128Gi node-pods=110\n"
                "                            groups=0 group-size=10 pod-cpu=1 pod-memory=1Gi\n"
                "                            queues=1 (q0..; groups round-robin) queue=NAME\n"
                "                            besteffort-groups=0 running=0 priority=0\n"
                "                            prefix=pg interval=1s (between group arrivals)\n"
                "                            runtime=NONE (kbatch.io/runtime of the pods)\n"
                "                            deadline=NONE (their activeDeadlineSeconds)\n"
                "                            group-size-max=0 (sizes up to it) blocks=0 racks=0\n"
                "                            (a topology) hypernodes=0 hard-tier=NONE\n"
                "  --swf FILE              a Standard Workload Format trace (Parallel Workloads\n"
                "                          Archive): each job a gang of one pod a processor,\n"
                "                          arriving at its submit time, running its run time,\n"
                "                          declaring its requested time (activeDeadlineSeconds)\n"
                "  --swf-processor RES     one processor as a pod (cpu=1,memory=1Gi)\n"
                "  --swf-node RES          a node's capacity (one processor)\n"
                "  --compare-confs A,B     replay the input until done under each conf and\n"
                "                          print their figures side by side (implies\n"
                "                          --until-done)\n"
                "  --swf-nodes N           nodes (the header's MaxNodes, or MaxProcs over the\n"
                "                          processors a node holds)\n"
                "  --full-scan             choose nodes by scanning every node (for checking\n"
                "                          the caches; same placements, slower)\n"
                "  --stats                 print timing, bind counts and peak memory to stderr\n"
                "\n"
                "Simulated time:\n"
                "  --until-done            run sessions on a simulated clock until every gang\n"
                "                          has finished: pods run for their kbatch.io/runtime\n"
                "                          (a Go duration: 30m, 1h30m), and pods and PodGroups\n"
                "                          arrive at their creationTimestamp\n"
                "  --schedule-period D     simulated time between sessions (1s)\n"
                "  --default-runtime D     runtime of pods that declare none (1h)\n"
                "  --time-limit D          stop after this much simulated time (720h)\n"
                "  --csv PREFIX            write PREFIX-gangs.csv, PREFIX-queues.csv and\n"
                "                          PREFIX-timeline.csv\n"
                "  --plot FILE.svg         draw utilisation and queue shares over time\n"
                "\n"
                "  -v, --v N               log verbosity\n"
                "  --version, --help\n"
                "\n"
                "Exit status: 0 ok, 1 runtime failure, 2 bad usage or bad input.\n");
}

/* A duration flag: a Go duration within [min, max]. */
static bool duration_flag(const char *flag, const char *arg, int64_t min, int64_t *out)
{
        char why[256];
        if (kb_duration_parse(arg, out, why, sizeof(why))) {
                fprintf(stderr, "kbatch-sim: %s: %s\n", flag, why);
                return false;
        }
        if (*out < min) {
                char m[32];
                kb_duration_format(min, m, sizeof(m));
                fprintf(stderr, "kbatch-sim: %s: want at least %s, got \"%s\"\n", flag, m, arg);
                return false;
        }
        return true;
}

struct timed_out {
        struct kb_sim_json *json; /* NULL: table */
        const struct kb_cluster *c;
        bool stats;
};

/* Each session of a timed run that changed something (or the first). */
static void on_step(void *arg, const struct kb_sim_step *step)
{
        struct timed_out *o = arg;
        struct kb_session_view v = {step->index, (double)step->time / 1e9, step->pg_changed, true};
        if (o->stats)
                fprintf(stderr, "session %ld at %.3fs: %.6fs, %zu binds\n", step->index,
                        (double)step->time / 1e9, step->r->duration, step->r->nbinds);
        bool shown = step->changed || step->index == 1;
        for (size_t i = 0; !shown && i < step->r->npodgroups; i++)
                shown = step->pg_changed[i];
        if (!shown)
                return;
        if (o->json)
                kb_sim_json_session(o->json, step->r, &v, o->c);
        else if (kb_verbosity >= 1)
                kb_result_print_table(step->r, &v, o->c, stdout);
}

static long peak_rss_kib(void)
{
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        return ru.ru_maxrss;
}

/* With a network topology: how many running gangs sit within a domain of
 * each tier, and how many within none. */
static void domain_stats(const struct kb_result *r, long session)
{
        size_t by_tier[8] = {0}, higher = 0, none = 0, any = 0;
        for (size_t g = 0; g < r->npodgroups; g++) {
                const struct kb_pg_status *st = &r->podgroups[g];
                if (!st->domain) {
                        none += st->phase == KB_PG_RUNNING;
                        continue;
                }
                any++;
                if (st->domain_tier >= 0 && st->domain_tier < 8)
                        by_tier[st->domain_tier]++;
                else
                        higher++;
        }
        if (!any)
                return;
        fprintf(stderr, "session %ld: running gangs by network topology domain:", session);
        for (int t = 0; t < 8; t++)
                if (by_tier[t])
                        fprintf(stderr, " tier %d: %zu,", t, by_tier[t]);
        if (higher)
                fprintf(stderr, " tier 8 or more: %zu,", higher);
        fprintf(stderr, " none: %zu\n", none);
}

/* What the cluster is built from: --synthetic specs, an --swf trace,
 * manifest files; quiet leaves out the trace's summary line. */
struct input {
        const char **synthetic;
        size_t nsynthetic;
        const char *swf;
        struct kb_swf_opts swf_opts;
        char **files;
        int nfiles;
        bool quiet;
};

/* Builds c from in; 0, or -1 with the error printed. */
static int load_input(const struct input *in, struct kb_cluster *c)
{
        char err[2048];
        c->now = (double)time(NULL);
        for (size_t i = 0; i < in->nsynthetic; i++)
                if (kb_cluster_synthetic(c, in->synthetic[i], err, sizeof(err))) {
                        fprintf(stderr, "kbatch-sim: %s\n", err);
                        return -1;
                }
        if (in->swf) {
                char *text;
                size_t len;
                struct kb_swf_stats st;
                int frc = kb_read_file(in->swf, &text, &len);
                if (frc) {
                        fprintf(stderr, "kbatch-sim: --swf %s: %s\n", in->swf, kb_strerror(frc));
                        return -1;
                }
                frc = kb_cluster_swf(c, in->swf, text, len, &in->swf_opts, &st, err, sizeof(err));
                free(text);
                if (frc) {
                        fprintf(stderr, "kbatch-sim: --swf %s\n", err);
                        return -1;
                }
                if (!in->quiet)
                        fprintf(stderr,
                                "kbatch-sim: %s: %zu job(s) as gangs (%zu pods) on %lld node(s) "
                                "of %lld processor(s) in all; skipped %zu with no run time, %zu "
                                "with no processor count, %zu wider than the machine\n",
                                in->swf, st.jobs, st.pods, (long long)st.nodes,
                                (long long)st.processors, st.skipped_runtime, st.skipped_procs,
                                st.skipped_wide);
        }
        for (int i = 0; i < in->nfiles; i++) {
                char *text;
                size_t len;
                const char *f = in->files[i];
                int frc = kb_read_file(f, &text, &len);
                if (frc) {
                        fprintf(stderr, "kbatch-sim: %s: %s\n", f, kb_strerror(frc));
                        return -1;
                }
                frc = kb_cluster_load(c, strcmp(f, "-") ? f : "<stdin>", text, len, err,
                                      sizeof(err));
                free(text);
                if (frc) {
                        fprintf(stderr, "kbatch-sim: %s\n", err);
                        return -1;
                }
        }
        if (kb_cluster_ensure_default_queue(c))
                KB_V(1, "no queue named %s in the input: using one with weight 1",
                     c->default_queue);
        return 0;
}

/* --compare-confs A,B,...: the same input replayed under each conf until
 * done, and the figures side by side.  proto carries the cluster settings
 * (scheduler names, default queue).  Returns the exit status. */
static int compare_confs(const char *list, struct input *in, const struct kb_cluster *proto,
                         const struct kb_sim_opts *o, bool full_scan, bool json)
{
        char *copy = kb_xstrdup(list), *save = NULL;
        const char *names[16];
        struct kb_sim_report reps[16];
        size_t n = 0;
        int rc = 0;
        char err[2048];
        for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
                if (n == KB_ARRAY_SIZE(names)) {
                        fprintf(stderr, "kbatch-sim: --compare-confs: at most %zu confs\n",
                                KB_ARRAY_SIZE(names));
                        rc = 2;
                        break;
                }
                struct kb_conf conf;
                if (kb_conf_load_file(t, &conf, err, sizeof(err))) {
                        fprintf(stderr, "kbatch-sim: --compare-confs %s\n", err);
                        rc = 2;
                        break;
                }
                conf.full_scan = full_scan;
                struct kb_cluster c;
                kb_cluster_init(&c);
                for (size_t i = 0; i < proto->nscheduler_names; i++)
                        kb_cluster_add_scheduler(&c, proto->scheduler_names[i]);
                c.default_queue = proto->default_queue;
                c.workload_podgroups = proto->workload_podgroups;
                int src;
                if (load_input(in, &c)) {
                        rc = 2;
                } else if ((src = kb_sim_run(&c, &conf, o, NULL, NULL, &reps[n], err,
                                             sizeof(err)))) {
                        fprintf(stderr, "kbatch-sim: %s: %s\n", t, err);
                        rc = src == KB_EBADINPUT ? 2 : 1;
                } else {
                        names[n++] = t;
                }
                in->quiet = true;
                kb_cluster_release(&c);
                kb_conf_release(&conf);
        }
        if (!rc)
                kb_sim_compare_print(names, reps, n, json, stdout);
        for (size_t i = 0; i < n; i++)
                kb_sim_report_release(&reps[i]);
        free(copy);
        return rc;
}

int main(int argc, char **argv)
{
        enum {
                OPT_CONF = 256,
                OPT_NAME,
                OPT_SESSIONS,
                OPT_OUTPUT,
                OPT_SYNTH,
                OPT_FULL,
                OPT_STATS,
                OPT_VERSION,
                OPT_DQUEUE,
                OPT_STRICT,
                OPT_UNTIL,
                OPT_PERIOD,
                OPT_RUNTIME,
                OPT_LIMIT,
                OPT_CSV,
                OPT_PLOT,
                OPT_WORKLOAD,
                OPT_SWF,
                OPT_SWF_PROC,
                OPT_SWF_NODE,
                OPT_SWF_NODES,
                OPT_COMPARE
        };
        static const struct option opts[] = {
            {"scheduler-conf", required_argument, NULL, OPT_CONF},
            {"scheduler-name", required_argument, NULL, OPT_NAME},
            {"sessions", required_argument, NULL, OPT_SESSIONS},
            {"output", required_argument, NULL, OPT_OUTPUT},
            {"synthetic", required_argument, NULL, OPT_SYNTH},
            {"full-scan", no_argument, NULL, OPT_FULL},
            {"stats", no_argument, NULL, OPT_STATS},
            {"default-queue", required_argument, NULL, OPT_DQUEUE},
            {"strict-conf", no_argument, NULL, OPT_STRICT},
            {"until-done", no_argument, NULL, OPT_UNTIL},
            {"schedule-period", required_argument, NULL, OPT_PERIOD},
            {"default-runtime", required_argument, NULL, OPT_RUNTIME},
            {"time-limit", required_argument, NULL, OPT_LIMIT},
            {"csv", required_argument, NULL, OPT_CSV},
            {"plot", required_argument, NULL, OPT_PLOT},
            {"workload-podgroups", optional_argument, NULL, OPT_WORKLOAD},
            {"swf", required_argument, NULL, OPT_SWF},
            {"swf-processor", required_argument, NULL, OPT_SWF_PROC},
            {"swf-node", required_argument, NULL, OPT_SWF_NODE},
            {"swf-nodes", required_argument, NULL, OPT_SWF_NODES},
            {"compare-confs", required_argument, NULL, OPT_COMPARE},
            {"v", required_argument, NULL, 'v'},
            {"version", no_argument, NULL, OPT_VERSION},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        const char *conf_path = NULL, *output = NULL, *csv = NULL, *plot = NULL;
        struct kb_sim_opts sim_opts;
        bool until_done = false, sessions_set = false;
        const char *synthetic[16];
        size_t nsynthetic = 0;
        long sessions = 1;
        bool full_scan = false, stats = false, strict = false;
        const char *swf = NULL, *compare = NULL;
        struct kb_swf_opts swf_opts;
        kb_swf_opts_init(&swf_opts);
        struct kb_cluster cluster;
        struct kb_conf conf;
        char err[2048];
        int rc = 2, opt;

        kb_cluster_init(&cluster);
        kb_sim_opts_init(&sim_opts);
        while ((opt = getopt_long(argc, argv, "v:h", opts, NULL)) != -1) {
                char *end;
                switch (opt) {
                case OPT_CONF:
                        conf_path = optarg;
                        break;
                case OPT_NAME:
                        kb_cluster_add_scheduler(&cluster, optarg);
                        break;
                case OPT_DQUEUE:
                        cluster.default_queue = optarg;
                        break;
                case OPT_STRICT:
                        strict = true;
                        break;
                case OPT_WORKLOAD:
                        if (!optarg || !strcmp(optarg, "true"))
                                cluster.workload_podgroups = true;
                        else if (!strcmp(optarg, "false"))
                                cluster.workload_podgroups = false;
                        else {
                                fprintf(stderr,
                                        "kbatch-sim: --workload-podgroups: want true or false, "
                                        "got \"%s\"\n",
                                        optarg);
                                goto out;
                        }
                        break;
                case OPT_SESSIONS:
                        sessions = strtol(optarg, &end, 10);
                        if (*end || sessions < 1 || sessions > 1000000) {
                                fprintf(stderr,
                                        "kbatch-sim: --sessions: want a number >= 1, "
                                        "got \"%s\"\n",
                                        optarg);
                                goto out;
                        }
                        sessions_set = true;
                        break;
                case OPT_UNTIL:
                        until_done = true;
                        break;
                case OPT_PERIOD:
                        if (!duration_flag("--schedule-period", optarg, 1000000, &sim_opts.period))
                                goto out;
                        break;
                case OPT_RUNTIME:
                        if (!duration_flag("--default-runtime", optarg, 0,
                                           &sim_opts.default_runtime))
                                goto out;
                        break;
                case OPT_LIMIT:
                        if (!duration_flag("--time-limit", optarg, 0, &sim_opts.time_limit))
                                goto out;
                        break;
                case OPT_CSV:
                        csv = optarg;
                        break;
                case OPT_PLOT:
                        plot = optarg;
                        break;
                case OPT_OUTPUT:
                        if (strcmp(optarg, "json") && strcmp(optarg, "table")) {
                                fprintf(stderr,
                                        "kbatch-sim: --output: want json or table, got "
                                        "\"%s\"\n",
                                        optarg);
                                goto out;
                        }
                        output = optarg;
                        break;
                case OPT_SYNTH:
                        if (nsynthetic == KB_ARRAY_SIZE(synthetic)) {
                                fprintf(stderr, "kbatch-sim: --synthetic: at most %zu\n",
                                        KB_ARRAY_SIZE(synthetic));
                                goto out;
                        }
                        synthetic[nsynthetic++] = optarg;
                        break;
                case OPT_SWF:
                        swf = optarg;
                        break;
                case OPT_COMPARE:
                        compare = optarg;
                        until_done = true;
                        break;
                case OPT_SWF_PROC:
                case OPT_SWF_NODE:
                        if (kb_swf_res_parse(optarg,
                                             opt == OPT_SWF_PROC ? "--swf-processor" : "--swf-node",
                                             opt == OPT_SWF_PROC ? &swf_opts.processor
                                                                 : &swf_opts.node,
                                             err, sizeof(err))) {
                                fprintf(stderr, "kbatch-sim: %s\n", err);
                                goto out;
                        }
                        break;
                case OPT_SWF_NODES:
                        swf_opts.nodes = strtol(optarg, &end, 10);
                        if (*end || swf_opts.nodes < 1 || swf_opts.nodes > 10000000) {
                                fprintf(stderr, "kbatch-sim: --swf-nodes: want a number >= 1, "
                                                "got \"%s\"\n",
                                        optarg);
                                goto out;
                        }
                        break;
                case OPT_FULL:
                        full_scan = true;
                        break;
                case OPT_STATS:
                        stats = true;
                        break;
                case 'v':
                        kb_verbosity = atoi(optarg);
                        break;
                case OPT_VERSION:
                        printf("kbatch-sim %s\n", KB_VERSION);
                        rc = 0;
                        goto out;
                case 'h':
                        usage(stdout);
                        rc = 0;
                        goto out;
                default:
                        usage(stderr);
                        goto out;
                }
        }
        if (!nsynthetic && !swf && optind == argc) {
                fprintf(stderr, "kbatch-sim: no manifests, no --synthetic and no --swf; see --help\n");
                goto out;
        }
        if (!output)
                output = isatty(STDOUT_FILENO) ? "table" : "json";
        if ((csv || plot) && !until_done) {
                fprintf(stderr, "kbatch-sim: %s: figures over time need --until-done\n",
                        csv ? "--csv" : "--plot");
                goto out;
        }
        if (until_done && sessions_set)
                sim_opts.max_sessions = sessions;

        if (conf_path) {
                if (kb_conf_load_file(conf_path, &conf, err, sizeof(err))) {
                        fprintf(stderr, "kbatch-sim: --scheduler-conf %s\n", err);
                        goto out;
                }
        } else if (kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml), &conf, err,
                                 sizeof(err))) {
                fprintf(stderr, "kbatch-sim: built-in conf: %s\n", err);
                rc = 1;
                goto out;
        }
        conf.full_scan = full_scan;
        if (strict && kb_conf_strict(&conf, err, sizeof(err))) {
                fprintf(stderr, "kbatch-sim: --scheduler-conf %s: %s\n",
                        conf_path ? conf_path : "(built-in)", err);
                goto out_conf;
        }
        if (conf.nskipped) {
                char list[1024];
                kb_conf_skipped_summary(&conf, list, sizeof(list));
                fprintf(stderr,
                        "kbatch-sim: conf: kbatch skips %zu item(s) it does not support: %s\n",
                        conf.nskipped, list);
        }

        struct input in = {synthetic, nsynthetic, swf, swf_opts, argv + optind, argc - optind,
                           false};
        if (compare) {
                rc = compare_confs(compare, &in, &cluster, &sim_opts, full_scan,
                                   strcmp(output, "json") == 0);
                goto out_conf;
        }
        if (load_input(&in, &cluster)) {
                rc = 2;
                goto out_conf;
        }

        /* JSON goes out session by session (kb_sim_json): nothing of the
         * run is held for the end. */
        struct kb_sim_json json;
        kb_sim_json_init(&json, stdout);
        bool as_json = strcmp(output, "json") == 0;
        rc = 0;
        if (until_done) {
                struct kb_sim_report rep;
                struct timed_out to = {as_json ? &json : NULL, &cluster, stats};
                int src =
                    kb_sim_run(&cluster, &conf, &sim_opts, on_step, &to, &rep, err, sizeof(err));
                if (src) {
                        fprintf(stderr, "kbatch-sim: %s\n", err);
                        rc = src == KB_EBADINPUT ? 2 : 1;
                        /* Sessions already out still end a whole document. */
                        if (json.open)
                                kb_sim_json_end(&json, NULL);
                        goto out_conf;
                }
                if (as_json)
                        kb_sim_json_end(&json, kb_sim_report_to_json(&rep));
                else
                        kb_sim_report_print_table(&rep, stdout);
                if (rep.stop != KB_SIM_DONE) {
                        fprintf(stderr, "kbatch-sim: %s with %zu gang(s) unfinished%s\n",
                                rep.stop == KB_SIM_STUCK        ? "nothing left can change"
                                : rep.stop == KB_SIM_TIME_LIMIT ? "stopped at --time-limit"
                                                                : "stopped at --sessions",
                                kb_sim_report_unfinished(&rep),
                                rep.stop == KB_SIM_STUCK ? "; they can never run as things stand "
                                                           "(see why in the output)"
                                                         : "");
                }
                if (csv && kb_sim_report_write_csv(&rep, csv, err, sizeof(err))) {
                        fprintf(stderr, "kbatch-sim: --csv %s\n", err);
                        rc = 1;
                }
                if (plot && kb_sim_report_write_svg(&rep, plot, err, sizeof(err))) {
                        fprintf(stderr, "kbatch-sim: --plot %s\n", err);
                        rc = 1;
                }
                kb_sim_report_release(&rep);
        }
        for (long i = 1; !until_done && i <= sessions; i++) {
                struct kb_snapshot snap;
                struct kb_result result;
                struct kb_session_view view = {i, -1, NULL, false};
                kb_cluster_snapshot(&cluster, &snap);
                if (kb_session_run(&snap, &conf, &result) != 0) {
                        fprintf(stderr,
                                "kbatch-sim: session %ld: the conf names a missing "
                                "action or plugin\n",
                                i);
                        rc = 1;
                }
                if (as_json)
                        kb_sim_json_session(&json, &result, &view, &cluster);
                else
                        kb_result_print_table(&result, &view, &cluster, stdout);
                if (stats) {
                        fprintf(stderr, "session %ld: %.6fs, %zu binds\n", i, result.duration,
                                result.nbinds);
                        domain_stats(&result, i);
                }
                kb_cluster_apply(&cluster, &result);
                kb_result_release(&result);
        }
        if (as_json && !until_done)
                kb_sim_json_end(&json, NULL);
        if (stats) {
                /* Gangs fully and partly bound at the end. */
                size_t full = 0, partial = 0, bound_pods = 0;
                struct gang_count *counts = NULL, *e, *tmp;
                for (size_t g = 0; g < cluster.npodgroups; g++) {
                        const struct kb_podgroup *pg = cluster.podgroups[g];
                        char *key = kb_xasprintf("%s/%s", pg->meta.namespace, pg->meta.name);
                        e = kb_xcalloc(1, sizeof(*e));
                        e->key = key;
                        e->pg = pg;
                        HASH_ADD_KEYPTR(hh, counts, key, strlen(key), e);
                }
                for (size_t p = 0; p < cluster.npods; p++) {
                        const struct kb_pod *pod = cluster.pods[p];
                        if (!pod->node_name || !pod->group_name)
                                continue;
                        char *key = kb_xasprintf("%s/%s", pod->meta.namespace, pod->group_name);
                        HASH_FIND_STR(counts, key, e);
                        if (e)
                                e->bound++;
                        free(key);
                }
                HASH_ITER(hh, counts, e, tmp)
                {
                        if (e->bound > 0 && e->bound >= e->pg->min_member)
                                full++;
                        else if (e->bound > 0)
                                partial++;
                        HASH_DEL(counts, e);
                        free(e->key);
                        free(e);
                }
                for (size_t p = 0; p < cluster.npods; p++)
                        bound_pods += cluster.pods[p]->node_name != NULL;
                fprintf(stderr,
                        "pods bound: %zu of %zu; gangs fully bound: %zu, partly bound: %zu, "
                        "of %zu; peak RSS: %ld KiB\n",
                        bound_pods, cluster.npods, full, partial, cluster.npodgroups,
                        peak_rss_kib());
        }
out_conf:
        kb_conf_release(&conf);
out:
        kb_cluster_release(&cluster);
        return rc;
}
