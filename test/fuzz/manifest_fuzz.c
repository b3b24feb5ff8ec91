/*
 * Fuzz target: manifests and scheduler confs.  Any byte string handed to
 * kbatch-sim as a manifest or to --scheduler-conf must be accepted or
 * rejected with a message, never crash or leak; what loads must also
 * schedule without crashing, on a kept model that test builds check
 * (sessions.h).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "framework/framework.h"
#include "sim/sim.h"
#include "test/fuzz/sessions.h"

static void quiet(char severity, const char *msg, void *arg)
{
        (void)severity;
        (void)msg;
        (void)arg;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char err[1024];
        struct kb_cluster c;
        struct kb_conf conf;
        kb_log_set_hook(quiet, NULL);

        if (kb_conf_parse((const char *)data, size, &conf, err, sizeof(err)) == 0)
                kb_conf_release(&conf);

        kb_cluster_init(&c);
        if (kb_cluster_load(&c, "fuzz", (const char *)data, size, err, sizeof(err)) == 0) {
                kb_cluster_ensure_default_queue(&c);
                if (kb_conf_parse(kb_default_conf_yaml, strlen(kb_default_conf_yaml), &conf, err,
                                  sizeof(err)) == 0) {
                        fuzz_sessions(&c, &conf);
                        kb_conf_release(&conf);
                }
        }
        kb_cluster_release(&c);
        return 0;
}
