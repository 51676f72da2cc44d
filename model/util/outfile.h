/*
 * A file the user names for output (`export -o OUT`, the explorer's
 * `:save FILE`), written as `cp` writes its destination, but whole or not
 * at all where it can be:
 *
 * - a regular file, or nothing, is built as a hidden file beside it
 *   (model/util/aside.h) and renamed over it at the end; the file it
 *   replaces keeps its mode, owner and group (one whose owner cannot be
 *   kept, or that this user may not write, is refused before anything is
 *   written);
 * - anything else (a character or block device such as /dev/null, a
 *   FIFO, this process's standard output, named "-" where the caller allows
 *   it or as /dev/stdout) is opened and written through, nothing renamed;
 * - a symlink is followed to its final target, which is then written as
 *   above (the link stays a link); a symlink to nothing is refused.
 *
 * Errors are one line: "cannot write 'PATH': reason".
 */
#ifndef GRADEML_OUTFILE_H
#define GRADEML_OUTFILE_H

#include <sys/stat.h>

enum {
	OUTFILE_DASH = 1,     /* "-" is standard output (else a file named "-") */
	OUTFILE_NONBLOCK = 2, /* a FIFO that nothing reads is an error, not a wait */
};

struct outfile {
	int fd;	      /* where the text goes */
	char *path;   /* as named, for messages */
	char *target; /* the regular file replaced or made; NULL when written through */
	char *tmp;    /* the hidden file renamed to target at the end; NULL when through */
	int lock_fd;  /* a second descriptor of tmp: its flock outlives fd's close */
	int armed;    /* tmp is the one outfile_interrupt removes */
	int existed;  /* target was there at the open: its dev, ino and ctime */
	struct stat was;
};

/* Opens path for writing as the top of this file says.  0, or -1 with *err
 * (and nothing to close). */
int outfile_open(struct outfile *o, const char *path, int flags, char **err);

/* Writes all n bytes (a thread of the caller's may do it); 0, or -1 with *err. */
int outfile_write(const struct outfile *o, const void *p, size_t n, char **err);

/* Ends the file: when ok, closes it and renames the hidden file into place
 * (0, or -1 with *err); else removes the hidden file (and returns -1
 * without touching err, which may be NULL). */
int outfile_close(struct outfile *o, int ok, char **err);

/* Whether path names this process's standard output: "-" (with
 * OUTFILE_DASH), or a name of the file it is (/dev/stdout). */
int outfile_is_stdout(const char *path, int flags);

/* "cannot write 'PATH': reason" for errno value e, reason in lower case;
 * the caller frees it. */
char *outfile_error(const char *path, int e);

/* For a signal handler (async-signal-safe): removes the hidden file an
 * outfile of this process is building. */
void outfile_interrupt(void);

#endif
