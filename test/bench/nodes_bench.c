/*
 * The session after some nodes changed, on the model kept between
 * sessions (issue 21, item 1): W2 with every gang running (5,000 nodes,
 * 100,000 pods), its model built and settled, then rounds of an idle
 * session and a session after PCT percent of the nodes changed (every
 * (100/PCT)-th node marked changed in place, as a kubelet's status
 * heartbeat changes it: nothing the model reads differs).  Prints the
 * median seconds of each kind and how often the model was built, used
 * again and updated.  Run by test/bench/nodes.sh; `measure` runs one
 * session of the given kind inside a function of its own, for callgrind
 * (--toggle-collect=measure).  Wall-clock: a benchmark, not a test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework/framework.h"
#include "sim/sim.h"

#define W2                                                                                         \
        "nodes=5000,node-cpu=32,node-memory=128Gi,node-pods=110,groups=5000,group-size=20,"        \
        "pod-cpu=1,pod-memory=1Gi,queues=4,running=1"

static double session(struct kb_cluster *c, struct kb_model *m, const struct kb_conf *conf)
{
        struct kb_snapshot snap;
        struct kb_result r;
        kb_cluster_snapshot(c, &snap);
        if (kb_session_run_model(m, &snap, conf, &r) != 0) {
                fprintf(stderr, "nodes_bench: the session failed\n");
                exit(1);
        }
        double d = r.duration;
        kb_cluster_apply(c, &r);
        kb_result_release(&r);
        return d;
}

static void touch(struct kb_cluster *c, double pct)
{
        size_t step = pct > 0 ? (size_t)(100.0 / pct) : 0;
        for (size_t i = 0; step && i < c->nnodes; i += step)
                c->nodes[i]->meta.gen = ++c->gen;
}

/* One session of the kind asked for: callgrind collects here alone. */
__attribute__((noinline)) double measure(struct kb_cluster *c, struct kb_model *m,
                                         const struct kb_conf *conf)
{
        return session(c, m, conf);
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
        double pct = argc > 1 ? atof(argv[1]) : 1;
        int rounds = argc > 2 ? atoi(argv[2]) : 5;
        const char *only = argc > 3 ? argv[3] : NULL; /* "idle" or "nodes": one, measured */
        char err[512];
        struct kb_cluster c;
        struct kb_conf conf;
        kb_cluster_init(&c);
        if (kb_cluster_synthetic(&c, W2, err, sizeof(err)) ||
            kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml), &conf, err,
                          sizeof(err))) {
                fprintf(stderr, "nodes_bench: %s\n", err);
                return 1;
        }
        kb_cluster_ensure_default_queue(&c);
        struct kb_model *m = kb_model_new();
        session(&c, m, &conf); /* built */
        session(&c, m, &conf); /* settled */
        if (only) {
                if (strcmp(only, "nodes") == 0)
                        touch(&c, pct);
                printf("%s: %.6f s\n", only, measure(&c, m, &conf));
        } else {
                double *idle = calloc((size_t)rounds + 1, sizeof(double));
                double *nodes = calloc((size_t)rounds + 1, sizeof(double));
                for (int i = 0; i < rounds; i++) {
                        idle[i] = session(&c, m, &conf);
                        touch(&c, pct);
                        nodes[i] = session(&c, m, &conf);
                }
                qsort(idle, (size_t)rounds, sizeof(double), cmp_double);
                qsort(nodes, (size_t)rounds, sizeof(double), cmp_double);
                printf("idle session: %.6f s; after %g%% of nodes changed: %.6f s (medians of "
                       "%d)\n",
                       idle[rounds / 2], pct, nodes[rounds / 2], rounds);
                free(idle);
                free(nodes);
        }
        uint64_t built, reused;
        kb_model_counts(m, &built, &reused);
        printf("model: built %llu, used again %llu, updated %llu\n", (unsigned long long)built,
               (unsigned long long)reused, (unsigned long long)kb_model_updates(m));
        kb_model_free(m);
        kb_conf_release(&conf);
        kb_cluster_release(&c);
        return 0;
}
