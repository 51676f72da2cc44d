/*
 * What a Chrome trace's names say about device work, whatever the framework
 * that wrote them: a process that is a device plane (XLA and TensorFlow's
 * profilers: "/device:GPU:0", "/device:TPU:3"), a thread of such a plane
 * that is a stream ("Stream #14(Compute)") or a line that aggregates the
 * streams' work ("XLA Ops", "XLA Modules"), TensorFlow 1's timeline
 * processes ("/device:GPU:0/stream:14 Compute"), and names and categories
 * that look like a device's without saying which track is one.
 * importers/chrome.c asks it of the tracks whose events carry no Kineto
 * device category.  Pure functions of NUL-terminated names; NULL reads as
 * no name.
 */
#ifndef GRADEML_DEVTRACK_H
#define GRADEML_DEVTRACK_H

#include <stddef.h>

/* What a track is, by its process's and thread's names. */
enum devtrack {
	DEVTRACK_HOST,	     /* host work: nothing says otherwise */
	DEVTRACK_LOOKS,	     /* host work, though named like a device's (a diagnostic's case) */
	DEVTRACK_PLANE,	     /* a device plane: its threads say what they hold */
	DEVTRACK_STREAM,     /* a stream or queue: each event is device work */
	DEVTRACK_COPIES,     /* a stream of copies alone: each event a copy (or a set) */
	DEVTRACK_AGGREGATE,  /* rows that repeat the streams' work by op or module: no work */
	DEVTRACK_HOST_PLANE, /* host work on XLA's host plane ("/host:CPU") */
};

/* A process name: DEVTRACK_PLANE, a TensorFlow 1 stream (DEVTRACK_STREAM,
 * DEVTRACK_COPIES, DEVTRACK_AGGREGATE), DEVTRACK_HOST_PLANE, DEVTRACK_LOOKS
 * or DEVTRACK_HOST. */
enum devtrack devtrack_process(const char *name);

/* A thread name of a device plane; streams: whether the plane has a
 * stream thread (an "XLA Ops" line is a TPU's work when it has none).  Any
 * but DEVTRACK_PLANE. */
enum devtrack devtrack_line(const char *name, int streams);

/* Whether a thread name is a stream's, on whatever process. */
int devtrack_is_stream(const char *name);

/* Whether a category looks like a device's (kernel, memcpy, gpu_...). */
int devtrack_category(const char *cat, size_t len);

/* The kind of one event of a stream, by its name: PHASE_MEMCPY for
 * "Memcpy..." (any case), PHASE_MEMSET for "Memset...", else PHASE_KERNEL;
 * on a stream of copies, PHASE_MEMCPY unless it says Memset. */
int devtrack_kind(const char *name, int copies);

#endif
