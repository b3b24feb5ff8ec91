#include "testutil.h"

#include <string.h>

static struct kb_buf captured;

static void hook(char severity, const char *msg, void *arg)
{
        (void)arg;
        kb_buf_printf(&captured, "%c %s\n", severity, msg);
}

void kb_test_log_start(void)
{
        kb_buf_release(&captured);
        kb_log_set_hook(hook, NULL);
}

void kb_test_log_stop(void)
{
        kb_log_set_hook(NULL, NULL);
        kb_buf_release(&captured);
}

const char *kb_test_log_text(void)
{
        return captured.data ? captured.data : "";
}

int kb_test_log_contains(const char *needle)
{
        return captured.data && strstr(captured.data, needle) != NULL;
}
