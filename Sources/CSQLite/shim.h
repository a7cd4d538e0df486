#ifndef ROOST_CSQLITE_SHIM_H
#define ROOST_CSQLITE_SHIM_H

#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type roost_sqlite_transient(void) { return SQLITE_TRANSIENT; }

// sqlite3_config is variadic; Swift cannot call it directly.
static inline int roost_sqlite_config_multithread(void) {
    return sqlite3_config(SQLITE_CONFIG_MULTITHREAD);
}

// Extended result codes are macros built from expressions, which Swift does not import.
static inline int roost_sqlite_constraint_unique(void) { return SQLITE_CONSTRAINT_UNIQUE; }
static inline int roost_sqlite_constraint_primarykey(void) { return SQLITE_CONSTRAINT_PRIMARYKEY; }

#endif
