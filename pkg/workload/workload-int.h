/*
 * What the files of pkg/workload share: the pieces every document they
 * build is made of.
 */
#ifndef KB_PKG_WORKLOAD_INT_H
#define KB_PKG_WORKLOAD_INT_H

#include "base/base.h"
#include "workload/workload.h"

/* A resource list ({cpu: "4", memory: 8Gi}) of r times times: the slots
 * that are not zero, pods left out.  The caller owns it. */
struct kb_value *kb__workload_resources(const struct kb_res *r, int64_t times);
/* A Volcano PodGroup with its name and namespace and an empty spec. */
struct kb_value *kb__workload_podgroup_doc(const char *ns, const char *name);

#endif /* KB_PKG_WORKLOAD_INT_H */
