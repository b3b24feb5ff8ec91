/*
 * Which paths the client sends (kb_kube_path_ok): names from objects end up
 * in paths, and one holding '/', "..", a '?' or a character a name cannot
 * would address another object.
 */
#include <stdio.h>
#include <string.h>

#include "kube/kube-int.h"

/* The segment s[0..n) is one a path may hold unescaped. */
static bool plain_segment(const char *s, size_t n)
{
        if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == ':'))
                        return false;
        }
        return true;
}

/*
 * The API's paths: /api/v1/... and /apis/GROUP/VERSION/..., then
 * [namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]], or namespaces/NS alone.
 * Other paths (/version, /healthz) are checked segment by segment only.
 */
bool kb_kube_path_ok(const char *path, char *why, size_t n)
{
        size_t len = strcspn(path, "?");
        if (len == 1 && path[0] == '/')
                return true;
        if (len == 0 || path[0] != '/') {
                snprintf(why, n, "the path does not start with '/'");
                return false;
        }
        char seg[16][254];
        size_t nseg = 0;
        for (size_t i = 1; i <= len;) {
                size_t e = i;
                while (e < len && path[e] != '/')
                        e++;
                if (nseg == KB_ARRAY_SIZE(seg) || e - i >= sizeof(seg[0]) ||
                    !plain_segment(path + i, e - i)) {
                        snprintf(why, n,
                                 "segment %zu of the path is empty, '.', '..', too long or "
                                 "holds a character a name cannot",
                                 nseg + 1);
                        return false;
                }
                memcpy(seg[nseg], path + i, e - i);
                seg[nseg++][e - i] = 0;
                i = e + 1;
        }
        size_t at = nseg && !strcmp(seg[0], "api") ? 2 : nseg && !strcmp(seg[0], "apis") ? 3 : nseg;
        if (at < nseg && !strcmp(seg[at], "namespaces") && at + 1 < nseg) {
                if (!kb_dns_label(seg[at + 1])) {
                        snprintf(why, n, "namespace '%s' is not a DNS-1123 label", seg[at + 1]);
                        return false;
                }
                at += 2;
        }
        if (at + 1 < nseg && !kb_dns_subdomain(seg[at + 1])) {
                snprintf(why, n, "%s name '%s' is not a DNS-1123 subdomain", seg[at], seg[at + 1]);
                return false;
        }
        return true;
}
