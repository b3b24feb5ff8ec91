/*
 * Request bodies in application/vnd.kubernetes.protobuf, which kubectl's
 * typed clients send (create namespace|configmap|secret|job|deployment...,
 * auth can-i, drain) and never retry as JSON.  protobuf-c decodes them with
 * the message definitions of k8s.proto; this file turns the decoded message
 * into the same JSON tree a JSON body gives, by walking the descriptors:
 *
 *   "k8s\0" Unknown{typeMeta{apiVersion:"v1",kind:"Namespace"}, raw}
 *   raw = Namespace{metadata{name:"x", creationTimestamp{}}}
 *   -> {"apiVersion":"v1","kind":"Namespace","metadata":{"name":"x"}}
 *
 * Field names in k8s.proto are the JSON names, so most fields map one to
 * one.  The exceptions: map<> entries become objects; Time becomes RFC 3339
 * (an unset one, which Go still encodes, becomes absent); Quantity and
 * IntOrString become a string or a number; bytes become base64.  A body
 * with a field k8s.proto does not know is refused (415, naming the field)
 * rather than stored without it.
 */
#include "apiserver/apiserver-http.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver/k8s.pb-c.h"

/* The Unix time of Go's zero time.Time (year 1), which a metav1.Time
 * encodes when it is unset. */
#define GO_ZERO_TIME (-62135596800LL)

/* Messages of what is not a stored kind; the kinds' own are in their
 * descriptors (kb_kind.proto). */
static const struct {
        const char *api_version, *kind;
        const ProtobufCMessageDescriptor *desc;
} others[] = {
    {"policy/v1", "Eviction", &kbk8s__eviction__descriptor},
    {"meta.k8s.io/v1", "DeleteOptions", &kbk8s__delete_options__descriptor},
    {"v1", "DeleteOptions", &kbk8s__delete_options__descriptor},
};

/* Whether apiVersion is group/version ("v1" for the core group). */
static bool api_version_is(const char *av, const char *group, const char *version)
{
        if (!group[0])
                return !strcmp(av, version);
        size_t n = strlen(group);
        return !strncmp(av, group, n) && av[n] == '/' && !strcmp(av + n + 1, version);
}

static const ProtobufCMessageDescriptor *message_of(const char *av, const char *kind)
{
        size_t n;
        const struct kb_apikind *const *kinds = kb__kinds(&n);
        for (size_t i = 0; i < n; i++)
                if (kinds[i]->proto && !strcmp(kinds[i]->kind, kind) &&
                    api_version_is(av, kinds[i]->group, kinds[i]->version))
                        return kinds[i]->proto;
        for (size_t i = 0; i < KB_ARRAY_SIZE(others); i++)
                if (!strcmp(others[i].api_version, av) && !strcmp(others[i].kind, kind))
                        return others[i].desc;
        return NULL;
}

/*
 * Go encodes a non-pointer field even when it is empty, and its JSON leaves
 * such a field out (omitempty): an empty string, false or 0 is absent.  The
 * fields below are pointers in Go or written without omitempty, so their
 * zero is a value the client chose.
 */
static const char *const keep_zero[] = {
    "PriorityClass.value",
    "ContainerPort.containerPort",
    "JobSpec.parallelism",
    "JobSpec.completions",
    "JobSpec.backoffLimit",
    "JobSpec.activeDeadlineSeconds",
    "JobSpec.ttlSecondsAfterFinished",
    "JobSpec.suspend",
    "JobSpec.manualSelector",
    "DeploymentSpec.replicas",
    "DeploymentSpec.revisionHistoryLimit",
    "DeploymentSpec.progressDeadlineSeconds",
    "PodSpec.terminationGracePeriodSeconds",
    "PodSpec.activeDeadlineSeconds",
    "PodSpec.priority",
    "PodSpec.automountServiceAccountToken",
    "PodSpec.enableServiceLinks",
    "ServiceAccount.automountServiceAccountToken",
    "ConfigMap.immutable",
    "Secret.immutable",
    "ObjectMeta.deletionGracePeriodSeconds",
    "OwnerReference.controller",
    "OwnerReference.blockOwnerDeletion",
    "DeleteOptions.gracePeriodSeconds",
    "DeleteOptions.orphanDependents",
    "PodDisruptionBudgetSpec.minAvailable",
    "PodDisruptionBudgetSpec.maxUnavailable",
};

static bool zero_is_value(const ProtobufCMessageDescriptor *d, const char *field)
{
        size_t n = strlen(d->short_name);
        for (size_t i = 0; i < KB_ARRAY_SIZE(keep_zero); i++)
                if (!strncmp(keep_zero[i], d->short_name, n) && keep_zero[i][n] == '.' &&
                    !strcmp(keep_zero[i] + n + 1, field))
                        return true;
        return false;
}

static bool is_zero(const struct kb_value *v)
{
        switch (v->type) {
        case KB_VSTRING:
                return !v->s[0];
        case KB_VBOOL:
                return !v->b;
        case KB_VNUMBER:
                return !strcmp(v->s, "0");
        default:
                return false;
        }
}

struct conv {
        char *err; /* the first problem, or NULL */
};

static struct kb_value *message(struct conv *cv, const ProtobufCMessage *m, const char *path);

/* One value of field f at p (an element of a repeated field, or the field). */
static struct kb_value *scalar(struct conv *cv, const ProtobufCFieldDescriptor *f, const void *p,
                               const char *path)
{
        switch (f->type) {
        case PROTOBUF_C_TYPE_STRING:
                return kb_value_new_string(*(char *const *)p ? *(char *const *)p : "");
        case PROTOBUF_C_TYPE_BOOL:
                return kb_value_new_bool(*(const protobuf_c_boolean *)p);
        case PROTOBUF_C_TYPE_INT32:
                return kb_value_new_int(*(const int32_t *)p);
        case PROTOBUF_C_TYPE_INT64:
                return kb_value_new_int(*(const int64_t *)p);
        case PROTOBUF_C_TYPE_BYTES: {
                const ProtobufCBinaryData *b = p;
                char *t = kb_base64_encode(b->data, b->len);
                struct kb_value *v = kb_value_new_string(t);
                free(t);
                return v;
        }
        case PROTOBUF_C_TYPE_MESSAGE:
                return message(cv, *(ProtobufCMessage *const *)p, path);
        default:
                if (!cv->err)
                        cv->err = kb_xasprintf("%s: a field type kbatch-apiserver does not "
                                               "decode",
                                               path);
                return kb_value_new(KB_VNULL);
        }
}

static bool is_map_entry(const ProtobufCMessageDescriptor *d)
{
        size_t n = strlen(d->short_name);
        return n > 5 && !strcmp(d->short_name + n - 5, "Entry") && d->n_fields == 2 &&
               !strcmp(d->fields[0].name, "key") && !strcmp(d->fields[1].name, "value");
}

/* The well-known messages that are not objects in JSON; NULL otherwise. */
static struct kb_value *special(const ProtobufCMessage *m, bool *absent)
{
        const ProtobufCMessageDescriptor *d = m->descriptor;
        *absent = false;
        if (d == &kbk8s__time__descriptor) {
                const Kbk8s__Time *t = (const Kbk8s__Time *)m;
                /* Go writes an unset Time as an empty message, or as its zero. */
                if ((!t->has_seconds && !t->has_nanos) ||
                    (t->seconds == GO_ZERO_TIME && !t->nanos)) {
                        *absent = true;
                        return NULL;
                }
                char ts[40];
                kb_format_time((double)t->seconds, ts, sizeof(ts));
                return kb_value_new_string(ts);
        }
        if (d == &kbk8s__quantity__descriptor) {
                const Kbk8s__Quantity *q = (const Kbk8s__Quantity *)m;
                return kb_value_new_string(q->string ? q->string : "0");
        }
        if (d == &kbk8s__int_or_string__descriptor) {
                const Kbk8s__IntOrString *x = (const Kbk8s__IntOrString *)m;
                if (x->type == 1)
                        return kb_value_new_string(x->strval ? x->strval : "");
                return kb_value_new_int(x->intval);
        }
        return NULL;
}

static struct kb_value *message(struct conv *cv, const ProtobufCMessage *m, const char *path)
{
        if (!m)
                return kb_value_new(KB_VNULL);
        const ProtobufCMessageDescriptor *d = m->descriptor;
        if (m->n_unknown_fields && !cv->err)
                cv->err =
                    kb_xasprintf("%s%sfield %u of %s is not one kbatch-apiserver decodes", path,
                                 path[0] ? ": " : "", m->unknown_fields[0].tag, d->short_name);
        bool absent;
        struct kb_value *sv = special(m, &absent);
        if (sv || absent)
                return sv ? sv : kb_value_new(KB_VNULL);
        struct kb_value *obj = kb_value_new(KB_VOBJECT);
        for (unsigned i = 0; i < d->n_fields; i++) {
                const ProtobufCFieldDescriptor *f = &d->fields[i];
                const char *base = (const char *)m;
                const void *member = base + f->offset;
                char *p = path[0] ? kb_xasprintf("%s.%s", path, f->name) : kb_xstrdup(f->name);
                if (f->label == PROTOBUF_C_LABEL_REPEATED) {
                        size_t n = *(const size_t *)(base + f->quantifier_offset);
                        const char *arr = *(const char *const *)member;
                        const ProtobufCMessageDescriptor *ed = f->descriptor;
                        if (!n) {
                                free(p);
                                continue;
                        }
                        size_t esz = f->type == PROTOBUF_C_TYPE_MESSAGE  ? sizeof(void *)
                                     : f->type == PROTOBUF_C_TYPE_STRING ? sizeof(char *)
                                     : f->type == PROTOBUF_C_TYPE_BOOL  ? sizeof(protobuf_c_boolean)
                                     : f->type == PROTOBUF_C_TYPE_INT32 ? sizeof(int32_t)
                                     : f->type == PROTOBUF_C_TYPE_BYTES
                                         ? sizeof(ProtobufCBinaryData)
                                         : sizeof(int64_t);
                        struct kb_value *out;
                        if (f->type == PROTOBUF_C_TYPE_MESSAGE && is_map_entry(ed)) {
                                /* map<K,V>: entries {key, value} become members. */
                                out = kb_value_new(KB_VOBJECT);
                                for (size_t k = 0; k < n; k++) {
                                        const ProtobufCMessage *e =
                                            *(ProtobufCMessage *const *)(arr + k * esz);
                                        const char *eb = (const char *)e;
                                        const char *key =
                                            *(char *const *)(eb + ed->fields[0].offset);
                                        kb_value_set(out, key ? key : "",
                                                     scalar(cv, &ed->fields[1],
                                                            eb + ed->fields[1].offset, p));
                                }
                        } else {
                                out = kb_value_new(KB_VARRAY);
                                for (size_t k = 0; k < n; k++)
                                        kb_value_append(out, scalar(cv, f, arr + k * esz, p));
                        }
                        kb_value_set(obj, f->name, out);
                        free(p);
                        continue;
                }
                bool present;
                if (f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING)
                        present = *(void *const *)member != NULL;
                else
                        present = *(const protobuf_c_boolean *)(base + f->quantifier_offset);
                if (present) {
                        struct kb_value *v = scalar(cv, f, member, p);
                        if (v->type == KB_VNULL || (is_zero(v) && !zero_is_value(d, f->name)))
                                kb_value_free(v); /* unset: an empty value or zero Time */
                        else
                                kb_value_set(obj, f->name, v);
                }
                free(p);
        }
        return obj;
}

int kb__protobuf_decode(const char *body, size_t len, struct kb_value **out, char *err,
                        size_t errlen)
{
        *out = NULL;
        if (len < 4 || memcmp(body, "k8s\0", 4)) {
                snprintf(err, errlen,
                         "the body does not start with the protobuf magic "
                         "\"k8s\\x00\"");
                return KB_EBADINPUT;
        }
        Kbk8s__Unknown *u = kbk8s__unknown__unpack(NULL, len - 4, (const uint8_t *)body + 4);
        if (!u || !u->typemeta || !u->typemeta->apiversion || !u->typemeta->kind) {
                snprintf(err, errlen, "the protobuf envelope (runtime.Unknown) does not decode");
                if (u)
                        kbk8s__unknown__free_unpacked(u, NULL);
                return KB_EBADINPUT;
        }
        const ProtobufCMessageDescriptor *desc =
            message_of(u->typemeta->apiversion, u->typemeta->kind);
        int rc = KB_EBADINPUT;
        if (!desc) {
                rc = -ENOTSUP;
                snprintf(err, errlen,
                         "%s %s: kbatch-apiserver does not decode this kind from protobuf; send "
                         "it as JSON",
                         u->typemeta->apiversion, u->typemeta->kind);
                goto out;
        }
        ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, u->has_raw ? u->raw.len : 0,
                                                        u->has_raw ? u->raw.data : NULL);
        if (!m) {
                snprintf(err, errlen, "%s %s: the protobuf message does not decode",
                         u->typemeta->apiversion, u->typemeta->kind);
                goto out;
        }
        struct conv cv = {0};
        struct kb_value *v = message(&cv, m, "");
        protobuf_c_message_free_unpacked(m, NULL);
        if (cv.err) {
                rc = -ENOTSUP;
                snprintf(err, errlen, "%s %s: %s; send it as JSON", u->typemeta->apiversion,
                         u->typemeta->kind, cv.err);
                free(cv.err);
                kb_value_free(v);
                goto out;
        }
        kb_value_set(v, "apiVersion", kb_value_new_string(u->typemeta->apiversion));
        kb_value_set(v, "kind", kb_value_new_string(u->typemeta->kind));
        *out = v;
        rc = 0;
out:
        kbk8s__unknown__free_unpacked(u, NULL);
        return rc;
}
