/*
 * kbatch-apiserver's flags: one table, one row per flag (its name, what it
 * sets and the range it accepts), read with getopt_long and looked up by
 * name.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cmd/kbatch-apiserver/cli.h"

void cli_usage(FILE *f)
{
        fprintf(f,
                "usage: kbatch-apiserver [flags]\n"
                "\n"
                "A local, in-memory Kubernetes API server for kubectl and kbatch: for local\n"
                "use, demos and tests only.\n"
                "\n"
                "  --listen HOST:PORT        address to listen on (default 127.0.0.1:8080;\n"
                "                            port 0 picks a free port)\n"
                "  --allow-remote            allow a non-loopback listen address\n"
                "  --write-kubeconfig FILE   write a kubeconfig for this server once listening\n"
                "  --port-file FILE          write the port listened on\n"
                "  --tls                     serve HTTPS with a certificate from a CA the server\n"
                "                            makes itself (the kubeconfig trusts that CA)\n"
                "  --tls-cert-dir DIR        keep and reuse the CA and certificate in DIR\n"
                "                            (default: a fresh temp directory removed at exit)\n"
                "  --token TOKEN             require \"Authorization: Bearer TOKEN\" (all but\n"
                "                            /healthz, /readyz, /livez and /version)\n"
                "  --token-file FILE         read the token from FILE (or, with --generate-token,\n"
                "                            write it there)\n"
                "  --generate-token          require a new random token, written only to the\n"
                "                            kubeconfig and --token-file\n"
                "  --nodes N:RES[,...]       add N simulated nodes, e.g.\n"
                "                            \"4:cpu=8,memory=32Gi,pods=110,nvidia.com/gpu=8,"
                "label=k=v\"\n"
                "                            (repeatable; prefix=NAME names them NAME-1...)\n"
                "  --no-kubelet              do not simulate kubelets (bound pods stay Pending)\n"
                "  --no-job-controller       do not simulate the batch/v1 Job controller\n"
                "  --history N               watch events retained (older: 410); default 100000\n"
                "  --max-body-bytes N        request body limit; default 3145728\n"
                "  --bookmark-interval SECS  watch bookmark period; default 30\n"
                "  --request-header-timeout SECS\n"
                "                            close a connection idle that long before a\n"
                "                            request's headers are in; default 32\n"
                "  --request-timeout SECS    close a connection idle that long within a request\n"
                "                            or between kept-alive requests (never a watch that\n"
                "                            streams); default 60\n"
                "  --max-connections-per-client N\n"
                "                            connections one IP address may hold; default 256\n"
                "                            (0: no limit)\n"
                "  --max-connections N       connections in all; default 2048 (less under a\n"
                "                            lower open-files limit)\n"
                "  --max-watches N           watches streaming at once, then 429; default 1024\n"
                "                            (0: no limit)\n"
                "  -v N                      log verbosity\n"
                "\n"
                "Faults for tests (all off by default; each injected fault is logged):\n"
                "  --fault-write-rate F      fail fraction F of create, binding and status writes\n"
                "  --fault-write-code CODE   500 (default) or 429 (with Retry-After)\n"
                "  --fault-retry-after SECS  Retry-After for 429; default 1\n"
                "  --fault-latency-ms MS     delay every request\n"
                "  --fault-watch-close SECS  close every watch stream after SECS\n"
                "  --fault-watch-410 F       answer fraction F of watches from a resourceVersion\n"
                "                            with 410 Expired\n"
                "  --fault-refuse FROM:FOR   refuse connections from FROM seconds after start,\n"
                "                            for FOR seconds\n"
                "  --seed N                  seed for fault rolls and generated names\n");
}

static bool parse_double(const char *s, double min, double max, double *out)
{
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (errno || end == s || *end || v < min || v > max)
                return false;
        *out = v;
        return true;
}

/* What a flag sets, at offset off of struct cli. */
enum flag_kind {
        SET_TRUE,  /* a bool */
        SET_FALSE, /* a bool */
        SET_STR,   /* a const char * (argv's) */
        SET_SIZE,  /* a size_t within [min, max] */
        SET_UINT,  /* an unsigned within [min, max] */
        SET_INT,   /* an int within [min, max] */
        SET_REAL,  /* a double within [min, max] */
        SET_NODES, /* appended to nodes */
        SET_CODE,  /* an int, 500 or 429 */
        SET_SPAN,  /* FROM:FOR seconds into two doubles, FROM >= 0, FOR > 0 */
        SET_SEED,  /* a uint64_t */
};

struct flag {
        const char *name;
        enum flag_kind kind;
        size_t off;
        double min, max;
};

#define AT(field) offsetof(struct cli, field)
static const struct flag flags[] = {
    {"listen", SET_STR, AT(listen), 0, 0},
    {"allow-remote", SET_TRUE, AT(allow_remote), 0, 0},
    {"write-kubeconfig", SET_STR, AT(kubeconfig), 0, 0},
    {"port-file", SET_STR, AT(port_file), 0, 0},
    {"nodes", SET_NODES, 0, 0, 0},
    {"no-kubelet", SET_FALSE, AT(o.kubelet), 0, 0},
    {"no-job-controller", SET_FALSE, AT(o.job_controller), 0, 0},
    {"history", SET_SIZE, AT(o.history), 1, 10000000},
    {"max-body-bytes", SET_SIZE, AT(o.max_body), 1024, 1e9},
    {"request-header-timeout", SET_REAL, AT(o.header_timeout), 1, 86400},
    {"request-timeout", SET_REAL, AT(o.request_timeout), 1, 86400},
    {"max-connections-per-client", SET_UINT, AT(o.max_conns_per_client), 0, 1000000},
    {"max-connections", SET_UINT, AT(o.max_conns), 1, 1000000},
    {"max-watches", SET_UINT, AT(o.max_watches), 0, 1000000},
    {"bookmark-interval", SET_REAL, AT(o.bookmark_interval), 0.05, 86400},
    {"fault-write-rate", SET_REAL, AT(o.fault_write_rate), 0, 1},
    {"fault-write-code", SET_CODE, AT(o.fault_write_code), 0, 0},
    {"fault-retry-after", SET_INT, AT(o.fault_retry_after), 1, 3600},
    {"fault-latency-ms", SET_INT, AT(o.fault_latency_ms), 0, 60000},
    {"fault-watch-close", SET_REAL, AT(o.fault_watch_close), 0.1, 86400},
    {"fault-watch-410", SET_REAL, AT(o.fault_watch_410), 0, 1},
    {"fault-refuse", SET_SPAN, AT(o.fault_refuse_from), 0, 0},
    {"seed", SET_SEED, AT(o.seed), 0, 0},
    {"tls", SET_TRUE, AT(tls), 0, 0},
    {"tls-cert-dir", SET_STR, AT(tls_dir), 0, 0},
    {"token", SET_STR, AT(token_arg), 0, 0},
    {"token-file", SET_STR, AT(token_file), 0, 0},
    {"generate-token", SET_TRUE, AT(generate_token), 0, 0},
    {"help", SET_TRUE, AT(help), 0, 0},
};
#undef AT

static const struct flag *flag_find(const char *name)
{
        for (size_t i = 0; i < KB_ARRAY_SIZE(flags); i++)
                if (!strcmp(flags[i].name, name))
                        return &flags[i];
        return NULL;
}

/* Sets what f names from arg; false for a value it does not take. */
static bool flag_set(struct cli *c, const struct flag *f, const char *arg)
{
        char *at = (char *)c + f->off;
        double d;
        switch (f->kind) {
        case SET_TRUE:
        case SET_FALSE:
                *(bool *)at = f->kind == SET_TRUE;
                return true;
        case SET_STR:
                *(const char **)at = arg;
                return true;
        case SET_NODES:
                KB_PUSH(c->nodes, c->nnodes, c->capnodes, arg);
                return true;
        case SET_CODE:
                *(int *)at = atoi(arg);
                return *(int *)at == 500 || *(int *)at == 429;
        case SET_SPAN: {
                double *from = (double *)at, *len = &c->o.fault_refuse_for;
                return sscanf(arg, "%lf:%lf", from, len) == 2 && *from >= 0 && *len > 0;
        }
        case SET_SEED:
                *(uint64_t *)at = strtoull(arg, NULL, 10);
                return true;
        default:
                break;
        }
        if (!parse_double(arg, f->min, f->max, &d))
                return false;
        if (f->kind == SET_SIZE)
                *(size_t *)at = (size_t)d;
        else if (f->kind == SET_UINT)
                *(unsigned *)at = (unsigned)d;
        else if (f->kind == SET_INT)
                *(int *)at = (int)d;
        else
                *(double *)at = d;
        return true;
}

int cli_parse(struct cli *c, int argc, char **argv)
{
        memset(c, 0, sizeof(*c));
        kb_apiserver_opts_init(&c->o);
        c->listen = "127.0.0.1:8080";
        struct option longopts[KB_ARRAY_SIZE(flags) + 1];
        for (size_t i = 0; i < KB_ARRAY_SIZE(flags); i++) {
                bool arg = flags[i].kind != SET_TRUE && flags[i].kind != SET_FALSE;
                longopts[i] =
                    (struct option){flags[i].name, arg ? required_argument : no_argument, NULL, 0};
        }
        longopts[KB_ARRAY_SIZE(flags)] = (struct option){NULL, 0, NULL, 0};
        int opt, idx;
        while ((opt = getopt_long(argc, argv, "v:h", longopts, &idx)) != -1) {
                if (opt == 'v') {
                        kb_verbosity = atoi(optarg);
                } else if (opt == 'h') {
                        c->help = true;
                } else if (opt != 0) {
                        cli_usage(stderr);
                        return 2;
                } else {
                        const struct flag *f = flag_find(longopts[idx].name);
                        if (!flag_set(c, f, optarg)) {
                                fprintf(stderr, "kbatch-apiserver: bad value for --%s: %s\n",
                                        f->name, optarg);
                                return 2;
                        }
                }
                if (c->help)
                        return 0;
        }
        if (optind < argc) {
                cli_usage(stderr);
                return 2;
        }
        return 0;
}

void cli_release(struct cli *c)
{
        free(c->nodes);
        c->nodes = NULL;
}
