/*
 * kubectl-kbatch: kbatch's kubectl plugin.  On PATH, kubectl runs it for
 * "kubectl kbatch ..." and hands it every argument after "kbatch".  It
 * reads the kubeconfig as kubectl does (pkg/kube) and asks the API server
 * directly; what it prints is built by pkg/ctl, which the unit tests cover.
 *
 * Each verb is one row of verbs[] below: the dispatch, the argument check,
 * the usage text and "did you mean" all read that table.
 */
#include <stdlib.h>
#include <string.h>

#include "kubectl-kbatch.h"

static int help(struct kk_client *c, char **args, int nargs);
static int version(struct kk_client *c, char **args, int nargs);

static const struct kk_verb verbs[] = {
    {"why", "POD|PODGROUP|job/NAME|vcjob/NAME [-n NAMESPACE]", "POD, PODGROUP or JOB",
     "why a PodGroup, or a pod's PodGroup, waits: the reason, the blocker\n"
     "with its numbers and its place in its queue; or that it is\n"
     "scheduled.  A bare NAME is the PodGroup of that name, else the\n"
     "pod, else the batch/v1 Job, else the Volcano Job; pod/NAME,\n"
     "podgroup/NAME (pg/NAME), job/NAME or vcjob/NAME say which.  A\n"
     "Job's report names the PodGroup its pods join.",
     1, 1, false, false, kk_why},
    {"queues", "[QUEUE...]", NULL,
     "every queue (or those named): state, weight, what it deserves,\n"
     "holds and may hold at most (cpu, memory, GPUs), and its PodGroups\n"
     "inqueue, pending and running.",
     0, -1, false, false, kk_queues},
    {"close", "QUEUE", "QUEUE",
     "close a queue: it admits and places nothing new; running pods keep\n"
     "running.  Closed at once when its status shows no work, else\n"
     "Closing, which kbatch-scheduler turns to Closed when the work is\n"
     "done.",
     1, 1, false, false, kk_close},
    {"open", "QUEUE", "QUEUE", "reopen a queue.", 1, 1, false, false, kk_open},
    {"help", "", NULL, "this help", 0, -1, true, true, help},
    {"version", "", NULL, "print the version", 0, -1, true, true, version},
};

static int help(struct kk_client *c, char **args, int nargs)
{
        kk_usage(stdout, verbs, KB_ARRAY_SIZE(verbs));
        return EXIT_OK;
}

static int version(struct kk_client *c, char **args, int nargs)
{
        printf("kubectl-kbatch %s\n", KB_VERSION);
        return EXIT_OK;
}

/* The row of verb name, or NULL after saying so, with the nearest verb. */
static const struct kk_verb *verb_named(const char *name)
{
        const char *names[KB_ARRAY_SIZE(verbs) + 1];
        size_t n = 0;
        for (size_t i = 0; i < KB_ARRAY_SIZE(verbs); i++) {
                if (!strcmp(verbs[i].name, name))
                        return &verbs[i];
                if (!verbs[i].hidden)
                        names[n++] = verbs[i].name;
        }
        names[n] = NULL;
        const char *near = kb_ctl_suggest(name, names);
        fprintf(stderr, "error: unknown command \"%s\" for \"kubectl kbatch\"\n", name);
        if (near)
                fprintf(stderr, "\nDid you mean this?\n\t%s\n\n", near);
        return NULL;
}

int main(int argc, char **argv)
{
        struct kk_opts o;
        int rc = kk_options_parse(argc, argv, &o);
        if (rc != GO_ON)
                return o.help ? help(NULL, NULL, 0) : o.version ? version(NULL, NULL, 0) : rc;
        if (optind >= argc) {
                kk_usage(stderr, verbs, KB_ARRAY_SIZE(verbs));
                return EXIT_USAGE;
        }
        const struct kk_verb *v = verb_named(argv[optind]);
        char **args = argv + optind + 1;
        int nargs = argc - optind - 1;
        if (v && v->offline)
                return v->run(NULL, args, nargs);
        if (v && (nargs < v->args_min || (v->args_max >= 0 && nargs > v->args_max))) {
                if (v->args_max)
                        fprintf(stderr, "error: %s takes one %s, got %d\n", v->name, v->noun,
                                nargs);
                else
                        fprintf(stderr, "error: %s takes no arguments, got %d\n", v->name, nargs);
                v = NULL;
        }
        if (!v) {
                fprintf(stderr, "See 'kubectl kbatch --help'.\n");
                return EXIT_USAGE;
        }
        if (o.ns && !kk_valid_name(o.ns)) {
                fprintf(stderr, "error: --namespace %s: not a valid namespace\n", o.ns);
                return EXIT_USAGE;
        }
        struct kk_client c;
        if (kk_client_open(&c, &o))
                return EXIT_FAIL;
        rc = v->run(&c, args, nargs);
        kk_client_close(&c);
        return rc;
}
