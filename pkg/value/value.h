/*
 * value: a generic document tree (null, bool, number, string, array, object)
 * with a JSON parser and emitter (yajl) and a multi-document YAML parser
 * (libyaml).  Kubernetes objects are decoded from this tree whichever format
 * they came in, so one decoder serves manifests, API responses and requests.
 *
 * Numbers keep their literal text: "1.5", "3", "1e3".  A Kubernetes quantity
 * written unquoted (cpu: 1.5) and quoted (cpu: "1.5") then reads the same,
 * and an integer round-trips without passing through a double.
 *
 * Object members keep their order, so emitted JSON keeps the input's.
 * Lookups in objects of fewer than 16 members are linear (most Kubernetes
 * objects); larger ones also keep a hash index of their keys, so that
 * building or reading an object costs O(1) per key however many it has
 * (a pod may carry 80,000 labels).
 *
 * A tree is owned by whoever holds its root; kb_value_free frees it all.
 * Nothing here is thread-safe on a shared tree, but separate trees may be
 * used from separate threads.
 */
#ifndef KB_PKG_VALUE_H
#define KB_PKG_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kb_value_type {
        KB_VNULL,
        KB_VBOOL,
        KB_VNUMBER,
        KB_VSTRING,
        KB_VARRAY,
        KB_VOBJECT,
};

struct kb_value;

struct kb_member {
        char *key;
        struct kb_value *val;
};

struct kb_value {
        enum kb_value_type type;
        int line; /* 1-based line in the source document, 0 when built */
        union {
                bool b;
                char *s; /* KB_VSTRING text, or KB_VNUMBER literal */
                struct {
                        struct kb_value **v;
                        size_t n, cap;
                } arr;
                struct {
                        struct kb_member *m;
                        uint32_t n, cap;
                        /* Index of the keys from 16 members on, else NULL;
                         * kept by the setters (pkg/value/value-int.h). */
                        uint32_t *idx;
                } obj;
        };
};

/* Maximum nesting accepted by the parsers; deeper input is an error, so
 * hostile input cannot exhaust the stack. */
#define KB_VALUE_MAX_DEPTH 256

/* ---- parsing ---------------------------------------------------------- */

/*
 * Parses one JSON document.  On success returns 0 and *out (caller frees).
 * On failure returns KB_EBADINPUT and writes a message such as
 * "line 3: parse error: invalid object key" into err (may be NULL).
 */
int kb_json_parse(const char *text, size_t len, struct kb_value **out, char *err, size_t errlen);

/*
 * Repeated keys that a parse accepted (the last one wins, in the first
 * one's place), each named as kube-apiserver's strict decoding names it:
 * JSON `duplicate field "metadata.labels.a"`, YAML `line 7: key "a"
 * already set in map`.  At most KB_VALUE_DUPS_MAX are noted.
 */
#define KB_VALUE_DUPS_MAX 100
struct kb_value_dups {
        char **v;
        size_t n, cap;
};
void kb_value_dups_release(struct kb_value_dups *d);

/*
 * As kb_json_parse, and notes repeated keys in *dups (when not NULL; the
 * caller zeroes it first and releases it).
 *
 * A string or key holding a NUL character (\u0000) is an error naming the
 * field: C strings cannot hold one, and cutting the text short would store
 * something else than was sent.
 */
int kb_json_parse_dups(const char *text, size_t len, struct kb_value **out,
                       struct kb_value_dups *dups, char *err, size_t errlen);

/*
 * As kb_json_parse, but every node, string and array of the tree is carved
 * from pool (a few allocations per document instead of one per value:
 * about twice as fast on API lists).  The tree is read-only: never pass it
 * to kb_value_free or to a setter; it lives until kb_pool_release(pool).
 * Values carry no line numbers.  Any thread, with a pool of its own.
 */
struct kb_pool;
int kb_json_parse_pool(const char *text, size_t len, struct kb_pool *pool, struct kb_value **out,
                       char *err, size_t errlen);

/*
 * Parses a YAML stream of one or more documents ("---" separated).  Empty
 * documents are skipped.  On success returns 0 with *docs (an array of *n
 * trees; free with kb_value_free_docs).  On failure KB_EBADINPUT, nothing
 * allocated, and a message with the line into err.
 *
 * Plain scalars resolve as YAML 1.2's core schema: null, ~ and empty are
 * null; true/false (any case) are booleans; text that is a JSON number is a
 * number; everything else, and every quoted scalar, is a string.  Aliases
 * are expanded, at most to about ten nodes per YAML event of the input
 * (so "billion laughs" input is refused quickly, naming the alias).
 */
int kb_yaml_parse(const char *text, size_t len, struct kb_value ***docs, size_t *n, char *err,
                  size_t errlen);
void kb_value_free_docs(struct kb_value **docs, size_t n);
/* As kb_yaml_parse, noting repeated keys in *dups (see kb_json_parse_dups;
 * a NUL character in a scalar is refused the same way). */
int kb_yaml_parse_dups(const char *text, size_t len, struct kb_value ***docs, size_t *n,
                       struct kb_value_dups *dups, char *err, size_t errlen);

/* ---- emitting --------------------------------------------------------- */

/* JSON text for v (caller frees).  pretty adds newlines and indentation. */
char *kb_json_emit(const struct kb_value *v, bool pretty);

/* ---- building --------------------------------------------------------- */

struct kb_value *kb_value_new(enum kb_value_type type);
struct kb_value *kb_value_new_bool(bool b);
struct kb_value *kb_value_new_string(const char *s);
struct kb_value *kb_value_new_stringn(const char *s, size_t n);
struct kb_value *kb_value_new_int(int64_t i);
struct kb_value *kb_value_new_double(double d);
/* d as a JSON number, the shortest text that reads back the same (what
 * kb_value_new_double holds); false for NaN and infinities (JSON null). */
bool kb_json_double_text(double d, char buf[static 64]);
/* A number from its literal text; the text must be a valid JSON number. */
struct kb_value *kb_value_new_number(const char *text);
struct kb_value *kb_value_clone(const struct kb_value *v);
void kb_value_free(struct kb_value *v); /* NULL does nothing */
bool kb_value_equal(const struct kb_value *a, const struct kb_value *b);

/*
 * A read-only copy of v in one allocation, the members of its objects
 * exactly sized and each distinct text written once (pkg/value/freeze.c):
 * how kbatch-apiserver stores documents.  Equal leaves may be one node, so
 * it must never be changed: read it, emit it, clone it (the clone is an
 * ordinary tree).  Free it with kb_value_free_frozen, never kb_value_free.
 */
struct kb_value *kb_value_freeze(const struct kb_value *v);
void kb_value_free_frozen(struct kb_value *v); /* NULL does nothing */
/*
 * Values frozen once and shared between frozen trees: the members whose key
 * rule(key) accepts (objects and arrays that are not empty) are looked up
 * by their exact content and kept once, counted by the trees that point at
 * them; kb_value_free_frozen drops the counts.  The table is not
 * thread-safe: freeze and free under one lock.  Free the table after
 * every tree that uses it.  The ncommon texts of common (which must
 * outlive the table) are texts that many trees hold, as keys or leaves:
 * the trees point at the table's copy instead of holding their own.
 */
struct kb_value_shares;
struct kb_value_shares *kb_value_shares_new(bool (*rule)(const char *key),
                                            const char *const *common, size_t ncommon);
struct kb_value *kb_value_freeze_shared(const struct kb_value *v, struct kb_value_shares *shares);
size_t kb_value_shares_count(const struct kb_value_shares *t); /* distinct values kept */
void kb_value_shares_free(struct kb_value_shares *t);

/* Appends val (ownership passes to arr). */
void kb_value_append(struct kb_value *arr, struct kb_value *val);
/* Sets obj[key] = val, replacing and freeing any old value in place (the
 * key keeps its position) or appending.  Ownership of val passes to obj. */
void kb_value_set(struct kb_value *obj, const char *key, struct kb_value *val);
/* Removes obj[key] and returns its value (caller owns), or NULL. */
struct kb_value *kb_value_take(struct kb_value *obj, const char *key);
/* Removes and frees obj[key]; returns whether it existed. */
bool kb_value_del(struct kb_value *obj, const char *key);
/* obj[key] as an object, created (replacing a non-object) when missing. */
struct kb_value *kb_value_ensure_object(struct kb_value *obj, const char *key);

/* ---- reading ---------------------------------------------------------- */

/* obj[key], or NULL when v is not an object or has no such key. */
struct kb_value *kb_value_get(const struct kb_value *obj, const char *key);
/* Follows keys: kb_value_dig(pod, "metadata", "name").  NULL when any step
 * is missing.  The macro adds the typed terminator that the variadic
 * function needs (a bare NULL may be an int). */
struct kb_value *kb_value_dig_keys(const struct kb_value *v, ...);
#define kb_value_dig(...) kb_value_dig_keys(__VA_ARGS__, (const char *)NULL)
/* The text of a string, NULL otherwise. */
const char *kb_value_str(const struct kb_value *v);
/* The text of a string or number (numbers written unquoted). */
const char *kb_value_text(const struct kb_value *v);
/* Reads an integer from a number (or a string holding one).  Returns 0,
 * KB_EBADINPUT for anything else, KB_EOVERFLOW out of int64 range. */
int kb_value_int(const struct kb_value *v, int64_t *out);
/* A bool, or dflt when v is NULL or not a bool. */
bool kb_value_bool(const struct kb_value *v, bool dflt);
bool kb_value_is(const struct kb_value *v, enum kb_value_type t);
const char *kb_value_type_name(enum kb_value_type t);
/* Whether text is exactly a JSON number literal. */
bool kb_json_is_number(const char *text);

#endif /* KB_PKG_VALUE_H */
