/*
 * Unit tests for model/util/outfile.h and aside.h: a regular file built
 * aside and renamed over the one there (its mode kept) or over nothing,
 * left as it was on failure and when another process put a file at its
 * name meanwhile; a symlink's target written, a symlink to nothing, a
 * directory and a FIFO without a reader refused in one line; a signal's
 * removal of the hidden file; and the sweep of the hidden files of dead
 * processes beside any name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/util/aside.h"
#include "model/util/outfile.h"
#include "tests/testdir.h"
#include "model/util/xalloc.h"

struct fx {
	char dir[256];
	char path[320];
};

static int fx_setup(void **state)
{
	struct fx *f = xcalloc(1, sizeof(*f));
	if (testdir_make(f->dir, sizeof(f->dir), "outfile") < 0) {
		free(f);
		return -1;
	}
	snprintf(f->path, sizeof(f->path), "%s/out.txt", f->dir);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	testdir_remove(f->dir);
	free(f);
	return 0;
}

static void spit(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	assert_int_equal(close(fd), 0);
}

/* The file's text (up to 255 bytes), "" when unreadable. */
static const char *slurp(const char *path)
{
	static char buf[256];
	buf[0] = '\0';
	FILE *fp = fopen(path, "r");
	if (fp) {
		buf[fread(buf, 1, sizeof(buf) - 1, fp)] = '\0';
		fclose(fp);
	}
	return buf;
}

/* Entries of dir other than . and .., and the one named keep. */
static int count_others(const char *dir, const char *keep)
{
	DIR *d = opendir(dir);
	assert_non_null(d);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, keep);
	closedir(d);
	return n;
}

/* Writes text to path through an outfile; 0, or -1 with *err. */
static int write_all(const char *path, const char *text, int flags, char **err)
{
	struct outfile o;
	if (outfile_open(&o, path, flags, err) < 0)
		return -1;
	int ok = outfile_write(&o, text, strlen(text), err) == 0;
	return outfile_close(&o, ok, err);
}

/* Over nothing, then over a 0640 file: the text, the mode kept, the file
 * a new one (renamed), nothing else left. */
static void test_outfile_regular(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	assert_int_equal(write_all(f->path, "one\n", 0, &err), 0);
	assert_string_equal(slurp(f->path), "one\n");
	assert_true(chmod(f->path, 0640) == 0);
	struct stat a, b;
	assert_int_equal(stat(f->path, &a), 0);
	assert_int_equal(write_all(f->path, "two\n", 0, &err), 0);
	assert_int_equal(stat(f->path, &b), 0);
	assert_string_equal(slurp(f->path), "two\n");
	assert_int_equal(b.st_mode & 07777, 0640);
	assert_true(a.st_ino != b.st_ino);
	assert_int_equal(count_others(f->dir, "out.txt"), 0);
}

/* ok = 0 leaves the file as it was and no hidden file. */
static void test_outfile_failure_leaves_it(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	spit(f->path, "before\n");
	struct outfile o;
	assert_int_equal(outfile_open(&o, f->path, 0, &err), 0);
	assert_non_null(o.tmp);
	assert_int_equal(outfile_write(&o, "half", 4, &err), 0);
	assert_int_equal(outfile_close(&o, 0, NULL), -1);
	assert_string_equal(slurp(f->path), "before\n");
	assert_int_equal(count_others(f->dir, "out.txt"), 0);
}

/* A file another process put at the name while the text was written (over
 * the one there, or where there was none) is left alone: an error. */
static void test_outfile_changed_meanwhile(void **state)
{
	struct fx *f = *state;
	for (int existed = 0; existed < 2; existed++) {
		char *err = NULL;
		unlink(f->path);
		if (existed)
			spit(f->path, "before\n");
		struct outfile o;
		assert_int_equal(outfile_open(&o, f->path, 0, &err), 0);
		assert_int_equal(outfile_write(&o, "mine\n", 5, &err), 0);
		unlink(f->path);
		spit(f->path, "theirs\n");
		assert_int_equal(outfile_close(&o, 1, &err), -1);
		assert_non_null(err);
		assert_non_null(strstr(err, "another process changed it meanwhile"));
		free(err);
		assert_string_equal(slurp(f->path), "theirs\n");
		assert_int_equal(count_others(f->dir, "out.txt"), 0);
	}
}

/* A symlink to a symlink: the final target written, both links stay. */
static void test_outfile_symlink(void **state)
{
	struct fx *f = *state;
	char *err = NULL, target[400], l1[400], l2[400];
	snprintf(target, sizeof(target), "%s/target.txt", f->dir);
	snprintf(l1, sizeof(l1), "%s/l1", f->dir);
	snprintf(l2, sizeof(l2), "%s/l2", f->dir);
	spit(target, "old\n");
	assert_int_equal(symlink("target.txt", l1), 0);
	assert_int_equal(symlink("l1", l2), 0);
	assert_int_equal(write_all(l2, "new\n", 0, &err), 0);
	struct stat sb;
	assert_int_equal(lstat(l1, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	assert_int_equal(lstat(l2, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	assert_string_equal(slurp(target), "new\n");
}

/* The refusals: one line each naming the path, nothing created. */
static void test_outfile_refusals(void **state)
{
	struct fx *f = *state;
	char dangling[400], fifo[400], want[600];
	snprintf(dangling, sizeof(dangling), "%s/dangling", f->dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", f->dir);
	assert_int_equal(symlink("nowhere", dangling), 0);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	const struct {
		const char *path, *why;
		int flags;
	} cases[] = {
	    {dangling, "a symlink to nothing", 0},
	    {f->dir, "is a directory", 0},
	    {fifo, "nothing reads the FIFO", OUTFILE_NONBLOCK},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *err = NULL;
		assert_int_equal(write_all(cases[i].path, "x", cases[i].flags, &err), -1);
		snprintf(want, sizeof(want), "cannot write '%s': %s", cases[i].path, cases[i].why);
		assert_non_null(err);
		assert_string_equal(err, want);
		free(err);
	}
	assert_int_equal(count_others(f->dir, "dangling"), 1); /* the FIFO */
}

/* A signal handler's outfile_interrupt removes the hidden file at once. */
static void test_outfile_interrupt(void **state)
{
	struct fx *f = *state;
	char *err = NULL;
	struct outfile o;
	assert_int_equal(outfile_open(&o, f->path, 0, &err), 0);
	char *tmp = xstrdup(o.tmp);
	assert_int_equal(access(tmp, F_OK), 0);
	outfile_interrupt();
	assert_int_equal(access(tmp, F_OK), -1);
	assert_int_equal(outfile_close(&o, 0, NULL), -1);
	assert_int_equal(count_others(f->dir, ""), 0);
	free(tmp);
}

/* The sweep beside any name: a dead process's hidden file goes (an empty
 * one too), a locked one and names without the marker stay. */
static void test_aside_sweep(void **state)
{
	struct fx *f = *state;
	static const char *const names[] = {".a.json.grademl.dEaD01", ".b.db.grademl.dEaD02",
					    ".c.txt.grademl.LiVe01", ".d.json.AbCd12",
					    "e.grademl.dEaD03"};
	enum { N = sizeof(names) / sizeof(*names) };
	char p[N][400];
	for (int i = 0; i < N; i++) {
		snprintf(p[i], sizeof(p[i]), "%s/%s", f->dir, names[i]);
		spit(p[i], i == 1 ? "" : "x");
	}
	int live = open(p[2], O_RDONLY);
	assert_true(live >= 0);
	assert_int_equal(flock(live, LOCK_EX), 0);
	aside_sweep(f->path);
	for (int i = 0; i < N; i++)
		if ((access(p[i], F_OK) == 0) != (i >= 2))
			fail_msg("%s was %s", names[i], i >= 2 ? "removed" : "left");
	close(live);
	/* and a file made by aside_create is locked: it survives a sweep */
	char *tmp = NULL;
	int fd = aside_create(f->path, &tmp);
	assert_true(fd >= 0);
	assert_non_null(strstr(tmp, "/.out.txt.grademl."));
	aside_sweep(f->path);
	assert_int_equal(access(tmp, F_OK), 0);
	close(fd);
	aside_sweep(f->path);
	assert_int_equal(access(tmp, F_OK), -1);
	free(tmp);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
	const struct CMUnitTest tests[] = {
	    T(test_outfile_regular),
	    T(test_outfile_failure_leaves_it),
	    T(test_outfile_changed_meanwhile),
	    T(test_outfile_symlink),
	    T(test_outfile_refusals),
	    T(test_outfile_interrupt),
	    T(test_aside_sweep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
