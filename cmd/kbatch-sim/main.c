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
                "stdin: nodes, pods, batch/v1 Jobs, PodGroups, Queues, PriorityClasses)\n"
                "or a synthetic cluster, and prints the decisions.\n"
                "\n"
                "  --scheduler-conf FILE   Volcano-format conf (default: Volcano's default)\n"
                "  --strict-conf           refuse a conf naming an action, plugin, flag or\n"
                "                          argument kbatch would skip (exit 2)\n"
                "  --scheduler-name NAME   schedule pods with this schedulerName (repeatable;\n"
                "                          default kbatch)\n"
                "  --default-queue NAME    queue of groups and pods that name none (default)\n"
                "  --sessions N            sessions to run; decisions apply between them (1)\n"
                "  --output json|table     output format (table on a terminal, else json)\n"
                "  --synthetic SPEC        build a cluster (repeatable; see docs/PERFORMANCE.md):\n"
                "                          nodes=N,node-cpu=C,node-memory=M,\n"
                "                          node-pods=P,groups=G,group-size=S,pod-cpu=C,\n"
                "                          pod-memory=M,queues=Q[,besteffort-groups=B,running=1,\n"
                "                          priority=P,prefix=NAME,queue=NAME]\n"
                "  --full-scan             choose nodes by scanning every node (for checking\n"
                "                          the caches; same placements, slower)\n"
                "  --stats                 print timing, bind counts and peak memory to stderr\n"
                "  -v, --v N               log verbosity\n"
                "  --version, --help\n"
                "\n"
                "Exit status: 0 ok, 1 runtime failure, 2 bad usage or bad input.\n");
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
                OPT_STRICT
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
            {"v", required_argument, NULL, 'v'},
            {"version", no_argument, NULL, OPT_VERSION},
            {"help", no_argument, NULL, 'h'},
            {NULL, 0, NULL, 0},
        };
        const char *conf_path = NULL, *output = NULL;
        const char *synthetic[16];
        size_t nsynthetic = 0;
        long sessions = 1;
        bool full_scan = false, stats = false, strict = false;
        struct kb_cluster cluster;
        struct kb_conf conf;
        char err[2048];
        int rc = 2, opt;

        kb_cluster_init(&cluster);
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
                case OPT_SESSIONS:
                        sessions = strtol(optarg, &end, 10);
                        if (*end || sessions < 1 || sessions > 1000000) {
                                fprintf(stderr,
                                        "kbatch-sim: --sessions: want a number >= 1, "
                                        "got \"%s\"\n",
                                        optarg);
                                goto out;
                        }
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
        if (!nsynthetic && optind == argc) {
                fprintf(stderr, "kbatch-sim: no manifests and no --synthetic; see --help\n");
                goto out;
        }
        if (!output)
                output = isatty(STDOUT_FILENO) ? "table" : "json";

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

        cluster.now = (double)time(NULL);
        for (size_t i = 0; i < nsynthetic; i++)
                if (kb_cluster_synthetic(&cluster, synthetic[i], err, sizeof(err))) {
                        fprintf(stderr, "kbatch-sim: %s\n", err);
                        goto out_conf;
                }
        for (int i = optind; i < argc; i++) {
                char *text;
                size_t len;
                int frc = kb_read_file(argv[i], &text, &len);
                if (frc) {
                        fprintf(stderr, "kbatch-sim: %s: %s\n", argv[i], kb_strerror(frc));
                        goto out_conf;
                }
                frc = kb_cluster_load(&cluster, strcmp(argv[i], "-") ? argv[i] : "<stdin>", text,
                                      len, err, sizeof(err));
                free(text);
                if (frc) {
                        fprintf(stderr, "kbatch-sim: %s\n", err);
                        goto out_conf;
                }
        }
        if (kb_cluster_ensure_default_queue(&cluster))
                KB_V(1, "no queue named %s in the input: using one with weight 1",
                     cluster.default_queue);

        struct kb_value *doc = kb_value_new(KB_VOBJECT);
        struct kb_value *list = kb_value_new(KB_VARRAY);
        kb_value_set(doc, "sessions", list);
        rc = 0;
        for (long i = 1; i <= sessions; i++) {
                struct kb_snapshot snap;
                struct kb_result result;
                kb_cluster_snapshot(&cluster, &snap);
                if (kb_session_run(&snap, &conf, &result) != 0) {
                        fprintf(stderr,
                                "kbatch-sim: session %ld: the conf names a missing "
                                "action or plugin\n",
                                i);
                        rc = 1;
                }
                if (strcmp(output, "json") == 0)
                        kb_result_to_json(&result, (int)i, list);
                else
                        kb_result_print_table(&result, (int)i, &cluster, stdout);
                if (stats) {
                        fprintf(stderr, "session %ld: %.6fs, %zu binds\n", i, result.duration,
                                result.nbinds);
                        domain_stats(&result, i);
                }
                kb_cluster_apply(&cluster, &result);
                kb_result_release(&result);
        }
        if (strcmp(output, "json") == 0) {
                char *text = kb_json_emit(doc, false);
                puts(text);
                free(text);
        }
        kb_value_free(doc);
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
