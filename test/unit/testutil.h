/* Helpers shared by the unit tests. */
#ifndef KB_TEST_TESTUTIL_H
#define KB_TEST_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/base.h"

/* Captures log lines (instead of printing them) until kb_test_log_stop. */
void kb_test_log_start(void);
void kb_test_log_stop(void);
/* All captured lines, newline-separated. */
const char *kb_test_log_text(void);
/* Whether some captured line contains needle. */
int kb_test_log_contains(const char *needle);

#endif
