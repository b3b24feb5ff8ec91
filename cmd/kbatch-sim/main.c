/*
 * kbatch-sim: runs kbatch's scheduling sessions offline, over Kubernetes
 * manifests or a synthetic cluster, and prints what the scheduler would do.
 * options.c reads the command line, run.c and compare.c run it.
 */
#include <stdlib.h>
#include <string.h>

#include "kbatch-sim.h"

/* The conf: --scheduler-conf or Volcano's default, checked as asked.
 * Returns -1 with conf loaded, or the exit status with it released. */
static int load_conf(const struct sim_args *a, struct kb_conf *conf)
{
        char err[2048];
        if (a->conf_path) {
                if (kb_conf_load_file(a->conf_path, conf, err, sizeof(err))) {
                        fprintf(stderr, "kbatch-sim: --scheduler-conf %s\n", err);
                        return 2;
                }
        } else if (kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml), conf, err,
                                 sizeof(err))) {
                fprintf(stderr, "kbatch-sim: built-in conf: %s\n", err);
                return 1;
        }
        conf->full_scan = a->full_scan;
        if (a->strict && kb_conf_strict(conf, err, sizeof(err))) {
                fprintf(stderr, "kbatch-sim: --scheduler-conf %s: %s\n",
                        a->conf_path ? a->conf_path : "(built-in)", err);
                kb_conf_release(conf);
                return 2;
        }
        if (conf->nskipped) {
                char list[1024];
                kb_conf_skipped_summary(conf, list, sizeof(list));
                fprintf(stderr,
                        "kbatch-sim: conf: kbatch skips %zu item(s) it does not support: %s\n",
                        conf->nskipped, list);
        }
        return -1;
}

int main(int argc, char **argv)
{
        struct sim_args a;
        struct kb_cluster cluster;
        struct kb_conf conf;
        struct sim_input in;
        int rc;

        kb_cluster_init(&cluster);
        if ((rc = sim_args_parse(argc, argv, &a, &cluster)) >= 0)
                goto out;
        if ((rc = load_conf(&a, &conf)) >= 0)
                goto out;
        sim_input_of(&a, &in);
        if (a.compare)
                rc = sim_compare_confs(&a, &cluster);
        else if (sim_load_input(&in, &cluster))
                rc = 2;
        else
                rc = a.until_done ? sim_run_timed(&a, &cluster, &conf)
                                  : sim_run_sessions(&a, &cluster, &conf);
        kb_conf_release(&conf);
out:
        kb_cluster_release(&cluster);
        return rc;
}
