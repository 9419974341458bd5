#pragma once
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro that casts -1 to a function pointer; Swift cannot import casts.
static inline sqlite3_destructor_type csqlite3_transient(void) { return SQLITE_TRANSIENT; }
