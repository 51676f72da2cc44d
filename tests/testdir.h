/*
 * A scratch directory for one test: made under TMPDIR (default /tmp) and
 * removed with everything in it, one level of subdirectories included.
 * Header-only so each test binary links just the library.
 */
#ifndef GRADEML_TESTDIR_H
#define GRADEML_TESTDIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Makes dir (a buffer of n bytes) "TMPDIR/grademl-test-TAG-XXXXXX"; 0 or -1. */
static inline int testdir_make(char *dir, size_t n, const char *tag)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, n, "%s/grademl-test-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
	return mkdtemp(dir) ? 0 : -1;
}

static inline void testdir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char p[512];
			snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
			struct stat sb;
			if (stat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
				rmdir(p);
			else
				unlink(p);
		}
		closedir(d);
	}
	rmdir(dir);
}

#endif
