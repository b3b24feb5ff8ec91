/*
 * kbatch-scheduler: the gang batch scheduler daemon.  Its flags are a table
 * in pkg/scheduler/flags.c (kb_sched_opts_parse); see docs/scheduler.md.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "framework/framework.h"
#include "scheduler/scheduler.h"

#define KB_VERSION "0.1.0"

/* The conf o names (or the built-in one) into conf; 0, or 2 with a message. */
static int load_conf(const struct kb_sched_opts *o, struct kb_conf *conf)
{
        char err[1024];
        int e = o->conf_path ? kb_conf_load_file(o->conf_path, conf, err, sizeof(err))
                             : kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml),
                                             conf, err, sizeof(err));
        if (!e && o->strict_conf)
                e = kb_conf_strict(conf, err, sizeof(err));
        if (!e)
                return 0;
        fprintf(stderr, "kbatch-scheduler: --scheduler-conf %s: %s\n",
                o->conf_path ? o->conf_path : "(built-in)", err);
        kb_conf_release(conf);
        return 2;
}

int main(int argc, char **argv)
{
        struct kb_sched_opts o;
        struct kb_conf conf = {0};
        kb_sched_opts_init(&o);
        int rc = kb_sched_opts_parse(&o, argc, argv, KB_VERSION);
        if (rc < 0 && (rc = load_conf(&o, &conf)) == 0) {
                signal(SIGPIPE, SIG_IGN);
                rc = kb_scheduler_run(&o, &conf);
        }
        kb_sched_opts_release(&o);
        return rc;
}
