/* The apiserver's HTTPS material and bearer tokens: the certificates it
 * makes (parsed back with GnuTLS), reusing and reissuing them, tokens, the
 * 401 through kb_apiserver_handle, and the kubeconfig. */
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apiserver/apiserver-http.h"

struct fixture {
        char dir[64];
};

static int setup(void **state)
{
        struct fixture *f = kb_xcalloc(1, sizeof(*f));
        snprintf(f->dir, sizeof(f->dir), "/tmp/kb-tls-test.XXXXXX");
        if (!mkdtemp(f->dir))
                return -1;
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        struct fixture *f = *state;
        char *p = kb_xasprintf("%s/kubeconfig", f->dir);
        unlink(p);
        free(p);
        kb_apiserver_tls_remove(f->dir);
        free(f);
        return 0;
}

static char *path_in(const struct fixture *f, const char *name)
{
        return kb_xasprintf("%s/%s", f->dir, name);
}

static gnutls_x509_crt_t parse_crt(const char *pem)
{
        gnutls_x509_crt_t crt;
        gnutls_datum_t d = {(unsigned char *)pem, (unsigned)strlen(pem)};
        assert_int_equal(gnutls_x509_crt_init(&crt), 0);
        assert_int_equal(gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_PEM), 0);
        return crt;
}

/* The subject alternative names, space-separated, in order. */
static void sans(gnutls_x509_crt_t crt, char *out, size_t n)
{
        out[0] = 0;
        for (unsigned seq = 0;; seq++) {
                unsigned char buf[256];
                size_t len = sizeof(buf) - 1;
                char text[256];
                int type = gnutls_x509_crt_get_subject_alt_name(crt, seq, buf, &len, NULL);
                if (type == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
                        break;
                assert_true(type >= 0);
                if (type == GNUTLS_SAN_IPADDRESS) {
                        assert_non_null(
                            inet_ntop(len == 4 ? AF_INET : AF_INET6, buf, text, sizeof(text)));
                } else {
                        assert_int_equal(type, GNUTLS_SAN_DNSNAME);
                        buf[len] = 0;
                        snprintf(text, sizeof(text), "%s", (char *)buf);
                }
                size_t used = strlen(out);
                snprintf(out + used, n - used, "%s%s", used ? " " : "", text);
        }
}

static unsigned file_mode(const struct fixture *f, const char *name)
{
        struct stat st;
        char *p = path_in(f, name);
        assert_int_equal(stat(p, &st), 0);
        free(p);
        return st.st_mode & 0777;
}

static void overwrite(const struct fixture *f, const char *name, const char *text)
{
        char *p = path_in(f, name);
        assert_int_equal(kb_write_file(p, text, strlen(text), 0600), 0);
        free(p);
}

static void test_generate(void **state)
{
        struct fixture *f = *state;
        struct kb_apiserver_tls t;
        char err[256] = "";
        time_t now = time(NULL);
        assert_int_equal(kb_apiserver_tls_prepare(&t, f->dir, "10.1.2.3", err, sizeof(err)), 0);
        assert_true(t.generated);
        assert_non_null(strstr(t.ca_cert, "-----BEGIN CERTIFICATE-----"));
        assert_non_null(strstr(t.key, "-----BEGIN PRIVATE KEY-----"));

        gnutls_x509_crt_t ca = parse_crt(t.ca_cert), crt = parse_crt(t.cert);
        char names[512];
        sans(crt, names, sizeof(names));
        assert_string_equal(names, "127.0.0.1 ::1 localhost 10.1.2.3");
        sans(ca, names, sizeof(names));
        assert_string_equal(names, "");

        /* The server certificate verifies against its CA, and not against
         * another one. */
        unsigned status = 1;
        assert_int_equal(gnutls_x509_crt_verify(crt, &ca, 1, 0, &status), 0);
        assert_int_equal(status, 0);
        struct kb_apiserver_tls other;
        char *odir = path_in(f, "other");
        assert_int_equal(kb_apiserver_tls_prepare(&other, odir, "10.1.2.3", err, sizeof(err)), 0);
        kb_apiserver_tls_remove(odir);
        free(odir);
        gnutls_x509_crt_t other_ca = parse_crt(other.ca_cert);
        status = 0;
        assert_int_equal(gnutls_x509_crt_verify(crt, &other_ca, 1, 0, &status), 0);
        assert_int_not_equal(status, 0);
        gnutls_x509_crt_deinit(other_ca);
        kb_apiserver_tls_release(&other);
        assert_true(gnutls_x509_crt_check_hostname2(crt, "localhost", 0));
        assert_false(gnutls_x509_crt_check_hostname2(crt, "example.com", 0));

        unsigned crit, is_ca = 9, usage = 0;
        int pathlen;
        assert_true(gnutls_x509_crt_get_basic_constraints(ca, &crit, &is_ca, &pathlen) >= 0);
        assert_int_equal(is_ca, 1);
        assert_true(gnutls_x509_crt_get_basic_constraints(crt, &crit, &is_ca, &pathlen) >= 0);
        assert_int_equal(is_ca, 0);
        assert_true(gnutls_x509_crt_get_key_usage(ca, &usage, &crit) >= 0);
        assert_true(usage & GNUTLS_KEY_KEY_CERT_SIGN);
        assert_true(gnutls_x509_crt_get_key_usage(crt, &usage, &crit) >= 0);
        assert_true(usage & GNUTLS_KEY_DIGITAL_SIGNATURE);
        assert_false(usage & GNUTLS_KEY_KEY_CERT_SIGN);
        char oid[128];
        size_t oidlen = sizeof(oid);
        assert_int_equal(gnutls_x509_crt_get_key_purpose_oid(crt, 0, oid, &oidlen, NULL), 0);
        assert_string_equal(oid, GNUTLS_KP_TLS_WWW_SERVER);

        /* About a year, started a little in the past, never past the CA. */
        time_t until = gnutls_x509_crt_get_expiration_time(crt);
        assert_true(until > now + 364 * 86400 && until <= now + 366 * 86400);
        assert_true(until <= gnutls_x509_crt_get_expiration_time(ca));
        assert_true(gnutls_x509_crt_get_activation_time(crt) <= now);

        /* The key is the certificate's. */
        gnutls_x509_privkey_t key;
        gnutls_datum_t kd = {(unsigned char *)t.key, (unsigned)strlen(t.key)};
        assert_int_equal(gnutls_x509_privkey_init(&key), 0);
        assert_int_equal(gnutls_x509_privkey_import2(key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0), 0);
        unsigned char a[64], b[64];
        size_t an = sizeof(a), bn = sizeof(b);
        assert_int_equal(gnutls_x509_crt_get_key_id(crt, 0, a, &an), 0);
        assert_int_equal(gnutls_x509_privkey_get_key_id(key, 0, b, &bn), 0);
        assert_memory_equal(a, b, an);
        gnutls_x509_privkey_deinit(key);

        assert_int_equal(file_mode(f, "ca.key"), 0600);
        assert_int_equal(file_mode(f, "server.key"), 0600);
        assert_int_equal(file_mode(f, "ca.crt"), 0644);
        assert_int_equal(file_mode(f, "server.crt"), 0644);
        gnutls_x509_crt_deinit(ca);
        gnutls_x509_crt_deinit(crt);
        kb_apiserver_tls_release(&t);
}

static void test_host_names(void **state)
{
        struct fixture *f = *state;
        static const struct {
                const char *host, *want;
        } cases[] = {
            {"127.0.0.1", "127.0.0.1 ::1 localhost"},
            {"0.0.0.0", "127.0.0.1 ::1 localhost"},
            {"LOCALHOST", "127.0.0.1 ::1 localhost"},
            {"kbatch.example.org", "127.0.0.1 ::1 localhost kbatch.example.org"},
            {"fd00::7", "127.0.0.1 ::1 localhost fd00::7"},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(cases); i++) {
                struct kb_apiserver_tls t;
                char err[256], names[512];
                kb_apiserver_tls_remove(f->dir);
                assert_int_equal(
                    kb_apiserver_tls_prepare(&t, f->dir, cases[i].host, err, sizeof(err)), 0);
                gnutls_x509_crt_t crt = parse_crt(t.cert);
                sans(crt, names, sizeof(names));
                if (strcmp(names, cases[i].want))
                        fail_msg("host %s: got [%s], want [%s]", cases[i].host, names,
                                 cases[i].want);
                gnutls_x509_crt_deinit(crt);
                kb_apiserver_tls_release(&t);
        }
}

static void test_reuse(void **state)
{
        struct fixture *f = *state;
        struct kb_apiserver_tls t1, t2;
        char err[256], names[512];
        assert_int_equal(kb_apiserver_tls_prepare(&t1, f->dir, "127.0.0.1", err, sizeof(err)), 0);
        assert_true(t1.generated);

        /* Same directory, same host: all reused. */
        assert_int_equal(kb_apiserver_tls_prepare(&t2, f->dir, "localhost", err, sizeof(err)), 0);
        assert_false(t2.generated);
        assert_string_equal(t2.ca_cert, t1.ca_cert);
        assert_string_equal(t2.cert, t1.cert);
        assert_string_equal(t2.key, t1.key);
        kb_apiserver_tls_release(&t2);

        /* A new host: the same CA issues a new server certificate. */
        kb_test_log_start();
        assert_int_equal(kb_apiserver_tls_prepare(&t2, f->dir, "10.9.8.7", err, sizeof(err)), 0);
        assert_true(kb_test_log_contains("server.crt: does not name the listen host"));
        kb_test_log_stop();
        assert_true(t2.generated);
        assert_string_equal(t2.ca_cert, t1.ca_cert);
        assert_string_not_equal(t2.cert, t1.cert);
        gnutls_x509_crt_t crt = parse_crt(t2.cert);
        sans(crt, names, sizeof(names));
        assert_string_equal(names, "127.0.0.1 ::1 localhost 10.9.8.7");
        gnutls_x509_crt_deinit(crt);
        kb_apiserver_tls_release(&t2);

        /* A damaged server certificate is replaced, with a warning. */
        overwrite(f, "server.crt", "not a certificate\n");
        kb_test_log_start();
        assert_int_equal(kb_apiserver_tls_prepare(&t2, f->dir, "127.0.0.1", err, sizeof(err)), 0);
        assert_true(
            kb_test_log_contains("server.crt: not a PEM certificate; making a new server.crt"));
        kb_test_log_stop();
        assert_true(t2.generated);
        assert_string_equal(t2.ca_cert, t1.ca_cert);
        kb_apiserver_tls_release(&t2);

        /* A server key that is not the certificate's is replaced too. */
        char *kpath = path_in(f, "ca.key");
        char *cakey;
        assert_int_equal(kb_read_file(kpath, &cakey, NULL), 0);
        overwrite(f, "server.key", cakey);
        free(cakey);
        free(kpath);
        kb_test_log_start();
        assert_int_equal(kb_apiserver_tls_prepare(&t2, f->dir, "127.0.0.1", err, sizeof(err)), 0);
        assert_true(kb_test_log_contains("server.key: not the key of server.crt"));
        kb_test_log_stop();
        assert_string_equal(t2.ca_cert, t1.ca_cert);
        kb_apiserver_tls_release(&t2);

        /* Without its key the CA is useless: everything is made anew, and
         * the new server certificate is signed by the new CA. */
        char *p = path_in(f, "ca.key");
        unlink(p);
        free(p);
        kb_test_log_start();
        assert_int_equal(kb_apiserver_tls_prepare(&t2, f->dir, "127.0.0.1", err, sizeof(err)), 0);
        assert_true(kb_test_log_contains("ca.key: No such file or directory; making a new ca.crt"));
        kb_test_log_stop();
        assert_true(t2.generated);
        assert_string_not_equal(t2.ca_cert, t1.ca_cert);
        gnutls_x509_crt_t ca = parse_crt(t2.ca_cert);
        crt = parse_crt(t2.cert);
        unsigned status = 1;
        assert_int_equal(gnutls_x509_crt_verify(crt, &ca, 1, 0, &status), 0);
        assert_int_equal(status, 0);
        gnutls_x509_crt_deinit(ca);
        gnutls_x509_crt_deinit(crt);
        kb_apiserver_tls_release(&t2);
        kb_apiserver_tls_release(&t1);

        /* A path that is a file, not a directory, is an error. */
        p = path_in(f, "ca.crt");
        assert_int_equal(kb_apiserver_tls_prepare(&t2, p, "127.0.0.1", err, sizeof(err)), -ENOTDIR);
        assert_non_null(strstr(err, "ca.crt"));
        assert_null(t2.cert);
        free(p);
}

static void test_tokens(void **state)
{
        (void)state;
        char a[KB_APISERVER_TOKEN_LEN + 1], b[KB_APISERVER_TOKEN_LEN + 1];
        assert_int_equal(kb_apiserver_token_new(a), 0);
        assert_int_equal(kb_apiserver_token_new(b), 0);
        assert_int_equal(strlen(a), KB_APISERVER_TOKEN_LEN);
        assert_int_equal(strspn(a, "0123456789abcdef"), KB_APISERVER_TOKEN_LEN);
        assert_string_not_equal(a, b);
        assert_true(kb_apiserver_token_valid(a));

        static const struct {
                const char *token;
                bool valid;
        } tokens[] = {
            {"abc", true},      {"a-b.c_d~e+f/g=", true}, {"", false},       {"has space", false},
            {"quote\"", false}, {"new\nline", false},     {"colon:", false}, {"#comment", false},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(tokens); i++)
                if (kb_apiserver_token_valid(tokens[i].token) != tokens[i].valid)
                        fail_msg("token [%s]", tokens[i].token);
        char *huge = kb_xcalloc(4098, 1);
        memset(huge, 'x', 4096);
        assert_true(kb_apiserver_token_valid(huge));
        huge[4096] = 'x';
        assert_false(kb_apiserver_token_valid(huge));
        free(huge);

        static const struct {
                const char *header;
                bool ok;
        } headers[] = {
            {"Bearer s3cret", true},    {"bearer s3cret", true}, {"Bearer   s3cret  ", true},
            {"Bearer\ts3cret", true},   {"Bearer s3cre", false}, {"Bearer s3cret2", false},
            {"Bearer S3CRET", false},   {"Bearers3cret", false}, {"Basic s3cret", false},
            {"s3cret", false},          {"Bearer ", false},      {"", false},
            {"Bearer s3cret x", false}, {NULL, false},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(headers); i++)
                if (kb__bearer_ok("s3cret", headers[i].header) != headers[i].ok)
                        fail_msg("header [%s]", headers[i].header ? headers[i].header : "(null)");
}

static int get(struct kb_apiserver *srv, const char *path, const char *auth,
               struct kb_api_resp *resp)
{
        struct kb_api_req req = {.method = "GET", .path = path, .authorization = auth};
        kb_apiserver_handle(srv, &req, resp);
        return resp->status;
}

static void test_auth(void **state)
{
        (void)state;
        struct kb_apiserver_opts o;
        kb_apiserver_opts_init(&o);
        o.seed = 3;
        /* The server keeps its own copy of the token. */
        char *token = kb_xstrdup("s3cret");
        o.token = token;
        struct kb_apiserver *srv = kb_apiserver_new(&o);
        memset(token, 'x', strlen(token));
        free(token);
        struct kb_api_resp r;
        static const char unauthorized[] =
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
            "\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}";
        assert_int_equal(get(srv, "/api/v1/nodes", NULL, &r), 401);
        assert_string_equal(r.body.data, unauthorized);
        assert_string_equal(r.content_type, "application/json");
        kb_api_resp_release(&r);
        assert_int_equal(get(srv, "/api/v1/nodes", "Bearer wrong", &r), 401);
        assert_string_equal(r.body.data, unauthorized);
        kb_api_resp_release(&r);
        assert_int_equal(get(srv, "/api/v1/nodes", "Bearer s3cret", &r), 200);
        kb_api_resp_release(&r);
        assert_int_equal(get(srv, "/", NULL, &r), 401);
        kb_api_resp_release(&r);

        static const struct {
                const char *path;
                int status;
        } open[] = {
            {"/healthz", 200},   {"/readyz", 200},    {"/livez", 200},
            {"/version", 200},   {"//version/", 200}, {"/versions", 401},
            {"/healthz/x", 401}, {"/api", 401},       {"/openapi/v3", 401},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(open); i++) {
                if (get(srv, open[i].path, NULL, &r) != open[i].status)
                        fail_msg("%s: got %d, want %d", open[i].path, r.status, open[i].status);
                kb_api_resp_release(&r);
        }
        kb_apiserver_free(srv);

        /* No token, no authentication. */
        kb_apiserver_opts_init(&o);
        srv = kb_apiserver_new(&o);
        assert_int_equal(get(srv, "/api/v1/nodes", "Bearer anything", &r), 200);
        kb_api_resp_release(&r);
        kb_apiserver_free(srv);
}

static void test_kubeconfig(void **state)
{
        struct fixture *f = *state;
        struct kb_apiserver_tls t;
        char err[256];
        assert_int_equal(kb_apiserver_tls_prepare(&t, f->dir, "127.0.0.1", err, sizeof(err)), 0);
        char *path = path_in(f, "kubeconfig");
        char *text;
        assert_int_equal(kb_apiserver_write_kubeconfig(path, "0.0.0.0", 6443, t.ca_cert, "tok-1"),
                         0);
        assert_int_equal(file_mode(f, "kubeconfig"), 0600);
        assert_int_equal(kb_read_file(path, &text, NULL), 0);
        assert_non_null(strstr(text, "    server: https://127.0.0.1:6443\n"));
        assert_non_null(strstr(text, "  user:\n    token: \"tok-1\"\n"));
        /* certificate-authority-data is the CA's PEM in base64. */
        const char *key = "    certificate-authority-data: ";
        char *b64 = strstr(text, key);
        assert_non_null(b64);
        b64 += strlen(key);
        gnutls_datum_t in = {(unsigned char *)b64, (unsigned)strcspn(b64, "\n")}, out;
        assert_int_equal(gnutls_base64_decode2(&in, &out), 0);
        assert_int_equal(out.size, strlen(t.ca_cert));
        assert_memory_equal(out.data, t.ca_cert, out.size);
        gnutls_free(out.data);
        free(text);

        assert_int_equal(kb_apiserver_write_kubeconfig(path, "127.0.0.1", 8080, NULL, NULL), 0);
        assert_int_equal(kb_read_file(path, &text, NULL), 0);
        assert_non_null(strstr(text, "    server: http://127.0.0.1:8080\n"));
        assert_null(strstr(text, "certificate-authority"));
        assert_null(strstr(text, "token"));
        assert_non_null(strstr(text, "  user: {}\n"));
        free(text);
        free(path);
        kb_apiserver_tls_release(&t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test_setup_teardown(test_generate, setup, teardown),
            cmocka_unit_test_setup_teardown(test_host_names, setup, teardown),
            cmocka_unit_test_setup_teardown(test_reuse, setup, teardown),
            cmocka_unit_test(test_tokens),
            cmocka_unit_test(test_auth),
            cmocka_unit_test_setup_teardown(test_kubeconfig, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
