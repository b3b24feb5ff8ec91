/* pkg/kube: base64, backoff, retry classes, kubeconfig loading, and the
 * client's lanes, fence, drop and supersede against an in-process
 * kbatch-apiserver. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apiserver/apiserver.h"
#include "kube/kube-int.h"
#include "testutil.h"

static void test_base64(void **state)
{
        size_t n;
        char *s = kb_base64_decode("aGVsbG8g\nd29ybGQ=", &n);
        assert_non_null(s);
        assert_string_equal(s, "hello world");
        assert_int_equal(n, 11);
        free(s);
        assert_null(kb_base64_decode("not*base64", &n));
}

static void test_backoff(void **state)
{
        assert_true(kb_kube_backoff(1, 0.2, 10, 0.5) == 0.2);
        assert_true(kb_kube_backoff(3, 0.2, 10, 0.5) > 0.79 &&
                    kb_kube_backoff(3, 0.2, 10, 0.5) < 0.81);
        assert_true(kb_kube_backoff(30, 0.2, 10, 0.5) == 10);
        assert_true(kb_kube_backoff(1, 1, 10, 0.0) == 0.5);
        assert_true(kb_kube_retryable(0) && kb_kube_retryable(429) && kb_kube_retryable(503));
        assert_false(kb_kube_retryable(409) || kb_kube_retryable(404) || kb_kube_retryable(201));
}

static char dir[64];

static int setup(void **state)
{
        snprintf(dir, sizeof(dir), "/tmp/kbkube.XXXXXX");
        assert_non_null(mkdtemp(dir));
        unsetenv("KUBECONFIG");
        return 0;
}

static int teardown(void **state)
{
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        return system(cmd);
}

static const char *write_file(const char *name, const char *text)
{
        static char path[256];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        return path;
}

static void test_kubeconfig(void **state)
{
        const char *p =
            write_file("kc", "apiVersion: v1\nkind: Config\n"
                             "current-context: a\n"
                             "clusters:\n"
                             "- name: ca\n  cluster:\n    server: https://a:6443/\n"
                             "    certificate-authority: ca.crt\n"
                             "- name: cb\n  cluster:\n    server: https://b:6443\n"
                             "    insecure-skip-tls-verify: true\n"
                             "    certificate-authority-data: aGVsbG8=\n"
                             "- name: cc\n  cluster:\n    server: https://c:6443\n"
                             "    insecure-skip-tls-verify: true\n"
                             "- name: cd\n  cluster:\n    server: https://d:6443\n"
                             "    insecure-skip-tls-verify: true\n"
                             "    certificate-authority: ca.crt\n"
                             "users:\n"
                             "- name: ua\n  user:\n    token: sekret\n"
                             "- name: ub\n  user:\n    tokenFile: /t/token\n"
                             "    client-certificate-data: Y2VydA==\n"
                             "    client-key: key.pem\n"
                             "contexts:\n"
                             "- name: a\n  context: {cluster: ca, user: ua, namespace: x}\n"
                             "- name: b\n  context: {cluster: cb, user: ub}\n"
                             "- name: c\n  context: {cluster: cc, user: ub}\n"
                             "- name: d\n  context: {cluster: cd, user: ub}\n"
                             "- name: bad\n  context: {cluster: nope, user: ua}\n");
        char path[256], err[256];
        snprintf(path, sizeof(path), "%s", p);
        struct kb_kube_config c;
        assert_int_equal(kb_kube_config_load(path, NULL, NULL, &c, err, sizeof(err)), 0);
        assert_string_equal(c.server, "https://a:6443");
        assert_string_equal(c.token, "sekret");
        assert_string_equal(c.namespace, "x");
        assert_non_null(strstr(c.ca_file, "/ca.crt"));
        assert_true(c.ca_file[0] == '/');
        assert_false(c.insecure);
        kb_kube_config_release(&c);

        /* insecure-skip-tls-verify with a CA: refused, as client-go and
         * kubectl refuse it, with their words. */
        assert_int_equal(kb_kube_config_load(path, "b", NULL, &c, err, sizeof(err)), KB_EBADINPUT);
        assert_non_null(strstr(err, "clusters.cb: insecure-skip-tls-verify with "
                                    "certificate-authority-data: specifying a root certificates "
                                    "file with the insecure flag is not allowed"));
        assert_int_equal(kb_kube_config_load(path, "d", NULL, &c, err, sizeof(err)), KB_EBADINPUT);
        assert_non_null(strstr(err, "clusters.cd: insecure-skip-tls-verify with "
                                    "certificate-authority: specifying"));
        /* Either alone is fine. */
        assert_int_equal(kb_kube_config_load(path, "c", "http://m:8080", &c, err, sizeof(err)), 0);
        assert_string_equal(c.server, "http://m:8080");
        assert_true(c.insecure);
        assert_null(c.ca_data);
        assert_null(c.ca_file);
        assert_string_equal(c.cert_data, "cert");
        assert_string_equal(c.token_file, "/t/token");
        assert_non_null(strstr(c.key_file, "/key.pem"));
        kb_kube_config_release(&c);

        assert_int_equal(kb_kube_config_load(path, "bad", NULL, &c, err, sizeof(err)),
                         KB_EBADINPUT);
        assert_non_null(strstr(err, "no cluster named \"nope\""));
        assert_int_equal(kb_kube_config_load(path, "zzz", NULL, &c, err, sizeof(err)),
                         KB_EBADINPUT);
        assert_non_null(strstr(err, "no context named \"zzz\""));

        p = write_file("exec", "current-context: a\nclusters: [{name: c, cluster: {server: s}}]\n"
                               "users: [{name: u, user: {exec: {command: x}}}]\n"
                               "contexts: [{name: a, context: {cluster: c, user: u}}]\n");
        snprintf(path, sizeof(path), "%s", p);
        assert_int_equal(kb_kube_config_load(path, NULL, NULL, &c, err, sizeof(err)), KB_EBADINPUT);
        assert_non_null(strstr(err, "exec"));
}

/* $KUBECONFIG with several files merges them as kubectl does. */
static void test_kubeconfig_list(void **state)
{
        char a[256], b[256], list[1024], err[256];
        snprintf(a, sizeof(a), "%s",
                 write_file("a", "contexts:\n"
                                 "- name: dev\n  context: {cluster: c, user: u, "
                                 "namespace: team}\n"
                                 "clusters:\n"
                                 "- name: c\n  cluster: {server: https://first}\n"));
        mkdir(strcat(strcpy(list, dir), "/sub"), 0700);
        snprintf(b, sizeof(b), "%s",
                 write_file("sub/b", "current-context: dev\n"
                                     "clusters:\n"
                                     "- name: c\n  cluster: {server: https://second}\n"
                                     "- name: d\n  cluster: {server: https://d, "
                                     "certificate-authority: ca.crt}\n"
                                     "users:\n"
                                     "- name: u\n  user: {tokenFile: tok, "
                                     "exec: {apiVersion: "
                                     "client.authentication.k8s.io/v1, "
                                     "command: ./bin/cred}}\n"
                                     "contexts:\n"
                                     "- name: other\n  context: {cluster: d, user: u}\n"));
        snprintf(list, sizeof(list), "%s/missing:%s::%s", dir, a, b);
        setenv("KUBECONFIG", list, 1);
        struct kb_kube_config c;
        assert_int_equal(kb_kube_config_load(NULL, NULL, NULL, &c, err, sizeof(err)), 0);
        assert_string_equal(c.server, "https://first"); /* the first file's c wins */
        assert_string_equal(c.namespace, "team");
        char want[512];
        snprintf(want, sizeof(want), "%s/sub/tok", dir);
        assert_string_equal(c.token_file, want);
        snprintf(want, sizeof(want), "%s/sub/./bin/cred", dir);
        assert_string_equal(c.exec.command, want);
        kb_kube_config_release(&c);

        assert_int_equal(kb_kube_config_load(NULL, "other", NULL, &c, err, sizeof(err)), 0);
        assert_string_equal(c.server, "https://d");
        snprintf(want, sizeof(want), "%s/sub/ca.crt", dir);
        assert_string_equal(c.ca_file, want);
        kb_kube_config_release(&c);

        assert_int_equal(kb_kube_config_load(NULL, "nope", NULL, &c, err, sizeof(err)),
                         KB_EBADINPUT);
        assert_non_null(strstr(err, "KUBECONFIG="));
        assert_non_null(strstr(err, "no context named \"nope\""));

        snprintf(list, sizeof(list), "%s/missing", dir);
        setenv("KUBECONFIG", list, 1);
        assert_int_equal(kb_kube_config_load(NULL, NULL, NULL, &c, err, sizeof(err)), KB_EBADINPUT);
        assert_non_null(strstr(err, "none of its files exists"));
        unsetenv("KUBECONFIG");
}

/* An exec plugin: a shell script that records what it was given and
 * answers as its first argument says. */
static const char plugin[] =
    "#!/bin/sh\n"
    "printf '%s\\n' \"$KUBERNETES_EXEC_INFO\" >\"$OUT/info\"\n"
    "case \"$1\" in\n"
    "token) printf "
    "'{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
    "\"status\":{\"token\":\"tok-%s-%s\",\"expirationTimestamp\":\"2030-01-02T03:04:05Z\"}}' "
    "\"$FOO\" \"$2\" ;;\n"
    "cert) printf '{\"apiVersion\":\"client.authentication.k8s.io/v1beta1\",\"kind\":"
    "\"ExecCredential\",\"status\":{\"clientCertificateData\":\"CERT\",\"clientKeyData\":\"KEY\"}}'"
    " ;;\n"
    "badkind) printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"Secret\","
    "\"status\":{\"token\":\"tok-secret\"}}' ;;\n"
    "empty) printf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
    "\"ExecCredential\",\"status\":{}}' ;;\n"
    "*) echo 'no credential for you' >&2; exit 3 ;;\n"
    "esac\n";

/* Loads a kubeconfig whose user runs ./plugin.sh (relative: resolved
 * against the kubeconfig's directory) with args and FOO=bar. */
static int load_exec(const char *api_version, const char *args, struct kb_kube_config *c, char *err,
                     size_t errlen)
{
        char text[1024], path[256];
        snprintf(text, sizeof(text),
                 "current-context: a\nclusters: [{name: c, cluster: {server: https://s}}]\n"
                 "users:\n- name: u\n  user:\n    exec:\n      apiVersion: %s\n"
                 "      command: ./plugin.sh\n      args: [%s]\n"
                 "      env: [{name: FOO, value: bar}, {name: OUT, value: %s}]\n"
                 "contexts: [{name: a, context: {cluster: c, user: u}}]\n",
                 api_version, args, dir);
        snprintf(path, sizeof(path), "%s", write_file("kc-exec", text));
        return kb_kube_config_load(path, NULL, NULL, c, err, errlen);
}

static void test_exec_plugin(void **state)
{
        char path[256], err[512];
        snprintf(path, sizeof(path), "%s", write_file("plugin.sh", plugin));
        assert_int_equal(chmod(path, 0755), 0);
        struct kb_kube_config c;
        struct kb_kube_cred cred;

        /* A token with an expiry; args and env reach the plugin, and so does
         * KUBERNETES_EXEC_INFO. */
        assert_int_equal(
            load_exec("client.authentication.k8s.io/v1", "token, a1", &c, err, sizeof(err)), 0);
        assert_true(c.has_exec);
        char want_cmd[300];
        snprintf(want_cmd, sizeof(want_cmd), "%s/./plugin.sh", dir);
        assert_string_equal(c.exec.command, want_cmd);
        assert_int_equal(c.exec.nargs, 2);
        assert_int_equal(kb_kube_exec_credential(&c.exec, &cred, err, sizeof(err)), 0);
        assert_string_equal(cred.token, "tok-bar-a1");
        double want;
        assert_int_equal(kb_parse_time("2030-01-02T03:04:05Z", &want), 0);
        assert_true(cred.expiry == want);
        assert_null(cred.cert);
        kb_kube_cred_release(&cred);
        char *info = NULL;
        size_t n;
        char ipath[256];
        snprintf(ipath, sizeof(ipath), "%s/info", dir);
        assert_int_equal(kb_read_file(ipath, &info, &n), 0);
        assert_non_null(strstr(info, "\"apiVersion\":\"client.authentication.k8s.io/v1\""));
        assert_non_null(strstr(info, "\"interactive\":false"));
        free(info);
        kb_kube_config_release(&c);

        /* v1beta1 with a client certificate and key. */
        assert_int_equal(
            load_exec("client.authentication.k8s.io/v1beta1", "cert", &c, err, sizeof(err)), 0);
        assert_int_equal(kb_kube_exec_credential(&c.exec, &cred, err, sizeof(err)), 0);
        assert_null(cred.token);
        assert_string_equal(cred.cert, "CERT");
        assert_string_equal(cred.key, "KEY");
        assert_true(cred.expiry == 0);
        kb_kube_cred_release(&cred);
        kb_kube_config_release(&c);

        /* Failures say what is wrong, never the secret. */
        static const struct {
                const char *api, *arg, *want;
        } bad[] = {
            {"client.authentication.k8s.io/v1beta1", "token", "apiVersion: want"},
            {"client.authentication.k8s.io/v1", "badkind", "kind: want ExecCredential"},
            {"client.authentication.k8s.io/v1", "empty", "neither a token nor"},
            {"client.authentication.k8s.io/v1", "fail", "exited with status 3"},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(bad); i++) {
                assert_int_equal(load_exec(bad[i].api, bad[i].arg, &c, err, sizeof(err)), 0);
                assert_int_equal(kb_kube_exec_credential(&c.exec, &cred, err, sizeof(err)),
                                 KB_EBADINPUT);
                if (!strstr(err, bad[i].want))
                        fail_msg("%s: want \"%s\" in \"%s\"", bad[i].arg, bad[i].want, err);
                assert_null(strstr(err, "tok-"));
                kb_kube_config_release(&c);
        }

        /* A command that does not exist, and a kubeconfig without apiVersion. */
        struct kb_kube_exec x = {.api_version = "client.authentication.k8s.io/v1",
                                 .command = "/nonexistent/kbatch-plugin"};
        assert_int_equal(kb_kube_exec_credential(&x, &cred, err, sizeof(err)), KB_EBADINPUT);
        assert_non_null(strstr(err, "cannot run it"));
        assert_int_equal(load_exec("v1", "token", &c, err, sizeof(err)), KB_EBADINPUT);
        assert_non_null(strstr(err, "exec.apiVersion"));
}

static void test_watch_event(void **state)
{
        struct kb_watch_event ev;
        char err[256];
        const char *l = "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"p\","
                        "\"resourceVersion\":\"42\"}}}";
        assert_int_equal(kb_watch_event_parse(l, strlen(l), &ev, err, sizeof(err)), 0);
        assert_int_equal(ev.type, KB_WATCH_MODIFIED);
        assert_string_equal(ev.resource_version, "42");
        kb_watch_event_release(&ev);
        l = "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"message\":"
            "\"too old\"}}";
        assert_int_equal(kb_watch_event_parse(l, strlen(l), &ev, err, sizeof(err)), 0);
        assert_int_equal(ev.type, KB_WATCH_ERROR);
        assert_int_equal(ev.code, 410);
        assert_string_equal(ev.message, "too old");
        kb_watch_event_release(&ev);
        static const struct {
                const char *line, *msg;
        } bad[] = {
            {"{\"type\":\"ADDED\"", "watch event: "},
            {"{\"object\":{}}", "watch event: type: missing"},
            {"{\"type\":\"ADDED\",\"object\":[]}", "watch event: object: not an object"},
            {"{\"type\":\"SURPRISE\",\"object\":{}}", "watch event: type: unknown \"SURPRISE\""},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(bad); i++) {
                assert_int_equal(
                    kb_watch_event_parse(bad[i].line, strlen(bad[i].line), &ev, err, sizeof(err)),
                    KB_EBADINPUT);
                assert_non_null(strstr(err, bad[i].msg));
                assert_null(ev.object);
        }
}

/* ---- the client's lanes ------------------------------------------------------------ */

struct lanes_fx {
        struct kb_apiserver *srv;
        uv_loop_t loop;
        struct kb_kube *k;
        char order[64]; /* one letter per answer, in order */
        int cancelled;
        bool fence_open;
};

static int lanes_setup(void **state)
{
        struct lanes_fx *f = kb_xcalloc(1, sizeof(*f));
        struct kb_apiserver_opts ao;
        kb_apiserver_opts_init(&ao);
        f->srv = kb_apiserver_new(&ao);
        assert_int_equal(kb_apiserver_start(f->srv, "127.0.0.1", 0), 0);
        assert_int_equal(uv_loop_init(&f->loop), 0);
        char *server = kb_xasprintf("http://127.0.0.1:%d", kb_apiserver_port(f->srv));
        struct kb_kube_config cfg = {.server = server};
        /* A window of one: the windowed lanes answer one at a time. */
        struct kb_kube_opts o = {.qps = 1000, .burst = 1000, .max_active = 1};
        f->k = kb_kube_new(&f->loop, &cfg, &o);
        free(server);
        *state = f;
        return 0;
}

static int lanes_teardown(void **state)
{
        struct lanes_fx *f = *state;
        kb_kube_free(f->k);
        uv_run(&f->loop, UV_RUN_DEFAULT);
        assert_int_equal(uv_loop_close(&f->loop), 0);
        kb_apiserver_free(f->srv);
        free(f);
        return 0;
}

struct tag {
        struct lanes_fx *f;
        char letter;
};

static void tagged_done(void *arg, const struct kb_kube_resp *r)
{
        struct tag *t = arg;
        if (r->cancelled) {
                t->f->cancelled++;
        } else {
                assert_int_equal(r->status, 200);
                size_t n = strlen(t->f->order);
                t->f->order[n] = t->letter;
        }
        free(t);
}

static struct kb_kube_call *submit(struct lanes_fx *f, enum kb_kube_lane lane, char letter)
{
        struct tag *t = kb_xcalloc(1, sizeof(*t));
        t->f = f;
        t->letter = letter;
        struct kb_kube_req req = {.method = "GET", .path = "/version", .lane = lane};
        return kb_kube_request(f->k, &req, tagged_done, t);
}

static void run_until_idle(struct lanes_fx *f)
{
        double end = kb_now_mono() + 10;
        while (kb_kube_inflight(f->k) - kb_kube_waiting(f->k, KB_KUBE_LANE_BIND) > 0 &&
               kb_now_mono() < end)
                uv_run(&f->loop, UV_RUN_ONCE);
}

static bool fence(void *arg)
{
        return ((struct lanes_fx *)arg)->fence_open;
}

static void test_lanes(void **state)
{
        struct lanes_fx *f = *state;
        /* e1 takes the one place at once; the rest wait and go in lane
         * priority (bind, read, status, event), FIFO within a lane; the
         * lease, submitted last, goes outside the window. */
        submit(f, KB_KUBE_LANE_EVENT, 'e');
        submit(f, KB_KUBE_LANE_EVENT, 'f');
        submit(f, KB_KUBE_LANE_STATUS, 's');
        submit(f, KB_KUBE_LANE_READ, 'r');
        submit(f, KB_KUBE_LANE_BIND, 'b');
        submit(f, KB_KUBE_LANE_BIND, 'c');
        assert_int_equal(kb_kube_waiting(f->k, KB_KUBE_LANE_BIND), 2);
        submit(f, KB_KUBE_LANE_LEASE, 'L');
        assert_int_equal(kb_kube_waiting(f->k, KB_KUBE_LANE_LEASE), 0);
        run_until_idle(f);
        /* The lease went out at once, beside e1, on a connection of its
         * own, so it may answer anywhere; the windowed lanes are strictly
         * ordered. */
        char windowed[sizeof(f->order)] = "";
        for (const char *p = f->order; *p; p++)
                if (*p != 'L')
                        strncat(windowed, p, 1);
        assert_string_equal(windowed, "ebcrsf");
        assert_non_null(strchr(f->order, 'L'));
}

static void window_done(void *arg, const struct kb_kube_resp *r)
{
        assert_int_equal(r->status, 429);
}

static void test_fence_drop_supersede(void **state)
{
        struct lanes_fx *f = *state;
        f->fence_open = false;
        kb_kube_set_fence(f->k, fence, f);
        /* A closed fence holds binds (and status, events), not reads or
         * the lease. */
        submit(f, KB_KUBE_LANE_BIND, 'b');
        submit(f, KB_KUBE_LANE_READ, 'r');
        submit(f, KB_KUBE_LANE_LEASE, 'L');
        run_until_idle(f);
        assert_int_equal(strlen(f->order), 2);
        assert_null(strchr(f->order, 'b'));
        assert_int_equal(kb_kube_waiting(f->k, KB_KUBE_LANE_BIND), 1);
        /* Opening it lets the bind go. */
        f->fence_open = true;
        kb_kube_set_fence(f->k, fence, f);
        run_until_idle(f);
        assert_non_null(strchr(f->order, 'b'));
        assert_int_equal(kb_kube_inflight(f->k), 0);

        /* Dropping ends what waits, with cancelled answers, at once. */
        f->fence_open = false;
        submit(f, KB_KUBE_LANE_BIND, 'x');
        submit(f, KB_KUBE_LANE_STATUS, 'y');
        submit(f, KB_KUBE_LANE_EVENT, 'z');
        assert_int_equal(kb_kube_inflight(f->k), 3);
        assert_int_equal(kb_kube_drop(f->k, kb_kube_fenced_lanes(), false), 3);
        assert_int_equal(f->cancelled, 3);
        assert_int_equal(kb_kube_inflight(f->k), 0);

        /* A call that has not gone out can be withdrawn; its callback never
         * runs (so the test frees its tag). */
        struct tag *t = kb_xcalloc(1, sizeof(*t));
        t->f = f;
        struct kb_kube_req req = {.method = "GET", .path = "/version", .lane = KB_KUBE_LANE_BIND};
        struct kb_kube_call *c = kb_kube_request(f->k, &req, tagged_done, t);
        assert_true(kb_kube_supersede(c));
        free(t);
        assert_int_equal(kb_kube_inflight(f->k), 0);
        assert_int_equal(f->cancelled, 3);
}

/* A kbatch-apiserver that refuses every create with 429, and a client of
 * it (window 8) on LOOP; the caller frees both. */
static struct kb_kube *refusing_server(uv_loop_t *loop, struct kb_apiserver **srv)
{
        struct kb_apiserver_opts ao;
        kb_apiserver_opts_init(&ao);
        ao.fault_write_rate = 1; /* every create refused */
        ao.fault_write_code = 429;
        *srv = kb_apiserver_new(&ao);
        assert_int_equal(kb_apiserver_start(*srv, "127.0.0.1", 0), 0);
        assert_int_equal(uv_loop_init(loop), 0);
        char *server = kb_xasprintf("http://127.0.0.1:%d", kb_apiserver_port(*srv));
        struct kb_kube_config cfg = {.server = server};
        struct kb_kube_opts o = {.qps = 1000, .burst = 1000, .max_active = 8};
        struct kb_kube *k = kb_kube_new(loop, &cfg, &o);
        free(server);
        return k;
}

#define A_POD_BODY                                                                                 \
        "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"},\"spec\":{"         \
        "\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}"

/* The window halves on a 429 and grows back with answers. */
static void test_window(void **state)
{
        struct kb_apiserver *srv;
        uv_loop_t loop;
        struct kb_kube *k = refusing_server(&loop, &srv);
        struct lanes_fx f = {.k = k};
        assert_true(kb_kube_window(k) == 8);
        struct kb_kube_req req = {.method = "POST",
                                  .path = "/api/v1/namespaces/default/pods",
                                  .body = A_POD_BODY,
                                  .max_attempts = 1};
        kb_kube_request(k, &req, window_done, NULL);
        while (kb_kube_inflight(k))
                uv_run(&loop, UV_RUN_ONCE);
        assert_true(kb_kube_window(k) == 4);
        /* Answers widen it by 1/window each: four of them make 5. */
        for (int i = 0; i < 4; i++)
                submit(&f, KB_KUBE_LANE_READ, 'r');
        while (kb_kube_inflight(k))
                uv_run(&loop, UV_RUN_ONCE);
        assert_true(kb_kube_window(k) > 4.9 && kb_kube_window(k) < 5.1);
        kb_kube_free(k);
        uv_run(&loop, UV_RUN_DEFAULT);
        assert_int_equal(uv_loop_close(&loop), 0);
        kb_apiserver_free(srv);
}

/* A request marked final_429 takes a 429 as its answer: one attempt, and
 * the window stays (a disruption budget refusing an eviction is not the
 * server's load). */
static void final_done(void *arg, const struct kb_kube_resp *r)
{
        *(int *)arg = r->attempts;
        assert_int_equal(r->status, 429);
        assert_false(r->cancelled);
}

static void test_final_429(void **state)
{
        (void)state;
        struct kb_apiserver *srv;
        uv_loop_t loop;
        struct kb_kube *k = refusing_server(&loop, &srv);
        struct kb_kube_req req = {.method = "POST",
                                  .path = "/api/v1/namespaces/default/pods",
                                  .body = A_POD_BODY,
                                  .lane = KB_KUBE_LANE_BIND,
                                  .final_429 = true};
        int attempts = 0;
        double t0 = kb_now_mono();
        kb_kube_request(k, &req, final_done, &attempts);
        while (kb_kube_inflight(k))
                uv_run(&loop, UV_RUN_ONCE);
        assert_int_equal(attempts, 1);
        assert_true(kb_now_mono() - t0 < 2);
        assert_true(kb_kube_window(k) == 8);
        kb_kube_free(k);
        uv_run(&loop, UV_RUN_DEFAULT);
        assert_int_equal(uv_loop_close(&loop), 0);
        kb_apiserver_free(srv);
}

/* Request paths: names taken from objects must be names, or the request
 * does not go out (issue 24: an owner named "../../../pods" made the
 * scheduler list the cluster's pods with its own identity). */
static void test_path_ok(void **state)
{
        (void)state;
        char why[160];
        static const char *const good[] = {
            "/",
            "/version",
            "/api/v1/nodes/node-1.rack-a",
            "/api/v1/namespaces/default/pods?watch=1&resourceVersion=5",
            "/api/v1/namespaces/kbatch-system",
            "/api/v1/namespaces/ml/pods/train-0/binding",
            "/apis/scheduling.volcano.sh/v1beta1/namespaces/ml/podgroups/train/status",
            "/apis/coordination.k8s.io/v1/namespaces/kbatch-system/leases/kbatch",
            "/api/v1/namespaces/ml/events/train-0.17f3a2b4c5d6e7f8",
        };
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                if (!kb_kube_path_ok(good[i], why, sizeof(why)))
                        fail_msg("%s refused: %s", good[i], why);
        }
        static const char *const bad[] = {
            "",
            "api/v1/pods",
            "/api/v1/namespaces/victim/pods/",
            "/api/v1/namespaces/victim/pods//binding",
            "/apis/batch/v1/namespaces/ml/jobs/../../../pods",
            "/apis/batch/v1/namespaces/ml/jobs/..",
            "/api/v1/namespaces/ml/pods/a%2F..",
            "/api/v1/namespaces/ml/pods/a b",
            "/api/v1/namespaces/ML/pods/p",
            "/api/v1/namespaces/ml/pods/Train",
            "/api/v1/namespaces/ml/pods/-p",
            "/api/v1/nodes/node_1",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                if (kb_kube_path_ok(bad[i], why, sizeof(why)))
                        fail_msg("%s accepted", bad[i]);
        }
        kb_kube_path_ok("/api/v1/namespaces/ML/pods/p", why, sizeof(why));
        assert_string_equal(why, "namespace 'ML' is not a DNS-1123 label");
        kb_kube_path_ok("/api/v1/namespaces/ml/pods/Train/binding", why, sizeof(why));
        assert_string_equal(why, "pods name 'Train' is not a DNS-1123 subdomain");

        /* A subdomain's labels are not held to 63 bytes, only the whole to
         * 253 (IsDNS1123Subdomain), and a label is. */
        char name[256];
        memset(name, 'a', 253);
        name[253] = 0;
        assert_true(kb_dns_subdomain(name));
        assert_false(kb_dns_label(name));
        name[63] = 0;
        assert_true(kb_dns_label(name));
        memset(name, 'a', 254);
        name[254] = 0;
        assert_false(kb_dns_subdomain(name));
        assert_false(kb_dns_subdomain("a..b"));
        assert_false(kb_dns_subdomain("a.-b"));
        assert_true(kb_dns_subdomain("a.b-c.d"));
}

/* A refused path never reaches the server: done runs with 400 and why. */
static void refused_done(void *arg, const struct kb_kube_resp *r)
{
        struct kb_kube_resp *out = arg;
        out->status = r->status;
        out->error = r->error ? strdup(r->error) : NULL;
        out->body = strdup(r->body);
}

static void test_path_refused(void **state)
{
        (void)state;
        struct kb_apiserver *srv;
        uv_loop_t loop;
        struct kb_kube *k = refusing_server(&loop, &srv);
        struct kb_kube_req req = {.method = "DELETE",
                                  .path = "/api/v1/namespaces/victim/pods/%00",
                                  .lane = KB_KUBE_LANE_BIND};
        struct kb_kube_resp got = {0};
        kb_kube_request(k, &req, refused_done, &got);
        while (kb_kube_inflight(k))
                uv_run(&loop, UV_RUN_ONCE);
        assert_int_equal(got.status, 400);
        assert_non_null(strstr(got.error, "not sent: segment 6 of the path"));
        assert_non_null(strstr(got.body, "\"reason\":\"BadRequest\""));
        struct kb_value *st = NULL;
        char err[128];
        assert_int_equal(kb_json_parse(got.body, strlen(got.body), &st, err, sizeof(err)), 0);
        kb_value_free(st);
        free((char *)got.error);
        free((char *)got.body);
        kb_kube_free(k);
        uv_run(&loop, UV_RUN_DEFAULT);
        assert_int_equal(uv_loop_close(&loop), 0);
        kb_apiserver_free(srv);
}

/* A paged list: 1,200 pods in pages of 500, the next page asked for while
 * the last one is read; every pod arrives, in one list. */
struct count {
        size_t upserts;
        bool ended;
};

static void c_begin(void *arg)
{
        ((struct count *)arg)->upserts = 0;
}

static void c_upsert(void *arg, const struct kb_value *obj)
{
        (void)obj;
        ((struct count *)arg)->upserts++;
}

static void c_remove(void *arg, const struct kb_value *obj)
{
        (void)arg;
        (void)obj;
}

static void c_end(void *arg)
{
        ((struct count *)arg)->ended = true;
}

static void test_paged_list(void **state)
{
        struct kb_apiserver_opts ao;
        kb_apiserver_opts_init(&ao);
        ao.kubelet = false;
        ao.job_controller = false;
        struct kb_apiserver *srv = kb_apiserver_new(&ao);
        for (int i = 0; i < 1200; i++) {
                char *body = kb_xasprintf(
                    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p%d\"},"
                    "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"x\"}]}}",
                    i);
                struct kb_api_req req = {.method = "POST",
                                         .path = "/api/v1/namespaces/default/pods",
                                         .content_type = "application/json",
                                         .body = body,
                                         .body_len = strlen(body)};
                struct kb_api_resp resp;
                kb_apiserver_handle(srv, &req, &resp);
                assert_int_equal(resp.status, 201);
                kb_api_resp_release(&resp);
                free(body);
        }
        assert_int_equal(kb_apiserver_start(srv, "127.0.0.1", 0), 0);
        uv_loop_t loop;
        assert_int_equal(uv_loop_init(&loop), 0);
        char *server = kb_xasprintf("http://127.0.0.1:%d", kb_apiserver_port(srv));
        struct kb_kube_config cfg = {.server = server};
        struct kb_kube *k = kb_kube_new(&loop, &cfg, NULL);
        free(server);
        static const struct kb_reflector_ops ops = {c_begin, c_upsert, c_remove, c_end};
        struct count n = {0};
        struct kb_reflector *r = kb_reflector_new(k, "pods", "/api/v1/pods", NULL, &ops, &n);
        double end = kb_now_mono() + 20;
        while (!kb_reflector_synced(r) && kb_now_mono() < end)
                uv_run(&loop, UV_RUN_ONCE);
        assert_true(kb_reflector_synced(r));
        assert_true(n.ended);
        assert_int_equal(n.upserts, 1200);
        unsigned lists, watches;
        kb_reflector_counts(r, &lists, &watches);
        assert_int_equal(lists, 1);
        kb_reflector_free(r);
        kb_kube_free(k);
        uv_run(&loop, UV_RUN_DEFAULT);
        assert_int_equal(uv_loop_close(&loop), 0);
        kb_apiserver_free(srv);
}

/* A token over plain http:// is not sent unless allow_insecure_token says
 * so (client-go reads a user's credentials for TLS transports only); over
 * it the server, which wants the token, answers 401. */
static void status_done(void *arg, const struct kb_kube_resp *r)
{
        *(long *)arg = r->status;
}

static long get_nodes(const char *token, const char *token_file, bool allow)
{
        struct kb_apiserver_opts ao;
        kb_apiserver_opts_init(&ao);
        ao.token = "sekret";
        struct kb_apiserver *srv = kb_apiserver_new(&ao);
        assert_int_equal(kb_apiserver_start(srv, "127.0.0.1", 0), 0);
        uv_loop_t loop;
        assert_int_equal(uv_loop_init(&loop), 0);
        char *server = kb_xasprintf("http://127.0.0.1:%d", kb_apiserver_port(srv));
        struct kb_kube_config cfg = {.server = server,
                                     .token = (char *)token,
                                     .token_file = (char *)token_file,
                                     .allow_insecure_token = allow};
        struct kb_kube *k = kb_kube_new(&loop, &cfg, NULL);
        free(server);
        struct kb_kube_req req = {.method = "GET", .path = "/api/v1/nodes", .max_attempts = 1};
        long status = -1;
        kb_kube_request(k, &req, status_done, &status);
        while (kb_kube_inflight(k))
                uv_run(&loop, UV_RUN_ONCE);
        kb_kube_free(k);
        uv_run(&loop, UV_RUN_DEFAULT);
        assert_int_equal(uv_loop_close(&loop), 0);
        kb_apiserver_free(srv);
        return status;
}

static void test_http_token(void **state)
{
        (void)state;
        const char *file = write_file("token", "sekret\n");
        char path[256];
        snprintf(path, sizeof(path), "%s", file);
        assert_int_equal(get_nodes("sekret", NULL, false), 401);
        assert_int_equal(get_nodes(NULL, path, false), 401);
        assert_int_equal(get_nodes("sekret", NULL, true), 200);
        assert_int_equal(get_nodes(NULL, path, true), 200);
}

/* A Retry-After header line is read within its length: curl does not end
 * header lines with a NUL.  Each line is followed in memory by digits
 * that are not part of it; reading "Retry-After: 7" with atof ran on into
 * them ("799": 60 s, the cap, instead of 7). */
static void test_retry_after(void **state)
{
        (void)state;
        static const struct {
                const char *line;
                double want;
        } cases[] = {
            {"Retry-After: 7", 7},     {"retry-after:2\r\n", 2},
            {"Retry-After: 3600", 60}, {"Retry-After: Wed, 21 Oct 2015 07:28:00 GMT", 0},
            {"Retry-After: -5", 0},    {"Retry-After:", 0},
            {"X-Retry-After: 5", 0},   {"Retry-After: 1.5", 1.5},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                size_t len = strlen(cases[i].line);
                char *buf = kb_xasprintf("%s99", cases[i].line);
                double got = kb__retry_after(buf, len);
                if (got != cases[i].want)
                        fail_msg("%s: got %g, want %g", cases[i].line, got, cases[i].want);
                free(buf);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_base64),
            cmocka_unit_test(test_backoff),
            cmocka_unit_test(test_watch_event),
            cmocka_unit_test_setup_teardown(test_kubeconfig, setup, teardown),
            cmocka_unit_test_setup_teardown(test_kubeconfig_list, setup, teardown),
            cmocka_unit_test_setup_teardown(test_exec_plugin, setup, teardown),
            cmocka_unit_test_setup_teardown(test_http_token, setup, teardown),
            cmocka_unit_test_setup_teardown(test_lanes, lanes_setup, lanes_teardown),
            cmocka_unit_test_setup_teardown(test_fence_drop_supersede, lanes_setup, lanes_teardown),
            cmocka_unit_test(test_window),
            cmocka_unit_test(test_final_429),
            cmocka_unit_test(test_paged_list),
            cmocka_unit_test(test_path_ok),
            cmocka_unit_test(test_path_refused),
            cmocka_unit_test(test_retry_after),
        };
        return cmocka_run_group_tests_name("kube", tests, NULL, NULL);
}
