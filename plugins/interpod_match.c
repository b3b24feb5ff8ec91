/*
 * The inter-pod index's label selectors: whether a pod matches a pod
 * affinity term, by its namespace (listed, or chosen by a namespace
 * selector over the namespaces' labels) and then its labels.
 */
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "plugins/plugins-int.h"

/* ---- label selectors ---------------------------------------------------------------- */

/* The namespace label kubernetes.io/metadata.name is set on every
 * namespace by the API server; a namespace missing from the snapshot has
 * that label alone. */
static const char *ns_label(const struct nslabels *ns, const char *key)
{
        const char *v = ns->meta ? kb_meta_label(ns->meta, key) : NULL;
        if (!v && strcmp(key, "kubernetes.io/metadata.name") == 0)
                return ns->name;
        return v;
}

static const struct nslabels *ns_find(const struct kb__ipod *ix, const char *name)
{
        uint64_t *v = kb_map_get_str(&ix->ns, name, strlen(name));
        return v ? (const struct nslabels *)(uintptr_t)*v : NULL;
}

static const char *pod_ns(const struct kb_pod *p)
{
        return kb_meta_ns(&p->meta);
}

bool kb__term_matches(const struct kb__ipod *ix, const struct kb_pod_term *t,
                      const struct kb_pod *pod)
{
        const char *ns = pod_ns(pod);
        bool in = false;
        for (size_t i = 0; i < t->nnamespaces && !in; i++)
                in = strcmp(t->namespaces[i], ns) == 0;
        if (!in && t->ns_selector.set) {
                const struct nslabels *nl = ns_find(ix, ns);
                struct nslabels missing = {ns, NULL};
                if (!nl)
                        nl = &missing;
                in = true;
                for (size_t i = 0; i < t->ns_selector.nreqs && in; i++)
                        in = kb_selector_req_matches(&t->ns_selector.reqs[i],
                                                     ns_label(nl, t->ns_selector.reqs[i].key));
        }
        return in && kb_label_selector_matches(&t->selector, &pod->meta);
}
