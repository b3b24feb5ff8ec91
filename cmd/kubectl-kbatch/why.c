/*
 * kubectl kbatch why: why a PodGroup, or the PodGroup of a pod, a batch/v1
 * Job or a Volcano Job, waits.  A bare name is looked for as a PodGroup,
 * then a pod, then a Job, then a Volcano Job; what is printed is built by
 * pkg/ctl.
 */
#include <stdlib.h>
#include <string.h>

#include "kubectl-kbatch.h"

enum target { ANY, POD, PODGROUP, JOB, VCJOB };

/* The pods of the namespace, or NULL (with a note) when they cannot be
 * listed: the report then takes its counts from the PodGroup's status. */
static struct kb_value *list_pods(struct kk_client *c)
{
        struct kk_reply r;
        char *path = kb_xasprintf("/api/v1/namespaces/%s/pods", c->ns);
        struct kb_value *v = NULL;
        if (!kk_call(c, "GET", path, NULL, NULL, &r)) {
                if (r.status == 200)
                        v = kk_body_json(&r, "the pods");
                else
                        fprintf(stderr, "note: cannot list the pods of %s (HTTP %ld)\n", c->ns,
                                r.status);
                kk_reply_release(&r);
        }
        free(path);
        return v;
}

static void print_podgroup(struct kk_client *c, const struct kb_value *pg, const char *name)
{
        struct kb_value *pods = list_pods(c);
        struct kb_ctl_pods counts;
        if (pods)
                kb_ctl_count_pods(pods, name, &counts);
        struct kb_buf out;
        kb_buf_init(&out);
        kb_ctl_why_podgroup(pg, pods ? &counts : NULL, kb_now_wall(), &out);
        fputs(out.data, stdout);
        kb_buf_release(&out);
        kb_value_free(pods);
}

static int why_pod(struct kk_client *c, const struct kb_value *pod)
{
        /* The group it names, else the one kbatch makes for its workload. */
        char *made = kb_ctl_pod_workload_group(pod);
        const char *g = made ? made : kb_ctl_pod_group(pod);
        struct kb_value *pg = NULL;
        bool served = true;
        enum kb_ctl_group state = KB_CTL_GROUP_NONE;
        if (g) {
                if (!kk_valid_name(g)) {
                        state = KB_CTL_GROUP_MISSING;
                } else {
                        char *path =
                            kb_xasprintf(GROUP_API "/namespaces/%s/podgroups/%s", c->ns, g);
                        int rc = kk_get_object(c, path, "the podgroup", &pg, &served);
                        free(path);
                        if (rc) {
                                free(made);
                                return rc;
                        }
                        state = pg     ? KB_CTL_GROUP_FOUND
                                : made ? KB_CTL_GROUP_NOT_MADE
                                       : KB_CTL_GROUP_MISSING;
                }
        }
        struct kb_buf out;
        kb_buf_init(&out);
        kb_ctl_why_pod(pod, state, kb_now_wall(), &out);
        fputs(out.data, stdout);
        kb_buf_release(&out);
        if (!served)
                fprintf(stderr, "note: this server serves no podgroups.scheduling.volcano.sh: "
                                "are kbatch's CRDs installed?\n");
        if (pg) {
                fputs("\n", stdout);
                print_podgroup(c, pg, g);
                kb_value_free(pg);
        }
        free(made);
        return EXIT_OK;
}

/* "pod/x", "pg/x", "x": which kind to look for, and the name. */
static int parse_target(const char *arg, enum target *t, const char **name)
{
        static const struct {
                const char *prefix;
                enum target t;
        } kinds[] = {
            {"pod/", POD},
            {"pods/", POD},
            {"po/", POD},
            {"podgroup/", PODGROUP},
            {"podgroups/", PODGROUP},
            {"pg/", PODGROUP},
            {"podgroup.scheduling.volcano.sh/", PODGROUP},
            {"podgroups.scheduling.volcano.sh/", PODGROUP},
            {"job/", JOB},
            {"jobs/", JOB},
            {"job.batch/", JOB},
            {"jobs.batch/", JOB},
            {"vcjob/", VCJOB},
            {"vcjobs/", VCJOB},
            {"vj/", VCJOB},
            {"job.batch.volcano.sh/", VCJOB},
            {"jobs.batch.volcano.sh/", VCJOB},
        };
        *t = ANY;
        *name = arg;
        const char *slash = strchr(arg, '/');
        if (!slash)
                return 0;
        for (size_t i = 0; i < KB_ARRAY_SIZE(kinds); i++)
                if (kb_has_prefix(arg, kinds[i].prefix)) {
                        *t = kinds[i].t;
                        *name = arg + strlen(kinds[i].prefix);
                        return 0;
                }
        fprintf(stderr,
                "error: why takes a pod, a podgroup, a job or a vcjob (pod/NAME, pg/NAME, "
                "job/NAME, vcjob/NAME), got %.*s\n",
                (int)(slash - arg), arg);
        return EXIT_USAGE;
}

/* A batch/v1 or Volcano Job (kind "Job" or "vcjob"): the PodGroup its pods
 * join, and that group's report; or, before the group exists, what its
 * pods ask for (another scheduler's name is the usual reason none ever
 * comes). */
static int why_job(struct kk_client *c, const struct kb_value *job, const char *kind)
{
        char *path = kb_xasprintf(GROUP_API "/namespaces/%s/podgroups", c->ns);
        struct kb_value *groups = NULL;
        bool served = true;
        int rc = kk_get_object(c, path, "the podgroups", &groups, &served);
        free(path);
        if (rc)
                return rc;
        const char *name = kb_value_str(kb_value_dig(job, "metadata", "name"));
        const char *g = kb_ctl_job_group(job, groups);
        const char *sched = kb_ctl_job_scheduler(job);
        printf("%-12s%s/%s\n", kind, c->ns, name ? name : "");
        printf("%-12s%s\n", "Scheduler:", sched);
        struct kb_value *pg = NULL;
        if (g && kk_valid_name(g)) {
                path = kb_xasprintf(GROUP_API "/namespaces/%s/podgroups/%s", c->ns, g);
                rc = kk_get_object(c, path, "the podgroup", &pg, &served);
                free(path);
        }
        if (!rc && pg) {
                fputs("\n", stdout);
                print_podgroup(c, pg, g);
        } else if (!rc) {
                printf("%-12s%s\n", "PodGroup:", g ? g : "none yet");
                /* A Volcano Job in the scheduler's words (open.c, the
                 * group's OtherScheduler condition), a batch/v1 Job in
                 * its pods'. */
                if (!kb_streq(sched, "kbatch") && strcmp(kind, "Job:"))
                        printf("%-12sVolcano Job %s/%s asks for scheduler %s; kbatch serves "
                               "kbatch (set the Volcano Job's spec.schedulerName to it)\n",
                               "Blocker:", c->ns, name ? name : "", sched);
                else if (!kb_streq(sched, "kbatch"))
                        printf("%-12sits pods ask for scheduler %s; kbatch serves kbatch "
                               "(set spec.template.spec.schedulerName to kbatch)\n",
                               "Blocker:", sched);
                if (!served)
                        fprintf(stderr,
                                "note: this server serves no podgroups.scheduling.volcano.sh: "
                                "are kbatch's CRDs installed?\n");
        }
        kb_value_free(pg);
        kb_value_free(groups);
        return rc;
}

int kk_why(struct kk_client *c, char **args, int nargs)
{
        const char *arg = args[0];
        enum target t;
        const char *name;
        if (parse_target(arg, &t, &name))
                return EXIT_USAGE;
        if (!kk_valid_name(name)) {
                fprintf(stderr, "error: %s: not a valid object name\n", arg);
                return EXIT_USAGE;
        }
        struct kb_value *obj = NULL;
        bool pg_served = true, served;
        int rc = 0;
        if (t == ANY || t == PODGROUP) {
                char *path = kb_xasprintf(GROUP_API "/namespaces/%s/podgroups/%s", c->ns, name);
                rc = kk_get_object(c, path, "the podgroup", &obj, &pg_served);
                free(path);
                if (rc)
                        return rc;
                if (obj) {
                        print_podgroup(c, obj, name);
                        kb_value_free(obj);
                        return EXIT_OK;
                }
        }
        if (t == ANY || t == POD) {
                char *path = kb_xasprintf("/api/v1/namespaces/%s/pods/%s", c->ns, name);
                rc = kk_get_object(c, path, "the pod", &obj, &served);
                free(path);
                if (rc)
                        return rc;
                if (obj) {
                        rc = why_pod(c, obj);
                        kb_value_free(obj);
                        return rc;
                }
        }
        /* A Job's name: batch/v1 first, then Volcano's (either may be
         * missing from the server). */
        static const struct {
                enum target t;
                const char *api, *label;
        } jobs[] = {
            {JOB, "/apis/batch/v1", "Job:"},
            {VCJOB, "/apis/batch.volcano.sh/v1alpha1", "vcjob:"},
        };
        for (size_t i = 0; i < KB_ARRAY_SIZE(jobs); i++) {
                if (t != ANY && t != jobs[i].t)
                        continue;
                char *path = kb_xasprintf("%s/namespaces/%s/jobs/%s", jobs[i].api, c->ns, name);
                if (t == ANY) {
                        /* A bare name is a Job's only as a last guess: a
                         * server that refuses it (no Volcano CRDs, no
                         * grant) leaves the answer NotFound. */
                        struct kk_reply r;
                        if (!kk_call(c, "GET", path, NULL, NULL, &r)) {
                                if (r.status == 200)
                                        obj = kk_body_json(&r, "the job");
                                kk_reply_release(&r);
                        }
                } else {
                        rc = kk_get_object(c, path, "the job", &obj, &served);
                }
                free(path);
                if (rc)
                        return rc;
                if (obj) {
                        rc = why_job(c, obj, jobs[i].label);
                        kb_value_free(obj);
                        return rc;
                }
        }
        const char *what = t == POD        ? "pod"
                           : t == PODGROUP ? "podgroup"
                           : t == JOB      ? "job"
                           : t == VCJOB    ? "vcjob"
                                           : "podgroup, pod or job";
        fprintf(stderr, "Error from server (NotFound): no %s named \"%s\" in namespace \"%s\"\n",
                what, name, c->ns);
        if (!pg_served)
                fprintf(stderr, "note: this server serves no podgroups.scheduling.volcano.sh: "
                                "are kbatch's CRDs installed?\n");
        return EXIT_FAIL;
}
