/*
 * kbatch-sim's command line: each flag is one row of a table, its name,
 * whether it takes an argument and the function that stores it in struct
 * sim_args.  getopt_long's answer is looked up in the table by the flag's
 * name, so a row can move without anything else changing.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kbatch-sim.h"

#define GO_ON -1

void sim_usage(FILE *out)
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
                "                            besteffort-groups=0 running=0 (packed=0)\n"
                "                            priority=0\n"
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
                "\n");
        /* Two strings: C11 promises string literals of 4095 characters. */
        fprintf(out,
                "Simulated time:\n"
                "  --until-done            run sessions on a simulated clock until every gang\n"
                "                          has finished: pods run for their kbatch.io/runtime\n"
                "                          (a Go duration: 30m, 1h30m), and pods and PodGroups\n"
                "                          arrive at their creationTimestamp\n"
                "  --schedule-period D     simulated time between sessions (1s)\n"
                "  --default-runtime D     runtime of pods that declare none (1h)\n"
                "  --time-limit D          stop after this much simulated time (720h; none\n"
                "                          when every pod declares its runtime); stopping\n"
                "                          there with gangs unfinished exits 3\n"
                "  --csv PREFIX            write PREFIX-gangs.csv, PREFIX-queues.csv and\n"
                "                          PREFIX-timeline.csv\n"
                "  --plot FILE.svg         draw utilisation, gangs waiting and pending demand\n"
                "                          per queue, and each queue's held and deserved\n"
                "                          share over time; with --compare-confs, the gangs\n"
                "                          waiting under each conf\n"
                "  --summary               the run's figures only: no table of gangs (table),\n"
                "                          no podGroups and pods lists and no sessions (JSON)\n"
                "  --progress[=false]      simulated time, sessions and gangs finished as the\n"
                "                          run goes, on stderr (default: when stderr is a\n"
                "                          terminal)\n"
                "\n"
                "  -v, --v N               log verbosity\n"
                "  --version, --help\n"
                "\n"
                "Exit status: 0 ok, 1 runtime failure, 2 bad usage or bad input, 3 stopped\n"
                "at --time-limit with gangs unfinished.\n");
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

static int set_conf(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        a->conf_path = arg;
        return GO_ON;
}

static int set_name(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        kb_cluster_add_scheduler(c, arg);
        return GO_ON;
}

static int set_default_queue(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        c->default_queue = arg;
        return GO_ON;
}

static int set_strict(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        a->strict = true;
        return GO_ON;
}

static int set_workload(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        if (!arg || !strcmp(arg, "true"))
                c->workload_podgroups = true;
        else if (!strcmp(arg, "false"))
                c->workload_podgroups = false;
        else {
                fprintf(stderr,
                        "kbatch-sim: --workload-podgroups: want true or false, got \"%s\"\n", arg);
                return 2;
        }
        return GO_ON;
}

static int set_sessions(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        char *end;
        a->sessions = strtol(arg, &end, 10);
        if (*end || a->sessions < 1 || a->sessions > 1000000) {
                fprintf(stderr, "kbatch-sim: --sessions: want a number >= 1, got \"%s\"\n", arg);
                return 2;
        }
        a->sessions_set = true;
        return GO_ON;
}

static int set_until(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        a->until_done = true;
        return GO_ON;
}

static int set_period(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        return duration_flag("--schedule-period", arg, 1000000, &a->sim.period) ? GO_ON : 2;
}

static int set_runtime(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        return duration_flag("--default-runtime", arg, 0, &a->sim.default_runtime) ? GO_ON : 2;
}

static int set_limit(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        a->sim.time_limit_set = true;
        return duration_flag("--time-limit", arg, 0, &a->sim.time_limit) ? GO_ON : 2;
}

static int set_csv(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        a->csv = arg;
        return GO_ON;
}

static int set_plot(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        a->plot = arg;
        return GO_ON;
}

static int set_output(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        if (strcmp(arg, "json") && strcmp(arg, "table")) {
                fprintf(stderr, "kbatch-sim: --output: want json or table, got \"%s\"\n", arg);
                return 2;
        }
        a->output = arg;
        return GO_ON;
}

static int set_synthetic(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        if (a->nsynthetic == KB_ARRAY_SIZE(a->synthetic)) {
                fprintf(stderr, "kbatch-sim: --synthetic: at most %zu\n",
                        KB_ARRAY_SIZE(a->synthetic));
                return 2;
        }
        a->synthetic[a->nsynthetic++] = arg;
        return GO_ON;
}

static int set_swf(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        a->swf = arg;
        return GO_ON;
}

static int set_compare(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        a->compare = arg;
        a->until_done = true;
        return GO_ON;
}

static int swf_res(const char *flag, const char *arg, struct kb_res *out)
{
        char err[512];
        if (kb_swf_res_parse(arg, flag, out, err, sizeof(err))) {
                fprintf(stderr, "kbatch-sim: %s\n", err);
                return 2;
        }
        return GO_ON;
}

static int set_swf_processor(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        return swf_res("--swf-processor", arg, &a->swf_opts.processor);
}

static int set_swf_node(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        return swf_res("--swf-node", arg, &a->swf_opts.node);
}

static int set_swf_nodes(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        char *end;
        a->swf_opts.nodes = strtol(arg, &end, 10);
        if (*end || a->swf_opts.nodes < 1 || a->swf_opts.nodes > 10000000) {
                fprintf(stderr, "kbatch-sim: --swf-nodes: want a number >= 1, got \"%s\"\n", arg);
                return 2;
        }
        return GO_ON;
}

static int set_summary(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        a->summary = true;
        return GO_ON;
}

static int set_progress(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        if (!arg || !strcmp(arg, "true"))
                a->progress = 1;
        else if (!strcmp(arg, "false"))
                a->progress = 0;
        else {
                fprintf(stderr, "kbatch-sim: --progress: want true or false, got \"%s\"\n", arg);
                return 2;
        }
        return GO_ON;
}

static int set_full_scan(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        a->full_scan = true;
        return GO_ON;
}

static int set_stats(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        a->stats = true;
        return GO_ON;
}

static int set_verbosity(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        kb_verbosity = atoi(arg);
        return GO_ON;
}

static int show_version(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        printf("kbatch-sim %s\n", KB_VERSION);
        return 0;
}

static int show_help(struct sim_args *a, struct kb_cluster *c, const char *arg)
{
        sim_usage(stdout);
        return 0;
}

typedef int (*flag_fn)(struct sim_args *a, struct kb_cluster *c, const char *arg);

static const struct flag {
        const char *name;
        int has_arg; /* getopt's no_argument, required_argument, optional_argument */
        flag_fn set;
} flags[] = {
    {"scheduler-conf", required_argument, set_conf},
    {"scheduler-name", required_argument, set_name},
    {"sessions", required_argument, set_sessions},
    {"output", required_argument, set_output},
    {"synthetic", required_argument, set_synthetic},
    {"full-scan", no_argument, set_full_scan},
    {"stats", no_argument, set_stats},
    {"default-queue", required_argument, set_default_queue},
    {"strict-conf", no_argument, set_strict},
    {"until-done", no_argument, set_until},
    {"schedule-period", required_argument, set_period},
    {"default-runtime", required_argument, set_runtime},
    {"time-limit", required_argument, set_limit},
    {"csv", required_argument, set_csv},
    {"plot", required_argument, set_plot},
    {"workload-podgroups", optional_argument, set_workload},
    {"swf", required_argument, set_swf},
    {"swf-processor", required_argument, set_swf_processor},
    {"swf-node", required_argument, set_swf_node},
    {"swf-nodes", required_argument, set_swf_nodes},
    {"compare-confs", required_argument, set_compare},
    {"progress", optional_argument, set_progress},
    {"summary", no_argument, set_summary},
    {"v", required_argument, set_verbosity},
    {"version", no_argument, show_version},
    {"help", no_argument, show_help},
};

static const struct flag *flag_named(const char *name)
{
        for (size_t i = 0; i < KB_ARRAY_SIZE(flags); i++)
                if (strcmp(flags[i].name, name) == 0)
                        return &flags[i];
        return NULL;
}

/* What the flags say together, once all are read. */
static int check_args(struct sim_args *a, int argc, char **argv)
{
        a->files = argv + optind;
        a->nfiles = argc - optind;
        if (!a->nsynthetic && !a->swf && !a->nfiles) {
                fprintf(stderr,
                        "kbatch-sim: no manifests, no --synthetic and no --swf; see --help\n");
                return 2;
        }
        if (!a->output)
                a->output = isatty(STDOUT_FILENO) ? "table" : "json";
        if ((a->csv || a->plot) && !a->until_done) {
                fprintf(stderr, "kbatch-sim: %s: figures over time need --until-done\n",
                        a->csv ? "--csv" : "--plot");
                return 2;
        }
        if (a->progress < 0)
                a->progress = a->until_done && isatty(STDERR_FILENO);
        if (a->until_done && a->sessions_set)
                a->sim.max_sessions = a->sessions;
        return GO_ON;
}

int sim_args_parse(int argc, char **argv, struct sim_args *a, struct kb_cluster *c)
{
        struct option opts[KB_ARRAY_SIZE(flags) + 1];
        int opt, idx, rc;

        memset(a, 0, sizeof(*a));
        a->sessions = 1;
        a->progress = -1;
        kb_sim_opts_init(&a->sim);
        kb_swf_opts_init(&a->swf_opts);
        for (size_t i = 0; i < KB_ARRAY_SIZE(flags); i++)
                opts[i] = (struct option){flags[i].name, flags[i].has_arg, NULL, 0};
        opts[KB_ARRAY_SIZE(flags)] = (struct option){NULL, 0, NULL, 0};
        while ((opt = getopt_long(argc, argv, "v:h", opts, &idx)) != -1) {
                const char *name = opt == 0     ? opts[idx].name
                                   : opt == 'v' ? "v"
                                   : opt == 'h' ? "help"
                                                : NULL;
                const struct flag *f = name ? flag_named(name) : NULL;
                if (!f) {
                        sim_usage(stderr);
                        return 2;
                }
                if ((rc = f->set(a, c, optarg)) != GO_ON)
                        return rc;
        }
        return check_args(a, argc, argv);
}
