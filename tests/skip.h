/*
 * skip_because(FMT, ...): a test that cannot run here says why, in one
 * line ("skipped: ../shared/samples/sysstat is absent"), then skips.
 * `make check` counts the skip; the line tells the reader what to add.
 * Include it after cmocka.h.
 */
#ifndef GRADEML_SKIP_H
#define GRADEML_SKIP_H

#define skip_because(fmt, ...)                                                                     \
	do {                                                                                       \
		print_message("skipped: " fmt "\n", __VA_ARGS__);                                  \
		skip();                                                                            \
	} while (0)

#endif
