/*
 * The key table; see keys.h.  Conventions come from htop, tig, ncdu and
 * less: vi and arrow keys move, Enter/l drill in, h/Backspace/Esc go up,
 * C-d/C-u half pages (vi, less); htop's function keys (F1 help, F3 search,
 * F4 filter, F6 sort, F10 quit).
 */
#include <stdio.h>
#include <string.h>

#include "model/util/text.h"
#include "tui/format.h"
#include "tui/keys.h"

#define T SCR_TREE
#define L SCR_TIMELINE
#define M SCR_METRICS
#define H SCR_HELP
#define I SCR_ISSUES
#define R SCR_RESULTS
#define F SCR_FLAME

const struct binding key_bindings[] = {
    {'j', T | L | M | H | I | R | F, A_DOWN},
    {K_DOWN, T | L | M | H | I | R | F, A_DOWN},
    {'k', T | L | M | H | I | R | F, A_UP},
    {K_UP, T | L | M | H | I | R | F, A_UP},
    {K_PGDN, T | M | H | I | R | F, A_PGDN},
    {' ', T | M | H | I | R | F, A_PGDN},
    {CTRL('f'), T | M | H | I | R | F, A_PGDN},
    {K_PGUP, T | M | H | I | R | F, A_PGUP},
    {CTRL('b'), T | M | H | I | R | F, A_PGUP},
    {CTRL('d'), T | M | H | I | R | F, A_HALF_DOWN},
    {CTRL('u'), T | M | H | I | R | F, A_HALF_UP},
    {'g', T | L | M | H | I | R | F, A_HOME},
    {K_HOME, T | L | M | H | I | R | F, A_HOME},
    {'G', T | L | M | H | I | R | F, A_END},
    {K_END, T | L | M | H | I | R | F, A_END},
    {K_ENTER, T | L | I | R | F, A_ENTER},
    {'l', T, A_ENTER},
    {K_RIGHT, T, A_ENTER},
    {'h', T | F, A_BACK},
    {K_LEFT, T, A_BACK},
    {K_BACKSPACE, T | L | F, A_BACK},
    {K_ESC, T, A_BACK},
    {'*', T | L, A_COSTLIEST},
    {'A', T, A_SORT_NAME},
    {'D', T, A_SORT_DUR},
    {'S', T, A_SORT_SELF},
    {'C', T, A_SORT_COUNT},
    {'T', T, A_SORT_START},
    {K_F6, T, A_SORT_PROMPT},
    {'h', R, A_COL_PREV},
    {K_LEFT, R, A_COL_PREV},
    {'l', R, A_COL_NEXT},
    {K_RIGHT, R, A_COL_NEXT},
    {'s', R, A_SORT_COL},
    {K_F6, R, A_SORT_COL},
    {'d', T, A_DETAILS},
    {'J', T, A_DETAILS_DOWN},
    {'K', T, A_DETAILS_UP},
    {'t', T, A_TIMELINE},
    {'m', T | L | I | R, A_METRICS},
    {'i', T | L | M | R, A_ISSUES},
    {'F', T, A_FLAME},
    {'+', L, A_ZOOM_IN},
    {'=', L, A_ZOOM_IN},
    {'-', L, A_ZOOM_OUT},
    {'h', L, A_PAN_LEFT},
    {K_LEFT, L, A_PAN_LEFT},
    {'l', L, A_PAN_RIGHT},
    {K_RIGHT, L, A_PAN_RIGHT},
    {'0', L | F, A_ZOOM_RESET},
    {'f', L, A_ZOOM_FIT},
    {'J', L, A_LANE_DOWN},
    {'K', L, A_LANE_UP},
    {'b', L, A_LANE_BUSY},
    {'v', L, A_RANGE_MARK},
    {'V', L, A_RANGE_WINDOW},
    {']', L, A_INTO},
    {'[', L, A_OUT},
    {K_LEFT, F, A_SIB_PREV},
    {K_RIGHT, F, A_SIB_NEXT},
    {'l', F, A_SIB_NEXT},
    {'d', F, A_FLAME_MODE},
    {'c', F | R, A_CALLERS},
    {'w', F | R, A_WHOLE_NAME},
    {'/', T | L | M | H | R, A_SEARCH},
    {K_F3, T | L | M | H | R, A_SEARCH},
    {'n', T | L | M | H | R, A_SEARCH_NEXT},
    {'N', T | L | M | H | R, A_SEARCH_PREV},
    {'\\', T | M | R, A_FILTER},
    {K_F4, T | M | R, A_FILTER},
    {':', SCR_ALL, A_PROMPT},
    {CTRL('l'), SCR_ALL, A_REDRAW},
    {'?', SCR_ALL, A_HELP},
    {K_F1, SCR_ALL, A_HELP},
    {'q', SCR_ALL, A_POP},
    {'t', L, A_POP},
    {K_ESC, L | M | H | I | R | F, A_POP},
    {'Q', SCR_ALL, A_QUIT},
    {K_F10, SCR_ALL, A_QUIT},
};
const size_t key_binding_count = sizeof(key_bindings) / sizeof(key_bindings[0]);

#define ACTION_HELP(name, help) [name] = help,
static const char *const action_help[A_COUNT] = {ACTION_LIST(ACTION_HELP)};
#undef ACTION_HELP

#define KEY_TEXT(name, text) [name - KEY_CODE_BASE] = text,
static const char *const key_text[K_LAST_ - KEY_CODE_BASE] = {NAMED_KEY_LIST(KEY_TEXT)};
#undef KEY_TEXT

enum action keys_lookup(int key, unsigned scr)
{
	for (size_t i = 0; i < key_binding_count; i++)
		if (key_bindings[i].key == key && (key_bindings[i].screens & scr))
			return key_bindings[i].action;
	return A_NONE;
}

const char *keys_action_help(enum action a)
{
	return a > A_NONE && a < A_COUNT ? action_help[a] : "";
}

const char *keys_name(int key, char *buf, size_t n)
{
	if (key >= KEY_CODE_BASE && key < K_LAST_)
		snprintf(buf, n, "%s", key_text[key - KEY_CODE_BASE]);
	else if (key == ' ')
		snprintf(buf, n, "Space");
	else if (key > 0 && key < 0x20)
		snprintf(buf, n, "C-%c", key + 'a' - 1);
	else if (key > 0 && key < KEY_CODE_BASE && n > 4) {
		size_t k = format_encode((uint32_t)key, buf);
		buf[k] = '\0';
	} else
		snprintf(buf, n, "?");
	return buf;
}

int keys_parse(const char *name)
{
	size_t len = strlen(name);
	for (int k = KEY_CODE_BASE; k < K_LAST_; k++)
		if (!strcmp(name, key_text[k - KEY_CODE_BASE]))
			return k;
	if (!strcmp(name, "Space"))
		return ' ';
	if (len == 3 && name[0] == 'C' && name[1] == '-' && name[2] >= 'a' && name[2] <= 'z')
		return CTRL(name[2]);
	if (len == 1 && (unsigned char)name[0] > 0x20 && (unsigned char)name[0] < 0x7f)
		return (unsigned char)name[0];
	size_t k = text_utf8_seq((const unsigned char *)name, len);
	if (k > 1 && k == len)
		return (int)format_decode((const unsigned char *)name, k);
	return -1;
}
