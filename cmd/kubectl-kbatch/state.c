/*
 * kubectl kbatch close and open: a queue's status.state.
 */
#include <stdlib.h>
#include <string.h>

#include "kubectl-kbatch.h"

/*
 * Sets a queue's status.state: Open, or for close what kb_ctl_close_state
 * decides from the status just read.  The patch carries the resourceVersion
 * read, so a status the scheduler wrote in between is not decided on stale
 * counts: a conflict reads again (a few times).  A Queue CRD without a
 * status subresource (404 on /status although the queue exists) is patched
 * on the object itself, as the scheduler does.
 */
static int set_state(struct kk_client *c, const char *queue, bool close)
{
        if (!kk_valid_name(queue)) {
                fprintf(stderr, "error: %s: not a valid queue name\n", queue);
                return EXIT_USAGE;
        }
        char *path = kb_xasprintf(GROUP_API "/queues/%s", queue);
        int rc = EXIT_FAIL;
        bool subresource = true;
        for (int attempt = 0; attempt < 5; attempt++) {
                struct kb_value *q = NULL;
                bool served;
                if (kk_get_object(c, path, "the queue", &q, &served))
                        goto out;
                if (!q) {
                        fprintf(stderr, "Error from server (NotFound): no queue named %s\n", queue);
                        if (!served)
                                fprintf(stderr, "note: this server serves no "
                                                "queues.scheduling.volcano.sh: are kbatch's "
                                                "CRDs installed?\n");
                        goto out;
                }
                char cur[64], why[512] = "";
                snprintf(cur, sizeof(cur), "%s", kb_ctl_queue_state(q));
                const char *want = close ? kb_ctl_close_state(q, why, sizeof(why)) : "Open";
                if (kb_streq(cur, want) || (close && kb_streq(cur, "Closed"))) {
                        printf("queue %s is already %s\n", queue, cur);
                        kb_value_free(q);
                        rc = EXIT_OK;
                        goto out;
                }
                const char *rv = kb_value_str(kb_value_dig(q, "metadata", "resourceVersion"));
                struct kb_value *patch = kb_value_new(KB_VOBJECT);
                if (rv)
                        kb_value_set(kb_value_ensure_object(patch, "metadata"), "resourceVersion",
                                     kb_value_new_string(rv));
                kb_value_set(kb_value_ensure_object(patch, "status"), "state",
                             kb_value_new_string(want));
                char *body = kb_json_emit(patch, false);
                kb_value_free(patch);
                kb_value_free(q);
                char *ppath = kb_xasprintf("%s%s?fieldManager=kubectl-kbatch", path,
                                           subresource ? "/status" : "");
                struct kk_reply r;
                int e = kk_call(c, "PATCH", ppath, body, "application/merge-patch+json", &r);
                free(ppath);
                free(body);
                if (e)
                        goto out;
                bool again = false;
                if (r.status == 200) {
                        if (!close)
                                printf("queue %s opened (was %s)\n", queue, cur);
                        else if (kb_streq(want, "Closed"))
                                printf("queue %s closed: %s\n", queue, why);
                        else
                                printf("queue %s closing: %s\n", queue, why);
                        rc = EXIT_OK;
                } else if (r.status == 409) {
                        again = true; /* changed since it was read */
                } else if (r.status == 404 && subresource) {
                        again = true; /* the CRD has no status subresource */
                        subresource = false;
                } else {
                        rc = kk_refused(&r);
                }
                kk_reply_release(&r);
                if (!again)
                        goto out;
        }
        fprintf(stderr, "error: queue %s kept changing while its state was set; try again\n",
                queue);
out:
        free(path);
        return rc;
}

int kk_close(struct kk_client *c, char **args, int nargs)
{
        return set_state(c, args[0], true);
}

int kk_open(struct kk_client *c, char **args, int nargs)
{
        return set_state(c, args[0], false);
}
