/* Helpers shared by the unit tests. */
#ifndef KB_TEST_TESTUTIL_H
#define KB_TEST_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/base.h"

struct kb_value;
/* The one document of a YAML text (the test fails, printing the parser's
 * error and the text, unless there is exactly one); the caller frees it. */
struct kb_value *kb_test_yaml1(const char *text);

/* Captures log lines (instead of printing them) until kb_test_log_stop. */
void kb_test_log_start(void);
void kb_test_log_stop(void);
/* All captured lines, newline-separated. */
const char *kb_test_log_text(void);
/* Whether some captured line contains needle. */
int kb_test_log_contains(const char *needle);

/*
 * Scenario tests: manifests in, expected binds out.
 *
 *   manifests  YAML (nodes, pods, batch/v1 Jobs, PodGroups, Queues, ...);
 *              pods default to schedulerName kbatch only if they say so —
 *              write it.  A "default" queue is added when none is given.
 *   conf       a Volcano conf, NULL for the default one.
 *   sessions   how many sessions (0 means 1); decisions apply between.
 *   binds      every bind of every session, "pod=node" separated by spaces
 *              (pods in namespace default may omit it), in any order; ""
 *              for none.
 *   phases     "pg=Phase ..." checked after the last session (optional).
 *   reasons    "pg=Reason ..." of the last session's Unschedulable
 *              conditions (optional).
 *   message    a text some Unschedulable condition of the last session
 *              must contain (optional); lines are "ns/pg: message", and
 *              "pod ns/name: message" for pods without a group left
 *              Pending.
 *   nominated  the last session's nominations (pipelined tasks), as
 *              "pod=node" like binds; checked when not NULL.
 *   evicted    every eviction of every session, "pod" or "pod=action"
 *              names (pods in namespace default may omit it), in any
 *              order; checked when not NULL.
 *   domains    "pg=domain ..." (the network topology domain holding each
 *              group after the last session, "-" for none), each checked
 *              when not NULL.
 *   lone       pods that name no group stay jobs of their own instead of
 *              joining the PodGroup kbatch makes for their workload
 *              (kbatch-sim --workload-podgroups=false).
 *
 * Each scenario runs twice, through the node-selection caches and as a
 * full scan, and both must give exactly the expected binds.
 */
struct kb_scenario {
        const char *name;
        const char *conf;
        const char *manifests;
        int sessions;
        const char *binds;
        const char *phases;
        const char *message;
        const char *reasons;
        const char *nominated;
        const char *evicted;
        const char *domains;
        bool lone;
};
void kb_run_scenario(const struct kb_scenario *sc);

struct kb_result;
struct kb_model;
struct kb_snapshot;
struct kb_conf;
/* A session's decisions as text, one line per bind, eviction, nomination,
 * group and queue status, warning (caller frees). */
char *kb_test_result_text(const struct kb_result *r);
/* How many times the scenario runner runs each session (a fresh build,
 * the kept model, the kept model used again): counters a scenario bumps
 * per session grow as many times. */
#define KB_TEST_SESSION_RUNS 3
/* A session on snap through the kept model m, checked against a fresh
 * build and against m used again on the same snapshot (the three results
 * must be the same); the last one in r. */
void kb_test_session_model(struct kb_model *m, const struct kb_snapshot *snap,
                           const struct kb_conf *conf, struct kb_result *r);
/* Runs a table of scenarios as one cmocka test, reporting each by name. */
void kb_run_scenarios(const struct kb_scenario *table, size_t n);

/*
 * Runs sessions over manifests with conf (decisions applied between them),
 * through the caches or as a full scan, and returns every bind and every
 * PodGroup's phase and condition as one string (caller frees), so that two
 * runs compare with strcmp.  Checks on the way that every action and
 * plugin was timed.
 */
char *kb_test_run_binds(const char *manifests, const char *conf_text, bool full_scan, int sessions);
#endif
