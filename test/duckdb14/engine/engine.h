// The C boundary of the DuckDB v1.4.4 sqllogictest engine (engine.cpp).
//
// Ownership: every slt_* object is created by C++ and freed by the matching
// slt_*_free / slt_close / slt_disconnect call. Strings returned through
// slt_error are malloc'ed and freed by slt_error_free; strings returned by
// slt_result_* are borrowed from the result and valid until slt_result_free.
// No function throws: C++ exceptions become slt_error.
#ifndef MORAINE_SLT_ENGINE_H
#define MORAINE_SLT_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct slt_db slt_db;
typedef struct slt_conn slt_conn;
typedef struct slt_result slt_result;

// An error: DuckDB's exception type name ("Catalog", "INTERNAL", ...) and
// its message (ErrorData::Message). Both NULL when there is no error.
typedef struct {
	char *type;
	char *message;
} slt_error;

void slt_error_free(slt_error *err);

// slt_open opens a database as DuckDB's sqllogictest runner configures one,
// then applies the n settings names[i] = values[i]. path NULL or "" is in
// memory. NULL on error.
slt_db *slt_open(const char *path, int read_only, int n, const char **names, const char **values, slt_error *err);
void slt_close(slt_db *db);

// slt_restart closes db (and main, which may be NULL) and opens the same
// path again with the database's current options, as DuckDB's runner
// restarts; *new_main gets a connection with main's session settings and
// search path (NULL when main is NULL). NULL on error (db is closed).
slt_db *slt_restart(slt_db *db, slt_conn *main, slt_conn **new_main, slt_error *err);

// slt_load_extension loads a built-in extension as DuckDB's runner does for
// require: 1 loaded, 0 not built into this binary, -1 error.
int slt_load_extension(slt_db *db, const char *name, slt_error *err);

slt_conn *slt_connect(slt_db *db, slt_error *err);
void slt_disconnect(slt_conn *conn);
// slt_interrupt interrupts the query running on conn; any thread may call it.
void slt_interrupt(slt_conn *conn);

// slt_query runs sql (every statement in it) and renders the result. NULL
// on error.
slt_result *slt_query(slt_conn *conn, const char *sql, slt_error *err);
int64_t slt_result_columns(slt_result *res);
int64_t slt_result_rows(slt_result *res);
const char *slt_result_name(slt_result *res, int64_t col, size_t *len);
const char *slt_result_type(slt_result *res, int64_t col, size_t *len);
const char *slt_result_value(slt_result *res, int64_t row, int64_t col, size_t *len);
void slt_result_free(slt_result *res);

// slt_values_equal is the numeric part of DuckDB's runner's CompareValues:
// both texts cast to the numeric type named type and compared with
// Value::ValuesAreEqual. 0 for other types and failed casts.
int slt_values_equal(slt_conn *conn, const char *type, const char *actual, const char *expected);

#ifdef __cplusplus
}
#endif

#endif
