/*
 * Real workload traces: the Standard Workload Format of the Parallel
 * Workloads Archive (one job a line, 18 whitespace-separated fields, -1 for
 * unknown; header comments start with ';'), read straight into a cluster
 * (kbatch-sim --swf).  The fields read:
 *
 *    2  submit time (s)          the gang's creationTimestamp offset
 *    4  run time (s)             the pods' kbatch.io/runtime: what they run
 *    5  allocated processors     the gang's width (minMember, one pod each),
 *    8  requested processors     ... field 8 when field 5 is -1
 *    9  requested time (s)       the declared runtime (activeDeadlineSeconds),
 *                                the run time when -1, as the literature does
 *
 * A job becomes PodGroup job-<number> in namespace default, queue default,
 * with one pod per processor.  Example: "4 7287 -1 9053 128 ... 10800 ..."
 * is job-000004, 128 pods created 7287 s after the epoch base, each running
 * 9053 s and declaring 10800 s.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/sim-int.h"

#define EPOCH_BASE 1.7e9 /* submit time 0, as a creationTimestamp */

void kb_swf_opts_init(struct kb_swf_opts *o)
{
        memset(o, 0, sizeof(*o));
        o->processor.q[KB_RES_CPU] = 1000;
        o->processor.q[KB_RES_MEMORY] = 1LL << 30;
}

/* "cpu=1,memory=1Gi" into out (zeroed first), through the API's own
 * resource-list decoder. */
int kb_swf_res_parse(const char *text, const char *flag, struct kb_res *out, char *err,
                     size_t errlen)
{
        struct kb_value *list = kb_value_new(KB_VOBJECT);
        char *copy = kb_xstrdup(text), *save = NULL;
        int rc = 0;
        for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
                char *eq = strchr(t, '=');
                if (!eq || eq == t || !eq[1]) {
                        snprintf(err, errlen, "%s: \"%s\": want NAME=QUANTITY", flag, t);
                        rc = KB_EBADINPUT;
                        break;
                }
                *eq = 0;
                kb_value_set(list, t, kb_value_new_string(eq + 1));
        }
        memset(out, 0, sizeof(*out));
        if (!rc && !list->obj.n) {
                snprintf(err, errlen, "%s: empty", flag);
                rc = KB_EBADINPUT;
        }
        if (!rc)
                rc = kb_res_decode(list, flag, out, err, errlen);
        free(copy);
        kb_value_free(list);
        return rc;
}

/* How many processors a node holds: the fewest whole processors any
 * resource the processor asks for allows. */
static int64_t per_node(const struct kb_swf_opts *o)
{
        int64_t n = -1;
        for (int i = 0; i < KB_RES_MAX; i++) {
                if (o->processor.q[i] <= 0 || i == KB_RES_PODS)
                        continue;
                int64_t k = o->node.q[i] / o->processor.q[i];
                n = n < 0 ? k : KB_MIN(n, k);
        }
        return n < 0 ? 0 : n;
}

/* The header's "; Name: value" as a whole number, or -1. */
static int64_t header(const char *line, const char *name)
{
        size_t n = strlen(name);
        const char *p = line + 1;
        while (*p == ' ' || *p == '\t')
                p++;
        if (strncmp(p, name, n) || p[n] != ':')
                return -1;
        char *end;
        long long v = strtoll(p + n + 1, &end, 10);
        return end == p + n + 1 || v <= 0 ? -1 : v;
}

struct swf_job {
        int64_t number, submit, run, procs, declared;
};

static void add_job(struct kb_cluster *c, const struct swf_job *j, const struct kb_swf_opts *o)
{
        struct kb_podgroup *pg = kb_xcalloc(1, sizeof(*pg));
        char name[48];
        snprintf(name, sizeof(name), "job-%06lld", (long long)j->number);
        pg->meta.name = kb_xstrdup(name);
        pg->meta.namespace = kb_xstrdup("default");
        pg->meta.uid = kb_xasprintf("podgroup:default/%s", name);
        pg->meta.creation = EPOCH_BASE + (double)j->submit;
        pg->min_member = (int32_t)j->procs;
        pg->highest_tier = -1;
        pg->queue = kb_xstrdup("default");
        KB_PUSH(c->podgroups, c->npodgroups, c->cappodgroups, pg);
        char runtime[32];
        snprintf(runtime, sizeof(runtime), "%llds", (long long)j->run);
        for (int64_t k = 0; k < j->procs; k++) {
                struct kb_pod *p = kb_xcalloc(1, sizeof(*p));
                p->meta.name = kb_xasprintf("%s-%lld", name, (long long)k);
                p->meta.namespace = kb_xstrdup("default");
                p->meta.uid = kb_xasprintf("pod:default/%s", p->meta.name);
                p->meta.creation = pg->meta.creation;
                p->meta.annotations = kb_xcalloc(1, sizeof(*p->meta.annotations));
                p->meta.annotations[0].key = kb_xstrdup(KB_RUNTIME_ANNOTATION);
                p->meta.annotations[0].value = kb_xstrdup(runtime);
                p->meta.nannotations = 1;
                p->scheduler_name =
                    kb_xstrdup(c->nscheduler_names ? c->scheduler_names[0] : "kbatch");
                p->group_name = kb_xstrdup(name);
                p->phase = KB_POD_PENDING;
                p->grace_period = -1;
                p->active_deadline = j->declared * 1000000000LL;
                p->requests = o->processor;
                p->requests.q[KB_RES_PODS] = 1;
                KB_PUSH(c->pods, c->npods, c->cappods, p);
        }
}

/* Field f (1-based) of the line's fields as a whole number. */
static int field(char **fields, size_t nf, size_t f, const char *what, const char *label,
                 size_t lineno, int64_t *out, char *err, size_t errlen)
{
        char *end;
        errno = 0;
        long long v = f <= nf ? strtoll(fields[f - 1], &end, 10) : 0;
        if (f > nf || errno || *end || end == fields[f - 1]) {
                snprintf(err, errlen, "%s:%zu: field %zu (%s): want a whole number, got \"%s\"",
                         label, lineno, f, what, f <= nf ? fields[f - 1] : "");
                return KB_EBADINPUT;
        }
        *out = v;
        return 0;
}

int kb_cluster_swf(struct kb_cluster *c, const char *label, const char *text, size_t len,
                   const struct kb_swf_opts *opts, struct kb_swf_stats *st, char *err,
                   size_t errlen)
{
        kb_cluster_changed(c);
        struct kb_swf_opts o = *opts;
        memset(st, 0, sizeof(*st));
        bool node_given = false;
        for (int i = 0; i < KB_RES_MAX; i++)
                node_given |= o.node.q[i] != 0;
        if (!node_given) {
                o.node = o.processor; /* one processor a node: most archive logs' model */
                o.node.q[KB_RES_PODS] = 0;
        }
        int64_t per = per_node(&o);
        if (per < 1) {
                snprintf(err, errlen, "--swf-node: holds no whole processor (--swf-processor)");
                return KB_EBADINPUT;
        }
        int64_t max_nodes = -1, max_procs = -1;
        struct swf_job *jobs = NULL;
        size_t njobs = 0, capjobs = 0;
        size_t lineno = 0;
        int rc = 0;
        for (size_t at = 0; at < len && !rc;) {
                size_t e = at;
                while (e < len && text[e] != '\n')
                        e++;
                lineno++;
                char *line = kb_xstrndup(text + at, e - at);
                at = e + 1;
                char *s = line;
                while (isspace((unsigned char)*s))
                        s++;
                if (*s == ';') {
                        int64_t v;
                        if ((v = header(s, "MaxNodes")) > 0)
                                max_nodes = v;
                        if ((v = header(s, "MaxProcs")) > 0)
                                max_procs = v;
                        free(line);
                        continue;
                }
                char *fields[18], *save = NULL;
                size_t nf = 0;
                for (char *t = strtok_r(s, " \t\r", &save); t && nf < 18;
                     t = strtok_r(NULL, " \t\r", &save))
                        fields[nf++] = t;
                if (!nf) {
                        free(line);
                        continue;
                }
                struct swf_job j;
                int64_t alloc, req, reqtime;
                if ((rc = field(fields, nf, 1, "job number", label, lineno, &j.number, err,
                                errlen)) ||
                    (rc = field(fields, nf, 2, "submit time", label, lineno, &j.submit, err,
                                errlen)) ||
                    (rc = field(fields, nf, 4, "run time", label, lineno, &j.run, err, errlen)) ||
                    (rc = field(fields, nf, 5, "allocated processors", label, lineno, &alloc, err,
                                errlen)) ||
                    (rc = field(fields, nf, 8, "requested processors", label, lineno, &req, err,
                                errlen)) ||
                    (rc = field(fields, nf, 9, "requested time", label, lineno, &reqtime, err,
                                errlen))) {
                        free(line);
                        break;
                }
                free(line);
                if (j.submit < 0) {
                        snprintf(err, errlen, "%s:%zu: field 2 (submit time): must not be "
                                              "negative, got %lld",
                                 label, lineno, (long long)j.submit);
                        rc = KB_EBADINPUT;
                        break;
                }
                j.procs = alloc > 0 ? alloc : req;
                j.declared = reqtime > 0 ? reqtime : j.run;
                if (j.run <= 0 || j.procs <= 0) {
                        st->skipped_runtime += j.run <= 0;
                        st->skipped_procs += j.run > 0;
                        continue;
                }
                KB_PUSH(jobs, njobs, capjobs, j);
        }
        if (!rc) {
                int64_t nodes = o.nodes > 0      ? o.nodes
                                : max_nodes > 0  ? max_nodes
                                : max_procs > 0 ? (max_procs + per - 1) / per
                                                 : 0;
                if (nodes <= 0) {
                        snprintf(err, errlen,
                                 "%s: no node count: give --swf-nodes (the header has neither "
                                 "MaxNodes nor MaxProcs)",
                                 label);
                        rc = KB_EBADINPUT;
                } else {
                        st->nodes = nodes;
                        st->processors = nodes * per;
                        for (int64_t i = 0; i < nodes; i++) {
                                struct kb_node *n = kb_xcalloc(1, sizeof(*n));
                                n->meta.name = kb_xasprintf("node-%06lld", (long long)i + 1);
                                n->meta.uid = kb_xasprintf("node:%s", n->meta.name);
                                n->allocatable = o.node;
                                n->allocatable.q[KB_RES_PODS] = KB_MAX(110, per);
                                n->ready = true;
                                KB_PUSH(c->nodes, c->nnodes, c->capnodes, n);
                        }
                        for (size_t i = 0; i < njobs; i++) {
                                if (jobs[i].procs > st->processors) {
                                        st->skipped_wide++;
                                        continue;
                                }
                                add_job(c, &jobs[i], &o);
                                st->jobs++;
                                st->pods += (size_t)jobs[i].procs;
                        }
                }
        }
        free(jobs);
        return rc;
}
