/* pkg/kube: base64, backoff, retry classes, kubeconfig loading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/kube.h"
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
                             "users:\n"
                             "- name: ua\n  user:\n    token: sekret\n"
                             "- name: ub\n  user:\n    tokenFile: /t/token\n"
                             "    client-certificate-data: Y2VydA==\n"
                             "    client-key: key.pem\n"
                             "contexts:\n"
                             "- name: a\n  context: {cluster: ca, user: ua, namespace: x}\n"
                             "- name: b\n  context: {cluster: cb, user: ub}\n"
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

        assert_int_equal(kb_kube_config_load(path, "b", "http://m:8080", &c, err, sizeof(err)), 0);
        assert_string_equal(c.server, "http://m:8080");
        assert_true(c.insecure);
        assert_string_equal(c.ca_data, "hello");
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

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_base64),
            cmocka_unit_test(test_backoff),
            cmocka_unit_test_setup_teardown(test_kubeconfig, setup, teardown),
        };
        return cmocka_run_group_tests_name("kube", tests, NULL, NULL);
}
