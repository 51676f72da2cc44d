/*
 * The temporary-file cap of query connections; see tempcap.h.  A shim over
 * the default VFS: temporary files (SQLITE_OPEN_TEMP_*, TRANSIENT_DB,
 * SUBJOURNAL) are wrapped to count the bytes they hold; every other file,
 * and every other call, goes to the default VFS unchanged.
 */
#include <pthread.h>
#include <sqlite3.h>
#include <string.h>

#include "query/tempcap.h"

#define TEMP_FILES                                                                                 \
	(SQLITE_OPEN_TEMP_DB | SQLITE_OPEN_TEMP_JOURNAL | SQLITE_OPEN_TRANSIENT_DB |               \
	 SQLITE_OPEN_SUBJOURNAL)

/* A temporary file: the default VFS's file follows it in the same block. */
struct capfile {
	sqlite3_file base;
	sqlite3_file *real;
	sqlite3_int64 size; /* bytes counted for it: its furthest write */
};

static sqlite3_vfs *real_vfs;
static sqlite3_vfs cap_vfs;
/* what the files hold together, the cap (0: none), whether a write hit it */
static int64_t used, cap;
static int hit;

static int grow(struct capfile *f, sqlite3_int64 end)
{
	if (end <= f->size)
		return SQLITE_OK;
	int64_t more = end - f->size, limit = __atomic_load_n(&cap, __ATOMIC_RELAXED);
	if (__atomic_add_fetch(&used, more, __ATOMIC_RELAXED) > limit && limit > 0) {
		__atomic_sub_fetch(&used, more, __ATOMIC_RELAXED);
		__atomic_store_n(&hit, 1, __ATOMIC_RELAXED);
		return SQLITE_FULL;
	}
	f->size = end;
	return SQLITE_OK;
}

static int cap_close(sqlite3_file *file)
{
	struct capfile *f = (struct capfile *)file;
	__atomic_sub_fetch(&used, f->size, __ATOMIC_RELAXED);
	f->size = 0;
	return f->real->pMethods->xClose(f->real);
}

static int cap_read(sqlite3_file *file, void *buf, int n, sqlite3_int64 off)
{
	struct capfile *f = (struct capfile *)file;
	return f->real->pMethods->xRead(f->real, buf, n, off);
}

static int cap_write(sqlite3_file *file, const void *buf, int n, sqlite3_int64 off)
{
	struct capfile *f = (struct capfile *)file;
	int rc = grow(f, off + n);
	return rc != SQLITE_OK ? rc : f->real->pMethods->xWrite(f->real, buf, n, off);
}

static int cap_truncate(sqlite3_file *file, sqlite3_int64 size)
{
	struct capfile *f = (struct capfile *)file;
	if (size < f->size) {
		__atomic_sub_fetch(&used, f->size - size, __ATOMIC_RELAXED);
		f->size = size;
	}
	return f->real->pMethods->xTruncate(f->real, size);
}

static int cap_sync(sqlite3_file *file, int flags)
{
	struct capfile *f = (struct capfile *)file;
	return f->real->pMethods->xSync(f->real, flags);
}

static int cap_file_size(sqlite3_file *file, sqlite3_int64 *size)
{
	struct capfile *f = (struct capfile *)file;
	return f->real->pMethods->xFileSize(f->real, size);
}

static int cap_lock(sqlite3_file *file, int lock)
{
	struct capfile *f = (struct capfile *)file;
	return f->real->pMethods->xLock(f->real, lock);
}

static int cap_unlock(sqlite3_file *file, int lock)
{
	struct capfile *f = (struct capfile *)file;
	return f->real->pMethods->xUnlock(f->real, lock);
}

static int cap_check_reserved(sqlite3_file *file, int *out)
{
	struct capfile *f = (struct capfile *)file;
	return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int cap_file_control(sqlite3_file *file, int op, void *arg)
{
	struct capfile *f = (struct capfile *)file;
	return f->real->pMethods->xFileControl(f->real, op, arg);
}

static int cap_sector_size(sqlite3_file *file)
{
	struct capfile *f = (struct capfile *)file;
	return f->real->pMethods->xSectorSize(f->real);
}

static int cap_device(sqlite3_file *file)
{
	struct capfile *f = (struct capfile *)file;
	return f->real->pMethods->xDeviceCharacteristics(f->real);
}

/* Version 1: temporary files need neither shared memory nor mmap (the
 * sorter reads its runs instead of mapping them). */
static const sqlite3_io_methods cap_methods = {1,
					       cap_close,
					       cap_read,
					       cap_write,
					       cap_truncate,
					       cap_sync,
					       cap_file_size,
					       cap_lock,
					       cap_unlock,
					       cap_check_reserved,
					       cap_file_control,
					       cap_sector_size,
					       cap_device,
					       NULL,
					       NULL,
					       NULL,
					       NULL,
					       NULL,
					       NULL};

static int cap_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out)
{
	(void)vfs;
	if (!(flags & TEMP_FILES))
		return real_vfs->xOpen(real_vfs, name, file, flags, out);
	struct capfile *f = (struct capfile *)file;
	memset(f, 0, sizeof(*f));
	f->real = (sqlite3_file *)(f + 1);
	memset(f->real, 0, (size_t)real_vfs->szOsFile);
	int rc = real_vfs->xOpen(real_vfs, name, f->real, flags, out);
	if (rc != SQLITE_OK) {
		if (f->real->pMethods)
			f->real->pMethods->xClose(f->real);
		return rc; /* base.pMethods NULL: SQLite closes nothing */
	}
	f->base.pMethods = &cap_methods;
	return SQLITE_OK;
}

/* The rest of the VFS: the default's, called with the default's object. */
static int cap_delete(sqlite3_vfs *v, const char *name, int sync)
{
	(void)v;
	return real_vfs->xDelete(real_vfs, name, sync);
}

static int cap_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
	(void)v;
	return real_vfs->xAccess(real_vfs, name, flags, out);
}

static int cap_full_pathname(sqlite3_vfs *v, const char *name, int n, char *out)
{
	(void)v;
	return real_vfs->xFullPathname(real_vfs, name, n, out);
}

static void *cap_dlopen(sqlite3_vfs *v, const char *name)
{
	(void)v;
	return real_vfs->xDlOpen(real_vfs, name);
}

static void cap_dlerror(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	real_vfs->xDlError(real_vfs, n, out);
}

static void (*cap_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
	(void)v;
	return real_vfs->xDlSym(real_vfs, h, sym);
}

static void cap_dlclose(sqlite3_vfs *v, void *h)
{
	(void)v;
	real_vfs->xDlClose(real_vfs, h);
}

static int cap_randomness(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return real_vfs->xRandomness(real_vfs, n, out);
}

static int cap_sleep(sqlite3_vfs *v, int us)
{
	(void)v;
	return real_vfs->xSleep(real_vfs, us);
}

static int cap_current_time(sqlite3_vfs *v, double *out)
{
	(void)v;
	return real_vfs->xCurrentTime(real_vfs, out);
}

static int cap_last_error(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return real_vfs->xGetLastError ? real_vfs->xGetLastError(real_vfs, n, out) : 0;
}

static int cap_current_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	(void)v;
	if (real_vfs->iVersion >= 2 && real_vfs->xCurrentTimeInt64)
		return real_vfs->xCurrentTimeInt64(real_vfs, out);
	double d;
	int rc = real_vfs->xCurrentTime(real_vfs, &d);
	*out = (sqlite3_int64)(d * 86400000.0);
	return rc;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int registered;

static void register_vfs(void)
{
	real_vfs = sqlite3_vfs_find(NULL);
	if (!real_vfs)
		return;
	cap_vfs = (sqlite3_vfs){
	    .iVersion = 2,
	    .szOsFile = (int)sizeof(struct capfile) + real_vfs->szOsFile,
	    .mxPathname = real_vfs->mxPathname,
	    .zName = "grademl-tempcap",
	    .xOpen = cap_open,
	    .xDelete = cap_delete,
	    .xAccess = cap_access,
	    .xFullPathname = cap_full_pathname,
	    .xDlOpen = cap_dlopen,
	    .xDlError = cap_dlerror,
	    .xDlSym = cap_dlsym,
	    .xDlClose = cap_dlclose,
	    .xRandomness = cap_randomness,
	    .xSleep = cap_sleep,
	    .xCurrentTime = cap_current_time,
	    .xGetLastError = cap_last_error,
	    .xCurrentTimeInt64 = cap_current_time64,
	};
	registered = sqlite3_vfs_register(&cap_vfs, 0) == SQLITE_OK;
}

const char *tempcap_vfs(void)
{
	pthread_once(&once, register_vfs);
	return registered ? cap_vfs.zName : NULL;
}

int64_t tempcap_set(int64_t bytes)
{
	__atomic_store_n(&hit, 0, __ATOMIC_RELAXED);
	return __atomic_exchange_n(&cap, bytes > 0 ? bytes : 0, __ATOMIC_RELAXED);
}

int tempcap_hit(void)
{
	return __atomic_load_n(&hit, __ATOMIC_RELAXED);
}
