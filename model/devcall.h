/*
 * What a host call into a device runtime does, by its name as traces write
 * it: whether it returns only once device work is done (it synchronises the
 * host), and what a device copy moves (its direction, and whether its host
 * side is pageable memory).  Shared by the critical path (model/critpath.c)
 * and the causes of GPU idle gaps (model/idle.c).
 */
#ifndef GRADEML_DEVCALL_H
#define GRADEML_DEVCALL_H

/* Host calls that return only when device work is done: the whole device,
 * a stream, an event, or a synchronous copy (CUDA runtime and driver API,
 * HIP).  NULL-terminated. */
extern const char *const devcall_sync_names[];

/* 1 when name is one of devcall_sync_names. */
int devcall_syncs(const char *name);

/* A device copy by its name (Kineto: "Memcpy HtoD (Pageable -> Device)",
 * "Memcpy DtoH (Device -> Pinned)", ROCm's "Memcpy HtoD (Host -> Device)"):
 * DEVCALL_HTOD or DEVCALL_DTOH for its direction, DEVCALL_PAGEABLE when
 * its host side is pageable memory; 0 for anything else. */
enum { DEVCALL_HTOD = 1, DEVCALL_DTOH = 2, DEVCALL_PAGEABLE = 4 };
int devcall_copy(const char *name);

#endif
