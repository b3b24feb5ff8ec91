/*
 * kbatch-sim --compare-confs A,B,...: the same input replayed under each
 * conf until done, and the figures side by side.
 */
#include <stdlib.h>
#include <string.h>

#include "kbatch-sim.h"

int sim_compare_confs(const struct sim_args *a, const struct kb_cluster *proto)
{
        const char *list = a->compare;
        const struct kb_sim_opts *o = &a->sim;
        bool full_scan = a->full_scan, json = strcmp(a->output, "json") == 0;
        struct sim_input in_;
        struct sim_input *in = &in_;
        sim_input_of(a, in);
        char *copy = kb_xstrdup(list), *save = NULL;
        const char *names[16];
        struct kb_sim_report reps[16];
        size_t n = 0;
        int rc = 0;
        char err[2048];
        for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
                if (n == KB_ARRAY_SIZE(names)) {
                        fprintf(stderr, "kbatch-sim: --compare-confs: at most %zu confs\n",
                                KB_ARRAY_SIZE(names));
                        rc = 2;
                        break;
                }
                struct kb_conf conf;
                if (kb_conf_load_file(t, &conf, err, sizeof(err))) {
                        fprintf(stderr, "kbatch-sim: --compare-confs %s\n", err);
                        rc = 2;
                        break;
                }
                conf.full_scan = full_scan;
                struct kb_cluster c;
                kb_cluster_init(&c);
                for (size_t i = 0; i < proto->nscheduler_names; i++)
                        kb_cluster_add_scheduler(&c, proto->scheduler_names[i]);
                c.default_queue = proto->default_queue;
                c.workload_podgroups = proto->workload_podgroups;
                int src;
                if (sim_load_input(in, &c)) {
                        rc = 2;
                } else if ((src =
                                kb_sim_run(&c, &conf, o, NULL, NULL, &reps[n], err, sizeof(err)))) {
                        fprintf(stderr, "kbatch-sim: %s: %s\n", t, err);
                        rc = src == KB_EBADINPUT ? 2 : 1;
                } else {
                        names[n++] = t;
                }
                in->quiet = true;
                kb_cluster_release(&c);
                kb_conf_release(&conf);
        }
        if (!rc)
                kb_sim_compare_print(names, reps, n, json, stdout);
        if (!rc && a->plot && kb_sim_compare_write_svg(names, reps, n, a->plot, err, sizeof(err))) {
                fprintf(stderr, "kbatch-sim: --plot %s\n", err);
                rc = 1;
        }
        for (size_t i = 0; i < n; i++)
                kb_sim_report_release(&reps[i]);
        free(copy);
        return rc;
}
