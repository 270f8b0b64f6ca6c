/*
 * moraine_extension.c: the C side of moraine.duckdb_extension.
 *
 * DuckDB calls moraine_init_c_api when it loads the extension into a
 * database. The entry point copies the C API slots this file uses out of
 * the table get_api returns (the table is only valid during the call), and
 * registers every table function the Go library lists (moraine_functions in
 * moraine.h) with generic callbacks:
 *
 *   bind      converts the call's arguments (duckdb_value) to moraine_values,
 *             calls moraine_bind, declares the result columns it reports
 *   init      calls moraine_execute (the function's work happens here, once
 *             per execution, never at bind: DuckDB 2.0 binds twice)
 *   function  copies the result table into DuckDB's output vectors
 *
 * Errors go through DuckDB's error channel (duckdb_bind_set_error,
 * duckdb_init_set_error) with the library's message. Each database gets its
 * own moraine_instance (its lakes); every registered function holds a
 * reference as its extra info, and DuckDB drops them when it destroys the
 * database, which detaches the lakes.
 *
 * This file knows no single function and no catalog logic. It keeps no
 * duckdb_database and no connection beyond the entry point, and calls DuckDB
 * only through the copied slots (no direct duckdb_* calls: the extension
 * must not depend on the host exporting DuckDB's symbols).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duckdb_capi.h"
#include "moraine.h"

/* The C API version requested: the oldest whose slots this file uses. */
#define MORAINE_CAPI_VERSION "v1.2.0"

/* The slots used, all within the v1.2.0 surface (slots 0-276, identical on
 * DuckDB 1.2.2 to 2.0.0). */
#define MORAINE_SLOTS(X)                                                                                               \
	X(duckdb_connect)                                                                                                  \
	X(duckdb_disconnect)                                                                                               \
	X(duckdb_free)                                                                                                     \
	X(duckdb_vector_size)                                                                                              \
	X(duckdb_create_logical_type)                                                                                      \
	X(duckdb_destroy_logical_type)                                                                                     \
	X(duckdb_get_type_id)                                                                                              \
	X(duckdb_struct_type_child_count)                                                                                  \
	X(duckdb_struct_type_child_name)                                                                                   \
	X(duckdb_destroy_value)                                                                                            \
	X(duckdb_get_value_type)                                                                                           \
	X(duckdb_is_null_value)                                                                                            \
	X(duckdb_get_bool)                                                                                                 \
	X(duckdb_get_int8)                                                                                                 \
	X(duckdb_get_int16)                                                                                                \
	X(duckdb_get_int32)                                                                                                \
	X(duckdb_get_int64)                                                                                                \
	X(duckdb_get_uint8)                                                                                                \
	X(duckdb_get_uint16)                                                                                               \
	X(duckdb_get_uint32)                                                                                               \
	X(duckdb_get_uint64)                                                                                               \
	X(duckdb_get_float)                                                                                                \
	X(duckdb_get_double)                                                                                               \
	X(duckdb_get_varchar)                                                                                              \
	X(duckdb_get_blob)                                                                                                 \
	X(duckdb_get_list_size)                                                                                            \
	X(duckdb_get_list_child)                                                                                           \
	X(duckdb_get_struct_child)                                                                                         \
	X(duckdb_create_table_function)                                                                                    \
	X(duckdb_destroy_table_function)                                                                                   \
	X(duckdb_table_function_set_name)                                                                                  \
	X(duckdb_table_function_add_parameter)                                                                             \
	X(duckdb_table_function_add_named_parameter)                                                                       \
	X(duckdb_table_function_set_extra_info)                                                                            \
	X(duckdb_table_function_set_bind)                                                                                  \
	X(duckdb_table_function_set_init)                                                                                  \
	X(duckdb_table_function_set_function)                                                                              \
	X(duckdb_register_table_function)                                                                                  \
	X(duckdb_bind_get_extra_info)                                                                                      \
	X(duckdb_bind_get_parameter_count)                                                                                 \
	X(duckdb_bind_get_parameter)                                                                                       \
	X(duckdb_bind_get_named_parameter)                                                                                 \
	X(duckdb_bind_add_result_column)                                                                                   \
	X(duckdb_bind_set_bind_data)                                                                                       \
	X(duckdb_bind_set_error)                                                                                           \
	X(duckdb_init_get_bind_data)                                                                                       \
	X(duckdb_init_set_init_data)                                                                                       \
	X(duckdb_init_set_error)                                                                                           \
	X(duckdb_function_get_init_data)                                                                                   \
	X(duckdb_function_set_error)                                                                                       \
	X(duckdb_data_chunk_get_vector)                                                                                    \
	X(duckdb_data_chunk_set_size)                                                                                      \
	X(duckdb_vector_get_data)                                                                                          \
	X(duckdb_vector_get_validity)                                                                                      \
	X(duckdb_vector_ensure_validity_writable)                                                                          \
	X(duckdb_validity_set_row_invalid)                                                                                 \
	X(duckdb_vector_assign_string_element_len)

/* The copied slots. Only the members listed above are set. */
static duckdb_ext_api_v1 api;

/* ---- values: duckdb_value -> moraine_value --------------------------------
 * A pool owns every allocation made while converting one call's arguments;
 * it is released after moraine_bind returns (the library copies what it
 * keeps). */

typedef struct pool {
	void **ptrs;
	unsigned char *duck; /* 1: release with duckdb_free, 0: with free */
	size_t n, cap;
	int failed;
} pool;

static void pool_add(pool *p, void *ptr, int duck) {
	if (ptr == NULL) {
		return;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		void **ptrs = realloc(p->ptrs, cap * sizeof(void *));
		unsigned char *d = ptrs ? realloc(p->duck, cap) : NULL;
		if (ptrs == NULL || d == NULL) {
			if (ptrs) {
				p->ptrs = ptrs;
			}
			p->failed = 1;
			if (duck) {
				api.duckdb_free(ptr);
			} else {
				free(ptr);
			}
			return;
		}
		p->ptrs = ptrs;
		p->duck = d;
		p->cap = cap;
	}
	p->ptrs[p->n] = ptr;
	p->duck[p->n] = (unsigned char)duck;
	p->n++;
}

static void *pool_calloc(pool *p, size_t n, size_t size) {
	void *ptr = calloc(n ? n : 1, size);
	if (ptr == NULL) {
		p->failed = 1;
		return NULL;
	}
	pool_add(p, ptr, 0);
	return ptr;
}

static void pool_free(pool *p) {
	for (size_t i = 0; i < p->n; i++) {
		if (p->duck[i]) {
			api.duckdb_free(p->ptrs[i]);
		} else {
			free(p->ptrs[i]);
		}
	}
	free(p->ptrs);
	free(p->duck);
	memset(p, 0, sizeof(*p));
}

/* text sets a value's str/len from a duckdb_free-owned string. */
static void set_text(pool *p, moraine_value *out, char *s) {
	if (s == NULL) {
		out->str = "";
		out->len = 0;
		return;
	}
	pool_add(p, s, 1);
	out->str = s;
	out->len = strlen(s);
}

static void convert(pool *p, duckdb_value v, moraine_value *out, int depth) {
	memset(out, 0, sizeof(*out));
	if (v == NULL || api.duckdb_is_null_value(v)) {
		out->type = MORAINE_TYPE_NULL;
		return;
	}
	duckdb_logical_type lt = api.duckdb_get_value_type(v); /* owned by v */
	duckdb_type t = api.duckdb_get_type_id(lt);
	out->duckdb_type = (int32_t)t;
	switch (t) {
	case DUCKDB_TYPE_SQLNULL:
		out->type = MORAINE_TYPE_NULL;
		return;
	case DUCKDB_TYPE_BOOLEAN:
		out->type = MORAINE_TYPE_BOOLEAN;
		out->boolean = api.duckdb_get_bool(v);
		return;
	case DUCKDB_TYPE_TINYINT:
		out->type = MORAINE_TYPE_BIGINT;
		out->bigint = api.duckdb_get_int8(v);
		return;
	case DUCKDB_TYPE_SMALLINT:
		out->type = MORAINE_TYPE_BIGINT;
		out->bigint = api.duckdb_get_int16(v);
		return;
	case DUCKDB_TYPE_INTEGER:
		out->type = MORAINE_TYPE_BIGINT;
		out->bigint = api.duckdb_get_int32(v);
		return;
	case DUCKDB_TYPE_BIGINT:
		out->type = MORAINE_TYPE_BIGINT;
		out->bigint = api.duckdb_get_int64(v);
		return;
	case DUCKDB_TYPE_UTINYINT:
		out->type = MORAINE_TYPE_UBIGINT;
		out->ubigint = api.duckdb_get_uint8(v);
		return;
	case DUCKDB_TYPE_USMALLINT:
		out->type = MORAINE_TYPE_UBIGINT;
		out->ubigint = api.duckdb_get_uint16(v);
		return;
	case DUCKDB_TYPE_UINTEGER:
		out->type = MORAINE_TYPE_UBIGINT;
		out->ubigint = api.duckdb_get_uint32(v);
		return;
	case DUCKDB_TYPE_UBIGINT:
		out->type = MORAINE_TYPE_UBIGINT;
		out->ubigint = api.duckdb_get_uint64(v);
		return;
	case DUCKDB_TYPE_FLOAT:
		out->type = MORAINE_TYPE_DOUBLE;
		out->dbl = api.duckdb_get_float(v);
		return;
	case DUCKDB_TYPE_DOUBLE:
		out->type = MORAINE_TYPE_DOUBLE;
		out->dbl = api.duckdb_get_double(v);
		return;
	case DUCKDB_TYPE_VARCHAR:
		out->type = MORAINE_TYPE_VARCHAR;
		set_text(p, out, api.duckdb_get_varchar(v));
		return;
	case DUCKDB_TYPE_BLOB: {
		duckdb_blob b = api.duckdb_get_blob(v);
		out->type = MORAINE_TYPE_BLOB;
		pool_add(p, b.data, 1);
		out->str = b.data ? (const char *)b.data : "";
		out->len = b.data ? b.size : 0;
		return;
	}
	case DUCKDB_TYPE_LIST:
	case DUCKDB_TYPE_STRUCT: {
		int is_list = t == DUCKDB_TYPE_LIST;
		idx_t n = is_list ? api.duckdb_get_list_size(v) : api.duckdb_struct_type_child_count(lt);
		if (depth > 64) {
			break; /* too deep: passed as text below */
		}
		moraine_value *children = pool_calloc(p, n, sizeof(moraine_value));
		const char **names = is_list ? NULL : pool_calloc(p, n, sizeof(char *));
		if (children == NULL || (!is_list && names == NULL)) {
			return;
		}
		for (idx_t i = 0; i < n; i++) {
			duckdb_value c = is_list ? api.duckdb_get_list_child(v, i) : api.duckdb_get_struct_child(v, i);
			convert(p, c, &children[i], depth + 1);
			if (c != NULL) {
				api.duckdb_destroy_value(&c);
			}
			if (!is_list) {
				char *name = api.duckdb_struct_type_child_name(lt, i);
				pool_add(p, name, 1);
				names[i] = name ? name : "";
			}
		}
		out->type = is_list ? MORAINE_TYPE_LIST : MORAINE_TYPE_STRUCT;
		out->child_count = n;
		out->children = children;
		out->child_names = names;
		return;
	}
	default:
		break;
	}
	/* Any other type (DATE, DECIMAL, HUGEINT, UUID, literals, ...): its text. */
	out->type = MORAINE_TYPE_OTHER;
	set_text(p, out, api.duckdb_get_varchar(v));
}

/* ---- table function callbacks ------------------------------------------ */

/* The extra info of every registered function. */
typedef struct fn_info {
	moraine_instance instance;
	uint64_t index;
	const moraine_function *fn;
} fn_info;

static void fn_info_destroy(void *ptr) {
	fn_info *fi = ptr;
	if (fi != NULL) {
		moraine_instance_release(fi->instance);
		free(fi);
	}
}

typedef struct bind_data {
	moraine_bound bound;
} bind_data;

static void bind_data_destroy(void *ptr) {
	bind_data *bd = ptr;
	if (bd != NULL) {
		moraine_bound_free(bd->bound);
		free(bd);
	}
}

typedef struct scan_state {
	moraine_table *table;
	uint64_t offset;
} scan_state;

static void scan_state_destroy(void *ptr) {
	scan_state *s = ptr;
	if (s != NULL) {
		moraine_table_free(s->table);
		free(s);
	}
}

static duckdb_type duckdb_type_of(int32_t t) {
	switch (t) {
	case MORAINE_TYPE_BOOLEAN:
		return DUCKDB_TYPE_BOOLEAN;
	case MORAINE_TYPE_BIGINT:
		return DUCKDB_TYPE_BIGINT;
	case MORAINE_TYPE_UBIGINT:
		return DUCKDB_TYPE_UBIGINT;
	case MORAINE_TYPE_DOUBLE:
		return DUCKDB_TYPE_DOUBLE;
	case MORAINE_TYPE_VARCHAR:
		return DUCKDB_TYPE_VARCHAR;
	case MORAINE_TYPE_BLOB:
		return DUCKDB_TYPE_BLOB;
	case MORAINE_TYPE_TIMESTAMP_TZ:
		return DUCKDB_TYPE_TIMESTAMP_TZ;
	case MORAINE_TYPE_ANY:
		return DUCKDB_TYPE_ANY;
	default:
		return DUCKDB_TYPE_INVALID;
	}
}

static void set_bind_error(duckdb_bind_info info, moraine_error *err, const char *fallback) {
	api.duckdb_bind_set_error(info, err->message ? err->message : fallback);
	moraine_error_free(err);
}

static void moraine_tf_bind(duckdb_bind_info info) {
	fn_info *fi = api.duckdb_bind_get_extra_info(info);
	const moraine_function *fn = fi->fn;
	pool p = {0};
	idx_t argc = api.duckdb_bind_get_parameter_count(info);
	moraine_value *args = pool_calloc(&p, argc, sizeof(moraine_value));
	moraine_value *named = pool_calloc(&p, fn->named_count, sizeof(moraine_value));
	if (args == NULL || named == NULL) {
		pool_free(&p);
		api.duckdb_bind_set_error(info, "moraine: out of memory");
		return;
	}
	for (idx_t i = 0; i < argc; i++) {
		duckdb_value v = api.duckdb_bind_get_parameter(info, i);
		convert(&p, v, &args[i], 0);
		if (v != NULL) {
			api.duckdb_destroy_value(&v);
		}
	}
	for (uint64_t i = 0; i < fn->named_count; i++) {
		duckdb_value v = api.duckdb_bind_get_named_parameter(info, fn->named[i].name);
		if (v == NULL) {
			memset(&named[i], 0, sizeof(named[i]));
			named[i].type = MORAINE_TYPE_ABSENT;
			continue;
		}
		convert(&p, v, &named[i], 0);
		api.duckdb_destroy_value(&v);
	}
	if (p.failed) {
		pool_free(&p);
		api.duckdb_bind_set_error(info, "moraine: out of memory");
		return;
	}
	moraine_bound bound = 0;
	moraine_table *cols = NULL;
	moraine_error err = {0};
	int32_t rc = moraine_bind(fi->instance, fi->index, args, argc, named, fn->named_count, &bound, &cols, &err);
	pool_free(&p);
	if (rc != MORAINE_OK) {
		set_bind_error(info, &err, "moraine: bind failed");
		return;
	}
	for (uint64_t c = 0; c < cols->column_count; c++) {
		duckdb_logical_type lt = api.duckdb_create_logical_type(duckdb_type_of(cols->columns[c].type));
		api.duckdb_bind_add_result_column(info, cols->columns[c].name, lt);
		api.duckdb_destroy_logical_type(&lt);
	}
	moraine_table_free(cols);
	bind_data *bd = malloc(sizeof(bind_data));
	if (bd == NULL) {
		moraine_bound_free(bound);
		api.duckdb_bind_set_error(info, "moraine: out of memory");
		return;
	}
	bd->bound = bound;
	api.duckdb_bind_set_bind_data(info, bd, bind_data_destroy);
}

static void moraine_tf_init(duckdb_init_info info) {
	bind_data *bd = api.duckdb_init_get_bind_data(info);
	moraine_table *t = NULL;
	moraine_error err = {0};
	if (moraine_execute(bd->bound, &t, &err) != MORAINE_OK) {
		api.duckdb_init_set_error(info, err.message ? err.message : "moraine: execution failed");
		moraine_error_free(&err);
		return;
	}
	scan_state *s = malloc(sizeof(scan_state));
	if (s == NULL) {
		moraine_table_free(t);
		api.duckdb_init_set_error(info, "moraine: out of memory");
		return;
	}
	s->table = t;
	s->offset = 0;
	api.duckdb_init_set_init_data(info, s, scan_state_destroy);
}

static void moraine_tf_function(duckdb_function_info info, duckdb_data_chunk output) {
	scan_state *s = api.duckdb_function_get_init_data(info);
	const moraine_table *t = s->table;
	uint64_t n = t->row_count - s->offset;
	uint64_t cap = api.duckdb_vector_size();
	if (n > cap) {
		n = cap;
	}
	for (uint64_t c = 0; c < t->column_count; c++) {
		const moraine_column *col = &t->columns[c];
		duckdb_vector vec = api.duckdb_data_chunk_get_vector(output, c);
		uint64_t *validity = NULL;
		for (uint64_t r = 0; r < n; r++) {
			uint64_t src = s->offset + r;
			if (col->nulls[src]) {
				if (validity == NULL) {
					api.duckdb_vector_ensure_validity_writable(vec);
					validity = api.duckdb_vector_get_validity(vec);
				}
				api.duckdb_validity_set_row_invalid(validity, r);
				continue;
			}
			switch (col->type) {
			case MORAINE_TYPE_BOOLEAN:
				((bool *)api.duckdb_vector_get_data(vec))[r] = ((const bool *)col->data)[src];
				break;
			case MORAINE_TYPE_BIGINT:
			case MORAINE_TYPE_TIMESTAMP_TZ:
				((int64_t *)api.duckdb_vector_get_data(vec))[r] = ((const int64_t *)col->data)[src];
				break;
			case MORAINE_TYPE_UBIGINT:
				((uint64_t *)api.duckdb_vector_get_data(vec))[r] = ((const uint64_t *)col->data)[src];
				break;
			case MORAINE_TYPE_DOUBLE:
				((double *)api.duckdb_vector_get_data(vec))[r] = ((const double *)col->data)[src];
				break;
			case MORAINE_TYPE_VARCHAR:
			case MORAINE_TYPE_BLOB: {
				const moraine_string *str = &((const moraine_string *)col->data)[src];
				api.duckdb_vector_assign_string_element_len(vec, r, str->data, str->size);
				break;
			}
			default:
				api.duckdb_function_set_error(info, "moraine: a result column has an unknown type");
				return;
			}
		}
	}
	api.duckdb_data_chunk_set_size(output, n);
	s->offset += n;
}

/* ---- registration ------------------------------------------------------ */

static const char *register_function(duckdb_connection con, moraine_instance instance, uint64_t index,
                                     const moraine_function *fn) {
	duckdb_table_function tf = api.duckdb_create_table_function();
	if (tf == NULL) {
		return "cannot create a table function";
	}
	api.duckdb_table_function_set_name(tf, fn->name);
	for (uint64_t i = 0; i < fn->param_count; i++) {
		duckdb_logical_type lt = api.duckdb_create_logical_type(duckdb_type_of(fn->params[i].type));
		api.duckdb_table_function_add_parameter(tf, lt);
		api.duckdb_destroy_logical_type(&lt);
	}
	for (uint64_t i = 0; i < fn->named_count; i++) {
		duckdb_logical_type lt = api.duckdb_create_logical_type(duckdb_type_of(fn->named[i].type));
		api.duckdb_table_function_add_named_parameter(tf, fn->named[i].name, lt);
		api.duckdb_destroy_logical_type(&lt);
	}
	fn_info *fi = malloc(sizeof(fn_info));
	if (fi == NULL) {
		api.duckdb_destroy_table_function(&tf);
		return "out of memory";
	}
	fi->instance = instance;
	fi->index = index;
	fi->fn = fn;
	moraine_instance_retain(instance);
	api.duckdb_table_function_set_extra_info(tf, fi, fn_info_destroy);
	api.duckdb_table_function_set_bind(tf, moraine_tf_bind);
	api.duckdb_table_function_set_init(tf, moraine_tf_init);
	api.duckdb_table_function_set_function(tf, moraine_tf_function);
	duckdb_state st = api.duckdb_register_table_function(con, tf);
	api.duckdb_destroy_table_function(&tf);
	return st == DuckDBSuccess ? NULL : "DuckDB refused to register the function";
}

DUCKDB_EXTENSION_API bool moraine_init_c_api(duckdb_extension_info info, struct duckdb_extension_access *access) {
	const duckdb_ext_api_v1 *src = access->get_api(info, MORAINE_CAPI_VERSION);
	if (src == NULL) {
		return false; /* get_api has reported why through set_error */
	}
#define MORAINE_COPY_SLOT(name) api.name = src->name;
	MORAINE_SLOTS(MORAINE_COPY_SLOT)
#undef MORAINE_COPY_SLOT
#define MORAINE_CHECK_SLOT(name)                                                                                       \
	if (api.name == NULL) {                                                                                            \
		access->set_error(info, "moraine: this DuckDB lacks the C API function " #name);                               \
		return false;                                                                                                  \
	}
	MORAINE_SLOTS(MORAINE_CHECK_SLOT)
#undef MORAINE_CHECK_SLOT

	duckdb_database *db = access->get_database(info);
	duckdb_connection con = NULL;
	if (db == NULL || api.duckdb_connect(*db, &con) != DuckDBSuccess) {
		access->set_error(info, "moraine: cannot connect to the database to register functions");
		return false;
	}
	moraine_instance instance = moraine_instance_new();
	if (instance == 0) {
		api.duckdb_disconnect(&con);
		access->set_error(info, "moraine: cannot create an instance");
		return false;
	}
	uint64_t count = 0;
	const moraine_function *fns = moraine_functions(&count);
	char msg[512] = "";
	bool ok = fns != NULL && count > 0;
	if (!ok) {
		snprintf(msg, sizeof(msg), "moraine: the library lists no functions");
	}
	for (uint64_t i = 0; ok && i < count; i++) {
		const char *why = register_function(con, instance, i, &fns[i]);
		if (why != NULL) {
			snprintf(msg, sizeof(msg), "moraine: registering %s: %s", fns[i].name, why);
			ok = false;
		}
	}
	api.duckdb_disconnect(&con);
	moraine_instance_release(instance); /* the functions hold their own references */
	if (!ok) {
		access->set_error(info, msg);
	}
	return ok;
}
