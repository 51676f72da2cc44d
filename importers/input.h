/*
 * A file opened for streaming import.  Compression is sniffed from the first
 * bytes (gzip, zstd, else plain) and undone on the fly, so an importer sees
 * one byte stream and memory stays constant whatever the file size.
 *
 * Offsets are of the decompressed stream: a decoding error "at decompressed
 * byte N" comes after the first N bytes decoded well.  Every failing call
 * fills *err with an owned, one-line message that starts with the file name.
 */
#ifndef GRADEML_INPUT_H
#define GRADEML_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct input;

enum input_codec { INPUT_PLAIN, INPUT_GZIP, INPUT_ZSTD };

/* Opens path and decodes the first bytes for input_peek.  A directory, an
 * unreadable or empty file is an error, and so is a compressed file whose
 * decoding fails before yielding a byte; a failure after some bytes is
 * reported by input_read once they are consumed. */
int input_open(const char *path, struct input **out, char **err);
void input_close(struct input *in);

/* A stream that is not a file (an HTTP response, importers/http.h): read
 * yields up to n bytes of it, 0 at its end, or -1 with *err.  name stands
 * for the path in messages; compressed content is undone as a file's.
 * The reader must outlive the input. */
typedef ssize_t (*input_reader)(void *arg, void *buf, size_t n, char **err);
int input_open_reader(const char *name, input_reader read, void *arg, struct input **out,
		      char **err);

/* The first decompressed bytes (up to INPUT_PEEK_MAX) without consuming
 * them: the window content sniffing reads.  64 KiB, so that a text log whose
 * records follow a long preamble (an MLPerf log's shell trace) is still
 * recognised. */
#define INPUT_PEEK_MAX (64 * 1024)
const unsigned char *input_peek(struct input *in, size_t *len);

/* Reads up to n decompressed bytes: the count, 0 at the end, -1 on error. */
ssize_t input_read(struct input *in, void *buf, size_t n, char **err);

const char *input_path(const struct input *in);
/* The part of path after its last '/' (the whole path when it has none). */
const char *input_base_name(const char *path);
enum input_codec input_codec(const struct input *in);
const char *input_codec_name(enum input_codec c);
uint64_t input_file_size(const struct input *in); /* bytes on disk; 0 for a reader's */

/* The line of byte `at` of path's decompressed text (1 and the line breaks
 * before it), read again from the start: for a message about a file whose
 * import has already read it, at no cost to reading it. */
int input_line_at(const char *path, uint64_t at, uint64_t *line, char **err);

#endif
