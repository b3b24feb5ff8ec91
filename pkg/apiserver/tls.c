/*
 * HTTPS material: a small private PKI the server makes for itself.
 *
 * kubectl sends a bearer token over https only, and it must trust the
 * server's certificate.  So the server keeps, in one directory,
 *
 *   ca.crt, ca.key          a self-signed CA (ECDSA P-256, valid a year)
 *   server.crt, server.key  a certificate that CA signed, with the names
 *                           clients dial: 127.0.0.1, ::1, localhost and
 *                           the listen host; serverAuth; valid a year, and
 *                           never past the CA
 *
 * and the kubeconfig carries ca.crt as certificate-authority-data.  The CA
 * is separate from the server certificate so that a server certificate
 * can be reissued (say, for a new listen host) without breaking clients
 * that already trust the CA.  For example, starting on 127.0.0.1 and later
 * with --listen 192.168.1.5:6443 --allow-remote on the same directory keeps
 * ca.crt and ca.key and writes a new server.crt naming 192.168.1.5.
 *
 * Files are reused only while they fit: a pair whose certificate or key
 * does not load, whose key is not the certificate's, that expires within a
 * day, or (for the server) that does not verify against the CA or does not
 * name the host, is replaced.  Reasons are logged as warnings.
 */
#include "apiserver/apiserver-http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define VALIDITY (365 * 86400) /* a year */
#define MARGIN   86400         /* reuse nothing that expires within a day */
#define BACKDATE 3600          /* tolerate clients whose clocks run an hour behind */
#define CA_NAME  "ca"
#define SRV_NAME "server"

bool kb_apiserver_tls_supported(void)
{
        return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES;
}

void kb_apiserver_tls_init(struct kb_apiserver_tls *t)
{
        memset(t, 0, sizeof(*t));
}

void kb_apiserver_tls_release(struct kb_apiserver_tls *t)
{
        free(t->ca_cert);
        free(t->cert);
        if (t->key) {
                gnutls_memset(t->key, 0, strlen(t->key));
                free(t->key);
        }
        kb_apiserver_tls_init(t);
}

/* A certificate with its private key, and their PEM texts. */
struct pair {
        gnutls_x509_crt_t crt;
        gnutls_x509_privkey_t key;
        char *crt_pem;
        char *key_pem;
};

static void pair_release(struct pair *p)
{
        if (p->crt)
                gnutls_x509_crt_deinit(p->crt);
        if (p->key)
                gnutls_x509_privkey_deinit(p->key);
        free(p->crt_pem);
        if (p->key_pem) {
                gnutls_memset(p->key_pem, 0, strlen(p->key_pem));
                free(p->key_pem);
        }
        memset(p, 0, sizeof(*p));
}

static int gnutls_fail(char *err, size_t errlen, const char *what, int grc)
{
        snprintf(err, errlen, "%s: %s", what, gnutls_strerror(grc));
        return -EIO;
}

/* ---- loading and checking what is on disk -------------------------------- */

static char *file_path(const char *dir, const char *name, const char *ext)
{
        return kb_xasprintf("%s/%s.%s", dir, name, ext);
}

/* Reads dir/name.crt and dir/name.key into p.  Returns 0, -ENOENT when
 * neither exists, or another negative value with the reason in why when
 * they are there but unusable. */
static int load_pair(const char *dir, const char *name, struct pair *p, char *why, size_t n)
{
        char *cpath = file_path(dir, name, "crt"), *kpath = file_path(dir, name, "key");
        size_t clen = 0, klen = 0;
        int rc = kb_read_file(cpath, &p->crt_pem, &clen);
        int krc = kb_read_file(kpath, &p->key_pem, &klen);
        if (rc == -ENOENT && krc == -ENOENT)
                goto out;
        if (rc || krc) {
                snprintf(why, n, "%s: %s", rc ? cpath : kpath, kb_strerror(rc ? rc : krc));
                rc = rc ? rc : krc;
                goto out;
        }
        gnutls_datum_t cd = {(unsigned char *)p->crt_pem, (unsigned)clen};
        gnutls_datum_t kd = {(unsigned char *)p->key_pem, (unsigned)klen};
        rc = -EIO;
        if (gnutls_x509_crt_init(&p->crt) < 0 ||
            gnutls_x509_crt_import(p->crt, &cd, GNUTLS_X509_FMT_PEM) < 0) {
                snprintf(why, n, "%s: not a PEM certificate", cpath);
                goto out;
        }
        if (gnutls_x509_privkey_init(&p->key) < 0 ||
            gnutls_x509_privkey_import2(p->key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0) < 0) {
                snprintf(why, n, "%s: not a PEM private key", kpath);
                goto out;
        }
        unsigned char cid[64], kid[64];
        size_t cn = sizeof(cid), kn = sizeof(kid);
        if (gnutls_x509_crt_get_key_id(p->crt, 0, cid, &cn) < 0 ||
            gnutls_x509_privkey_get_key_id(p->key, 0, kid, &kn) < 0 || cn != kn ||
            memcmp(cid, kid, cn) != 0) {
                snprintf(why, n, "%s: not the key of %s.crt", kpath, name);
                goto out;
        }
        rc = 0;
out:
        free(cpath);
        free(kpath);
        return rc;
}

static bool has_server_auth(gnutls_x509_crt_t crt)
{
        for (unsigned i = 0;; i++) {
                char oid[128];
                size_t n = sizeof(oid);
                int rc = gnutls_x509_crt_get_key_purpose_oid(crt, i, oid, &n, NULL);
                if (rc == GNUTLS_E_SHORT_MEMORY_BUFFER)
                        continue;
                if (rc < 0)
                        return false;
                if (!strcmp(oid, GNUTLS_KP_TLS_WWW_SERVER))
                        return true;
        }
}

/* Whether host is a name a client dials (not a wildcard like 0.0.0.0). */
static bool dialable(const char *host)
{
        return host && host[0] && strcmp(host, "0.0.0.0") && strcmp(host, "::");
}

static bool names_host(gnutls_x509_crt_t crt, const char *host)
{
        unsigned char ip[16];
        if (inet_pton(AF_INET, host, ip) == 1)
                return gnutls_x509_crt_check_ip(crt, ip, 4, 0);
        if (inet_pton(AF_INET6, host, ip) == 1)
                return gnutls_x509_crt_check_ip(crt, ip, 16, 0);
        return gnutls_x509_crt_check_hostname2(crt, host, 0);
}

/* Why the loaded CA pair will not do, or NULL when it will. */
static const char *ca_unfit(const struct pair *ca, time_t now)
{
        unsigned crit, is_ca = 0, status = 0;
        int pathlen;
        if (gnutls_x509_crt_get_basic_constraints(ca->crt, &crit, &is_ca, &pathlen) < 0 || !is_ca)
                return "is not a CA";
        if (gnutls_x509_crt_get_expiration_time(ca->crt) < now + MARGIN)
                return "expires within a day";
        if (gnutls_x509_crt_verify(ca->crt, &ca->crt, 1, 0, &status) < 0 || status)
                return "is not a valid self-signed CA";
        return NULL;
}

/* Why the loaded server pair will not do, or NULL when it will. */
static const char *server_unfit(const struct pair *srv, const struct pair *ca, const char *host,
                                time_t now)
{
        unsigned status = 0;
        if (gnutls_x509_crt_get_expiration_time(srv->crt) < now + MARGIN)
                return "expires within a day";
        if (gnutls_x509_crt_verify(srv->crt, &ca->crt, 1, 0, &status) < 0 || status)
                return "is not signed by ca.crt";
        if (!has_server_auth(srv->crt))
                return "is not for serverAuth";
        if (!names_host(srv->crt, "127.0.0.1") || (dialable(host) && !names_host(srv->crt, host)))
                return "does not name the listen host";
        return NULL;
}

/* ---- making new ones ----------------------------------------------------- */

#define TRY(call)                                                                                  \
        do {                                                                                       \
                if ((grc = (call)) < 0)                                                            \
                        goto fail;                                                                 \
        } while (0)

/* A fresh key and an unsigned certificate for it, with the fields every
 * certificate here shares. */
static int new_pair(struct pair *p, const char *cn, time_t now, time_t until)
{
        int grc;
        unsigned char serial[16], id[64];
        size_t idlen = sizeof(id);
        TRY(gnutls_x509_privkey_init(&p->key));
        TRY(gnutls_x509_privkey_generate(p->key, GNUTLS_PK_ECDSA,
                                         GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0));
        TRY(gnutls_x509_crt_init(&p->crt));
        TRY(gnutls_x509_crt_set_version(p->crt, 3));
        /* A random positive serial: RFC 5280 wants it unique per issuer. */
        TRY(gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof(serial)));
        serial[0] = (unsigned char)((serial[0] & 0x7f) | 0x40);
        TRY(gnutls_x509_crt_set_serial(p->crt, serial, sizeof(serial)));
        TRY(gnutls_x509_crt_set_dn_by_oid(p->crt, GNUTLS_OID_X520_ORGANIZATION_NAME, 0, "kbatch",
                                          6));
        TRY(gnutls_x509_crt_set_dn_by_oid(p->crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn,
                                          (unsigned)strlen(cn)));
        TRY(gnutls_x509_crt_set_activation_time(p->crt, now - BACKDATE));
        TRY(gnutls_x509_crt_set_expiration_time(p->crt, until));
        TRY(gnutls_x509_crt_set_key(p->crt, p->key));
        TRY(gnutls_x509_privkey_get_key_id(p->key, 0, id, &idlen));
        TRY(gnutls_x509_crt_set_subject_key_id(p->crt, id, idlen));
        return 0;
fail:
        return grc;
}

static int add_host(gnutls_x509_crt_t crt, const char *host)
{
        unsigned char ip[16];
        if (inet_pton(AF_INET, host, ip) == 1)
                return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 4,
                                                            GNUTLS_FSAN_APPEND);
        if (inet_pton(AF_INET6, host, ip) == 1)
                return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 16,
                                                            GNUTLS_FSAN_APPEND);
        return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, host,
                                                    (unsigned)strlen(host), GNUTLS_FSAN_APPEND);
}

/* Whether two host texts name the same address ("::1" and "0::1" do). */
static bool same_host(const char *a, const char *b)
{
        unsigned char ia[16], ib[16];
        int fam = strchr(a, ':') ? AF_INET6 : AF_INET;
        if (inet_pton(fam, a, ia) == 1)
                return inet_pton(fam, b, ib) == 1 && !memcmp(ia, ib, fam == AF_INET ? 4 : 16);
        return !strcasecmp(a, b);
}

static int make_ca(struct pair *ca, time_t now)
{
        int grc;
        TRY(new_pair(ca, "kbatch-apiserver local CA", now, now + VALIDITY));
        TRY(gnutls_x509_crt_set_basic_constraints(ca->crt, 1, 0));
        TRY(gnutls_x509_crt_set_key_usage(ca->crt, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN |
                                                       GNUTLS_KEY_DIGITAL_SIGNATURE));
        TRY(gnutls_x509_crt_sign2(ca->crt, ca->crt, ca->key, GNUTLS_DIG_SHA256, 0));
        return 0;
fail:
        return grc;
}

static int make_server(struct pair *srv, const struct pair *ca, const char *host, time_t now)
{
        int grc;
        unsigned char id[64];
        size_t idlen = sizeof(id);
        time_t until = now + VALIDITY;
        time_t ca_until = gnutls_x509_crt_get_expiration_time(ca->crt);
        if (ca_until != (time_t)-1 && ca_until < until)
                until = ca_until;
        TRY(new_pair(srv, "kbatch-apiserver", now, until));
        TRY(gnutls_x509_crt_set_basic_constraints(srv->crt, 0, -1));
        TRY(gnutls_x509_crt_set_key_usage(srv->crt, GNUTLS_KEY_DIGITAL_SIGNATURE));
        TRY(gnutls_x509_crt_set_key_purpose_oid(srv->crt, GNUTLS_KP_TLS_WWW_SERVER, 0));
        const char *names[] = {"127.0.0.1", "::1", "localhost"};
        bool named = !dialable(host);
        for (size_t i = 0; i < KB_ARRAY_SIZE(names); i++) {
                TRY(add_host(srv->crt, names[i]));
                named = named || same_host(names[i], host);
        }
        if (!named)
                TRY(add_host(srv->crt, host));
        TRY(gnutls_x509_crt_get_subject_key_id(ca->crt, id, &idlen, NULL));
        TRY(gnutls_x509_crt_set_authority_key_id(srv->crt, id, idlen));
        TRY(gnutls_x509_crt_sign2(srv->crt, ca->crt, ca->key, GNUTLS_DIG_SHA256, 0));
        return 0;
fail:
        return grc;
}

#undef TRY

/* Writes p's certificate (0644) and key (0600) as dir/name.crt and
 * dir/name.key, keeping the PEM texts in p.  The key goes first, so a
 * certificate on disk always has its key beside it. */
static int save_pair(const char *dir, const char *name, struct pair *p, char *err, size_t errlen)
{
        gnutls_datum_t c = {NULL, 0}, k = {NULL, 0};
        char *cpath = file_path(dir, name, "crt"), *kpath = file_path(dir, name, "key");
        int rc = gnutls_x509_crt_export2(p->crt, GNUTLS_X509_FMT_PEM, &c);
        if (rc >= 0)
                rc = gnutls_x509_privkey_export2_pkcs8(p->key, GNUTLS_X509_FMT_PEM, NULL,
                                                       GNUTLS_PKCS_PLAIN, &k);
        if (rc < 0) {
                rc = gnutls_fail(err, errlen, name, rc);
                goto out;
        }
        p->crt_pem = kb_xstrndup((const char *)c.data, c.size);
        p->key_pem = kb_xstrndup((const char *)k.data, k.size);
        if ((rc = kb_write_file(kpath, k.data, k.size, 0600)) != 0) {
                snprintf(err, errlen, "%s: %s", kpath, kb_strerror(rc));
                goto out;
        }
        if ((rc = kb_write_file(cpath, c.data, c.size, 0644)) != 0) {
                snprintf(err, errlen, "%s: %s", cpath, kb_strerror(rc));
                goto out;
        }
out:
        if (k.data) {
                gnutls_memset(k.data, 0, k.size);
                gnutls_free(k.data);
        }
        gnutls_free(c.data);
        free(cpath);
        free(kpath);
        return rc;
}

static int ensure_dir(const char *dir, char *err, size_t errlen)
{
        struct stat st;
        if (mkdir(dir, 0700) == 0)
                return 0;
        int rc = -errno;
        if (rc == -EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
                return 0;
        if (rc == -EEXIST)
                rc = -ENOTDIR;
        snprintf(err, errlen, "%s: %s", dir, kb_strerror(rc));
        return rc;
}

/* Loads the pair called name from dir; a pair that is there but unusable is
 * reported and dropped, so the caller makes a new one. */
static void load_or_warn(const char *dir, const char *name, struct pair *p)
{
        char why[512];
        if (load_pair(dir, name, p, why, sizeof(why))) {
                if (p->crt_pem || p->key_pem)
                        KB_WARN("%s; making a new %s.crt and %s.key", why, name, name);
                pair_release(p);
        }
}

int kb_apiserver_tls_prepare(struct kb_apiserver_tls *t, const char *dir, const char *host,
                             char *err, size_t errlen)
{
        struct pair ca = {0}, srv = {0};
        time_t now = time(NULL);
        const char *why;
        int rc;
        kb_apiserver_tls_init(t);
        if ((rc = ensure_dir(dir, err, errlen)) != 0)
                goto out;
        load_or_warn(dir, CA_NAME, &ca);
        if (ca.crt && (why = ca_unfit(&ca, now))) {
                KB_WARN("%s/%s.crt: %s; making a new CA", dir, CA_NAME, why);
                pair_release(&ca);
        }
        if (!ca.crt) {
                t->generated = true;
                if ((rc = make_ca(&ca, now)) < 0) {
                        rc = gnutls_fail(err, errlen, "making the CA certificate", rc);
                        goto out;
                }
                if ((rc = save_pair(dir, CA_NAME, &ca, err, errlen)) != 0)
                        goto out;
        } else {
                /* The server certificate of another CA is no use. */
                load_or_warn(dir, SRV_NAME, &srv);
        }
        if (srv.crt && (why = server_unfit(&srv, &ca, host, now))) {
                KB_WARN("%s/%s.crt: %s; issuing a new one", dir, SRV_NAME, why);
                pair_release(&srv);
        }
        if (!srv.crt) {
                t->generated = true;
                if ((rc = make_server(&srv, &ca, host, now)) < 0) {
                        rc = gnutls_fail(err, errlen, "making the server certificate", rc);
                        goto out;
                }
                if ((rc = save_pair(dir, SRV_NAME, &srv, err, errlen)) != 0)
                        goto out;
        }
        /* Hand the PEM texts over. */
        t->ca_cert = ca.crt_pem;
        ca.crt_pem = NULL;
        t->cert = srv.crt_pem;
        srv.crt_pem = NULL;
        t->key = srv.key_pem;
        srv.key_pem = NULL;
        rc = 0;
out:
        pair_release(&ca);
        pair_release(&srv);
        if (rc)
                kb_apiserver_tls_release(t);
        return rc;
}

void kb_apiserver_tls_remove(const char *dir)
{
        static const char *const files[] = {CA_NAME ".crt", CA_NAME ".key", SRV_NAME ".crt",
                                            SRV_NAME ".key"};
        for (size_t i = 0; i < KB_ARRAY_SIZE(files); i++) {
                char *p = kb_xasprintf("%s/%s", dir, files[i]);
                unlink(p);
                free(p);
        }
        rmdir(dir);
}
