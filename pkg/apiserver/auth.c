/*
 * Bearer tokens: making one, checking the Authorization header against it,
 * and the few paths anyone may ask for without one.
 *
 * kube-apiserver lets anonymous clients read /healthz, /readyz, /livez and
 * /version, and kubectl's dispatcher asks for /version before it has picked
 * a kubectl, so those stay open here too.  Everything else needs the token;
 * a request without it gets the 401 Status kube-apiserver sends, which
 * kubectl prints as "You must be logged in to the server (Unauthorized)".
 */
#include "apiserver/apiserver-http.h"

#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <string.h>
#include <strings.h>

int kb_apiserver_token_new(char out[KB_APISERVER_TOKEN_LEN + 1])
{
        static const char hex[] = "0123456789abcdef";
        unsigned char raw[KB_APISERVER_TOKEN_LEN / 2];
        if (gnutls_rnd(GNUTLS_RND_KEY, raw, sizeof(raw)) != 0)
                return -EIO;
        for (size_t i = 0; i < sizeof(raw); i++) {
                out[2 * i] = hex[raw[i] >> 4];
                out[2 * i + 1] = hex[raw[i] & 15];
        }
        out[KB_APISERVER_TOKEN_LEN] = 0;
        gnutls_memset(raw, 0, sizeof(raw));
        return 0;
}

bool kb_apiserver_token_valid(const char *s)
{
        size_t n = 0;
        for (; s[n]; n++) {
                unsigned char ch = (unsigned char)s[n];
                bool alnum = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                             (ch >= '0' && ch <= '9');
                if (!alnum && !strchr("-._~+/=", ch))
                        return false;
                if (n >= 4096)
                        return false;
        }
        return n > 0;
}

bool kb__bearer_ok(const char *token, const char *authorization)
{
        if (!authorization || strncasecmp(authorization, "Bearer", 6) != 0)
                return false;
        const char *p = authorization + 6;
        if (*p != ' ' && *p != '\t')
                return false;
        while (*p == ' ' || *p == '\t')
                p++;
        size_t got = strlen(p);
        while (got > 0 && (p[got - 1] == ' ' || p[got - 1] == '\t'))
                got--;
        size_t want = strlen(token);
        /* Every byte of the expected token is looked at whatever the input,
         * so the time taken says nothing about how much of it matched. */
        unsigned diff = got != want;
        for (size_t i = 0; i < want; i++)
                diff |= (unsigned char)token[i] ^ (unsigned char)(i < got ? p[i] : 0);
        return diff == 0;
}

/* Whether path is exactly one of the open paths, slashes aside. */
static bool open_path(const char *path)
{
        static const char *const open[] = {"healthz", "readyz", "livez", "version"};
        while (*path == '/')
                path++;
        size_t n = strcspn(path, "/");
        for (const char *rest = path + n; *rest; rest++)
                if (*rest != '/')
                        return false;
        for (size_t i = 0; i < KB_ARRAY_SIZE(open); i++)
                if (strlen(open[i]) == n && !strncmp(path, open[i], n))
                        return true;
        return false;
}

bool kb__authorized(const struct kb_apiserver *srv, const char *path, const char *authorization)
{
        if (!srv->token)
                return true;
        if (open_path(path ? path : "/"))
                return true;
        return kb__bearer_ok(srv->token, authorization);
}
