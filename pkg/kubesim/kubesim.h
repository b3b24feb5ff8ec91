/*
 * The simulated cluster behind kbatch-apiserver: synthetic nodes, kubelets
 * that run bound pods, the batch/v1 Job and Volcano Job controllers, the
 * garbage collector, and the tick that drives them.  Every function here
 * runs with the server's lock (srv->mu) held.
 */
#ifndef KB_PKG_KUBESIM_H
#define KB_PKG_KUBESIM_H

#include <stddef.h>

struct kb_apiserver;

/* Registers the simulated cluster's indexes and garbage collector as
 * observers of srv's store; once, before anything is stored. */
void kb_kubesim_attach(struct kb_apiserver *srv);
/* Adds synthetic nodes from "nodes=N,cpu=C,memory=M,pods=P,gpu=G" (see
 * kbatch-apiserver --help); KB_EBADINPUT with err for a bad spec. */
int kb_kubesim_add_nodes(struct kb_apiserver *srv, const char *spec, char *err, size_t errlen);
/* One tick: reaping, kubelets, then the controllers. */
void kb_kubesim_tick(struct kb_apiserver *srv);
/* Frees what kb_kubesim_attach and the ticks made. */
void kb_kubesim_free(struct kb_apiserver *srv);

#endif /* KB_PKG_KUBESIM_H */
