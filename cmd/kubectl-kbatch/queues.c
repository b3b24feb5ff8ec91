/*
 * kubectl kbatch queues: every queue, or those named, as pkg/ctl's table.
 */
#include <stdlib.h>
#include <string.h>

#include "kubectl-kbatch.h"

static bool has_queue(const struct kb_value *list, const char *name)
{
        const struct kb_value *items = kb_value_get(list, "items");
        for (size_t i = 0; kb_value_is(items, KB_VARRAY) && i < items->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_dig(items->arr.v[i], "metadata", "name")), name))
                        return true;
        return false;
}

int kk_queues(struct kk_client *c, char **args, int nargs)
{
        const char *const *names = (const char *const *)args;
        size_t n = (size_t)nargs;
        for (size_t i = 0; i < n; i++)
                if (!kk_valid_name(names[i])) {
                        fprintf(stderr, "error: %s: not a valid queue name\n", names[i]);
                        return EXIT_USAGE;
                }
        struct kk_reply r;
        if (kk_call(c, "GET", GROUP_API "/queues", NULL, NULL, &r))
                return EXIT_FAIL;
        if (r.status != 200) {
                int rc = kk_refused(&r);
                if (r.status == 404 && !kb_ctl_object_missing(r.body, r.len))
                        fprintf(stderr, "note: this server serves no queues.scheduling.volcano.sh: "
                                        "are kbatch's CRDs installed?\n");
                kk_reply_release(&r);
                return rc;
        }
        struct kb_value *list = kk_body_json(&r, "the queues");
        kk_reply_release(&r);
        if (!list)
                return EXIT_FAIL;
        struct kb_buf out;
        kb_buf_init(&out);
        kb_ctl_queues(list, names, n, &out);
        int rc = EXIT_OK;
        if (out.len)
                fputs(out.data, stdout);
        else if (!n)
                fprintf(stderr, "No queues found.\n");
        for (size_t i = 0; rc == EXIT_OK && i < n; i++)
                if (!has_queue(list, names[i])) {
                        fprintf(stderr, "Error from server (NotFound): no queue named %s\n",
                                names[i]);
                        rc = EXIT_FAIL;
                }
        kb_buf_release(&out);
        kb_value_free(list);
        return rc;
}
