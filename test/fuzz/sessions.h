/*
 * The sessions a fuzz target runs over a cluster that loaded: on a model
 * kept between them, as the daemon and kbatch-sim run them, each result
 * applied; the fifth an hour on, so that the clock alone moves.  Test
 * builds (the fuzz targets are built with KB_TESTING) compare the kept
 * model with a fresh build at every open and close, and a repeated result
 * with running the session (pkg/framework/repeat.c): any difference
 * aborts.
 */
#ifndef KB_TEST_FUZZ_SESSIONS_H
#define KB_TEST_FUZZ_SESSIONS_H

#include "framework/framework.h"
#include "sim/sim.h"

static void fuzz_sessions(struct kb_cluster *c, const struct kb_conf *conf)
{
        struct kb_model *m = kb_model_new();
        for (int i = 0; i < 5; i++) {
                struct kb_snapshot snap;
                struct kb_result r;
                if (i == 4)
                        c->now += 3600;
                kb_cluster_snapshot(c, &snap);
                kb_session_run_model(m, &snap, conf, &r);
                kb_cluster_apply(c, &r);
                kb_result_release(&r);
        }
        kb_model_free(m);
}

#endif /* KB_TEST_FUZZ_SESSIONS_H */
