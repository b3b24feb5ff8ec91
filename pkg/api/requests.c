/*
 * A pod's resource request as kube-scheduler computes it.
 *
 * The request (k8s.io/component-helpers resource.PodRequests, which
 * kube-scheduler's NodeResourcesFit uses):
 *   1. each container's requests, where a resource with a limit but no
 *      request takes the limit (the API server's SetDefaults_Pod does this
 *      before the scheduler ever sees the pod);
 *   2. the sum over spec.containers;
 *   3. init containers run one at a time before them, so the pod needs the
 *      larger of that sum and each init container — plus the sidecars
 *      (init containers with restartPolicy Always) started before it, which
 *      keep running and so also add to the sum;
 *   4. plus spec.overhead (the RuntimeClass's pod overhead);
 *   5. the pods slot is 1: a pod takes one of the node's pod slots.
 * Worked example: containers cpu 1 and 2, init containers cpu 4 and 1,
 * overhead cpu 250m: max(1 + 2, 4, 1) + 0.25 = 4.25 cores = 4250 milli.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-int.h"

/* One container's requests, with limits standing in for missing requests
 * (SetDefaults_Pod copies each limit to an absent request of the same
 * resource; a request stated as 0 stays 0). */
static int container_requests(struct kb__api_dec *d, const struct kb_value *c, const char *path,
                              struct kb_res *out)
{
        char p[KB__API_PATH], pr[KB__API_PATH + 32];
        struct kb_res req = {{0}}, lim = {{0}};
        uint32_t rmask = 0, lmask = 0;
        int rc;

        if ((rc = kb__api_object(d, c, path)))
                return rc;
        const struct kb_value *res = kb_value_get(c, "resources");
        kb__api_path(p, sizeof(p), "%s.resources", path);
        if ((rc = kb__api_object(d, res, p)))
                return rc;
        kb__api_path(pr, sizeof(pr), "%s.requests", p);
        if ((rc = kb__api_res(d, kb_value_get(res, "requests"), pr, &req, &rmask)))
                return rc;
        kb__api_path(pr, sizeof(pr), "%s.limits", p);
        if ((rc = kb__api_res(d, kb_value_get(res, "limits"), pr, &lim, &lmask)))
                return rc;
        for (int i = 0; i < KB_RES_MAX; i++) {
                uint32_t bit = (uint32_t)1 << i;
                if (!(lmask & bit))
                        continue;
                if (!(rmask & bit)) {
                        req.q[i] = lim.q[i];
                } else if (req.q[i] > lim.q[i]) {
                        /* ValidateResourceRequirements: request <= limit. */
                        char q[48];
                        kb_quantity_format(lim.q[i], kb_res_is_milli(i), kb_res_is_bytes(i), q,
                                           sizeof(q));
                        kb__api_path(pr, sizeof(pr), "%s.requests.%s", p, kb_res_name(i));
                        return kb__api_fail(d, pr, "must be <= the limit %s", q);
                }
        }
        *out = req;
        return 0;
}

static void res_max(struct kb_res *a, const struct kb_res *b)
{
        for (int i = 0; i < KB_RES_MAX; i++)
                a->q[i] = KB_MAX(a->q[i], b->q[i]);
}

int kb__api_pod_requests(struct kb__api_dec *d, const struct kb_value *spec, struct kb_pod *pod)
{
        struct kb_res sum = {{0}}, sidecars = {{0}}, init = {{0}};
        const struct kb_value *cs = kb_value_get(spec, "containers");
        const struct kb_value *ics = kb_value_get(spec, "initContainers");
        char p[KB__API_PATH];
        int rc;

        if ((rc = kb__api_list(d, cs, "spec.containers")) ||
            (rc = kb__api_list(d, ics, "spec.initContainers")))
                return rc;
        for (size_t i = 0; kb__api_set(cs) && i < cs->arr.n; i++) {
                struct kb_res r;
                kb__api_path(p, sizeof(p), "spec.containers[%zu]", i);
                if ((rc = container_requests(d, cs->arr.v[i], p, &r)))
                        return rc;
                if (kb__api_res_add(&sum, &r))
                        return kb__api_fail(d, p, "%s (sum of the containers' requests)",
                                            kb_strerror(KB_EOVERFLOW));
        }
        for (size_t i = 0; kb__api_set(ics) && i < ics->arr.n; i++) {
                const struct kb_value *ic = ics->arr.v[i];
                struct kb_res r, need;
                kb__api_path(p, sizeof(p), "spec.initContainers[%zu]", i);
                if ((rc = container_requests(d, ic, p, &r)))
                        return rc;
                const char *restart = kb_value_str(kb_value_get(ic, "restartPolicy"));
                need = sidecars;
                if (kb_streq(restart, "Always")) {
                        /* A sidecar starts here and runs alongside the
                         * containers to the end. */
                        if (kb__api_res_add(&sum, &r) || kb__api_res_add(&sidecars, &r))
                                return kb__api_fail(d, p, "%s (sum of the sidecars' requests)",
                                                    kb_strerror(KB_EOVERFLOW));
                        need = sidecars;
                } else if (kb__api_res_add(&need, &r)) {
                        return kb__api_fail(d, p, "%s (sum with the sidecars' requests)",
                                            kb_strerror(KB_EOVERFLOW));
                }
                res_max(&init, &need);
        }
        res_max(&sum, &init);
        if ((rc = kb__api_res(d, kb_value_get(spec, "overhead"), "spec.overhead", &sum, NULL)))
                return rc;
        /* Whatever a container wrote in the pods slot, a pod takes one. */
        sum.q[KB_RES_PODS] = 0;
        pod->best_effort = kb_res_is_empty(&sum);
        sum.q[KB_RES_PODS] = 1;
        pod->requests = sum;
        return 0;
}
