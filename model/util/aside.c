/*
 * Hidden files beside a path, and the sweep of those that dead processes
 * left; see aside.h.  A file's name alone marks it as this tool's, so that
 * a sweep never takes another program's temporary file (rsync's are
 * ".<base>.XXXXXX" too); its flock alone says whether its process lives.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/util/aside.h"
#include "model/util/xalloc.h"

#define ASIDE_MARK  ".grademl."
#define ASIDE_TRIES 16 /* creations a racing sweep may undo before we give up */

static const char aside_alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/* Whether name is ".<base>" ASIDE_MARK "XXXXXX" as mkstemp fills it in,
 * base not empty. */
static int aside_is_name(const char *name)
{
	size_t n = strlen(name), m = strlen(ASIDE_MARK);
	if (name[0] != '.' || n < 2 + m + 6)
		return 0;
	const char *x = name + n - 6;
	return !memcmp(x - m, ASIDE_MARK, m) && strspn(x, aside_alnum) == 6;
}

int aside_create(const char *path, char **tmp)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (!*base) {
		errno = EISDIR;
		return -1;
	}
	for (int tries = 0; tries < ASIDE_TRIES; tries++) {
		char *name =
		    xasprintf("%.*s.%s" ASIDE_MARK "XXXXXX", (int)(base - path), path, base);
		int fd = mkostemp(name, O_CLOEXEC);
		if (fd < 0) {
			int e = errno;
			free(name);
			errno = e;
			return -1;
		}
		struct stat a, b;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && lstat(name, &a) == 0 &&
		    fstat(fd, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
			*tmp = name;
			return fd;
		}
		close(fd);
		free(name);
	}
	errno = EAGAIN;
	return -1;
}

void aside_sweep(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir =
	    slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	DIR *d = opendir(dir);
	free(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!aside_is_name(de->d_name))
			continue;
		int fd =
		    openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		struct stat a, b;
		struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
		if (fstat(fd, &a) == 0 && S_ISREG(a.st_mode) && a.st_uid == geteuid() &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0 && fcntl(fd, F_GETLK, &fl) == 0 &&
		    fl.l_type == F_UNLCK &&
		    fstatat(dirfd(d), de->d_name, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			unlinkat(dirfd(d), de->d_name, 0);
		close(fd);
	}
	closedir(d);
}
