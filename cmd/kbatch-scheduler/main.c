/*
 * kbatch-scheduler: the gang batch scheduler daemon.  Flags follow Volcano's
 * vc-scheduler where it has one; see docs/scheduler.md.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "framework/framework.h"
#include "scheduler/scheduler.h"

#define KB_VERSION "0.1.0"

static void usage(FILE *f)
{
        fprintf(
            f, "usage: kbatch-scheduler [flags]\n"
               "\n"
               "The kbatch gang batch scheduler: watches a cluster, runs a scheduling session\n"
               "every period and binds the pods of ready gangs together.\n"
               "\n"
               "  --kubeconfig FILE                   kubeconfig (default: $KUBECONFIG, the\n"
               "                                      in-cluster service account, ~/.kube/config)\n"
               "  --master URL                        API server address (overrides the "
               "kubeconfig)\n"
               "  --context NAME                      kubeconfig context (default: current)\n"
               "  --allow-insecure-token              send the kubeconfig's token or exec\n"
               "                                      credential to a plain http:// server too\n"
               "                                      (default: https only, as client-go)\n"
               "  --scheduler-name NAME               schedulerName of the pods to schedule\n"
               "                                      (repeatable; default kbatch)\n"
               "  --scheduler-conf FILE               Volcano-format conf, reloaded when it "
               "changes\n"
               "                                      (default: the built-in conf)\n"
               "  --strict-conf                       refuse a conf naming an action, plugin,\n"
               "                                      flag or argument kbatch would skip\n"
               "  --schedule-period DURATION          time between sessions (default 1s)\n"
               "  --default-queue NAME                queue of PodGroups that name none "
               "(default\n"
               "                                      default; created when missing)\n"
               "  --workload-podgroups[=BOOL]         make the PodGroups of pods that name none\n"
               "                                      (podgroup-<controller uid>) and of\n"
               "                                      scheduler-plugins PodGroups (default "
               "true)\n"
               "  --leader-elect[=BOOL]               run leader election (default false)\n"
               "  --leader-elect-lease-duration D     default 15s\n"
               "  --leader-elect-renew-deadline D     default 10s\n"
               "  --leader-elect-retry-period D       default 2s\n"
               "  --lock-object-namespace NS          namespace of the Lease (default "
               "kube-system)\n"
               "  --leader-elect-resource-name NAME   name of the Lease (default kbatch)\n"
               "  --leader-elect-identity ID          identity in the Lease (default "
               "hostname_pid)\n"
               "  --listen-address HOST:PORT          serve /metrics, /healthz, /readyz\n"
               "  --kube-api-qps N                    client rate limit (default 20000)\n"
               "  --kube-api-burst N                  client burst (default 20000)\n"
               "  --kube-api-max-inflight N           requests on the wire at once, halved\n"
               "                                      while the server answers 429 (default 32)\n"
               "  --dump-dir DIR                      where SIGUSR1 writes cache dumps "
               "(default\n"
               "                                      $TMPDIR or /tmp)\n"
               "  -v N                                log verbosity\n"
               "  --version                           print the version\n"
               "  --help\n"
               "\n"
               "Signals: SIGTERM/SIGINT stop gracefully, SIGUSR1 dumps the cache as JSON.\n");
}

/* "1s", "500ms", "2m", "1.5" (seconds). */
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

enum {
        OPT_KUBECONFIG = 256,
        OPT_MASTER,
        OPT_CONTEXT,
        OPT_NAME,
        OPT_CONF,
        OPT_PERIOD,
        OPT_QUEUE,
        OPT_LE,
        OPT_LE_DUR,
        OPT_LE_RENEW,
        OPT_LE_RETRY,
        OPT_LE_NS,
        OPT_LE_NAME,
        OPT_LE_ID,
        OPT_LISTEN,
        OPT_QPS,
        OPT_BURST,
        OPT_INFLIGHT,
        OPT_DUMP,
        OPT_STRICT,
        OPT_INSECURE_TOKEN,
        OPT_WORKLOAD,
        OPT_VERSION,
        OPT_HELP,
};

int main(int argc, char **argv)
{
        static const struct option longopts[] = {
            {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
            {"master", required_argument, NULL, OPT_MASTER},
            {"context", required_argument, NULL, OPT_CONTEXT},
            {"scheduler-name", required_argument, NULL, OPT_NAME},
            {"scheduler-conf", required_argument, NULL, OPT_CONF},
            {"schedule-period", required_argument, NULL, OPT_PERIOD},
            {"default-queue", required_argument, NULL, OPT_QUEUE},
            {"leader-elect", optional_argument, NULL, OPT_LE},
            {"leader-elect-lease-duration", required_argument, NULL, OPT_LE_DUR},
            {"leader-elect-renew-deadline", required_argument, NULL, OPT_LE_RENEW},
            {"leader-elect-retry-period", required_argument, NULL, OPT_LE_RETRY},
            {"lock-object-namespace", required_argument, NULL, OPT_LE_NS},
            {"leader-elect-resource-namespace", required_argument, NULL, OPT_LE_NS},
            {"leader-elect-resource-name", required_argument, NULL, OPT_LE_NAME},
            {"leader-elect-identity", required_argument, NULL, OPT_LE_ID},
            {"listen-address", required_argument, NULL, OPT_LISTEN},
            {"kube-api-qps", required_argument, NULL, OPT_QPS},
            {"kube-api-burst", required_argument, NULL, OPT_BURST},
            {"kube-api-max-inflight", required_argument, NULL, OPT_INFLIGHT},
            {"dump-dir", required_argument, NULL, OPT_DUMP},
            {"strict-conf", no_argument, NULL, OPT_STRICT},
            {"allow-insecure-token", no_argument, NULL, OPT_INSECURE_TOKEN},
            {"workload-podgroups", optional_argument, NULL, OPT_WORKLOAD},
            {"version", no_argument, NULL, OPT_VERSION},
            {"help", no_argument, NULL, OPT_HELP},
            {NULL, 0, NULL, 0},
        };
        struct kb_sched_opts o;
        kb_sched_opts_init(&o);
        const char **names = NULL;
        size_t nnames = 0, capnames = 0;
        int opt, rc = 2;
        double d;
        struct kb_conf conf = {0};
        int li = -1; /* the long option getopt_long matched, for messages */
        while ((opt = getopt_long(argc, argv, "v:h", longopts, &li)) != -1) {
                switch (opt) {
                case 'v':
                        kb_verbosity = atoi(optarg);
                        break;
                case OPT_KUBECONFIG:
                        o.kubeconfig = optarg;
                        break;
                case OPT_INSECURE_TOKEN:
                        o.allow_insecure_token = true;
                        break;
                case OPT_MASTER:
                        o.master = optarg;
                        break;
                case OPT_CONTEXT:
                        o.context = optarg;
                        break;
                case OPT_NAME:
                        KB_PUSH(names, nnames, capnames, optarg);
                        break;
                case OPT_CONF:
                        o.conf_path = optarg;
                        break;
                case OPT_PERIOD:
                        if (!parse_duration(optarg, &o.period) || o.period < 0.001)
                                goto bad;
                        break;
                case OPT_QUEUE:
                        o.default_queue = optarg;
                        break;
                case OPT_LE:
                        if (!parse_bool(optarg, &o.leader_elect))
                                goto bad;
                        break;
                case OPT_LE_DUR:
                        if (!parse_duration(optarg, &o.lease_duration) || o.lease_duration < 1)
                                goto bad;
                        break;
                case OPT_LE_RENEW:
                        if (!parse_duration(optarg, &o.renew_deadline) || o.renew_deadline <= 0)
                                goto bad;
                        break;
                case OPT_LE_RETRY:
                        if (!parse_duration(optarg, &o.retry_period) || o.retry_period <= 0)
                                goto bad;
                        break;
                case OPT_LE_NS:
                        o.lock_namespace = optarg;
                        break;
                case OPT_LE_NAME:
                        o.lock_name = optarg;
                        break;
                case OPT_LE_ID:
                        o.identity = optarg;
                        break;
                case OPT_LISTEN:
                        o.listen_address = optarg;
                        break;
                case OPT_QPS:
                        if (!parse_duration(optarg, &o.qps) || o.qps <= 0)
                                goto bad;
                        break;
                case OPT_BURST:
                        if (!parse_duration(optarg, &d) || d < 1)
                                goto bad;
                        o.burst = (int)d;
                        break;
                case OPT_INFLIGHT:
                        if (!parse_duration(optarg, &d) || d < 1 || d > 1024)
                                goto bad;
                        o.max_inflight = (int)d;
                        break;
                case OPT_DUMP:
                        o.dump_dir = optarg;
                        break;
                case OPT_WORKLOAD:
                        if (!parse_bool(optarg, &o.workload_podgroups))
                                goto bad;
                        break;
                case OPT_STRICT:
                        o.strict_conf = true;
                        break;
                case OPT_VERSION:
                        printf("kbatch-scheduler %s\n", KB_VERSION);
                        free(names);
                        return 0;
                case OPT_HELP:
                case 'h':
                        usage(stdout);
                        free(names);
                        return 0;
                default:
                        usage(stderr);
                        free(names);
                        return 2;
                }
                continue;
        bad:
                /* By the matched entry: two spellings share OPT_LE_NS. */
                fprintf(stderr, "kbatch-scheduler: bad value for --%s: %s\n",
                        li >= 0 ? longopts[li].name : "?", optarg ? optarg : "");
                free(names);
                return 2;
        }
        if (optind < argc) {
                fprintf(stderr, "kbatch-scheduler: unexpected argument %s\n", argv[optind]);
                usage(stderr);
                free(names);
                return 2;
        }
        if (o.leader_elect &&
            !(o.retry_period < o.renew_deadline && o.renew_deadline < o.lease_duration)) {
                fprintf(stderr, "kbatch-scheduler: leader election needs retry period < renew "
                                "deadline < lease duration\n");
                free(names);
                return 2;
        }
        if (nnames) {
                o.scheduler_names = names;
                o.nscheduler_names = nnames;
        }

        char err[1024];
        int e = o.conf_path ? kb_conf_load_file(o.conf_path, &conf, err, sizeof(err))
                            : kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml),
                                            &conf, err, sizeof(err));
        if (!e && o.strict_conf)
                e = kb_conf_strict(&conf, err, sizeof(err));
        if (e) {
                fprintf(stderr, "kbatch-scheduler: --scheduler-conf %s: %s\n",
                        o.conf_path ? o.conf_path : "(built-in)", err);
                kb_conf_release(&conf);
                free(names);
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        rc = kb_scheduler_run(&o, &conf);
        free(names);
        return rc;
}
