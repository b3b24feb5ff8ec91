/*
 * The registry of resource types: every type ever registered, built-in or
 * from a CRD, looked up by group, version and resource or by kind.  A
 * leaf of storage: it calls nothing else in the server.
 */
#include "apiserver/apiserver-int.h"

#include <string.h>

struct kb_rtype *kb__type_find(struct kb_apiserver *srv, const char *group, const char *version,
                               const char *resource)
{
        for (size_t i = 0; i < srv->ntypes; i++) {
                struct kb_rtype *rt = srv->types[i];
                if (!rt->gone && !strcmp(rt->group, group) && !strcmp(rt->version, version) &&
                    !strcmp(rt->resource, resource))
                        return rt;
        }
        return NULL;
}

struct kb_rtype *kb__type_by_kind(struct kb_apiserver *srv, const char *group, const char *kind)
{
        for (size_t i = 0; i < srv->ntypes; i++) {
                struct kb_rtype *rt = srv->types[i];
                if (!rt->gone && !strcmp(rt->group, group) && !strcmp(rt->kind, kind))
                        return rt;
        }
        return NULL;
}

bool kb__is_vcjobs(const struct kb_rtype *rt)
{
        return rt && rt->custom && !strcmp(rt->group, "batch.volcano.sh") &&
               !strcmp(rt->resource, "jobs");
}

bool kb__is_podgroups(const struct kb_rtype *rt)
{
        return rt && rt->custom && !strcmp(rt->group, "scheduling.volcano.sh") &&
               !strcmp(rt->resource, "podgroups");
}

struct kb_rtype *kb__type_add(struct kb_apiserver *srv)
{
        struct kb_rtype *rt = kb_xcalloc(1, sizeof(*rt));
        KB_PUSH(srv->types, srv->ntypes, srv->captypes, rt);
        return rt;
}
