/*
 * The garbage collector of the simulated cluster: told by the store when an
 * owner is gone, it deletes what the owner owned, found through the
 * controllers' owner index (simindex.c).
 */
#include "kubesim/kubesim-int.h"

/* What the garbage collector does when an owner is gone (background
 * propagation): the pods and Volcano PodGroups it owned go too, unless the
 * delete asked to orphan them.  Its deletes ask no grace period, so a
 * running pod takes its own (kube-controller-manager's collector does the
 * same: the pods of a deleted Job hold their node for
 * terminationGracePeriodSeconds). */
void kb__gc_owner_gone(void *arg, const char *uid)
{
        struct kb_apiserver *srv = arg;
        struct kb_rtype *pgs = kb__type_find(srv, "scheduling.volcano.sh", "v1beta1", "podgroups");
        struct kb_rtype *types[] = {srv->pods, pgs};
        for (size_t t = 0; t < KB_ARRAY_SIZE(types); t++) {
                if (!types[t] || types[t]->gone)
                        continue;
                size_t n;
                char **keys = t == 0 ? kb__sim_owned_pods(srv, uid, &n)
                                     : kb__sim_owned_podgroups(srv, uid, &n);
                for (size_t i = 0; i < n; i++) {
                        struct kb_obj *d = NULL;
                        HASH_FIND_STR(types[t]->objs, keys[i], d);
                        if (d)
                                kb__store_delete(srv, types[t], d,
                                                 t == 0 ? kb__pod_grace(srv, d->doc->v, NULL) : 0);
                }
                kb__strv_free(keys, n);
        }
}
