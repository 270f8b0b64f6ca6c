// The C API of a DuckDB shared library (libduckdb.so) opened at run time
// with dlopen(RTLD_LOCAL), as Python, Node and Java open theirs: nothing of
// it enters the process's global scope, so an extension loaded into it must
// bring every DuckDB symbol it uses. Declarations come from duckdb.h of the
// same release; no DuckDB is linked.
//
// Ownership: capi_open's library is never closed. Strings capi_* returns
// through char ** are malloc'ed (free them); results are freed by
// capi_result_free.
#ifndef MORAINE_CAPI_H
#define MORAINE_CAPI_H

#include <stdbool.h>
#include <stdint.h>

#include "duckdb.h"

// capi_load opens the library at path and looks up every function below;
// 0 on success, else -1 with *err set.
int capi_load(const char *path, char **err);
// capi_version is duckdb_library_version of the loaded library.
const char *capi_version(void);

// capi_open opens a database (path NULL or "" in memory) with the n
// settings names[i] = values[i]; NULL with *err set on failure.
duckdb_database *capi_open(const char *path, int n, const char **names, const char **values, char **err);
void capi_close(duckdb_database *db);
duckdb_connection *capi_connect(duckdb_database *db, char **err);
void capi_disconnect(duckdb_connection *conn);
void capi_interrupt(duckdb_connection *conn);

// capi_query runs sql; NULL with *err set (DuckDB's message) on failure.
duckdb_result *capi_query(duckdb_connection *conn, const char *sql, char **err);
void capi_result_free(duckdb_result *res);
int64_t capi_columns(duckdb_result *res);
int64_t capi_rows(duckdb_result *res);
const char *capi_column_name(duckdb_result *res, int64_t col);
int capi_column_type(duckdb_result *res, int64_t col);
bool capi_is_null(duckdb_result *res, int64_t col, int64_t row);
bool capi_bool(duckdb_result *res, int64_t col, int64_t row);
int64_t capi_int64(duckdb_result *res, int64_t col, int64_t row);
uint64_t capi_uint64(duckdb_result *res, int64_t col, int64_t row);
double capi_double(duckdb_result *res, int64_t col, int64_t row);
float capi_float(duckdb_result *res, int64_t col, int64_t row);
int64_t capi_timestamp(duckdb_result *res, int64_t col, int64_t row);
int32_t capi_date(duckdb_result *res, int64_t col, int64_t row);
// capi_varchar is the value cast to VARCHAR by DuckDB (malloc'ed, length in
// *len); capi_blob the bytes of a BLOB.
char *capi_varchar(duckdb_result *res, int64_t col, int64_t row, int64_t *len);
char *capi_blob(duckdb_result *res, int64_t col, int64_t row, int64_t *len);

// Statements one by one, as a sqllogictest runner needs them:
// capi_extract splits sql (NULL with *n 0 and *err the parser's message,
// or *err NULL for no statement); capi_prepare_extracted prepares the i-th;
// capi_execute runs a prepared statement. NULL with *err on failure.
duckdb_extracted_statements *capi_extract(duckdb_connection *conn, const char *sql, int64_t *n, char **err);
void capi_extracted_free(duckdb_extracted_statements *ext);
duckdb_prepared_statement *capi_prepare_extracted(duckdb_connection *conn, duckdb_extracted_statements *ext, int64_t i,
                                                  char **err);
// capi_prepared_type is the statement's duckdb_statement_type.
int capi_prepared_type(duckdb_prepared_statement *p);
void capi_prepared_free(duckdb_prepared_statement *p);
duckdb_result *capi_execute(duckdb_prepared_statement *p, char **err);
// The prepared statement's result columns: count, name (malloc'ed), type.
int64_t capi_prepared_columns(duckdb_prepared_statement *p);
char *capi_prepared_column_name(duckdb_prepared_statement *p, int64_t col);
int capi_prepared_column_type(duckdb_prepared_statement *p, int64_t col);
// capi_column_decimal gives a DECIMAL column's width and scale.
void capi_column_decimal(duckdb_result *res, int64_t col, int *width, int *scale);

#endif
