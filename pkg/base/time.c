/*
 * Time: monotonic and wall-clock now, RFC 3339 times as the Kubernetes API
 * writes them (Time, MicroTime) and reads them, and durations for people.
 */
#include "base/base.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double kb_now_mono(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double kb_now_wall(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void kb_now_time(char *buf, size_t n)
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        kb_format_time((double)ts.tv_sec, buf, n);
}

void kb_now_micro_time(char *buf, size_t n)
{
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        char sec[32];
        strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf, n, "%s.%06ldZ", sec, ts.tv_nsec / 1000);
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (Howard Hinnant's days_from_civil algorithm). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
        y -= m <= 2;
        int64_t era = (y >= 0 ? y : y - 399) / 400;
        int64_t yoe = y - era * 400;
        int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
        int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        return era * 146097 + doe - 719468;
}

int kb_parse_time(const char *s, double *out)
{
        int y, mo, d, h, mi, sec, consumed = 0;
        if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &consumed) != 6 ||
            consumed != 19)
                return KB_EBADINPUT;
        if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
                return KB_EBADINPUT;
        const char *p = s + 19;
        double frac = 0;
        if (*p == '.') {
                double scale = 0.1;
                p++;
                if (*p < '0' || *p > '9')
                        return KB_EBADINPUT;
                while (*p >= '0' && *p <= '9') {
                        frac += (*p - '0') * scale;
                        scale /= 10;
                        p++;
                }
        }
        int offset = 0;
        if (*p == 'Z' || *p == 'z') {
                p++;
        } else if (*p == '+' || *p == '-') {
                int oh, om, n = 0;
                if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &n) != 2 || n != 5)
                        return KB_EBADINPUT;
                offset = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
                p += 6;
        } else {
                return KB_EBADINPUT;
        }
        if (*p)
                return KB_EBADINPUT;
        int64_t days = days_from_civil(y, mo, d);
        *out = (double)(days * 86400 + h * 3600 + mi * 60 + sec - offset) + frac;
        return 0;
}

void kb_format_time(double t, char *buf, size_t n)
{
        time_t secs = (time_t)t;
        struct tm tm;
        gmtime_r(&secs, &tm);
        strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* "3h5m"; "3h" when the smaller unit is 0 or not wanted (small < 0). */
static void two_units(char *buf, size_t n, int64_t big, const char *bu, int64_t small,
                      const char *su)
{
        if (small > 0)
                snprintf(buf, n, "%" PRId64 "%s%" PRId64 "%s", big, bu, small, su);
        else
                snprintf(buf, n, "%" PRId64 "%s", big, bu);
}

/* Upstream's HumanDuration: two units while the smaller one says something,
 * one when it would be noise. */
void kb_human_duration(double secs, char *buf, size_t n)
{
        int64_t s = (int64_t)secs;
        if (s < -1) {
                snprintf(buf, n, "<invalid>");
                return;
        }
        s = KB_MAX(s, 0);
        int64_t m = s / 60, h = s / 3600, d = h / 24;
        if (s < 120)
                two_units(buf, n, s, "s", -1, "");
        else if (m < 10)
                two_units(buf, n, m, "m", s % 60, "s");
        else if (m < 180)
                two_units(buf, n, m, "m", -1, "");
        else if (h < 8)
                two_units(buf, n, h, "h", m % 60, "m");
        else if (h < 48)
                two_units(buf, n, h, "h", -1, "");
        else if (h < 24 * 8)
                two_units(buf, n, d, "d", h % 24, "h");
        else if (h < 24 * 365 * 2)
                two_units(buf, n, d, "d", -1, "");
        else
                two_units(buf, n, d / 365, "y", h < 24 * 365 * 8 ? d % 365 : -1, "d");
}
