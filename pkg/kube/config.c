/*
 * Client configuration: a kubeconfig file (clusters, users and contexts, as
 * kubectl reads them) or the in-cluster service account.
 *
 * File paths inside a kubeconfig are relative to the kubeconfig's directory.
 * Exec credential plugins are read here and run by the client (exec.c);
 * auth-provider users are an error that says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/kube.h"

#define SA_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

char *kb_base64_decode(const char *in, size_t *outlen)
{
        size_t n = strlen(in);
        char *out = kb_xmalloc(n / 4 * 3 + 4);
        uint32_t acc = 0;
        int bits = 0;
        size_t o = 0;
        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char)in[i];
                int v;
                if (c >= 'A' && c <= 'Z')
                        v = c - 'A';
                else if (c >= 'a' && c <= 'z')
                        v = c - 'a' + 26;
                else if (c >= '0' && c <= '9')
                        v = c - '0' + 52;
                else if (c == '+' || c == '-')
                        v = 62;
                else if (c == '/' || c == '_')
                        v = 63;
                else if (c == '=' || c == ' ' || c == '\n' || c == '\r' || c == '\t')
                        continue;
                else {
                        free(out);
                        return NULL;
                }
                acc = (acc << 6) | (uint32_t)v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        out[o++] = (char)((acc >> bits) & 0xff);
                }
        }
        out[o] = 0;
        if (outlen)
                *outlen = o;
        return out;
}

void kb_kube_config_release(struct kb_kube_config *c)
{
        free(c->server);
        free(c->ca_file);
        free(c->ca_data);
        free(c->cert_file);
        free(c->cert_data);
        free(c->key_file);
        free(c->key_data);
        if (c->token)
                memset(c->token, 0, strlen(c->token));
        free(c->token);
        free(c->token_file);
        free(c->namespace);
        if (c->has_exec)
                kb_kube_exec_release(&c->exec);
        memset(c, 0, sizeof(*c));
}

/* The entry of list (clusters, users, contexts) whose name is name, as its
 * inner object (key inner). */
static const struct kb_value *named(const struct kb_value *doc, const char *list, const char *name,
                                    const char *inner)
{
        const struct kb_value *l = kb_value_get(doc, list);
        if (!kb_value_is(l, KB_VARRAY) || !name)
                return NULL;
        for (size_t i = 0; i < l->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_get(l->arr.v[i], "name")), name))
                        return kb_value_get(l->arr.v[i], inner);
        return NULL;
}

static char *path_in(const char *dir, const char *p)
{
        if (!p || !*p)
                return NULL;
        if (p[0] == '/' || !dir)
                return kb_xstrdup(p);
        return kb_xasprintf("%s/%s", dir, p);
}

static int data_field(const struct kb_value *obj, const char *key, char **out, size_t *len,
                      const char *file, char *err, size_t errlen)
{
        const char *s = kb_value_str(kb_value_get(obj, key));
        if (!s)
                return 0;
        *out = kb_base64_decode(s, len);
        if (!*out) {
                snprintf(err, errlen, "%s: %s: not valid base64", file, key);
                return KB_EBADINPUT;
        }
        return 0;
}

/* users[].user.exec: command, args, env, apiVersion. */
static int load_exec(const struct kb_value *ex, const char *file, const char *uname,
                     const char *dir, struct kb_kube_exec *x, char *err, size_t errlen)
{
        memset(x, 0, sizeof(*x));
        const char *av = kb_value_str(kb_value_get(ex, "apiVersion"));
        const char *cmd = kb_value_str(kb_value_get(ex, "command"));
        if (!kb_streq(av, "client.authentication.k8s.io/v1") &&
            !kb_streq(av, "client.authentication.k8s.io/v1beta1")) {
                snprintf(err, errlen,
                         "%s: users.%s.exec.apiVersion: want client.authentication.k8s.io/v1 or "
                         "v1beta1, got \"%s\"",
                         file, uname, av ? av : "");
                return KB_EBADINPUT;
        }
        if (!cmd || !*cmd) {
                snprintf(err, errlen, "%s: users.%s.exec.command: not set", file, uname);
                return KB_EBADINPUT;
        }
        x->api_version = kb_xstrdup(av);
        /* As client-go: a relative path with a slash is relative to the
         * kubeconfig; a bare name is looked up in PATH. */
        x->command = cmd[0] != '/' && strchr(cmd, '/') && dir ? kb_xasprintf("%s/%s", dir, cmd)
                                                              : kb_xstrdup(cmd);
        const struct kb_value *args = kb_value_get(ex, "args");
        size_t na = kb_value_is(args, KB_VARRAY) ? args->arr.n : 0;
        x->args = kb_xcalloc(na + 1, sizeof(*x->args));
        for (size_t i = 0; i < na; i++) {
                const char *a = kb_value_str(args->arr.v[i]);
                if (!a) {
                        snprintf(err, errlen, "%s: users.%s.exec.args[%zu]: not a string", file,
                                 uname, i);
                        return KB_EBADINPUT;
                }
                x->args[x->nargs++] = kb_xstrdup(a);
        }
        const struct kb_value *env = kb_value_get(ex, "env");
        size_t ne = kb_value_is(env, KB_VARRAY) ? env->arr.n : 0;
        x->env = kb_xcalloc(ne + 1, sizeof(*x->env));
        for (size_t i = 0; i < ne; i++) {
                const char *n = kb_value_str(kb_value_get(env->arr.v[i], "name"));
                const char *v = kb_value_str(kb_value_get(env->arr.v[i], "value"));
                if (!n || !*n || strchr(n, '=') || !v) {
                        snprintf(err, errlen, "%s: users.%s.exec.env[%zu]: want a name and a value",
                                 file, uname, i);
                        return KB_EBADINPUT;
                }
                x->env[x->nenv++] = kb_xasprintf("%s=%s", n, v);
        }
        return 0;
}

/* Fills c from a parsed kubeconfig; file names it in messages, and dir
 * (NULL: none) anchors its relative paths. */
static int load_doc(const struct kb_value *doc, const char *file, const char *dir,
                    const char *context, struct kb_kube_config *c, char *err, size_t errlen)
{
        if (!context)
                context = kb_value_str(kb_value_get(doc, "current-context"));
        if (!context || !*context) {
                snprintf(err, errlen, "%s: current-context: not set and no --context given", file);
                return KB_EBADINPUT;
        }
        const struct kb_value *ctx = named(doc, "contexts", context, "context");
        if (!ctx) {
                snprintf(err, errlen, "%s: contexts: no context named \"%s\"", file, context);
                return KB_EBADINPUT;
        }
        const char *cname = kb_value_str(kb_value_get(ctx, "cluster"));
        const char *uname = kb_value_str(kb_value_get(ctx, "user"));
        const struct kb_value *cl = named(doc, "clusters", cname, "cluster");
        if (!cl) {
                snprintf(err, errlen, "%s: clusters: no cluster named \"%s\" (context %s)", file,
                         cname ? cname : "", context);
                return KB_EBADINPUT;
        }
        const char *ns = kb_value_str(kb_value_get(ctx, "namespace"));
        c->namespace = ns ? kb_xstrdup(ns) : NULL;
        const char *server = kb_value_str(kb_value_get(cl, "server"));
        if (server)
                c->server = kb_xstrdup(server);
        c->insecure = kb_value_bool(kb_value_get(cl, "insecure-skip-tls-verify"), false);
        c->ca_file = path_in(dir, kb_value_str(kb_value_get(cl, "certificate-authority")));
        if (data_field(cl, "certificate-authority-data", &c->ca_data, &c->ca_len, file, err,
                       errlen))
                return KB_EBADINPUT;
        /* client-go refuses the pair (transport.TLSConfigFor), and so does
         * kubectl with its message: a CA asks for verification that the
         * flag turns off. */
        if (c->insecure && (c->ca_file || c->ca_data)) {
                snprintf(err, errlen,
                         "%s: clusters.%s: insecure-skip-tls-verify with certificate-authority%s: "
                         "specifying a root certificates file with the insecure flag is not "
                         "allowed",
                         file, cname, c->ca_data ? "-data" : "");
                return KB_EBADINPUT;
        }
        const struct kb_value *u = named(doc, "users", uname, "user");
        if (uname && *uname && !u) {
                snprintf(err, errlen, "%s: users: no user named \"%s\" (context %s)", file, uname,
                         context);
                return KB_EBADINPUT;
        }
        if (u) {
                if (kb_value_get(u, "auth-provider")) {
                        snprintf(err, errlen,
                                 "%s: users.%s: auth-provider credentials are not supported; use "
                                 "exec, a token, tokenFile or client certificate",
                                 file, uname);
                        return KB_EBADINPUT;
                }
                const struct kb_value *ex = kb_value_get(u, "exec");
                if (ex) {
                        c->has_exec = true;
                        if (load_exec(ex, file, uname, dir, &c->exec, err, errlen))
                                return KB_EBADINPUT;
                }
                c->cert_file = path_in(dir, kb_value_str(kb_value_get(u, "client-certificate")));
                c->key_file = path_in(dir, kb_value_str(kb_value_get(u, "client-key")));
                if (data_field(u, "client-certificate-data", &c->cert_data, &c->cert_len, file, err,
                               errlen) ||
                    data_field(u, "client-key-data", &c->key_data, &c->key_len, file, err, errlen))
                        return KB_EBADINPUT;
                const char *tok = kb_value_str(kb_value_get(u, "token"));
                if (tok && *tok)
                        c->token = kb_xstrdup(tok);
                c->token_file = path_in(dir, kb_value_str(kb_value_get(u, "tokenFile")));
        }
        return 0;
}

/* Reads file as one kubeconfig document (*doc, caller frees). */
static int parse_file(const char *file, struct kb_value **doc, char *err, size_t errlen)
{
        char *text = NULL;
        size_t len = 0, ndocs = 0;
        struct kb_value **docs = NULL;
        char perr[256];
        *doc = NULL;
        int rc = kb_read_file(file, &text, &len);
        if (rc) {
                snprintf(err, errlen, "%s: %s", file, kb_strerror(rc));
                return KB_EBADINPUT;
        }
        rc = KB_EBADINPUT;
        if (kb_yaml_parse(text, len, &docs, &ndocs, perr, sizeof(perr))) {
                snprintf(err, errlen, "%s: %s", file, perr);
                goto out;
        }
        if (ndocs != 1 || !kb_value_is(docs[0], KB_VOBJECT)) {
                snprintf(err, errlen, "%s: not a kubeconfig", file);
                goto out;
        }
        *doc = docs[0];
        docs[0] = NULL;
        rc = 0;
out:
        kb_value_free_docs(docs, ndocs);
        free(text);
        return rc;
}

static char *dir_of(const char *file)
{
        const char *slash = strrchr(file, '/');
        return slash ? kb_xstrndup(file, (size_t)(slash - file)) : NULL;
}

int kb_kube_config_parse(const char *text, size_t len, const char *file, const char *context,
                         struct kb_kube_config *c, char *err, size_t errlen)
{
        size_t ndocs = 0;
        struct kb_value **docs = NULL;
        char perr[256];
        int rc = KB_EBADINPUT;
        memset(c, 0, sizeof(*c));
        if (kb_yaml_parse(text, len, &docs, &ndocs, perr, sizeof(perr))) {
                snprintf(err, errlen, "%s: %s", file, perr);
                goto out;
        }
        if (ndocs != 1 || !kb_value_is(docs[0], KB_VOBJECT)) {
                snprintf(err, errlen, "%s: not a kubeconfig", file);
                goto out;
        }
        char *dir = dir_of(file);
        rc = load_doc(docs[0], file, dir, context, c, err, errlen);
        free(dir);
out:
        kb_value_free_docs(docs, ndocs);
        if (rc)
                kb_kube_config_release(c);
        return rc;
}

static int load_file(const char *file, const char *context, struct kb_kube_config *c, char *err,
                     size_t errlen)
{
        struct kb_value *doc;
        int rc = parse_file(file, &doc, err, errlen);
        if (rc)
                return rc;
        char *dir = dir_of(file);
        rc = load_doc(doc, file, dir, context, c, err, errlen);
        free(dir);
        kb_value_free(doc);
        return rc;
}

/* Makes a relative path in obj[key] absolute against dir.  An exec
 * command counts as a path only with a slash in it (else PATH finds it). */
static void anchor(struct kb_value *obj, const char *key, const char *dir, bool need_slash)
{
        const char *p = kb_value_str(kb_value_get(obj, key));
        if (!p || !*p || p[0] == '/' || !dir || (need_slash && !strchr(p, '/')))
                return;
        char *abs = kb_xasprintf("%s/%s", dir, p);
        kb_value_set(obj, key, kb_value_new_string(abs));
        free(abs);
}

/*
 * $KUBECONFIG naming several files, merged as kubectl merges them: files
 * that do not exist are skipped; the first file to set current-context, and
 * the first to define a cluster, user or context of a given name, wins.
 * Relative paths stay relative to the file that wrote them, so they are
 * made absolute while merging.
 */
static int load_list(const char *list, const char *context, struct kb_kube_config *c, char *err,
                     size_t errlen)
{
        static const char *const lists[] = {"clusters", "users", "contexts"};
        struct kb_value *merged = kb_value_new(KB_VOBJECT);
        size_t nfiles = 0;
        char *first = NULL;
        int rc = 0;
        for (const char *p = list; *p;) {
                size_t n = strcspn(p, ":");
                char *file = kb_xstrndup(p, n);
                p += n + (p[n] == ':');
                struct kb_value *doc = NULL;
                if (!*file || access(file, F_OK)) {
                        free(file);
                        continue;
                }
                rc = parse_file(file, &doc, err, errlen);
                if (rc) {
                        free(file);
                        goto out;
                }
                if (!nfiles++)
                        first = kb_xstrdup(file);
                const char *cur = kb_value_str(kb_value_get(doc, "current-context"));
                if (cur && *cur && !kb_value_str(kb_value_get(merged, "current-context")))
                        kb_value_set(merged, "current-context", kb_value_new_string(cur));
                char *dir = dir_of(file);
                for (size_t l = 0; l < KB_ARRAY_SIZE(lists); l++) {
                        const struct kb_value *src = kb_value_get(doc, lists[l]);
                        if (!kb_value_is(src, KB_VARRAY))
                                continue;
                        struct kb_value *dst = kb_value_get(merged, lists[l]);
                        if (!dst) {
                                dst = kb_value_new(KB_VARRAY);
                                kb_value_set(merged, lists[l], dst);
                        }
                        for (size_t i = 0; i < src->arr.n; i++) {
                                const char *name =
                                    kb_value_str(kb_value_get(src->arr.v[i], "name"));
                                if (!name || named(merged, lists[l], name, "name"))
                                        continue;
                                struct kb_value *e = kb_value_clone(src->arr.v[i]);
                                struct kb_value *cl = kb_value_get(e, "cluster");
                                struct kb_value *u = kb_value_get(e, "user");
                                anchor(cl, "certificate-authority", dir, false);
                                anchor(u, "client-certificate", dir, false);
                                anchor(u, "client-key", dir, false);
                                anchor(u, "tokenFile", dir, false);
                                anchor(kb_value_get(u, "exec"), "command", dir, true);
                                kb_value_append(dst, e);
                        }
                }
                free(dir);
                free(file);
                kb_value_free(doc);
        }
        if (!nfiles) {
                snprintf(err, errlen, "KUBECONFIG=%s: none of its files exists", list);
                rc = KB_EBADINPUT;
        } else {
                /* Paths are absolute by now: no directory to anchor them. */
                char *label = nfiles == 1 ? kb_xstrdup(first) : kb_xasprintf("KUBECONFIG=%s", list);
                rc = load_doc(merged, label, NULL, context, c, err, errlen);
                free(label);
        }
out:
        free(first);
        kb_value_free(merged);
        return rc;
}

static int load_in_cluster(struct kb_kube_config *c, char *err, size_t errlen)
{
        const char *host = getenv("KUBERNETES_SERVICE_HOST");
        const char *port = getenv("KUBERNETES_SERVICE_PORT");
        if (!host || !*host || !port || !*port) {
                snprintf(err, errlen, "in-cluster: KUBERNETES_SERVICE_HOST/PORT not set");
                return KB_EBADINPUT;
        }
        /* An IPv6 address needs brackets in a URL. */
        if (strchr(host, ':'))
                c->server = kb_xasprintf("https://[%s]:%s", host, port);
        else
                c->server = kb_xasprintf("https://%s:%s", host, port);
        c->token_file = kb_xstrdup(SA_DIR "/token");
        c->ca_file = kb_xstrdup(SA_DIR "/ca.crt");
        char *ns = NULL;
        size_t n;
        if (kb_read_file(SA_DIR "/namespace", &ns, &n) == 0) {
                while (n && (ns[n - 1] == '\n' || ns[n - 1] == ' '))
                        ns[--n] = 0;
                c->namespace = ns;
        }
        return 0;
}

int kb_kube_config_load(const char *kubeconfig, const char *context, const char *master,
                        struct kb_kube_config *c, char *err, size_t errlen)
{
        int rc;
        memset(c, 0, sizeof(*c));
        const char *env = getenv("KUBECONFIG");
        char *home = NULL;
        if (kubeconfig && *kubeconfig) {
                rc = load_file(kubeconfig, context, c, err, errlen);
        } else if (env && *env) {
                rc = load_list(env, context, c, err, errlen);
        } else if (getenv("KUBERNETES_SERVICE_HOST")) {
                rc = load_in_cluster(c, err, errlen);
        } else if (master && *master) {
                rc = 0;
        } else {
                const char *h = getenv("HOME");
                home = kb_xasprintf("%s/.kube/config", h ? h : "");
                rc = load_file(home, context, c, err, errlen);
        }
        free(home);
        if (rc)
                goto fail;
        if (master && *master) {
                free(c->server);
                c->server = kb_xstrdup(master);
        }
        if (!c->server || !*c->server) {
                snprintf(err, errlen, "%s: server: not set",
                         kubeconfig ? kubeconfig : "kubeconfig");
                rc = KB_EBADINPUT;
                goto fail;
        }
        size_t sl = strlen(c->server);
        while (sl > 0 && c->server[sl - 1] == '/')
                c->server[--sl] = 0;
        if (!strstr(c->server, "://")) {
                char *s = kb_xasprintf("https://%s", c->server);
                free(c->server);
                c->server = s;
        }
        return 0;
fail:
        kb_kube_config_release(c);
        return rc;
}
