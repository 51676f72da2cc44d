/*
 * Metric series attached to phases by host and device (model/analysis/attach.c).
 */
#ifndef GRADEML_ATTACH_H
#define GRADEML_ATTACH_H

#include <stddef.h>

#include "model/view/model.h"

/* The GPU a series measures ("gpuN" resource or "gpu=N" label), or -1 for
 * a host-wide series. */
int mseries_device(const struct mseries *s);
/* Whether series s describes a resource n ran on. */
int model_attached(struct model *m, const struct mnode *n, const struct mseries *s);

/* An attached series over one phase's window. */
struct mbusy {
	const struct mseries *s;
	double mean, max; /* time-weighted mean and the highest value in force */
};
/* The attached series with a capacity, but those measuring slack (idle,
 * free, available) and those that never change, that hold a value during
 * n, busiest first by mean share of capacity: at most max of them in
 * out[], *count set. */
int model_busiest(struct model *m, const struct mnode *n, struct mbusy *out, size_t max,
		  size_t *count, char **err);
/* The same, but first the series behind each of r's bottlenecks, in their
 * order (model/analysis/attrib.h): the one judged for it that peaked highest (a
 * disk's with the host's cpu.iowait; for software-bound, the judged series
 * that peaked highest), so that a verdict's figures are shown beside it.
 * r may be NULL. */
struct attrib_row;
int model_evidence(struct model *m, const struct mnode *n, const struct attrib_row *r,
		   struct mbusy *out, size_t max, size_t *count, char **err);

/* b[0..n) as "cpu.util 88% (peak 100%); disk:vda util-percent 3% (peak
 * 9%)": each series' mean and peak as shares of its capacity. */
struct sbuf;
void model_busy_text(const struct mbusy *b, size_t n, struct sbuf *out);

#endif
