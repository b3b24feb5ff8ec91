/*
 * Connection limits for the HTTP servers: per client (IP address) and in
 * total, counted from what the server reports (kb_connlimit_opened and
 * _closed), and checked on each accepted socket (kb_connlimit_admit).
 *
 * libmicrohttpd calls its accept policy and then reports the connection's
 * start on the same thread, one connection after the other, so the count
 * the next admit sees includes every connection admitted before it.
 *
 * The per-client counts are a kb_map from the client's key (its address
 * family and address, 17 bytes, kept in the client's entry) to the entry.
 */
#include "base/base.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#define KEYLEN 17
struct client {
        uint8_t key[KEYLEN]; /* family, then the address (4 or 16 bytes); the map's key */
        unsigned n;
};

struct kb_conn_slot {
        struct client *c; /* NULL: an address counted only in the total */
        double opened;
};

struct kb_connlimit {
        pthread_mutex_t mu;
        char *name, *per_client_what, *total_what;
        unsigned per_client, total, n;
        struct kb_map clients; /* key -> struct client *, while it has one open */
        struct kb_ratelog log_client, log_total;
};

static bool make_key(const struct sockaddr *sa, uint8_t key[KEYLEN])
{
        memset(key, 0, KEYLEN);
        if (!sa)
                return false;
        if (sa->sa_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
                key[0] = 4;
                memcpy(key + 1, &in->sin_addr, 4);
                return true;
        }
        if (sa->sa_family == AF_INET6) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
                key[0] = 6;
                memcpy(key + 1, &in6->sin6_addr, 16);
                return true;
        }
        return false;
}

/* The client of key, or NULL; caller holds l->mu. */
static struct client *find(const struct kb_connlimit *l, const uint8_t key[KEYLEN])
{
        const uint64_t *v = kb_map_get_str(&l->clients, key, KEYLEN);
        return v ? (struct client *)(uintptr_t)*v : NULL;
}

void kb_sockaddr_str(const struct sockaddr *sa, char *buf, size_t n)
{
        const char *r = NULL;
        if (sa && sa->sa_family == AF_INET)
                r = inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf,
                              (socklen_t)n);
        else if (sa && sa->sa_family == AF_INET6)
                r = inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf,
                              (socklen_t)n);
        if (!r)
                snprintf(buf, n, "an unknown address");
}

bool kb_ratelog_due(struct kb_ratelog *r, double interval, uint64_t *skipped)
{
        while (__atomic_exchange_n(&r->lock, 1, __ATOMIC_ACQUIRE))
                ;
        double now = kb_now_mono();
        bool due = r->last == 0 || now - r->last >= interval;
        if (due) {
                *skipped = r->skipped;
                r->skipped = 0;
                r->last = now;
        } else {
                r->skipped++;
        }
        __atomic_store_n(&r->lock, 0, __ATOMIC_RELEASE);
        return due;
}

struct kb_connlimit *kb_connlimit_new(const char *name, unsigned per_client, unsigned total,
                                      const char *per_client_what, const char *total_what)
{
        struct kb_connlimit *l = kb_xcalloc(1, sizeof(*l));
        pthread_mutex_init(&l->mu, NULL);
        l->name = kb_xstrdup(name);
        l->per_client_what = kb_xstrdup(per_client_what);
        l->total_what = kb_xstrdup(total_what);
        l->per_client = per_client;
        l->total = total;
        kb_map_init(&l->clients, KB_MAP_STR);
        return l;
}

void kb_connlimit_free(struct kb_connlimit *l)
{
        if (!l)
                return;
        for (size_t i = 0; i < l->clients.cap; i++)
                if (l->clients.slots[i].hash)
                        free((struct client *)(uintptr_t)l->clients.slots[i].val);
        kb_map_release(&l->clients);
        pthread_mutex_destroy(&l->mu);
        free(l->name);
        free(l->per_client_what);
        free(l->total_what);
        free(l);
}

bool kb_connlimit_admit(struct kb_connlimit *l, const struct sockaddr *sa)
{
        uint8_t key[KEYLEN];
        bool keyed = make_key(sa, key);
        pthread_mutex_lock(&l->mu);
        unsigned total = l->n, mine = 0;
        if (keyed) {
                struct client *c = find(l, key);
                mine = c ? c->n : 0;
        }
        pthread_mutex_unlock(&l->mu);
        char ip[64];
        uint64_t skipped;
        if (l->total && total >= l->total) {
                if (kb_ratelog_due(&l->log_total, 10, &skipped)) {
                        kb_sockaddr_str(sa, ip, sizeof(ip));
                        KB_WARN("%s: refusing a connection from %s: %u connections are open, the "
                                "limit in total (%s); %llu more refused since the last such line",
                                l->name, ip, total, l->total_what, (unsigned long long)skipped);
                }
                return false;
        }
        if (keyed && l->per_client && mine >= l->per_client) {
                if (kb_ratelog_due(&l->log_client, 10, &skipped)) {
                        kb_sockaddr_str(sa, ip, sizeof(ip));
                        KB_WARN("%s: refusing a connection from %s: it has %u open, the limit per "
                                "client (%s); %llu more refused since the last such line",
                                l->name, ip, mine, l->per_client_what, (unsigned long long)skipped);
                }
                return false;
        }
        return true;
}

struct kb_conn_slot *kb_connlimit_opened(struct kb_connlimit *l, const struct sockaddr *sa)
{
        struct kb_conn_slot *s = kb_xcalloc(1, sizeof(*s));
        s->opened = kb_now_mono();
        uint8_t key[KEYLEN];
        bool keyed = make_key(sa, key);
        pthread_mutex_lock(&l->mu);
        l->n++;
        if (keyed) {
                struct client *c = find(l, key);
                if (!c) {
                        c = kb_xcalloc(1, sizeof(*c));
                        memcpy(c->key, key, sizeof(key));
                        /* Keyed by the entry's own copy, which lives as long
                         * as the entry is in the map. */
                        *kb_map_put_str(&l->clients, c->key, KEYLEN, NULL) = (uintptr_t)c;
                }
                c->n++;
                s->c = c;
        }
        pthread_mutex_unlock(&l->mu);
        return s;
}

double kb_connlimit_closed(struct kb_connlimit *l, struct kb_conn_slot *s)
{
        if (!s)
                return 0;
        double open = kb_now_mono() - s->opened;
        pthread_mutex_lock(&l->mu);
        l->n--;
        if (s->c && --s->c->n == 0) {
                kb_map_del_str(&l->clients, s->c->key, KEYLEN);
                free(s->c);
        }
        pthread_mutex_unlock(&l->mu);
        free(s);
        return open;
}

unsigned kb_connlimit_open(struct kb_connlimit *l, const struct sockaddr *sa, unsigned *client)
{
        uint8_t key[KEYLEN];
        bool keyed = make_key(sa, key);
        pthread_mutex_lock(&l->mu);
        unsigned n = l->n;
        if (client) {
                struct client *c = keyed ? find(l, key) : NULL;
                *client = c ? c->n : 0;
        }
        pthread_mutex_unlock(&l->mu);
        return n;
}

unsigned long kb_nofile_raise(void)
{
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
                return 0;
        if (rl.rlim_cur < rl.rlim_max) {
                rlim_t was = rl.rlim_cur;
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
                        rl.rlim_cur = was;
        }
        return rl.rlim_cur == RLIM_INFINITY ? (unsigned long)-1 : (unsigned long)rl.rlim_cur;
}
