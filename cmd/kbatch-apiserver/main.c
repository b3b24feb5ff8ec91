/*
 * kbatch-apiserver: a local, in-memory Kubernetes API for kubectl and the
 * kbatch scheduler, with simulated nodes, kubelets and Job controller.  For
 * local use, demos and tests; production clusters run the real API server.
 *
 * HTTPS and tokens: --tls makes (or reuses) a private CA and a server
 * certificate in --tls-cert-dir, by default a fresh private temp directory
 * removed at exit; the kubeconfig carries the CA.  A token is never logged:
 * it goes only into the kubeconfig and --token-file.
 *
 * Signals: SIGINT and SIGTERM are blocked in every thread and taken with
 * sigwait here, so shutdown runs on the main thread and frees everything.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apiserver/apiserver.h"
#include "base/base.h"

static void usage(FILE *f)
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

enum {
        OPT_LISTEN = 256,
        OPT_ALLOW_REMOTE,
        OPT_KUBECONFIG,
        OPT_PORT_FILE,
        OPT_NODES,
        OPT_NO_KUBELET,
        OPT_NO_JOBS,
        OPT_HISTORY,
        OPT_MAX_BODY,
        OPT_HDR_TIMEOUT,
        OPT_REQ_TIMEOUT,
        OPT_MAX_CONN_CLIENT,
        OPT_MAX_CONN,
        OPT_MAX_WATCHES,
        OPT_BOOKMARK,
        OPT_F_RATE,
        OPT_F_CODE,
        OPT_F_RETRY,
        OPT_F_LAT,
        OPT_F_WCLOSE,
        OPT_F_W410,
        OPT_F_REFUSE,
        OPT_SEED,
        OPT_TLS,
        OPT_TLS_DIR,
        OPT_TOKEN,
        OPT_TOKEN_FILE,
        OPT_GEN_TOKEN,
        OPT_HELP,
};

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

static bool is_loopback(const char *host)
{
        return !strcmp(host, "localhost") || kb_has_prefix(host, "127.");
}

/* Reads a token from the first line of path, blanks around it dropped. */
static int read_token(const char *path, char **out)
{
        char *text;
        int err = kb_read_file(path, &text, NULL);
        if (err)
                return err;
        char *p = text + strspn(text, " \t\r\n");
        size_t n = strcspn(p, "\r\n");
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
                n--;
        *out = kb_xstrndup(p, n);
        explicit_bzero(text, strlen(text));
        free(text);
        return 0;
}

/*
 * The token from --token, --token-file or --generate-token into *token
 * (heap; NULL for no authentication).  Returns 0, or 2 after saying what is
 * wrong.  The token itself is never printed.
 */
static int setup_token(const char *arg, const char *file, bool generate, char **token)
{
        *token = NULL;
        if (arg && (file || generate)) {
                fprintf(stderr, "kbatch-apiserver: --token: give one of --token, --token-file "
                                "and --generate-token (--token-file names where a generated "
                                "token goes)\n");
                return 2;
        }
        if (generate) {
                char buf[KB_APISERVER_TOKEN_LEN + 1];
                if (kb_apiserver_token_new(buf)) {
                        fprintf(stderr, "kbatch-apiserver: --generate-token: no random bytes\n");
                        return 2;
                }
                *token = kb_xstrdup(buf);
                explicit_bzero(buf, sizeof(buf));
                return 0;
        }
        if (file) {
                int err = read_token(file, token);
                if (err) {
                        fprintf(stderr, "kbatch-apiserver: --token-file %s: %s\n", file,
                                kb_strerror(err));
                        return 2;
                }
        } else if (arg) {
                *token = kb_xstrdup(arg);
        } else {
                return 0;
        }
        if (!kb_apiserver_token_valid(*token)) {
                fprintf(stderr,
                        "kbatch-apiserver: %s: the token must be 1 to 4096 characters of "
                        "A-Z a-z 0-9 - . _ ~ + / =\n",
                        file ? file : "--token");
                explicit_bzero(*token, strlen(*token));
                free(*token);
                *token = NULL;
                return 2;
        }
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option longopts[] = {
            {"listen", required_argument, NULL, OPT_LISTEN},
            {"allow-remote", no_argument, NULL, OPT_ALLOW_REMOTE},
            {"write-kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
            {"port-file", required_argument, NULL, OPT_PORT_FILE},
            {"nodes", required_argument, NULL, OPT_NODES},
            {"no-kubelet", no_argument, NULL, OPT_NO_KUBELET},
            {"no-job-controller", no_argument, NULL, OPT_NO_JOBS},
            {"history", required_argument, NULL, OPT_HISTORY},
            {"max-body-bytes", required_argument, NULL, OPT_MAX_BODY},
            {"request-header-timeout", required_argument, NULL, OPT_HDR_TIMEOUT},
            {"request-timeout", required_argument, NULL, OPT_REQ_TIMEOUT},
            {"max-connections-per-client", required_argument, NULL, OPT_MAX_CONN_CLIENT},
            {"max-connections", required_argument, NULL, OPT_MAX_CONN},
            {"max-watches", required_argument, NULL, OPT_MAX_WATCHES},
            {"bookmark-interval", required_argument, NULL, OPT_BOOKMARK},
            {"fault-write-rate", required_argument, NULL, OPT_F_RATE},
            {"fault-write-code", required_argument, NULL, OPT_F_CODE},
            {"fault-retry-after", required_argument, NULL, OPT_F_RETRY},
            {"fault-latency-ms", required_argument, NULL, OPT_F_LAT},
            {"fault-watch-close", required_argument, NULL, OPT_F_WCLOSE},
            {"fault-watch-410", required_argument, NULL, OPT_F_W410},
            {"fault-refuse", required_argument, NULL, OPT_F_REFUSE},
            {"seed", required_argument, NULL, OPT_SEED},
            {"tls", no_argument, NULL, OPT_TLS},
            {"tls-cert-dir", required_argument, NULL, OPT_TLS_DIR},
            {"token", required_argument, NULL, OPT_TOKEN},
            {"token-file", required_argument, NULL, OPT_TOKEN_FILE},
            {"generate-token", no_argument, NULL, OPT_GEN_TOKEN},
            {"help", no_argument, NULL, OPT_HELP},
            {NULL, 0, NULL, 0},
        };
        struct kb_apiserver_opts o;
        kb_apiserver_opts_init(&o);
        const char *listen = "127.0.0.1:8080", *kubeconfig = NULL, *port_file = NULL;
        bool allow_remote = false;
        const char **nodes = NULL;
        size_t nnodes = 0, capnodes = 0;
        bool tls = false, generate_token = false;
        const char *tls_dir = NULL, *token_arg = NULL, *token_file = NULL;
        int opt, rc = 2;
        double d;
        while ((opt = getopt_long(argc, argv, "v:h", longopts, NULL)) != -1) {
                switch (opt) {
                case 'v':
                        kb_verbosity = atoi(optarg);
                        break;
                case OPT_LISTEN:
                        listen = optarg;
                        break;
                case OPT_ALLOW_REMOTE:
                        allow_remote = true;
                        break;
                case OPT_KUBECONFIG:
                        kubeconfig = optarg;
                        break;
                case OPT_PORT_FILE:
                        port_file = optarg;
                        break;
                case OPT_NODES:
                        KB_PUSH(nodes, nnodes, capnodes, optarg);
                        break;
                case OPT_NO_KUBELET:
                        o.kubelet = false;
                        break;
                case OPT_NO_JOBS:
                        o.job_controller = false;
                        break;
                case OPT_HISTORY:
                        if (!parse_double(optarg, 1, 10000000, &d))
                                goto bad;
                        o.history = (size_t)d;
                        break;
                case OPT_MAX_BODY:
                        if (!parse_double(optarg, 1024, 1e9, &d))
                                goto bad;
                        o.max_body = (size_t)d;
                        break;
                case OPT_HDR_TIMEOUT:
                        if (!parse_double(optarg, 1, 86400, &o.header_timeout))
                                goto bad;
                        break;
                case OPT_REQ_TIMEOUT:
                        if (!parse_double(optarg, 1, 86400, &o.request_timeout))
                                goto bad;
                        break;
                case OPT_MAX_CONN_CLIENT:
                        if (!parse_double(optarg, 0, 1000000, &d))
                                goto bad;
                        o.max_conns_per_client = (unsigned)d;
                        break;
                case OPT_MAX_CONN:
                        if (!parse_double(optarg, 1, 1000000, &d))
                                goto bad;
                        o.max_conns = (unsigned)d;
                        break;
                case OPT_MAX_WATCHES:
                        if (!parse_double(optarg, 0, 1000000, &d))
                                goto bad;
                        o.max_watches = (unsigned)d;
                        break;
                case OPT_BOOKMARK:
                        if (!parse_double(optarg, 0.05, 86400, &o.bookmark_interval))
                                goto bad;
                        break;
                case OPT_F_RATE:
                        if (!parse_double(optarg, 0, 1, &o.fault_write_rate))
                                goto bad;
                        break;
                case OPT_F_CODE:
                        o.fault_write_code = atoi(optarg);
                        if (o.fault_write_code != 500 && o.fault_write_code != 429)
                                goto bad;
                        break;
                case OPT_F_RETRY:
                        if (!parse_double(optarg, 1, 3600, &d))
                                goto bad;
                        o.fault_retry_after = (int)d;
                        break;
                case OPT_F_LAT:
                        if (!parse_double(optarg, 0, 60000, &d))
                                goto bad;
                        o.fault_latency_ms = (int)d;
                        break;
                case OPT_F_WCLOSE:
                        if (!parse_double(optarg, 0.1, 86400, &o.fault_watch_close))
                                goto bad;
                        break;
                case OPT_F_W410:
                        if (!parse_double(optarg, 0, 1, &o.fault_watch_410))
                                goto bad;
                        break;
                case OPT_F_REFUSE:
                        if (sscanf(optarg, "%lf:%lf", &o.fault_refuse_from, &o.fault_refuse_for) !=
                                2 ||
                            o.fault_refuse_from < 0 || o.fault_refuse_for <= 0)
                                goto bad;
                        break;
                case OPT_SEED:
                        o.seed = strtoull(optarg, NULL, 10);
                        break;
                case OPT_TLS:
                        tls = true;
                        break;
                case OPT_TLS_DIR:
                        tls_dir = optarg;
                        break;
                case OPT_TOKEN:
                        token_arg = optarg;
                        break;
                case OPT_TOKEN_FILE:
                        token_file = optarg;
                        break;
                case OPT_GEN_TOKEN:
                        generate_token = true;
                        break;
                case OPT_HELP:
                case 'h':
                        usage(stdout);
                        free(nodes);
                        return 0;
                default:
                        usage(stderr);
                        free(nodes);
                        return 2;
                }
                continue;
        bad:
                fprintf(stderr, "kbatch-apiserver: bad value for --%s: %s\n",
                        longopts[opt - OPT_LISTEN].name, optarg);
                free(nodes);
                return 2;
        }
        if (optind < argc) {
                usage(stderr);
                free(nodes);
                return 2;
        }
        struct kb_apiserver *srv = NULL;
        struct kb_apiserver_tls certs;
        kb_apiserver_tls_init(&certs);
        char *token = NULL, *made_dir = NULL;
        const char *colon = strrchr(listen, ':');
        char host[256];
        if (!colon || (size_t)(colon - listen) >= sizeof(host)) {
                fprintf(stderr, "kbatch-apiserver: --listen %s: want HOST:PORT\n", listen);
                goto out;
        }
        memcpy(host, listen, (size_t)(colon - listen));
        host[colon - listen] = 0;
        int port = atoi(colon + 1);
        if (port < 0 || port > 65535) {
                fprintf(stderr, "kbatch-apiserver: --listen %s: bad port\n", listen);
                goto out;
        }
        if (!is_loopback(host) && !allow_remote) {
                fprintf(stderr,
                        "kbatch-apiserver: --listen %s: not a loopback address; this server is for "
                        "local use, pass --allow-remote to listen there anyway\n",
                        listen);
                goto out;
        }
        if (tls_dir && !tls) {
                fprintf(stderr, "kbatch-apiserver: --tls-cert-dir needs --tls\n");
                goto out;
        }
        if (generate_token && !kubeconfig && !token_file) {
                fprintf(stderr, "kbatch-apiserver: --generate-token: the token would be written "
                                "nowhere; add --write-kubeconfig or --token-file\n");
                goto out;
        }
        if (setup_token(token_arg, token_file, generate_token, &token))
                goto out;
        if (token && !tls)
                KB_WARN("a bearer token over plain http: kubectl does not send tokens over http "
                        "(it says \"You must be logged in\"); add --tls");
        if (!token && !is_loopback(host))
                KB_WARN("listening on %s with no token: anyone who can reach it can change "
                        "anything; consider --tls --generate-token",
                        host);
        if (tls) {
                if (!kb_apiserver_tls_supported()) {
                        fprintf(stderr, "kbatch-apiserver: --tls: this libmicrohttpd was built "
                                        "without TLS support\n");
                        goto out;
                }
                if (!tls_dir) {
                        const char *base = getenv("TMPDIR");
                        made_dir = kb_xasprintf("%s/kbatch-apiserver-tls.XXXXXX",
                                                base && base[0] ? base : "/tmp");
                        if (!mkdtemp(made_dir)) {
                                fprintf(stderr, "kbatch-apiserver: %s: %s\n", made_dir,
                                        strerror(errno));
                                free(made_dir);
                                made_dir = NULL;
                                rc = 1;
                                goto out;
                        }
                        tls_dir = made_dir;
                }
                char err[512];
                if (kb_apiserver_tls_prepare(&certs, tls_dir, host, err, sizeof(err))) {
                        fprintf(stderr, "kbatch-apiserver: --tls: %s\n", err);
                        rc = 1;
                        goto out;
                }
                KB_INFO("TLS: %s CA and server certificate in %s (CA: %s/ca.crt)",
                        certs.generated ? "made a" : "reusing the", tls_dir, tls_dir);
                o.tls_cert = certs.cert;
                o.tls_key = certs.key;
        }
        o.token = token;

        /* Block the shutdown signals before any thread starts, so they all
         * inherit the mask and only sigwait below sees them. */
        sigset_t sigs;
        sigemptyset(&sigs);
        sigaddset(&sigs, SIGINT);
        sigaddset(&sigs, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &sigs, NULL);
        signal(SIGPIPE, SIG_IGN);

        srv = kb_apiserver_new(&o);
        for (size_t i = 0; i < nnodes; i++) {
                char err[256];
                if (kb_apiserver_add_nodes(srv, nodes[i], err, sizeof(err))) {
                        fprintf(stderr, "kbatch-apiserver: %s\n", err);
                        goto out;
                }
        }
        int err = kb_apiserver_start(srv, host, port);
        if (err) {
                fprintf(stderr, "kbatch-apiserver: cannot listen on %s: %s\n", listen,
                        kb_strerror(err));
                rc = 1;
                goto out;
        }
        port = kb_apiserver_port(srv);
        KB_INFO("kbatch-apiserver listening on %s://%s:%d%s (local use, demos and tests only)",
                tls ? "https" : "http", host, port, token ? " with a bearer token" : "");
        if (kubeconfig &&
            (err = kb_apiserver_write_kubeconfig(kubeconfig, host, port, certs.ca_cert, token))) {
                fprintf(stderr, "kbatch-apiserver: %s: %s\n", kubeconfig, kb_strerror(err));
                rc = 1;
                goto out;
        }
        if (generate_token && token_file) {
                struct kb_buf b;
                kb_buf_init(&b);
                kb_buf_printf(&b, "%s\n", token);
                err = kb_write_file(token_file, b.data, b.len, 0600);
                explicit_bzero(b.data, b.len);
                kb_buf_release(&b);
                if (err) {
                        fprintf(stderr, "kbatch-apiserver: %s: %s\n", token_file, kb_strerror(err));
                        rc = 1;
                        goto out;
                }
        }
        if (port_file) {
                FILE *f = fopen(port_file, "w");
                if (!f || fprintf(f, "%d\n", port) < 0 || fclose(f)) {
                        fprintf(stderr, "kbatch-apiserver: %s: %s\n", port_file, strerror(errno));
                        rc = 1;
                        goto out;
                }
        }
        int sig;
        sigwait(&sigs, &sig);
        KB_INFO("kbatch-apiserver: signal %d, shutting down", sig);
        rc = 0;
out:
        kb_apiserver_free(srv);
        kb_apiserver_tls_release(&certs);
        if (made_dir) {
                kb_apiserver_tls_remove(made_dir);
                free(made_dir);
        }
        if (token) {
                explicit_bzero(token, strlen(token));
                free(token);
        }
        free(nodes);
        return rc;
}
