/*
 * Writing a file the user named; see outfile.h.  The kind of file decides
 * once, at the open, between writing through and building aside; a hidden
 * file is renamed at the end only over what was there at the open (a
 * regular file of the same device and inode, or nothing), never over
 * whatever another process put there meanwhile.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/util/aside.h"
#include "model/util/outfile.h"
#include "model/util/xalloc.h"

/* The hidden file being built, as a signal handler sees it: fixed memory,
 * and unlink, which is async-signal-safe.  One at a time per process. */
static char outfile_tmp[PATH_MAX];
static volatile sig_atomic_t outfile_armed;

void outfile_interrupt(void)
{
	if (outfile_armed)
		unlink(outfile_tmp);
}

char *outfile_error(const char *path, int e)
{
	const char *s = strerror(e);
	int lower = isupper((unsigned char)s[0]) && islower((unsigned char)s[1]);
	return xasprintf("cannot write '%s': %c%s", path,
			 lower ? tolower((unsigned char)s[0]) : s[0], s + 1);
}

int outfile_is_stdout(const char *path, int flags)
{
	if ((flags & OUTFILE_DASH) && !strcmp(path, "-"))
		return 1;
	struct stat a, b;
	return stat(path, &a) == 0 && fstat(STDOUT_FILENO, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* Opens path, no regular file, to write through; a FIFO without a reader
 * fails at once when nonblock. */
static int open_through(struct outfile *o, int nonblock, char **err)
{
	o->fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (nonblock ? O_NONBLOCK : 0));
	if (o->fd < 0) {
		*err = nonblock && errno == ENXIO
			   ? xasprintf("cannot write '%s': nothing reads the FIFO", o->path)
			   : outfile_error(o->path, errno);
		return -1;
	}
	int fl = fcntl(o->fd, F_GETFL);
	if (nonblock && (fl < 0 || fcntl(o->fd, F_SETFL, fl & ~O_NONBLOCK) < 0)) {
		*err = outfile_error(o->path, errno);
		return -1;
	}
	return 0;
}

/* Gives the hidden file (o->fd) the owner, group and mode of the file it
 * will replace (o->was), or those of a new file. */
static int keep_owner(struct outfile *o, char **err)
{
	const struct stat *sb = &o->was;
	mode_t mode;
	if (o->existed) {
		struct stat t;
		if (fstat(o->fd, &t) < 0) {
			*err = outfile_error(o->path, errno);
			return -1;
		}
		/* the owner first: a change of owner clears the set-id bits */
		if ((t.st_uid != sb->st_uid || t.st_gid != sb->st_gid) &&
		    fchown(o->fd, sb->st_uid, sb->st_gid) < 0) {
			*err = xasprintf("cannot write '%s': its owner and group (%ld:%ld) cannot"
					 " be kept",
					 o->path, (long)sb->st_uid, (long)sb->st_gid);
			return -1;
		}
		mode = sb->st_mode & 07777;
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	if (fchmod(o->fd, mode) < 0) {
		*err = outfile_error(o->path, errno);
		return -1;
	}
	return 0;
}

/* Builds the hidden file beside o->target, a regular file (o->was) or
 * nothing. */
static int open_aside(struct outfile *o, char **err)
{
	if (o->existed && faccessat(AT_FDCWD, o->target, W_OK, AT_EACCESS) < 0) {
		*err = outfile_error(o->path, errno);
		return -1;
	}
	aside_sweep(o->target);
	o->fd = aside_create(o->target, &o->tmp);
	if (o->fd < 0) {
		*err = errno == EISDIR ? xasprintf("cannot write '%s': not a file name", o->path)
				       : outfile_error(o->path, errno);
		return -1;
	}
	if (!outfile_armed && strlen(o->tmp) < sizeof(outfile_tmp)) {
		memcpy(outfile_tmp, o->tmp, strlen(o->tmp) + 1);
		outfile_armed = o->armed = 1;
	}
	o->lock_fd = fcntl(o->fd, F_DUPFD_CLOEXEC, 0);
	if (o->lock_fd < 0) {
		*err = outfile_error(o->path, errno);
		return -1;
	}
	return keep_owner(o, err);
}

int outfile_open(struct outfile *o, const char *path, int flags, char **err)
{
	memset(o, 0, sizeof(*o));
	o->fd = o->lock_fd = -1;
	o->path = xstrdup(path);
	if (outfile_is_stdout(path, flags)) {
		o->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
		if (o->fd >= 0)
			return 0;
		*err = outfile_error(path, errno);
		goto fail;
	}
	struct stat sb;
	int there = lstat(path, &sb) == 0;
	int link = there && S_ISLNK(sb.st_mode);
	if ((!there && errno != ENOENT) || (link && stat(path, &sb) < 0)) {
		*err = link && errno == ENOENT
			   ? xasprintf("cannot write '%s': a symlink to nothing", path)
			   : outfile_error(path, errno);
		goto fail;
	}
	if (there && S_ISDIR(sb.st_mode)) {
		*err = outfile_error(path, EISDIR);
		goto fail;
	}
	if (there && !S_ISREG(sb.st_mode)) {
		if (open_through(o, (flags & OUTFILE_NONBLOCK) && S_ISFIFO(sb.st_mode), err) < 0)
			goto fail;
		return 0;
	}
	/* a symlink's final target is what is replaced, beside itself */
	o->target = link ? realpath(path, NULL) : xstrdup(path);
	if (!o->target) {
		*err = outfile_error(path, errno);
		goto fail;
	}
	o->existed = there;
	o->was = sb;
	if (open_aside(o, err) == 0)
		return 0;
fail:
	outfile_close(o, 0, NULL);
	return -1;
}

int outfile_write(const struct outfile *o, const void *p, size_t n, char **err)
{
	const char *s = p;
	while (n) {
		ssize_t w = write(o->fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			*err = w < 0 ? outfile_error(o->path, errno)
				     : xasprintf("cannot write '%s': nothing written", o->path);
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Whether the name of the file being replaced still names it, unchanged
 * (the ctime tells a new file that got a freed inode number), or still
 * nothing. */
static int target_unchanged(const struct outfile *o)
{
	struct stat now;
	if (lstat(o->target, &now) < 0)
		return !o->existed && errno == ENOENT;
	return o->existed && S_ISREG(now.st_mode) && now.st_dev == o->was.st_dev &&
	       now.st_ino == o->was.st_ino && now.st_ctim.tv_sec == o->was.st_ctim.tv_sec &&
	       now.st_ctim.tv_nsec == o->was.st_ctim.tv_nsec;
}

int outfile_close(struct outfile *o, int ok, char **err)
{
	int rc = ok ? 0 : -1;
	if (o->fd >= 0 && close(o->fd) < 0 && rc == 0) {
		*err = outfile_error(o->path, errno);
		rc = -1;
	}
	if (o->tmp) {
		if (rc == 0 && !target_unchanged(o)) {
			*err = xasprintf("cannot write '%s': another process changed it meanwhile",
					 o->path);
			rc = -1;
		}
		if (rc == 0 && rename(o->tmp, o->target) < 0) {
			*err = outfile_error(o->path, errno);
			rc = -1;
		}
		if (rc < 0)
			unlink(o->tmp);
	}
	if (o->armed)
		outfile_armed = 0;
	if (o->lock_fd >= 0)
		close(o->lock_fd);
	free(o->tmp);
	free(o->target);
	free(o->path);
	memset(o, 0, sizeof(*o));
	o->fd = o->lock_fd = -1;
	return rc;
}
