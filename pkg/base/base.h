/*
 * base: what every kbatch module uses — checked allocation, the error table,
 * klog-style logging, a growable string buffer, per-session memory pools and
 * a few small helpers.  Nothing here does I/O except the logger.
 */
#ifndef KB_PKG_BASE_H
#define KB_PKG_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* File-local functions that a unit test exercises are declared KB_TESTABLE:
 * static in normal builds, external in the test (asan) build. */
#ifdef KB_TESTING
#define KB_TESTABLE
#else
#define KB_TESTABLE static
#endif

#define KB_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define KB_MIN(a, b)     ((a) < (b) ? (a) : (b))
#define KB_MAX(a, b)     ((a) > (b) ? (a) : (b))

#if defined(__GNUC__)
#define KB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define KB_NORETURN     __attribute__((noreturn))
#else
#define KB_PRINTF(f, a)
#define KB_NORETURN
#endif

/* ---- errors ----------------------------------------------------------- */

/*
 * kbatch's own error codes.  Functions return 0 or a negative number: either
 * -errno or one of these (all below -1000, clear of errno values).
 */
#define KB_ERRNO_MAP(XX)                                                                           \
        XX(BADINPUT, -1001, "bad input")                                                           \
        XX(BADQTY, -1002, "malformed quantity")                                                    \
        XX(OVERFLOW, -1003, "value out of range")                                                  \
        XX(NOTFOUND, -1004, "not found")                                                           \
        XX(BADCONF, -1005, "bad scheduler configuration")                                          \
        XX(TOOMANYRES, -1006, "too many distinct resource names")                                  \
        XX(CONFLICT, -1007, "conflict")                                                            \
        XX(UNSCHEDULABLE, -1008, "unschedulable")

enum {
#define XX(name, val, msg) KB_E##name = (val),
        KB_ERRNO_MAP(XX)
#undef XX
};

/* Returns a static message for 0, a negative errno or a KB_E* code. */
const char *kb_strerror(int err);

/* ---- memory ----------------------------------------------------------- */

/* Allocation that aborts with a message on exhaustion (as redis and Slurm
 * do); callers never check for NULL. */
void *kb_xmalloc(size_t n);
void *kb_xcalloc(size_t n, size_t size);
void *kb_xrealloc(void *p, size_t n);
char *kb_xstrdup(const char *s);
char *kb_xstrndup(const char *s, size_t n);
KB_PRINTF(1, 2) char *kb_xasprintf(const char *fmt, ...);
KB_NORETURN KB_PRINTF(1, 2) void kb_die(const char *fmt, ...);

/*
 * Grows *arr (of element size elsize) so that it holds at least need
 * elements; *cap is updated.  Doubles, so appends are amortised O(1).
 */
void kb_grow(void **arr, size_t *cap, size_t need, size_t elsize);
#define KB_PUSH(arr, n, cap, val)                                                                  \
        do {                                                                                       \
                if ((n) >= (cap))                                                                  \
                        kb_grow((void **)&(arr), &(cap), (n) + 1, sizeof(*(arr)));                 \
                (arr)[(n)++] = (val);                                                              \
        } while (0)

/*
 * A memory pool: many allocations freed in one call (nginx's request pools).
 * Each session allocates its working state from one.  Not thread-safe: a
 * pool belongs to one thread at a time.
 */
struct kb_pool_chunk;
struct kb_pool {
        struct kb_pool_chunk *head;
        size_t chunk_size;
        size_t total;
};
void kb_pool_init(struct kb_pool *p, size_t chunk_size);
void kb_pool_release(struct kb_pool *p);
/* Zeroed, 16-byte aligned memory that lives until kb_pool_release. */
void *kb_pool_alloc(struct kb_pool *p, size_t n);
char *kb_pool_strdup(struct kb_pool *p, const char *s);
KB_PRINTF(2, 3) char *kb_pool_printf(struct kb_pool *p, const char *fmt, ...);
/* "a/b" (an object's "namespace/name"), without printf's cost: sessions
 * make one per task. */
char *kb_pool_path(struct kb_pool *p, const char *a, const char *b);

/* ---- strings ---------------------------------------------------------- */

/* A growable, always NUL-terminated byte buffer.  kb_buf_init leaves it empty
 * and valid (data == ""); kb_buf_release frees it. */
struct kb_buf {
        char *data;
        size_t len;
        size_t cap;
};
void kb_buf_init(struct kb_buf *b);
void kb_buf_release(struct kb_buf *b);
void kb_buf_add(struct kb_buf *b, const char *s, size_t n);
void kb_buf_adds(struct kb_buf *b, const char *s);
void kb_buf_addc(struct kb_buf *b, char c);
/* parts[0..n) one after another (words joined without printf's cost). */
void kb_buf_add_all(struct kb_buf *b, const char *const *parts, size_t n);
KB_PRINTF(2, 3) void kb_buf_printf(struct kb_buf *b, const char *fmt, ...);
void kb_buf_vprintf(struct kb_buf *b, const char *fmt, va_list ap);
void kb_buf_reset(struct kb_buf *b);
/* Hands the string over to the caller (who frees it) and re-inits b. */
char *kb_buf_detach(struct kb_buf *b);

/* v with at most decimals digits after the point, trailing zeros and a
 * bare point dropped, "-0" as "0" ("9.3", "12", "0.25"), into buf. */
void kb_format_decimal(double v, int decimals, char *buf, size_t n);
/* v in decimal into buf (truncated to n - 1 bytes, always terminated when
 * n > 0), as snprintf's "%lld"; returns the untruncated length. */
size_t kb_format_i64(int64_t v, char *buf, size_t n);
bool kb_streq(const char *a, const char *b); /* NULL-safe */
bool kb_has_prefix(const char *s, const char *prefix);
/* The Levenshtein distance of a and b (ASCII case ignored), for "did you
 * mean" suggestions; SIZE_MAX when either is longer than 63 bytes. */
size_t kb_edit_distance(const char *a, const char *b);
/* Kubernetes' name rules (apimachinery's validation package): a DNS-1123
 * label ("kbatch-system": at most 63 of a-z, 0-9 and '-', alphanumeric at
 * both ends), the rule for namespaces; and a DNS-1123 subdomain (labels
 * joined by '.', at most 253 bytes in all; IsDNS1123Subdomain limits only
 * the whole), the rule for the names of pods, jobs, podgroups and most
 * kinds.  NULL is neither. */
bool kb_dns_label(const char *s);
bool kb_dns_subdomain(const char *s);
/* Reads a whole file into a NUL-terminated heap string; "-" is stdin.
 * Returns 0 or -errno. */
int kb_read_file(const char *path, char **out, size_t *len);
/* Writes len bytes to path atomically (a temp file beside it, then rename)
 * with exactly the permission bits mode (umask does not apply), so readers
 * never see a partial file and a secret is never readable by others, not
 * even for a moment.  Returns 0 or -errno. */
int kb_write_file(const char *path, const void *data, size_t len, unsigned mode);
/*
 * kbatch's queue-position ending of a waiting gang's condition message: in
 * "blocker; 2nd of 5 waiting in queue q" the ending starts at the last "; "
 * whose rest reads "<ordinal> of <count> waiting in queue <name>".  Returns
 * the length of the blocker, and *pos the ending ("2nd of 5 ..."); or the
 * whole length and *pos NULL.  (plugins/gang.c writes it; the daemon and
 * kubectl-kbatch read it.)
 */
size_t kb_position_split(const char *msg, const char **pos);
/* data (n bytes) as standard base64 with padding; the caller frees it. */
char *kb_base64_encode(const void *data, size_t n);
/* FNV-1a, for hashing keys and signatures. */
uint64_t kb_hash(const void *data, size_t n, uint64_t seed);
#define KB_HASH_SEED 14695981039346656037ULL
/* SipHash-1-3 of data under a key drawn at random once per process: for
 * keys that come from outside (label values, object names, JSON keys),
 * which with a hash anyone can compute could be chosen to collide (hash
 * flooding).  Not stable from run to run. */
uint64_t kb_siphash(const void *data, size_t n);

/* ---- one hash map -------------------------------------------------------- */

/*
 * A hash map from an integer or a string key to a 64-bit value (a count,
 * an index, or a pointer cast through uintptr_t): open addressing, linear
 * probing, at most half full, deletion by backward shift.  String keys are
 * hashed with kb_siphash, integers mixed under a per-process key, so no
 * input can make probes long.  A map holds one kind of key, chosen at
 * init.  String keys are borrowed: the caller keeps the bytes alive and
 * unchanged while the entry is in the map (a pool, or the object it
 * indexes).  Iteration order is unspecified and differs from run to run:
 * never let it decide anything visible.  Not thread-safe.
 */
enum kb_map_keys { KB_MAP_INT, KB_MAP_STR };
struct kb_map_slot {
        uint64_t hash; /* 0: empty */
        uint64_t key;  /* the integer, or the string's address */
        size_t len;    /* string keys: length in bytes */
        uint64_t val;
};
struct kb_map {
        struct kb_map_slot *slots;
        size_t cap, n; /* cap: 0 or a power of two */
        enum kb_map_keys keys;
};
void kb_map_init(struct kb_map *m, enum kb_map_keys keys);
void kb_map_release(struct kb_map *m);
/* Makes room for n entries in all without rehashing. */
void kb_map_reserve(struct kb_map *m, size_t n);
/* The value of key, or NULL.  The pointer stays valid until the next put
 * or delete. */
uint64_t *kb_map_get_int(const struct kb_map *m, uint64_t key);
uint64_t *kb_map_get_str(const struct kb_map *m, const void *key, size_t len);
/* The value of key, added as 0 when missing (*added says which, when not
 * NULL).  Valid until the next put or delete. */
uint64_t *kb_map_put_int(struct kb_map *m, uint64_t key, bool *added);
uint64_t *kb_map_put_str(struct kb_map *m, const void *key, size_t len, bool *added);
/* Removes key; returns whether it was there. */
bool kb_map_del_int(struct kb_map *m, uint64_t key);
bool kb_map_del_str(struct kb_map *m, const void *key, size_t len);
static inline size_t kb_map_count(const struct kb_map *m)
{
        return m->n;
}
/* Iteration: for (size_t i = 0; i < m->cap; i++) if (m->slots[i].hash) ...
 * (the string key is (const char *)(uintptr_t)slot.key).  No puts or
 * deletes while iterating. */
#ifdef KB_TESTING
/* Slots looked at by every get, put and delete so far (for the tests). */
extern uint64_t kb__map_probes;
#endif

/* ---- one heap ------------------------------------------------------------ */

/* A binary min-heap of values (pointers, or integers cast through
 * uintptr_t) under a caller's comparison: cmp < 0 means a comes out before
 * b.  Actions keep queues, jobs and tasks in these, as Volcano's
 * util.PriorityQueue.  Not thread-safe. */
typedef int (*kb_heap_cmp_fn)(void *ctx, const void *a, const void *b);
struct kb_heap {
        void **v;
        size_t n, cap;
        kb_heap_cmp_fn cmp;
        void *ctx;
};
void kb_heap_init(struct kb_heap *h, kb_heap_cmp_fn cmp, void *ctx);
void kb_heap_release(struct kb_heap *h);
void kb_heap_push(struct kb_heap *h, void *item);
void kb_heap_reserve(struct kb_heap *h, size_t n); /* room for n items, allocated once */
void *kb_heap_pop(struct kb_heap *h); /* NULL when empty */
/* dst (uninitialised) becomes a copy of src: same values, order and
 * comparison; release both. */
void kb_heap_copy(struct kb_heap *dst, const struct kb_heap *src);
static inline bool kb_heap_empty(const struct kb_heap *h)
{
        return h->n == 0;
}
/* Empties h, keeping its storage and comparison. */
static inline void kb_heap_clear(struct kb_heap *h)
{
        h->n = 0;
}
static inline void *kb_heap_top(const struct kb_heap *h)
{
        return h->n ? h->v[0] : NULL;
}

/* ---- time ------------------------------------------------------------- */

/* Monotonic seconds, for measuring durations. */
double kb_now_mono(void);
/* Wall-clock seconds since the epoch (CLOCK_REALTIME), with fractions. */
double kb_now_wall(void);
/* Now as the Kubernetes API writes times: Time ("2024-01-02T03:04:05Z")
 * and MicroTime ("2024-01-02T03:04:05.123456Z"), into buf (>= 32 bytes). */
void kb_now_time(char *buf, size_t n);
void kb_now_micro_time(char *buf, size_t n);
/* Parses RFC 3339 ("2024-01-02T03:04:05Z", fractional seconds and offsets
 * allowed) into seconds since the epoch.  Returns 0 or KB_EBADINPUT. */
int kb_parse_time(const char *s, double *out);
/* Formats seconds since the epoch as RFC 3339 UTC into buf (>= 32 bytes). */
void kb_format_time(double t, char *buf, size_t n);
/* A duration for people, as kubectl prints ages (upstream HumanDuration):
 * 59s, 2m3s, 15m, 3h5m, 12h, 3d4h, 689d, 2y5d; "<invalid>" below -1 s. */
void kb_human_duration(double secs, char *buf, size_t n);

/* ---- tables ----------------------------------------------------------- */

/*
 * Text in columns as kubectl prints them: each column as wide as its widest
 * cell, three spaces between columns, no blanks at the end of a line.  The
 * first row is the header, if the caller wants one.  Cells are copied.
 * Widths count bytes, which is right for Kubernetes names (ASCII).
 */
struct kb_table {
        size_t ncols, nrows, cap;
        char **cells; /* nrows * ncols, row after row */
};
void kb_table_init(struct kb_table *t, size_t ncols);
void kb_table_release(struct kb_table *t);
/* Adds a row of ncols cells (a NULL cell is empty). */
void kb_table_row(struct kb_table *t, const char *const *cells);
/* Appends every row, each ending with a newline, to out. */
void kb_table_print(const struct kb_table *t, struct kb_buf *out);

/* ---- logging ---------------------------------------------------------- */

/*
 * klog-style lines on stderr:
 *   I1121 10:00:00.000000 1234 allocate.c:88] message
 * Severity I, W, E; kb_verbosity gates KB_V(n, ...) (-v N on the command
 * line).  Safe from any thread: each line is one write.
 */
extern int kb_verbosity;
KB_PRINTF(4, 5) void kb_log(char severity, const char *file, int line, const char *fmt, ...);
#define KB_INFO(...)  kb_log('I', __FILE__, __LINE__, __VA_ARGS__)
#define KB_WARN(...)  kb_log('W', __FILE__, __LINE__, __VA_ARGS__)
#define KB_ERROR(...) kb_log('E', __FILE__, __LINE__, __VA_ARGS__)
#define KB_V(n, ...)                                                                               \
        do {                                                                                       \
                if (kb_verbosity >= (n))                                                           \
                        kb_log('I', __FILE__, __LINE__, __VA_ARGS__);                              \
        } while (0)

/* Tests capture log lines instead of printing them: when set, every line
 * (without the klog prefix) goes to the hook and not to stderr. */
typedef void (*kb_log_hook_fn)(char severity, const char *msg, void *arg);
void kb_log_set_hook(kb_log_hook_fn fn, void *arg);

/* ---- connection limits ------------------------------------------------ */

/*
 * Per-client and total connection limits for the HTTP servers (the
 * scheduler's metrics server, kbatch-apiserver), with the log lines that say
 * when one applies.  A client is its IP address.  The server asks
 * kb_connlimit_admit on each accepted socket (before anything is read) and
 * reports each connection's start and end; the counts are those reported.
 * Safe from any thread.
 */
struct sockaddr;
struct kb_connlimit;
struct kb_conn_slot; /* one open connection, from kb_connlimit_opened */

/* name says whose limits these are in log lines ("metrics server");
 * per_client_what and total_what name the setting (a flag) that sets each
 * limit.  A limit of 0 is no limit. */
struct kb_connlimit *kb_connlimit_new(const char *name, unsigned per_client, unsigned total,
                                      const char *per_client_what, const char *total_what);
void kb_connlimit_free(struct kb_connlimit *l);
/* Whether a new connection from addr may stay; a refusal is logged (at
 * most one line per 10 s and limit, with how many were refused since).
 * addr NULL or not IPv4/IPv6 counts only against the total. */
bool kb_connlimit_admit(struct kb_connlimit *l, const struct sockaddr *addr);
/* A connection from addr began; the slot is the caller's until closed. */
struct kb_conn_slot *kb_connlimit_opened(struct kb_connlimit *l, const struct sockaddr *addr);
/* The connection ended; frees the slot (NULL is fine).  Returns how long
 * it was open, in seconds. */
double kb_connlimit_closed(struct kb_connlimit *l, struct kb_conn_slot *slot);
/* Connections open now, in total and from addr's client. */
unsigned kb_connlimit_open(struct kb_connlimit *l, const struct sockaddr *addr, unsigned *client);
/* Raises the soft open-files limit to the hard one, as Go's runtime does at
 * start for kube-apiserver and the kubelet (a soft limit of 1024 is common
 * in containers).  Returns the soft limit now in force. */
unsigned long kb_nofile_raise(void);
/* The client's address as text ("10.0.0.5"), into buf (>= 46 bytes). */
void kb_sockaddr_str(const struct sockaddr *addr, char *buf, size_t n);

/*
 * A log line at most once per interval: kb_ratelog_due returns true when a
 * line may go out now, and then *skipped holds how many were held back
 * since the last one.  Safe from any thread.  Zero-initialise it.
 */
struct kb_ratelog {
        double last;
        uint64_t skipped;
        int lock; /* a spin lock: lines are rare and short */
};
bool kb_ratelog_due(struct kb_ratelog *r, double interval, uint64_t *skipped);

#endif /* KB_PKG_BASE_H */
