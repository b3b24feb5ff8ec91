/*
 * What the files of kbatch-sim share: the command line parsed into one
 * struct (options.c), and the ways of running it (run.c, compare.c).
 * main.c sits on top of them.
 */
#ifndef KB_CMD_KBATCH_SIM_H
#define KB_CMD_KBATCH_SIM_H

#include <stdbool.h>
#include <stdio.h>

#include "sim/sim.h"

#define KB_VERSION "0.1.0"

/* kbatch-sim's command line.  Settings that belong to the cluster
 * (scheduler names, default queue, workload PodGroups) go straight to the
 * cluster given to sim_args_parse. */
struct sim_args {
        const char *conf_path, *output, *csv, *plot, *swf, *compare;
        const char *synthetic[16];
        size_t nsynthetic;
        long sessions;
        bool sessions_set, until_done, full_scan, stats, strict;
        bool summary; /* --summary: no per-gang table or lists, no session stream */
        int progress; /* --progress: 1 on, 0 off, -1 when stderr is a terminal */
        struct kb_sim_opts sim;
        struct kb_swf_opts swf_opts;
        char **files; /* the manifests, argv's rest */
        int nfiles;
};

/*
 * Parses argv into a (and c's settings).  Returns -1 to go on, or the exit
 * status: 0 after --help or --version, 2 after a bad flag (the message is
 * out on stderr).
 */
int sim_args_parse(int argc, char **argv, struct sim_args *a, struct kb_cluster *c);
void sim_usage(FILE *out);

/* What the cluster is built from: --synthetic specs, an --swf trace,
 * manifest files; quiet leaves out the trace's summary line. */
struct sim_input {
        const char *const *synthetic;
        size_t nsynthetic;
        const char *swf;
        struct kb_swf_opts swf_opts;
        char **files;
        int nfiles;
        bool quiet;
};
void sim_input_of(const struct sim_args *a, struct sim_input *in);
/* Builds c from in; 0, or -1 with the error printed. */
int sim_load_input(const struct sim_input *in, struct kb_cluster *c);

/* The runs; each returns the exit status. */
int sim_run_timed(const struct sim_args *a, struct kb_cluster *c, const struct kb_conf *conf);
int sim_run_sessions(const struct sim_args *a, struct kb_cluster *c, const struct kb_conf *conf);
/* --compare-confs A,B,...: proto carries the cluster settings. */
int sim_compare_confs(const struct sim_args *a, const struct kb_cluster *proto);
/* --stats: pods and gangs bound at the end, and peak memory, on stderr. */
void sim_print_stats(const struct kb_cluster *c);

#endif /* KB_CMD_KBATCH_SIM_H */
