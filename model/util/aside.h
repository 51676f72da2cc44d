/*
 * Files built aside: a hidden file beside a path, written whole and then
 * published over it (a new trace.db by model/store/store.c, an export or a
 * saved screen by model/util/outfile.c).  Each is named
 * ".<base>.grademl.XXXXXX", the marker saying that this tool made it, and
 * the process building it holds flock() on it for as long as it lives: a
 * sweep thus tells the files of dead processes (kill -9, a crash, a power
 * cut) from those of live ones, whatever file each was for.
 */
#ifndef GRADEML_ASIDE_H
#define GRADEML_ASIDE_H

/* Creates ".<base>.grademl.XXXXXX" beside path (mode 0600, close-on-exec),
 * flock()ed and still at its name: a sweep by another process may take it
 * between its creation and the lock, and then it is made again.  The fd,
 * and *tmp its name (the caller frees it); or -1 with errno. */
int aside_create(const char *path, char **tmp);

/* Removes from path's directory the hidden files that dead processes left:
 * of any base, named as aside_create names them, regular, owned by this
 * user, whose flock this process can take and on which no process holds a
 * POSIX lock (SQLite's, in a file an older version built).  Best effort:
 * whatever fails stays. */
void aside_sweep(const char *path);

#endif
