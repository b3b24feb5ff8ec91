#include "base/base.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* ---- errors ----------------------------------------------------------- */

const char *kb_strerror(int err)
{
        switch (err) {
        case 0:
                return "ok";
#define XX(name, val, msg)                                                                         \
        case KB_E##name:                                                                           \
                return msg;
                KB_ERRNO_MAP(XX)
#undef XX
        default:
                return err < 0 ? strerror(-err) : "unknown error";
        }
}

/* ---- memory ----------------------------------------------------------- */

void kb_die(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        fputs("fatal: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        abort();
}

void *kb_xmalloc(size_t n)
{
        void *p = malloc(n ? n : 1);
        if (!p)
                kb_die("out of memory allocating %zu bytes", n);
        return p;
}

void *kb_xcalloc(size_t n, size_t size)
{
        void *p = calloc(n ? n : 1, size ? size : 1);
        if (!p)
                kb_die("out of memory allocating %zu x %zu bytes", n, size);
        return p;
}

void *kb_xrealloc(void *p, size_t n)
{
        void *q = realloc(p, n ? n : 1);
        if (!q)
                kb_die("out of memory reallocating %zu bytes", n);
        return q;
}

char *kb_xstrdup(const char *s)
{
        return kb_xstrndup(s, strlen(s));
}

char *kb_xstrndup(const char *s, size_t n)
{
        char *d = kb_xmalloc(n + 1);
        memcpy(d, s, n);
        d[n] = '\0';
        return d;
}

char *kb_xasprintf(const char *fmt, ...)
{
        struct kb_buf b;
        va_list ap;
        kb_buf_init(&b);
        va_start(ap, fmt);
        kb_buf_vprintf(&b, fmt, ap);
        va_end(ap);
        return kb_buf_detach(&b);
}

void kb_grow(void **arr, size_t *cap, size_t need, size_t elsize)
{
        size_t c = *cap ? *cap : 8;
        while (c < need)
                c *= 2;
        if (c != *cap) {
                *arr = kb_xrealloc(*arr, c * elsize);
                *cap = c;
        }
}

/* A pool is a list of chunks; an allocation larger than a quarter chunk gets
 * a chunk of its own so that big arrays do not waste the tail of a chunk. */
struct kb_pool_chunk {
        struct kb_pool_chunk *next;
        size_t used, size;
        _Alignas(16) unsigned char mem[];
};

void kb_pool_init(struct kb_pool *p, size_t chunk_size)
{
        p->head = NULL;
        p->chunk_size = chunk_size ? chunk_size : 64 * 1024;
        p->total = 0;
}

void kb_pool_release(struct kb_pool *p)
{
        struct kb_pool_chunk *c = p->head;
        while (c) {
                struct kb_pool_chunk *next = c->next;
                free(c);
                c = next;
        }
        p->head = NULL;
        p->total = 0;
}

void *kb_pool_alloc(struct kb_pool *p, size_t n)
{
        struct kb_pool_chunk *c = p->head;
        n = (n + 15) & ~(size_t)15;
        if (!c || c->size - c->used < n) {
                size_t size = n > p->chunk_size / 4 ? n : p->chunk_size;
                if (size == n) {
                        /* A private chunk for one large allocation (the
                         * task array: 200 MB at a million pods): calloc,
                         * which mmap gives zeroed without a pass of
                         * memset; the pages never written are never
                         * touched. */
                        c = kb_xcalloc(1, sizeof(*c) + size);
                        c->size = c->used = size;
                        p->total += size;
                        /* Behind the head so the head's free tail stays
                         * usable. */
                        if (p->head) {
                                c->next = p->head->next;
                                p->head->next = c;
                        } else {
                                p->head = c;
                        }
                        return c->mem;
                }
                c = kb_xmalloc(sizeof(*c) + size);
                c->size = size;
                c->used = 0;
                c->next = p->head;
                p->head = c;
                p->total += size;
        }
        void *mem = c->mem + c->used;
        c->used += n;
        memset(mem, 0, n);
        return mem;
}

char *kb_pool_strdup(struct kb_pool *p, const char *s)
{
        size_t n = strlen(s);
        char *d = kb_pool_alloc(p, n + 1);
        memcpy(d, s, n);
        return d;
}

char *kb_pool_path(struct kb_pool *p, const char *a, const char *b)
{
        size_t na = strlen(a), nb = strlen(b);
        char *d = kb_pool_alloc(p, na + nb + 2);
        memcpy(d, a, na);
        d[na] = '/';
        memcpy(d + na + 1, b, nb);
        return d;
}

char *kb_pool_printf(struct kb_pool *p, const char *fmt, ...)
{
        struct kb_buf b;
        va_list ap;
        kb_buf_init(&b);
        va_start(ap, fmt);
        kb_buf_vprintf(&b, fmt, ap);
        va_end(ap);
        char *s = kb_pool_strdup(p, b.data);
        kb_buf_release(&b);
        return s;
}

/* ---- strings ---------------------------------------------------------- */

static char kb_buf_empty[1];

void kb_buf_init(struct kb_buf *b)
{
        b->data = kb_buf_empty;
        b->len = 0;
        b->cap = 0;
}

void kb_buf_release(struct kb_buf *b)
{
        if (b->cap)
                free(b->data);
        kb_buf_init(b);
}

static void buf_reserve(struct kb_buf *b, size_t extra)
{
        size_t need = b->len + extra + 1;
        if (need <= b->cap)
                return;
        size_t c = b->cap ? b->cap : 64;
        while (c < need)
                c *= 2;
        if (b->cap) {
                b->data = kb_xrealloc(b->data, c);
        } else {
                b->data = kb_xmalloc(c);
                b->data[0] = '\0';
        }
        b->cap = c;
}

void kb_buf_add(struct kb_buf *b, const char *s, size_t n)
{
        buf_reserve(b, n);
        memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = '\0';
}

void kb_buf_adds(struct kb_buf *b, const char *s)
{
        kb_buf_add(b, s, strlen(s));
}

void kb_buf_add_all(struct kb_buf *b, const char *const *parts, size_t n)
{
        for (size_t i = 0; i < n; i++)
                kb_buf_adds(b, parts[i]);
}

void kb_buf_addc(struct kb_buf *b, char c)
{
        kb_buf_add(b, &c, 1);
}

void kb_buf_vprintf(struct kb_buf *b, const char *fmt, va_list ap)
{
        va_list cp;
        va_copy(cp, ap);
        int n = vsnprintf(NULL, 0, fmt, cp);
        va_end(cp);
        if (n < 0)
                return;
        buf_reserve(b, (size_t)n);
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
        b->len += (size_t)n;
}

void kb_buf_printf(struct kb_buf *b, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        kb_buf_vprintf(b, fmt, ap);
        va_end(ap);
}

void kb_buf_reset(struct kb_buf *b)
{
        b->len = 0;
        if (b->cap)
                b->data[0] = '\0';
}

char *kb_buf_detach(struct kb_buf *b)
{
        char *s = b->cap ? b->data : kb_xstrdup("");
        kb_buf_init(b);
        return s;
}

bool kb_streq(const char *a, const char *b)
{
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}

bool kb_has_prefix(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

int kb_read_file(const char *path, char **out, size_t *len)
{
        FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
        if (!f)
                return -errno;
        struct kb_buf b;
        char chunk[65536];
        size_t n;
        int err = 0;
        kb_buf_init(&b);
        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
                kb_buf_add(&b, chunk, n);
        if (ferror(f))
                err = -EIO;
        if (f != stdin)
                fclose(f);
        if (err) {
                kb_buf_release(&b);
                return err;
        }
        if (len)
                *len = b.len;
        *out = kb_buf_detach(&b);
        return 0;
}

int kb_write_file(const char *path, const void *data, size_t len, unsigned mode)
{
        char *tmp = kb_xasprintf("%s.tmp.%d", path, (int)getpid());
        const char *p = data;
        int rc = 0;
        unlink(tmp);
        /* Created with no access at all, then given mode: the bits are exact
         * whatever the umask, and there is no moment with wider ones. */
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
        if (fd < 0) {
                rc = -errno;
                goto out;
        }
        if (fchmod(fd, (mode_t)mode) != 0) {
                rc = -errno;
                goto fail_fd;
        }
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        rc = -errno;
                        goto fail_fd;
                }
                p += n;
                len -= (size_t)n;
        }
        if (close(fd) != 0) {
                rc = -errno;
                goto fail_tmp;
        }
        if (rename(tmp, path) != 0) {
                rc = -errno;
                goto fail_tmp;
        }
        goto out;
fail_fd:
        close(fd);
fail_tmp:
        unlink(tmp);
out:
        free(tmp);
        return rc;
}

uint64_t kb_hash(const void *data, size_t n, uint64_t seed)
{
        const unsigned char *p = data;
        uint64_t h = seed;
        for (size_t i = 0; i < n; i++) {
                h ^= p[i];
                h *= 1099511628211ULL;
        }
        return h;
}

/* ---- logging ---------------------------------------------------------- */

int kb_verbosity;
static kb_log_hook_fn log_hook;
static void *log_hook_arg;

void kb_log_set_hook(kb_log_hook_fn fn, void *arg)
{
        log_hook = fn;
        log_hook_arg = arg;
}

void kb_log(char severity, const char *file, int line, const char *fmt, ...)
{
        struct kb_buf b;
        va_list ap;
        kb_buf_init(&b);
        if (!log_hook) {
                struct timeval tv;
                struct tm tm;
                const char *base = strrchr(file, '/');
                gettimeofday(&tv, NULL);
                localtime_r(&tv.tv_sec, &tm);
                kb_buf_printf(&b, "%c%02d%02d %02d:%02d:%02d.%06ld %d %s:%d] ", severity,
                              tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                              (long)tv.tv_usec, (int)getpid(), base ? base + 1 : file, line);
        }
        va_start(ap, fmt);
        kb_buf_vprintf(&b, fmt, ap);
        va_end(ap);
        if (log_hook) {
                log_hook(severity, b.data, log_hook_arg);
        } else {
                kb_buf_addc(&b, '\n');
                /* One write per line keeps lines whole across threads. */
                if (write(STDERR_FILENO, b.data, b.len) < 0) {
                        /* Nowhere left to report a failing stderr. */
                }
        }
        kb_buf_release(&b);
}

size_t kb_position_split(const char *msg, const char **pos)
{
        *pos = NULL;
        const char *semi = NULL;
        for (const char *p = strstr(msg, "; "); p; p = strstr(p + 1, "; "))
                semi = p;
        if (!semi)
                return strlen(msg);
        const char *tail = semi + 2;
        unsigned nth, of;
        char sfx[3];
        int used = -1;
        if (sscanf(tail, "%u%2[a-z] of %u waiting in queue %n", &nth, sfx, &of, &used) != 3 ||
            used < 0 || !tail[used] || strchr(tail + used, ' '))
                return strlen(msg);
        *pos = tail;
        return (size_t)(semi - msg);
}
