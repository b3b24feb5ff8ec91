/*
 * Which PodGroup a workload's pods join, for `kubectl kbatch why job/NAME`,
 * `why vcjob/NAME` and a bare name that is a Job's.
 *
 * A batch/v1 Job's pods join the group its pod template names (the
 * scheduling.k8s.io/group-name annotation), else the one kbatch-scheduler
 * makes for them, podgroup-<job uid>, labelled kbatch.io/owner-uid=<uid>.
 * A Volcano Job's group is the one Volcano's job controller makes,
 * <job>-<uid> (older controllers: <job>), owned by the Job.  So, in a
 * namespace's PodGroups, the Job's group is the one the template names,
 * else one labelled with the Job's uid, else one that the Job owns.
 *
 * kb_ctl_suggest, for a mistyped command, is here too: it is the other
 * "which one did you mean" of the plugin.
 *
 * Example: Job tune (uid 5c1f), template without a group annotation, and
 * PodGroups podgroup-5c1f (label kbatch.io/owner-uid=5c1f) and other: the
 * answer is podgroup-5c1f.
 */
#include <string.h>

#include "ctl/ctl.h"

#include "api/api.h"

static bool labelled(const struct kb_value *pg, const char *uid)
{
        return kb_streq(kb_value_str(kb_value_dig(pg, "metadata", "labels", KB_OWNER_UID_LABEL)),
                        uid);
}

static bool owned(const struct kb_value *pg, const char *uid)
{
        const struct kb_value *refs = kb_value_dig(pg, "metadata", "ownerReferences");
        if (!kb_value_is(refs, KB_VARRAY))
                return false;
        for (size_t i = 0; i < refs->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_get(refs->arr.v[i], "uid")), uid))
                        return true;
        return false;
}

const char *kb_ctl_job_group(const struct kb_value *job, const struct kb_value *groups)
{
        const struct kb_value *ann =
            kb_value_dig(job, "spec", "template", "metadata", "annotations");
        const char *g = kb_value_str(kb_value_get(ann, KB_GROUP_ANNOTATION));
        if (!g || !*g)
                g = kb_value_str(kb_value_get(ann, KB_GROUP_ANNOTATION_VOLCANO));
        if (g && *g)
                return g;
        const char *uid = kb_value_str(kb_value_dig(job, "metadata", "uid"));
        const struct kb_value *items = kb_value_get(groups, "items");
        if (!uid || !*uid || !kb_value_is(items, KB_VARRAY))
                return NULL;
        /* The label first: it is kbatch's own word for the group. */
        for (int pass = 0; pass < 2; pass++)
                for (size_t i = 0; i < items->arr.n; i++) {
                        const struct kb_value *pg = items->arr.v[i];
                        const char *name = kb_value_str(kb_value_dig(pg, "metadata", "name"));
                        if (name && (pass == 0 ? labelled(pg, uid) : owned(pg, uid)))
                                return name;
                }
        return NULL;
}

const char *kb_ctl_job_scheduler(const struct kb_value *job)
{
        /* A Volcano Job names it in its spec, which its controller copies
         * into every pod; a batch/v1 Job in its pod template. */
        const char *n = kb_value_str(kb_value_dig(job, "spec", "schedulerName"));
        if (!n || !*n)
                n = kb_value_str(kb_value_dig(job, "spec", "template", "spec", "schedulerName"));
        return n && *n ? n : "default-scheduler";
}

const char *kb_ctl_suggest(const char *word, const char *const *names)
{
        /* cobra's rule, which kubectl's "Did you mean this?" follows: a
         * name within 2 edits, or one the word is a prefix of. */
        for (size_t i = 0; word && *word && names[i]; i++)
                if (kb_edit_distance(word, names[i]) <= 2 || kb_has_prefix(names[i], word))
                        return names[i];
        return NULL;
}
