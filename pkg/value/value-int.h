/*
 * What the files of pkg/value share: the key index of large objects and
 * the parsers' shared checks.
 *
 * Small objects (most Kubernetes objects have fewer than 16 keys) are
 * searched linearly.  From KB_VALUE_INDEX_MIN members on, an object also
 * keeps an open-addressing table of its member positions: a power of two
 * of at least twice the member count, each slot 0 (empty) or a position
 * plus 1, probed linearly from the key's hash (SipHash under a per-process
 * random key, so that no sender can choose keys that collide).  The table's size follows
 * from the member count alone (kb__value_index_slots), so it needs no
 * field of its own.  So building an object of n keys, with each new key
 * checked against the earlier ones, costs O(n) key comparisons rather
 * than O(n^2): 80,000 labels were 3.2 billion comparisons.
 */
#ifndef KB_PKG_VALUE_INT_H
#define KB_PKG_VALUE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "value/value.h"

#define KB_VALUE_INDEX_MIN 16

/* Slots of the index of an object of n members (n >= KB_VALUE_INDEX_MIN). */
size_t kb__value_index_slots(size_t n);
/* Clears idx (slots entries) and enters members 0..n-1. */
void kb__value_index_build(uint32_t *idx, size_t slots, const struct kb_member *m, size_t n);
/* Enters member pos (its key must not be in the index yet). */
void kb__value_index_add(uint32_t *idx, size_t slots, const struct kb_member *m, size_t pos);
/* The position of key among m, or -1. */
ptrdiff_t kb__value_index_find(const uint32_t *idx, size_t slots, const struct kb_member *m,
                               const char *key);

/*
 * The message for a NUL character, which a C string cannot hold: in a
 * string at path (key NULL), or in the key (keylen bytes) of the object at
 * path.  Takes path; returns the message (caller frees).  Kubernetes keeps
 * such strings whole; kbatch refuses them rather than cut them short.
 */
char *kb__value_nul_message(char *path, const char *key, size_t keylen);

#ifdef KB_TESTING
/* Key comparisons made by lookups on this thread (objects, the parsers'
 * duplicate checks): the unit tests bound them rather than time them. */
extern _Thread_local unsigned long long kb__value_key_compares;
#define KB__KEY_COMPARED() (kb__value_key_compares++)
#else
#define KB__KEY_COMPARED() ((void)0)
#endif

#endif /* KB_PKG_VALUE_INT_H */
