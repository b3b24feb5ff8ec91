/* pkg/base's connection limits (kb_connlimit), which the metrics server
 * and kbatch-apiserver ask on every accepted connection; and wall-clock
 * now in the API's formats, which every module takes from here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "base/base.h"

static struct sockaddr_in addr(const char *ip)
{
        struct sockaddr_in a = {.sin_family = AF_INET};
        assert_int_equal(inet_pton(AF_INET, ip, &a.sin_addr), 1);
        return a;
}

static int warnings;
static char last[512];

static void hook(char severity, const char *msg, void *arg)
{
        (void)arg;
        if (severity == 'W') {
                warnings++;
                snprintf(last, sizeof(last), "%s", msg);
        }
}

/* 3 per client, 5 in all: the fourth from one client is refused, the
 * sixth in all is refused whoever asks, and a closed connection makes
 * room again.  A flood of refusals is one log line. */
static void test_connlimit(void **state)
{
        (void)state;
        warnings = 0;
        kb_log_set_hook(hook, NULL);
        struct kb_connlimit *l = kb_connlimit_new("test server", 3, 5, "--per", "--total");
        struct sockaddr_in a = addr("10.0.0.1"), b = addr("10.0.0.2"), c = addr("10.0.0.3");
        struct kb_conn_slot *sa[3], *sb[2];
        for (int i = 0; i < 3; i++) {
                assert_true(kb_connlimit_admit(l, (struct sockaddr *)&a));
                sa[i] = kb_connlimit_opened(l, (struct sockaddr *)&a);
        }
        for (int i = 0; i < 100; i++)
                assert_false(kb_connlimit_admit(l, (struct sockaddr *)&a));
        assert_int_equal(warnings, 1);
        assert_non_null(strstr(last, "test server: refusing a connection from 10.0.0.1: it has 3 "
                                     "open, the limit per client (--per)"));
        for (int i = 0; i < 2; i++) {
                assert_true(kb_connlimit_admit(l, (struct sockaddr *)&b));
                sb[i] = kb_connlimit_opened(l, (struct sockaddr *)&b);
        }
        unsigned mine;
        assert_int_equal(kb_connlimit_open(l, (struct sockaddr *)&b, &mine), 5);
        assert_int_equal(mine, 2);
        assert_false(kb_connlimit_admit(l, (struct sockaddr *)&c));
        assert_int_equal(warnings, 2);
        assert_non_null(strstr(last, "refusing a connection from 10.0.0.3: 5 connections are "
                                     "open, the limit in total (--total)"));
        kb_connlimit_closed(l, sa[0]);
        assert_true(kb_connlimit_admit(l, (struct sockaddr *)&c));
        assert_true(kb_connlimit_admit(l, (struct sockaddr *)&a));
        assert_int_equal(kb_connlimit_open(l, (struct sockaddr *)&c, &mine), 4);
        assert_int_equal(mine, 0);
        kb_connlimit_closed(l, sa[1]);
        kb_connlimit_closed(l, sa[2]);
        kb_connlimit_closed(l, sb[0]);
        kb_connlimit_closed(l, sb[1]);
        assert_int_equal(kb_connlimit_open(l, NULL, NULL), 0);
        kb_connlimit_closed(l, NULL);
        kb_connlimit_free(l);
        kb_connlimit_free(NULL);
        kb_log_set_hook(NULL, NULL);
}

/* The per-client counts are base's kb_map (issue 22: one map for every
 * module): its lookups show in kb__map_probes.  Many clients, IPv4 and
 * IPv6, each counted apart (an IPv6 address is not the IPv4 one its last
 * bytes spell), and a client whose last connection closes leaves no count
 * behind. */
static void test_connlimit_map(void **state)
{
        (void)state;
        enum { N = 300 };
        kb_log_set_hook(hook, NULL);
        struct kb_connlimit *l = kb_connlimit_new("test server", 1, 2 * N + 1, "--per", "--total");
        struct sockaddr_in v4[N];
        struct sockaddr_in6 v6[N];
        struct kb_conn_slot *s4[N], *s6[N];
        uint64_t probes = kb__map_probes;
        for (int i = 0; i < N; i++) {
                char ip[64];
                snprintf(ip, sizeof(ip), "10.0.%d.%d", i / 256, i % 256);
                v4[i] = addr(ip);
                v6[i] = (struct sockaddr_in6){.sin6_family = AF_INET6};
                /* ::a00:i, whose last 4 bytes are v4[i]'s address */
                memcpy((char *)&v6[i].sin6_addr + 12, &v4[i].sin_addr, 4);
                assert_true(kb_connlimit_admit(l, (struct sockaddr *)&v4[i]));
                s4[i] = kb_connlimit_opened(l, (struct sockaddr *)&v4[i]);
                assert_true(kb_connlimit_admit(l, (struct sockaddr *)&v6[i]));
                s6[i] = kb_connlimit_opened(l, (struct sockaddr *)&v6[i]);
        }
        assert_true(kb__map_probes > probes);
        unsigned mine;
        for (int i = 0; i < N; i++) {
                assert_false(kb_connlimit_admit(l, (struct sockaddr *)&v4[i]));
                assert_int_equal(kb_connlimit_open(l, (struct sockaddr *)&v6[i], &mine), 2 * N);
                assert_int_equal(mine, 1);
        }
        for (int i = 0; i < N; i++)
                kb_connlimit_closed(l, s4[i]);
        for (int i = 0; i < N; i++) {
                assert_int_equal(kb_connlimit_open(l, (struct sockaddr *)&v4[i], &mine), N);
                assert_int_equal(mine, 0);
                assert_true(kb_connlimit_admit(l, (struct sockaddr *)&v4[i]));
                assert_false(kb_connlimit_admit(l, (struct sockaddr *)&v6[i]));
        }
        for (int i = 0; i < N; i++)
                kb_connlimit_closed(l, s6[i]);
        assert_int_equal(kb_connlimit_open(l, NULL, NULL), 0);
        kb_connlimit_free(l);
        kb_log_set_hook(NULL, NULL);
}

/* The first line goes out, the next ones within the interval are counted
 * and reported with the next line that goes out. */
static void test_ratelog(void **state)
{
        (void)state;
        struct kb_ratelog r = {0};
        uint64_t skipped = 99;
        assert_true(kb_ratelog_due(&r, 3600, &skipped));
        assert_int_equal(skipped, 0);
        for (int i = 0; i < 7; i++)
                assert_false(kb_ratelog_due(&r, 3600, &skipped));
        assert_true(kb_ratelog_due(&r, 0, &skipped));
        assert_int_equal(skipped, 7);
}

/* Now as Time ("2026-11-26T23:30:05Z") and MicroTime
 * ("2026-11-26T23:30:05.123456Z"), both UTC, and as seconds: the three
 * agree (to the second; they are read one after the other). */
static void test_now(void **state)
{
        (void)state;
        char t[32], micro[32];
        double before = kb_now_wall();
        kb_now_time(t, sizeof(t));
        kb_now_micro_time(micro, sizeof(micro));
        double after = kb_now_wall();
        assert_int_equal(strlen(t), 20);
        assert_int_equal(strlen(micro), 27);
        assert_int_equal(t[19], 'Z');
        assert_int_equal(micro[26], 'Z');
        assert_int_equal(micro[19], '.');
        for (int i = 20; i < 26; i++)
                assert_true(micro[i] >= '0' && micro[i] <= '9');
        double pt, pm;
        assert_int_equal(kb_parse_time(t, &pt), 0);
        assert_int_equal(kb_parse_time(micro, &pm), 0);
        assert_true(pt >= (double)(int64_t)before && pt <= after);
        assert_true(pm >= before - 1e-6 && pm <= after + 1e-6);
        assert_true(before > 1.7e9); /* after 2023: the epoch, in seconds */
}

int main(void)
{
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_connlimit),
            cmocka_unit_test(test_connlimit_map),
            cmocka_unit_test(test_ratelog),
            cmocka_unit_test(test_now),
        };
        return cmocka_run_group_tests_name("base", tests, NULL, NULL);
}
