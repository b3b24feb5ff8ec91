/*
 * kubectl-kbatch's command line: each flag is one row of a table, its name,
 * its one-letter form if it has one, whether it takes a value and the
 * function that stores it in struct kk_opts.  getopt_long's answer is
 * looked up in the table by the flag's name (or letter), so a row can move
 * without anything else changing.  The usage text is here too, its verbs
 * read off the table main.c hands over.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "kubectl-kbatch.h"

void kk_usage(FILE *f, const struct kk_verb *verbs, size_t n)
{
        fprintf(f, "kubectl kbatch: ask kbatch why a job waits; look at, close and open queues.\n"
                   "\n"
                   "Usage:\n");
        for (size_t i = 0; i < n; i++)
                if (!verbs[i].hidden)
                        fprintf(f, "  kubectl kbatch %s%s%s\n", verbs[i].name,
                                *verbs[i].args ? " " : "", verbs[i].args);
        fprintf(f, "\nCommands:\n");
        for (size_t i = 0; i < n; i++) {
                if (verbs[i].hidden)
                        continue;
                /* The paragraph's lines, the first beside the name. */
                const char *s = verbs[i].summary;
                fprintf(f, "  %-8s ", verbs[i].name);
                for (const char *nl; (nl = strchr(s, '\n')); s = nl + 1)
                        fprintf(f, "%.*s\n%11s", (int)(nl - s), s, "");
                fprintf(f, "%s\n", s);
        }
        fprintf(f, "\n"
                   "Flags (kubectl's):\n"
                   "  --kubeconfig FILE     kubeconfig (default: $KUBECONFIG, ~/.kube/config, the\n"
                   "                        in-cluster service account)\n"
                   "  --context NAME        kubeconfig context (default: current-context)\n"
                   "  -n, --namespace NS    namespace of why's object (default: the context's,\n"
                   "                        else default)\n"
                   "  -s, --server URL      API server address (overrides the kubeconfig's)\n"
                   "  -v N                  log verbosity (4: every request)\n"
                   "  -h, --help            this help\n"
                   "  --version             print the version\n"
                   "\n"
                   "Exit status: 0 ok; 1 the server could not be reached, or refused (not found,\n"
                   "forbidden, ...); 2 bad usage.\n");
}

static int set_kubeconfig(struct kk_opts *o, const char *arg)
{
        o->kubeconfig = arg;
        return GO_ON;
}

static int set_context(struct kk_opts *o, const char *arg)
{
        o->context = arg;
        return GO_ON;
}

static int set_namespace(struct kk_opts *o, const char *arg)
{
        o->ns = arg;
        return GO_ON;
}

static int set_server(struct kk_opts *o, const char *arg)
{
        o->server = arg;
        return GO_ON;
}

static int set_verbosity(struct kk_opts *o, const char *arg)
{
        kb_verbosity = atoi(arg + (arg[0] == '=')); /* -v 4, -v=4, --v=4 */
        return GO_ON;
}

static int show_help(struct kk_opts *o, const char *arg)
{
        o->help = true;
        return EXIT_OK;
}

static int show_version(struct kk_opts *o, const char *arg)
{
        o->version = true;
        return EXIT_OK;
}

static const struct flag {
        const char *name;
        char letter; /* its one-letter form, or 0 */
        int has_arg; /* getopt's no_argument or required_argument */
        int (*set)(struct kk_opts *o, const char *arg);
} flags[] = {
    {"kubeconfig", 0, required_argument, set_kubeconfig},
    {"context", 0, required_argument, set_context},
    {"namespace", 'n', required_argument, set_namespace},
    {"server", 's', required_argument, set_server},
    {"v", 'v', required_argument, set_verbosity},
    {"help", 'h', no_argument, show_help},
    {"version", 0, no_argument, show_version},
};

/* What getopt_long answers for a row: its letter, else a number past every
 * letter that is the row's own. */
static int val_of(const struct flag *f)
{
        return f->letter ? f->letter : 256 + (int)(f - flags);
}

static const struct flag *flag_named(const char *name)
{
        for (size_t i = 0; i < KB_ARRAY_SIZE(flags); i++)
                if (!strcmp(flags[i].name, name))
                        return &flags[i];
        return NULL;
}

static const struct flag *flag_of_val(int val)
{
        for (size_t i = 0; i < KB_ARRAY_SIZE(flags); i++)
                if (val_of(&flags[i]) == val)
                        return &flags[i];
        return NULL;
}

/* A flag getopt_long refused: a missing value (named as typed in kubectl's
 * words: -n for --namespace too), a value given to a flag that takes none,
 * or an unknown flag. */
static int bad_flag(char **argv)
{
        const struct flag *f = optopt ? flag_of_val(optopt) : NULL;
        if (f && f->has_arg && f->letter)
                fprintf(stderr, "error: flag -%c needs a value\n", f->letter);
        else if (f && f->has_arg)
                fprintf(stderr, "error: flag --%s needs a value\n", f->name);
        else if (f)
                fprintf(stderr, "error: flag --%s takes no value\n", f->name);
        else
                fprintf(stderr, "error: unknown flag %s\n", argv[optind - 1]);
        fprintf(stderr, "See 'kubectl kbatch --help'.\n");
        return EXIT_USAGE;
}

int kk_options_parse(int argc, char **argv, struct kk_opts *o)
{
        struct option opts[KB_ARRAY_SIZE(flags) + 1];
        char letters[2 * KB_ARRAY_SIZE(flags) + 1], *l = letters;
        int opt, idx, rc;

        memset(o, 0, sizeof(*o));
        for (size_t i = 0; i < KB_ARRAY_SIZE(flags); i++) {
                opts[i] = (struct option){flags[i].name, flags[i].has_arg, NULL, val_of(&flags[i])};
                if (flags[i].letter) {
                        *l++ = flags[i].letter;
                        if (flags[i].has_arg)
                                *l++ = ':';
                }
        }
        opts[KB_ARRAY_SIZE(flags)] = (struct option){NULL, 0, NULL, 0};
        *l = '\0';
        opterr = 0;
        while ((opt = getopt_long(argc, argv, letters, opts, (idx = -1, &idx))) != -1) {
                if (opt == '?')
                        return bad_flag(argv);
                const struct flag *f = idx >= 0 ? flag_named(opts[idx].name) : flag_of_val(opt);
                if ((rc = f->set(o, optarg)) != GO_ON)
                        return rc;
        }
        return GO_ON;
}
