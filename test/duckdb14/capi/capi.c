#include "capi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAPI_FUNCTIONS(X)                                                                                            \
	X(duckdb_library_version)                                                                                        \
	X(duckdb_create_config)                                                                                          \
	X(duckdb_set_config)                                                                                             \
	X(duckdb_destroy_config)                                                                                         \
	X(duckdb_open_ext)                                                                                               \
	X(duckdb_close)                                                                                                  \
	X(duckdb_connect)                                                                                                \
	X(duckdb_disconnect)                                                                                             \
	X(duckdb_interrupt)                                                                                              \
	X(duckdb_query)                                                                                                  \
	X(duckdb_destroy_result)                                                                                         \
	X(duckdb_result_error)                                                                                           \
	X(duckdb_column_count)                                                                                           \
	X(duckdb_row_count)                                                                                              \
	X(duckdb_column_name)                                                                                            \
	X(duckdb_column_type)                                                                                            \
	X(duckdb_value_is_null)                                                                                          \
	X(duckdb_value_boolean)                                                                                          \
	X(duckdb_value_int64)                                                                                            \
	X(duckdb_value_uint64)                                                                                           \
	X(duckdb_value_double)                                                                                           \
	X(duckdb_value_float)                                                                                            \
	X(duckdb_value_timestamp)                                                                                        \
	X(duckdb_value_date)                                                                                             \
	X(duckdb_value_string)                                                                                           \
	X(duckdb_value_blob)                                                                                             \
	X(duckdb_extract_statements)                                                                                     \
	X(duckdb_extract_statements_error)                                                                               \
	X(duckdb_prepare_extracted_statement)                                                                            \
	X(duckdb_destroy_extracted)                                                                                      \
	X(duckdb_prepare_error)                                                                                          \
	X(duckdb_prepared_statement_type)                                                                                \
	X(duckdb_prepared_statement_column_count)                                                                        \
	X(duckdb_prepared_statement_column_name)                                                                         \
	X(duckdb_prepared_statement_column_type)                                                                         \
	X(duckdb_execute_prepared)                                                                                       \
	X(duckdb_destroy_prepare)                                                                                        \
	X(duckdb_column_logical_type)                                                                                    \
	X(duckdb_decimal_width)                                                                                          \
	X(duckdb_decimal_scale)                                                                                          \
	X(duckdb_destroy_logical_type)                                                                                   \
	X(duckdb_free)

static struct {
#define CAPI_SLOT(name) __typeof__(&name) name;
	CAPI_FUNCTIONS(CAPI_SLOT)
#undef CAPI_SLOT
} api;

static char *copy(const char *s) {
	return strdup(s ? s : "(no message)");
}

int capi_load(const char *path, char **err) {
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		*err = copy(dlerror());
		return -1;
	}
#define CAPI_LOOKUP(name)                                                                                            \
	api.name = (__typeof__(&name))dlsym(lib, #name);                                                                 \
	if (!api.name) {                                                                                                 \
		*err = copy("libduckdb does not export " #name);                                                             \
		return -1;                                                                                                   \
	}
	CAPI_FUNCTIONS(CAPI_LOOKUP)
#undef CAPI_LOOKUP
	return 0;
}

const char *capi_version(void) {
	return api.duckdb_library_version();
}

duckdb_database *capi_open(const char *path, int n, const char **names, const char **values, char **err) {
	duckdb_config config;
	if (api.duckdb_create_config(&config) != DuckDBSuccess) {
		*err = copy("duckdb_create_config failed");
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		if (api.duckdb_set_config(config, names[i], values[i]) != DuckDBSuccess) {
			size_t size = strlen(names[i]) + strlen(values[i]) + 64;
			*err = malloc(size);
			snprintf(*err, size, "unknown setting or bad value: %s=%s", names[i], values[i]);
			api.duckdb_destroy_config(&config);
			return NULL;
		}
	}
	duckdb_database *db = calloc(1, sizeof(*db));
	char *open_err = NULL;
	if (api.duckdb_open_ext(path && *path ? path : NULL, db, config, &open_err) != DuckDBSuccess) {
		*err = copy(open_err);
		api.duckdb_free(open_err);
		api.duckdb_destroy_config(&config);
		free(db);
		return NULL;
	}
	api.duckdb_destroy_config(&config);
	return db;
}

void capi_close(duckdb_database *db) {
	api.duckdb_close(db);
	free(db);
}

duckdb_connection *capi_connect(duckdb_database *db, char **err) {
	duckdb_connection *conn = calloc(1, sizeof(*conn));
	if (api.duckdb_connect(*db, conn) != DuckDBSuccess) {
		*err = copy("duckdb_connect failed");
		free(conn);
		return NULL;
	}
	return conn;
}

void capi_disconnect(duckdb_connection *conn) {
	api.duckdb_disconnect(conn);
	free(conn);
}

void capi_interrupt(duckdb_connection *conn) {
	api.duckdb_interrupt(*conn);
}

duckdb_result *capi_query(duckdb_connection *conn, const char *sql, char **err) {
	duckdb_result *res = calloc(1, sizeof(*res));
	if (api.duckdb_query(*conn, sql, res) != DuckDBSuccess) {
		*err = copy(api.duckdb_result_error(res));
		api.duckdb_destroy_result(res);
		free(res);
		return NULL;
	}
	return res;
}

void capi_result_free(duckdb_result *res) {
	api.duckdb_destroy_result(res);
	free(res);
}

int64_t capi_columns(duckdb_result *res) {
	return (int64_t)api.duckdb_column_count(res);
}

int64_t capi_rows(duckdb_result *res) {
	return (int64_t)api.duckdb_row_count(res);
}

const char *capi_column_name(duckdb_result *res, int64_t col) {
	return api.duckdb_column_name(res, (idx_t)col);
}

int capi_column_type(duckdb_result *res, int64_t col) {
	return (int)api.duckdb_column_type(res, (idx_t)col);
}

// The value accessors: cgo cannot call through a function pointer, so each
// slot gets a C function of its own.
#define CAPI_VALUE(type, name, fn)                                                                                   \
	type capi_##name(duckdb_result *res, int64_t col, int64_t row) {                                                 \
		return api.fn(res, (idx_t)col, (idx_t)row);                                                                  \
	}
CAPI_VALUE(bool, is_null, duckdb_value_is_null)
CAPI_VALUE(bool, bool, duckdb_value_boolean)
CAPI_VALUE(int64_t, int64, duckdb_value_int64)
CAPI_VALUE(uint64_t, uint64, duckdb_value_uint64)
CAPI_VALUE(double, double, duckdb_value_double)
CAPI_VALUE(float, float, duckdb_value_float)
#undef CAPI_VALUE

int64_t capi_timestamp(duckdb_result *res, int64_t col, int64_t row) {
	return api.duckdb_value_timestamp(res, (idx_t)col, (idx_t)row).micros;
}

int32_t capi_date(duckdb_result *res, int64_t col, int64_t row) {
	return api.duckdb_value_date(res, (idx_t)col, (idx_t)row).days;
}

// take copies size bytes at data into malloc'ed memory (NUL-terminated,
// length in *len) and frees data with duckdb_free; NULL data gives NULL and
// *len -1.
static char *take(void *data, idx_t size, int64_t *len) {
	if (!data) {
		*len = -1;
		return NULL;
	}
	char *out = malloc(size + 1);
	memcpy(out, data, size);
	out[size] = '\0';
	*len = (int64_t)size;
	api.duckdb_free(data);
	return out;
}

char *capi_varchar(duckdb_result *res, int64_t col, int64_t row, int64_t *len) {
	duckdb_string s = api.duckdb_value_string(res, (idx_t)col, (idx_t)row);
	return take(s.data, s.size, len);
}

char *capi_blob(duckdb_result *res, int64_t col, int64_t row, int64_t *len) {
	duckdb_blob b = api.duckdb_value_blob(res, (idx_t)col, (idx_t)row);
	return take(b.data, b.size, len);
}

duckdb_extracted_statements *capi_extract(duckdb_connection *conn, const char *sql, int64_t *n, char **err) {
	duckdb_extracted_statements *ext = calloc(1, sizeof(*ext));
	*n = (int64_t)api.duckdb_extract_statements(*conn, sql, ext);
	if (*n == 0) {
		const char *msg = api.duckdb_extract_statements_error(*ext);
		*err = msg ? strdup(msg) : NULL; // NULL: no statement at all
		api.duckdb_destroy_extracted(ext);
		free(ext);
		return NULL;
	}
	return ext;
}

void capi_extracted_free(duckdb_extracted_statements *ext) {
	api.duckdb_destroy_extracted(ext);
	free(ext);
}

duckdb_prepared_statement *capi_prepare_extracted(duckdb_connection *conn, duckdb_extracted_statements *ext, int64_t i,
                                                  char **err) {
	duckdb_prepared_statement *p = calloc(1, sizeof(*p));
	if (api.duckdb_prepare_extracted_statement(*conn, *ext, (idx_t)i, p) != DuckDBSuccess) {
		*err = copy(api.duckdb_prepare_error(*p));
		api.duckdb_destroy_prepare(p);
		free(p);
		return NULL;
	}
	return p;
}

int capi_prepared_type(duckdb_prepared_statement *p) {
	return (int)api.duckdb_prepared_statement_type(*p);
}

void capi_prepared_free(duckdb_prepared_statement *p) {
	api.duckdb_destroy_prepare(p);
	free(p);
}

duckdb_result *capi_execute(duckdb_prepared_statement *p, char **err) {
	duckdb_result *res = calloc(1, sizeof(*res));
	if (api.duckdb_execute_prepared(*p, res) != DuckDBSuccess) {
		*err = copy(api.duckdb_result_error(res));
		api.duckdb_destroy_result(res);
		free(res);
		return NULL;
	}
	return res;
}

void capi_column_decimal(duckdb_result *res, int64_t col, int *width, int *scale) {
	duckdb_logical_type type = api.duckdb_column_logical_type(res, (idx_t)col);
	*width = api.duckdb_decimal_width(type);
	*scale = api.duckdb_decimal_scale(type);
	api.duckdb_destroy_logical_type(&type);
}

int64_t capi_prepared_columns(duckdb_prepared_statement *p) {
	return (int64_t)api.duckdb_prepared_statement_column_count(*p);
}

char *capi_prepared_column_name(duckdb_prepared_statement *p, int64_t col) {
	const char *name = api.duckdb_prepared_statement_column_name(*p, (idx_t)col);
	char *out = strdup(name ? name : "");
	api.duckdb_free((void *)name);
	return out;
}

int capi_prepared_column_type(duckdb_prepared_statement *p, int64_t col) {
	return (int)api.duckdb_prepared_statement_column_type(*p, (idx_t)col);
}
