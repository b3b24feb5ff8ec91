/*
 * kubectl-kbatch: kbatch's kubectl plugin.  On PATH, kubectl runs it for
 * "kubectl kbatch ..." and hands it every argument after "kbatch".  It
 * reads the kubeconfig as kubectl does (pkg/kube) and asks the API server
 * directly; what it prints is built by pkg/ctl, which the unit tests cover.
 *
 * Each request runs to completion on a private libuv loop before the next
 * starts: a command makes two or three requests, so there is nothing to
 * overlap.
 */
#include <ctype.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "ctl/ctl.h"
#include "kube/kube.h"

#define KB_VERSION "0.1.0"
#define GROUP_API  "/apis/scheduling.volcano.sh/v1beta1"

/* Exit codes, as every kbatch program has them. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

static void usage(FILE *f)
{
        fprintf(f,
                "kubectl kbatch: ask kbatch why a job waits; look at, close and open queues.\n"
                "\n"
                "Usage:\n"
                "  kubectl kbatch why POD|PODGROUP|job/NAME|vcjob/NAME [-n NAMESPACE]\n"
                "  kubectl kbatch queues [QUEUE...]\n"
                "  kubectl kbatch close QUEUE\n"
                "  kubectl kbatch open QUEUE\n"
                "\n"
                "Commands:\n"
                "  why      why a PodGroup, or a pod's PodGroup, waits: the reason, the blocker\n"
                "           with its numbers and its place in its queue; or that it is\n"
                "           scheduled.  A bare NAME is the PodGroup of that name, else the\n"
                "           pod, else the batch/v1 Job, else the Volcano Job; pod/NAME,\n"
                "           podgroup/NAME (pg/NAME), job/NAME or vcjob/NAME say which.  A\n"
                "           Job's report names the PodGroup its pods join.\n"
                "  queues   every queue (or those named): state, weight, what it deserves,\n"
                "           holds and may hold at most (cpu, memory, GPUs), and its PodGroups\n"
                "           inqueue, pending and running.\n"
                "  close    close a queue: it admits and places nothing new; running pods keep\n"
                "           running.  Closed at once when its status shows no work, else\n"
                "           Closing, which kbatch-scheduler turns to Closed when the work is\n"
                "           done.\n"
                "  open     reopen a queue.\n"
                "\n"
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

/* ---- requests ------------------------------------------------------------------ */

struct cli {
        uv_loop_t loop;
        struct kb_kube *kube;
        struct kb_kube_config cfg;
        const char *ns;
};

struct reply {
        bool done;
        long status;
        char *body;
        size_t len;
        char *error; /* why no answer came */
};

static void reply_release(struct reply *r)
{
        free(r->body);
        free(r->error);
        memset(r, 0, sizeof(*r));
}

static void on_reply(void *arg, const struct kb_kube_resp *resp)
{
        struct reply *r = arg;
        r->done = true;
        r->status = resp->status;
        r->len = resp->len;
        r->body = kb_xstrndup(resp->body ? resp->body : "", resp->len);
        r->error = resp->error ? kb_xstrdup(resp->error) : NULL;
}

/* Sends one request and waits for its answer.  Returns 0 when the server
 * answered (any status; r holds it), else says why on stderr and returns
 * EXIT_FAIL. */
static int call(struct cli *c, const char *method, const char *path, const char *body,
                const char *ctype, struct reply *r)
{
        memset(r, 0, sizeof(*r));
        struct kb_kube_req req = {
            .method = method, .path = path, .body = body, .content_type = ctype};
        kb_kube_request(c->kube, &req, on_reply, r);
        while (!r->done)
                uv_run(&c->loop, UV_RUN_ONCE);
        if (r->status)
                return 0;
        fprintf(stderr, "error: cannot reach the server at %s: %s\n", c->cfg.server,
                r->error ? r->error : "no answer");
        reply_release(r);
        return EXIT_FAIL;
}

/* A refusal in kubectl's words; returns EXIT_FAIL. */
static int refused(const struct cli *c, const struct reply *r)
{
        struct kb_buf b;
        kb_buf_init(&b);
        if (r->status == 401)
                kb_buf_printf(&b, "error: You must be logged in to the server (Unauthorized): "
                                  "check the credentials of your kubeconfig's user");
        else
                kb_ctl_server_error(r->status, r->body, r->len, &b);
        fprintf(stderr, "%s\n", b.data);
        kb_buf_release(&b);
        return EXIT_FAIL;
}

/* The JSON body of a 200 answer (caller frees), or NULL after saying why. */
static struct kb_value *body_json(const struct reply *r, const char *what)
{
        struct kb_value *v = NULL;
        char err[256];
        if (kb_json_parse(r->body, r->len, &v, err, sizeof(err))) {
                fprintf(stderr, "error: the server's answer for %s is not JSON: %s\n", what, err);
                return NULL;
        }
        if (!kb_value_is(v, KB_VOBJECT)) {
                fprintf(stderr, "error: the server's answer for %s is not an object\n", what);
                kb_value_free(v);
                return NULL;
        }
        return v;
}

/* Kubernetes names (DNS subdomains) need no escaping in a path; anything
 * else is refused before it reaches one. */
static bool valid_name(const char *s)
{
        if (!*s || strlen(s) > 253)
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && *s != '-' && *s != '.' && *s != '_')
                        return false;
        return true;
}

/* ---- why ------------------------------------------------------------------------- */

enum target { ANY, POD, PODGROUP, JOB, VCJOB };

/* GETs one object into *obj.  Returns 0 with *obj set (200), 0 with *obj
 * NULL and *served telling whether the resource exists at all (404), or
 * EXIT_FAIL after saying why. */
static int get_object(struct cli *c, const char *path, const char *what, struct kb_value **obj,
                      bool *served)
{
        struct reply r;
        *obj = NULL;
        *served = true;
        if (call(c, "GET", path, NULL, NULL, &r))
                return EXIT_FAIL;
        int rc = 0;
        if (r.status == 200) {
                *obj = body_json(&r, what);
                rc = *obj ? 0 : EXIT_FAIL;
        } else if (r.status == 404) {
                *served = kb_ctl_object_missing(r.body, r.len);
        } else {
                rc = refused(c, &r);
        }
        reply_release(&r);
        return rc;
}

/* The pods of the namespace, or NULL (with a note) when they cannot be
 * listed: the report then takes its counts from the PodGroup's status. */
static struct kb_value *list_pods(struct cli *c)
{
        struct reply r;
        char *path = kb_xasprintf("/api/v1/namespaces/%s/pods", c->ns);
        struct kb_value *v = NULL;
        if (!call(c, "GET", path, NULL, NULL, &r)) {
                if (r.status == 200)
                        v = body_json(&r, "the pods");
                else
                        fprintf(stderr, "note: cannot list the pods of %s (HTTP %ld)\n", c->ns,
                                r.status);
                reply_release(&r);
        }
        free(path);
        return v;
}

static void print_podgroup(struct cli *c, const struct kb_value *pg, const char *name)
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

static int why_pod(struct cli *c, const struct kb_value *pod)
{
        /* The group it names, else the one kbatch makes for its workload. */
        char *made = kb_ctl_pod_workload_group(pod);
        const char *g = made ? made : kb_ctl_pod_group(pod);
        struct kb_value *pg = NULL;
        bool served = true;
        enum kb_ctl_group state = KB_CTL_GROUP_NONE;
        if (g) {
                if (!valid_name(g)) {
                        state = KB_CTL_GROUP_MISSING;
                } else {
                        char *path =
                            kb_xasprintf(GROUP_API "/namespaces/%s/podgroups/%s", c->ns, g);
                        int rc = get_object(c, path, "the podgroup", &pg, &served);
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
static int why_job(struct cli *c, const struct kb_value *job, const char *kind)
{
        char *path = kb_xasprintf(GROUP_API "/namespaces/%s/podgroups", c->ns);
        struct kb_value *groups = NULL;
        bool served = true;
        int rc = get_object(c, path, "the podgroups", &groups, &served);
        free(path);
        if (rc)
                return rc;
        const char *name = kb_value_str(kb_value_dig(job, "metadata", "name"));
        const char *g = kb_ctl_job_group(job, groups);
        const char *sched = kb_ctl_job_scheduler(job);
        printf("%-12s%s/%s\n", kind, c->ns, name ? name : "");
        printf("%-12s%s\n", "Scheduler:", sched);
        struct kb_value *pg = NULL;
        if (g && valid_name(g)) {
                path = kb_xasprintf(GROUP_API "/namespaces/%s/podgroups/%s", c->ns, g);
                rc = get_object(c, path, "the podgroup", &pg, &served);
                free(path);
        }
        if (!rc && pg) {
                fputs("\n", stdout);
                print_podgroup(c, pg, g);
        } else if (!rc) {
                printf("%-12s%s\n", "PodGroup:", g ? g : "none yet");
                if (!kb_streq(sched, "kbatch"))
                        printf("%-12sits pods ask for scheduler %s; kbatch serves kbatch "
                               "(set %s to kbatch)\n",
                               "Blocker:", sched,
                               strcmp(kind, "Job:") ? "spec.schedulerName"
                                                    : "spec.template.spec.schedulerName");
                if (!served)
                        fprintf(stderr,
                                "note: this server serves no podgroups.scheduling.volcano.sh: "
                                "are kbatch's CRDs installed?\n");
        }
        kb_value_free(pg);
        kb_value_free(groups);
        return rc;
}

static int cmd_why(struct cli *c, const char *arg)
{
        enum target t;
        const char *name;
        if (parse_target(arg, &t, &name))
                return EXIT_USAGE;
        if (!valid_name(name)) {
                fprintf(stderr, "error: %s: not a valid object name\n", arg);
                return EXIT_USAGE;
        }
        struct kb_value *obj = NULL;
        bool pg_served = true, served;
        int rc = 0;
        if (t == ANY || t == PODGROUP) {
                char *path = kb_xasprintf(GROUP_API "/namespaces/%s/podgroups/%s", c->ns, name);
                rc = get_object(c, path, "the podgroup", &obj, &pg_served);
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
                rc = get_object(c, path, "the pod", &obj, &served);
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
                        struct reply r;
                        if (!call(c, "GET", path, NULL, NULL, &r)) {
                                if (r.status == 200)
                                        obj = body_json(&r, "the job");
                                reply_release(&r);
                        }
                } else {
                        rc = get_object(c, path, "the job", &obj, &served);
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

/* ---- queues ---------------------------------------------------------------------- */

static bool has_queue(const struct kb_value *list, const char *name)
{
        const struct kb_value *items = kb_value_get(list, "items");
        for (size_t i = 0; kb_value_is(items, KB_VARRAY) && i < items->arr.n; i++)
                if (kb_streq(kb_value_str(kb_value_dig(items->arr.v[i], "metadata", "name")), name))
                        return true;
        return false;
}

static int cmd_queues(struct cli *c, const char *const *names, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!valid_name(names[i])) {
                        fprintf(stderr, "error: %s: not a valid queue name\n", names[i]);
                        return EXIT_USAGE;
                }
        struct reply r;
        if (call(c, "GET", GROUP_API "/queues", NULL, NULL, &r))
                return EXIT_FAIL;
        if (r.status != 200) {
                int rc = refused(c, &r);
                if (r.status == 404 && !kb_ctl_object_missing(r.body, r.len))
                        fprintf(stderr, "note: this server serves no queues.scheduling.volcano.sh: "
                                        "are kbatch's CRDs installed?\n");
                reply_release(&r);
                return rc;
        }
        struct kb_value *list = body_json(&r, "the queues");
        reply_release(&r);
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

/* ---- close and open ------------------------------------------------------------- */

/*
 * Sets a queue's status.state: Open, or for close what kb_ctl_close_state
 * decides from the status just read.  The patch carries the resourceVersion
 * read, so a status the scheduler wrote in between is not decided on stale
 * counts: a conflict reads again (a few times).  A Queue CRD without a
 * status subresource (404 on /status although the queue exists) is patched
 * on the object itself, as the scheduler does.
 */
static int set_state(struct cli *c, const char *queue, bool close)
{
        if (!valid_name(queue)) {
                fprintf(stderr, "error: %s: not a valid queue name\n", queue);
                return EXIT_USAGE;
        }
        char *path = kb_xasprintf(GROUP_API "/queues/%s", queue);
        int rc = EXIT_FAIL;
        bool subresource = true;
        for (int attempt = 0; attempt < 5; attempt++) {
                struct kb_value *q = NULL;
                bool served;
                if (get_object(c, path, "the queue", &q, &served))
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
                struct reply r;
                int e = call(c, "PATCH", ppath, body, "application/merge-patch+json", &r);
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
                        rc = refused(c, &r);
                }
                reply_release(&r);
                if (!again)
                        goto out;
        }
        fprintf(stderr, "error: queue %s kept changing while its state was set; try again\n",
                queue);
out:
        free(path);
        return rc;
}

/* ---- main ------------------------------------------------------------------------ */

enum {
        OPT_KUBECONFIG = 256,
        OPT_CONTEXT,
        OPT_VERSION,
};

/* The kubeconfig as kubectl finds it: --kubeconfig, $KUBECONFIG, then
 * ~/.kube/config when it exists; in a pod without either, the service
 * account (pkg/kube's order puts that before ~/.kube/config, the scheduler's
 * order; kubectl's is this one). */
static int load_config(struct cli *c, const char *kubeconfig, const char *context,
                       const char *server)
{
        char err[1024];
        char *home = NULL;
        const char *env = getenv("KUBECONFIG");
        const char *h = getenv("HOME");
        if (!kubeconfig && !(env && *env) && h) {
                home = kb_xasprintf("%s/.kube/config", h);
                if (access(home, F_OK) == 0)
                        kubeconfig = home;
        }
        int e = kb_kube_config_load(kubeconfig, context, server, &c->cfg, err, sizeof(err));
        free(home);
        if (e) {
                fprintf(stderr, "error: %s\n", err);
                return EXIT_FAIL;
        }
        return 0;
}

int main(int argc, char **argv)
{
        static const struct option longopts[] = {
            {"kubeconfig", required_argument, NULL, OPT_KUBECONFIG},
            {"context", required_argument, NULL, OPT_CONTEXT},
            {"namespace", required_argument, NULL, 'n'},
            {"server", required_argument, NULL, 's'},
            {"v", required_argument, NULL, 'v'},
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, OPT_VERSION},
            {NULL, 0, NULL, 0},
        };
        const char *kubeconfig = NULL, *context = NULL, *ns = NULL, *server = NULL;
        int opt;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "n:s:v:h", longopts, NULL)) != -1) {
                switch (opt) {
                case OPT_KUBECONFIG:
                        kubeconfig = optarg;
                        break;
                case OPT_CONTEXT:
                        context = optarg;
                        break;
                case 'n':
                        ns = optarg;
                        break;
                case 's':
                        server = optarg;
                        break;
                case 'v': /* -v 4, -v=4, --v=4 */
                        kb_verbosity = atoi(optarg + (optarg[0] == '='));
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_OK;
                case OPT_VERSION:
                        printf("kubectl-kbatch %s\n", KB_VERSION);
                        return EXIT_OK;
                default:
                        if (optopt && strchr("nsv", optopt))
                                fprintf(stderr, "error: flag -%c needs a value\n", optopt);
                        else if (optopt >= OPT_KUBECONFIG)
                                fprintf(stderr, "error: flag --%s needs a value\n",
                                        longopts[optopt - OPT_KUBECONFIG].name);
                        else
                                fprintf(stderr, "error: unknown flag %s\n", argv[optind - 1]);
                        fprintf(stderr, "See 'kubectl kbatch --help'.\n");
                        return EXIT_USAGE;
                }
        }
        const char *cmd = optind < argc ? argv[optind] : NULL;
        char **args = argv + optind + 1;
        int nargs = optind < argc ? argc - optind - 1 : 0;
        if (!cmd) {
                usage(stderr);
                return EXIT_USAGE;
        }
        if (!strcmp(cmd, "help")) {
                usage(stdout);
                return EXIT_OK;
        }
        if (!strcmp(cmd, "version")) {
                printf("kubectl-kbatch %s\n", KB_VERSION);
                return EXIT_OK;
        }
        bool known = !strcmp(cmd, "why") || !strcmp(cmd, "queues") || !strcmp(cmd, "close") ||
                     !strcmp(cmd, "open");
        if (!known) {
                static const char *const cmds[] = {"why", "queues", "close", "open", NULL};
                const char *near = kb_ctl_suggest(cmd, cmds);
                fprintf(stderr, "error: unknown command \"%s\" for \"kubectl kbatch\"\n", cmd);
                if (near)
                        fprintf(stderr, "\nDid you mean this?\n\t%s\n\n", near);
                fprintf(stderr, "See 'kubectl kbatch --help'.\n");
                return EXIT_USAGE;
        }
        if (strcmp(cmd, "queues") && nargs != 1) {
                fprintf(stderr, "error: %s takes one %s, got %d\n", cmd,
                        strcmp(cmd, "why") ? "QUEUE" : "POD, PODGROUP or JOB", nargs);
                fprintf(stderr, "See 'kubectl kbatch --help'.\n");
                return EXIT_USAGE;
        }
        if (ns && !valid_name(ns)) {
                fprintf(stderr, "error: --namespace %s: not a valid namespace\n", ns);
                return EXIT_USAGE;
        }

        struct cli c;
        memset(&c, 0, sizeof(c));
        if (load_config(&c, kubeconfig, context, server))
                return EXIT_FAIL;
        c.ns = ns ? ns : c.cfg.namespace && *c.cfg.namespace ? c.cfg.namespace : "default";
        signal(SIGPIPE, SIG_IGN);
        uv_loop_init(&c.loop);
        struct kb_kube_opts kopts = {
            .timeout = 30, .max_attempts = 3, .user_agent = "kubectl-kbatch/" KB_VERSION};
        c.kube = kb_kube_new(&c.loop, &c.cfg, &kopts);

        int rc;
        if (!strcmp(cmd, "why"))
                rc = cmd_why(&c, args[0]);
        else if (!strcmp(cmd, "queues"))
                rc = cmd_queues(&c, (const char *const *)args, (size_t)nargs);
        else
                rc = set_state(&c, args[0], !strcmp(cmd, "close"));

        kb_kube_free(c.kube);
        uv_run(&c.loop, UV_RUN_DEFAULT);
        if (uv_loop_close(&c.loop))
                KB_WARN("the loop still had handles at exit");
        kb_kube_config_release(&c.cfg);
        return rc;
}
