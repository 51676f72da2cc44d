/*
 * The diagnostics table of an importer.  An importer lists its repairs and
 * drops once, as DIAG_LIST(X) of X(CODE, "what it means"); DIAG_TABLE then
 * makes the enum D_CODE... D_COUNT and the array diag_info[D_COUNT] of
 * codes and messages that go to the diagnostics table.
 */
#ifndef GRADEML_DIAG_H
#define GRADEML_DIAG_H

struct diag_info {
	const char *code, *message;
};

#define DIAG_ENUM_(code, msg) D_##code,
#define DIAG_INFO_(code, msg) [D_##code] = {#code, msg},
#define DIAG_TABLE(list)                                                                           \
	enum diag_code { list(DIAG_ENUM_) D_COUNT };                                               \
	static const struct diag_info diag_info[D_COUNT] = {list(DIAG_INFO_)}

#endif
