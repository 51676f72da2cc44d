/*
 * What a host call into a device runtime does, by its name as traces write
 * it: whether it returns only once device work is done (it synchronises the
 * host), and what a device copy moves (its direction, and whether its host
 * side is pageable memory); and which device runtime a trace's names say
 * its work ran under, so that advice names what applies.  Shared by the
 * critical path (model/analysis/critpath.c), the causes of GPU idle gaps
 * (model/analysis/idle.c) and the top issues (model/analysis/issues.c).
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

/* Device runtimes, ordered so that the larger of two readings wins: a ROCm
 * trace files its hip* calls under Kineto's cuda_runtime category. */
enum devcall_api {
	DEVCALL_API_NONE, /* not known */
	DEVCALL_API_CUDA,
	DEVCALL_API_XPU,
	DEVCALL_API_ROCM,
	DEVCALL_API_MTIA
};
/* What a category or a launching call's name says of the runtime:
 * mtia_ccp_events, mtia_runtime (MTIA); a hip* call (ROCm); xpu_runtime,
 * xpu_driver (XPU); cuda_runtime, cuda_driver, a cuda* or cu[A-Z]* call
 * (CUDA); else DEVCALL_API_NONE. */
int devcall_api(const char *text);
/* What the report calls such a device: "accelerator" for MTIA, else "GPU". */
const char *devcall_api_device(int api);
/* Its module in torch ("cuda" also for ROCm, "xpu", "mtia"). */
const char *devcall_api_torch(int api);
/* What fuses many small launches into one under it, the graphs named for
 * its runtime ("CUDA graphs", "HIP graphs"), or NULL where PyTorch has
 * none (XPU, MTIA) or the runtime is not known. */
const char *devcall_api_graphs(int api);

#endif
