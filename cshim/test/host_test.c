/*
 * host_test.c: a C host of the moraine ABI (moraine.h), linked against
 * libmoraine.so with no DuckDB in the process. Run by `make test` (ctest):
 *
 *   moraine_host_test <scratch directory>
 *
 * It attaches lakes through moraine_attach_with_commit_log (with and without
 * commit-log options) and the older moraine_attach, checks roles, formats
 * and heads, feeds both entry points bad arguments and checks the pinned
 * error codes and messages, and drives the SQL function interface
 * (moraine_functions / moraine_bind / moraine_execute) as the DuckDB shim
 * does, and checks that a panic inside the library (provoked by a bogus
 * pointer argument) comes back as MORAINE_INTERNAL and the library keeps
 * working, and drives the storage extension's part of the ABI (attach
 * options by name, transactions, table lists, scans, writes: insert,
 * update, delete, create table, commit) as the C++ catalog does. Exit
 * status 0 when every check passes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "moraine.h"

static int failures = 0;

#define CHECK(cond, ...)                                                                                               \
	do {                                                                                                               \
		if (!(cond)) {                                                                                                 \
			failures++;                                                                                                \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                                   \
			fprintf(stderr, __VA_ARGS__);                                                                              \
			fprintf(stderr, "\n");                                                                                     \
		}                                                                                                              \
	} while (0)

static char scratch[4096];

static const char *lake_path(const char *name) {
	static char buf[8][4200];
	static int next = 0;
	char *p = buf[next++ % 8];
	snprintf(p, sizeof(buf[0]), "%s/%s", scratch, name);
	return p;
}

/* expect_error checks a failed call's code and that its message contains
 * want, then frees the message. */
static void expect_error(const char *what, int32_t rc, moraine_error *err, int32_t code, const char *want) {
	CHECK(rc == code, "%s: code %d, want %d (%s)", what, rc, code, err->message ? err->message : "no message");
	CHECK(err->code == rc, "%s: err->code %d, return %d", what, err->code, rc);
	CHECK(err->message != NULL && strstr(err->message, want) != NULL, "%s: message %s lacks \"%s\"", what,
	      err->message ? err->message : "(null)", want);
	moraine_error_free(err);
	CHECK(err->message == NULL && err->code == MORAINE_OK, "%s: moraine_error_free did not reset", what);
}

static void expect_ok(const char *what, int32_t rc, moraine_error *err) {
	CHECK(rc == MORAINE_OK, "%s: code %d: %s", what, rc, err->message ? err->message : "");
	CHECK(err->message == NULL, "%s: a message on success", what);
	moraine_error_free(err);
}

static void test_attach(void) {
	moraine_error err = {0};
	moraine_catalog writer = 0, reader = 0, tailer = 0;
	moraine_info info;

	/* The newer entry point with NULL commit-log options: a writer. */
	int32_t rc = moraine_attach_with_commit_log(lake_path("lake"), NULL, false, "/data/", 0, NULL, NULL, &writer, &err);
	expect_ok("attach_with_commit_log(NULL)", rc, &err);
	CHECK(writer != 0, "no handle");
	rc = moraine_catalog_info(writer, &info, &err);
	expect_ok("catalog_info(writer)", rc, &err);
	CHECK(info.role == MORAINE_ROLE_WRITER && !info.read_only, "writer role %d read_only %d", info.role, info.read_only);
	CHECK(info.format == 13, "format %llu", (unsigned long long)info.format);
	CHECK(info.head_snapshot == 0, "head %llu", (unsigned long long)info.head_snapshot);

	/* The older entry point, read-only. */
	rc = moraine_attach(lake_path("lake"), NULL, true, NULL, 0, NULL, &reader, &err);
	expect_ok("attach(read_only)", rc, &err);
	rc = moraine_catalog_info(reader, &info, &err);
	expect_ok("catalog_info(reader)", rc, &err);
	CHECK(info.role == MORAINE_ROLE_READER && info.read_only, "reader role %d", info.role);

	/* Commit-log options: tail and a reader poll. Without a provider the
	 * tail has no effect: still a reader. S3 settings are ignored for a
	 * local store. */
	moraine_commit_log_options cl = {.size = sizeof(moraine_commit_log_options), .tail = true, .poll_interval_ms = 0, .reader_poll_interval_ms = 50, .wal_store = NULL};
	moraine_s3_config s3 = {"key", "secret", "us-east-1", NULL, "http://127.0.0.1:1", "path", 1};
	rc = moraine_attach_with_commit_log(lake_path("lake"), &s3, true, NULL, 0, NULL, &cl, &tailer, &err);
	expect_ok("attach_with_commit_log(tail)", rc, &err);
	rc = moraine_catalog_info(tailer, &info, &err);
	expect_ok("catalog_info(tailer)", rc, &err);
	CHECK(info.role == MORAINE_ROLE_READER, "tailing attach without a provider: role %d", info.role);

	/* A separate WAL store and an explicit continuous flush. */
	moraine_catalog walled = 0;
	moraine_commit_log_options wal = {.size = sizeof(moraine_commit_log_options), .tail = false, .poll_interval_ms = 25, .reader_poll_interval_ms = 0, .wal_store = "memory://host-test-wal"};
	rc = moraine_attach_with_commit_log("memory://host-test-lake", NULL, false, NULL, MORAINE_FLUSH_CONTINUOUS, NULL, &wal,
	                                    &walled, &err);
	expect_ok("attach_with_commit_log(wal_store)", rc, &err);
	expect_ok("detach(walled)", moraine_detach(walled, &err), &err);

	/* Bad arguments: nothing is attached, out is reset to 0. */
	moraine_catalog h = 42;
	rc = moraine_attach(NULL, NULL, false, NULL, 0, NULL, &h, &err);
	expect_error("NULL path", rc, &err, MORAINE_INVALID_ARGUMENT, "path is NULL");
	CHECK(h == 0, "out not reset: %llu", (unsigned long long)h);
	rc = moraine_attach(lake_path("lake"), NULL, false, NULL, 0, NULL, NULL, &err);
	expect_error("NULL out", rc, &err, MORAINE_INVALID_ARGUMENT, "out is NULL");
	rc = moraine_attach(lake_path("lake"), NULL, false, NULL, 0, "01234567-89ab-cdef-0123-456789abcdef", &h, &err);
	expect_error("checkpoint without read_only", rc, &err, MORAINE_INVALID_ARGUMENT, "CHECKPOINT needs READ_ONLY");
	rc = moraine_attach(lake_path("lake"), NULL, true, NULL, 0, "not-a-uuid", &h, &err);
	expect_error("bad checkpoint", rc, &err, MORAINE_INVALID_ARGUMENT, "CHECKPOINT: 'not-a-uuid' is not accepted");
	rc = moraine_attach(lake_path("lake"), NULL, true, NULL, 5, NULL, &h, &err);
	expect_error("flush on a reader", rc, &err, MORAINE_INVALID_ARGUMENT, "FLUSH_INTERVAL_MS");
	rc = moraine_attach(lake_path("lake"), NULL, false, NULL, 100000000000ULL, NULL, &h, &err);
	expect_error("flush too long", rc, &err, MORAINE_INVALID_ARGUMENT, "FLUSH_INTERVAL_MS: 100000000000 is not accepted");
	rc = moraine_attach("ftp://x/y", NULL, false, NULL, 0, NULL, &h, &err);
	expect_error("bad scheme", rc, &err, MORAINE_INVALID_ARGUMENT, "unknown store scheme");
	moraine_commit_log_options bad = {.size = 0, .tail = false, .poll_interval_ms = 0, .reader_poll_interval_ms = 0, .wal_store = NULL};
	rc = moraine_attach_with_commit_log(lake_path("lake"), NULL, false, NULL, 0, NULL, &bad, &h, &err);
	expect_error("commit_log size 0", rc, &err, MORAINE_INVALID_ARGUMENT, "commit_log->size is 0");
	moraine_commit_log_options tail_rw = {.size = sizeof(moraine_commit_log_options), .tail = true, .poll_interval_ms = 0, .reader_poll_interval_ms = 0, .wal_store = NULL};
	rc = moraine_attach_with_commit_log(lake_path("lake"), NULL, false, NULL, 0, NULL, &tail_rw, &h, &err);
	expect_error("tail on a writer", rc, &err, MORAINE_INVALID_ARGUMENT, "COMMIT_LOG_TAIL needs READ_ONLY");
	moraine_commit_log_options poll_ro = {.size = sizeof(moraine_commit_log_options), .tail = false, .poll_interval_ms = 10, .reader_poll_interval_ms = 0, .wal_store = NULL};
	rc = moraine_attach_with_commit_log(lake_path("lake"), NULL, true, NULL, 0, NULL, &poll_ro, &h, &err);
	expect_error("commit-log poll on a reader", rc, &err, MORAINE_INVALID_ARGUMENT, "COMMIT_LOG_POLL_INTERVAL_MS");
	moraine_commit_log_options bad_wal = {.size = sizeof(moraine_commit_log_options), .tail = false, .poll_interval_ms = 0, .reader_poll_interval_ms = 0, .wal_store = "gs://bucket"};
	rc = moraine_attach_with_commit_log(lake_path("lake"), NULL, false, NULL, 0, NULL, &bad_wal, &h, &err);
	expect_error("bad wal store", rc, &err, MORAINE_INVALID_ARGUMENT, "WAL_STORE");
	moraine_s3_config bad_ssl = {NULL, NULL, NULL, NULL, NULL, NULL, 7};
	rc = moraine_attach("s3://bucket/lake", &bad_ssl, false, NULL, 0, NULL, &h, &err);
	expect_error("bad use_ssl", rc, &err, MORAINE_INVALID_ARGUMENT, "use_ssl is 7");
	moraine_s3_config bad_style = {NULL, NULL, NULL, NULL, NULL, "sideways", -1};
	rc = moraine_attach("s3://bucket/lake", &bad_style, false, NULL, 0, NULL, &h, &err);
	expect_error("bad url_style", rc, &err, MORAINE_INVALID_ARGUMENT, "S3_URL_STYLE: 'sideways'");
	rc = moraine_attach(lake_path("empty"), NULL, true, NULL, 0, NULL, &h, &err);
	expect_error("read-only attach of an empty store", rc, &err, MORAINE_NOT_FOUND, "no moraine catalog");
	/* A NULL err is allowed: only the code comes back. */
	CHECK(moraine_attach(NULL, NULL, false, NULL, 0, NULL, &h, NULL) == MORAINE_INVALID_ARGUMENT, "NULL err");

	/* Handles. */
	rc = moraine_catalog_info(writer, NULL, &err);
	expect_error("info NULL out", rc, &err, MORAINE_INVALID_ARGUMENT, "out is NULL");
	rc = moraine_detach(0, &err);
	expect_error("detach 0", rc, &err, MORAINE_INVALID_ARGUMENT, "not a live moraine_catalog handle");
	expect_ok("detach(tailer)", moraine_detach(tailer, &err), &err);
	expect_ok("detach(reader)", moraine_detach(reader, &err), &err);
	expect_ok("detach(writer)", moraine_detach(writer, &err), &err);
	rc = moraine_detach(writer, &err);
	expect_error("detach twice", rc, &err, MORAINE_INVALID_ARGUMENT, "not a live moraine_catalog handle");
	rc = moraine_catalog_info(writer, &info, &err);
	expect_error("info after detach", rc, &err, MORAINE_INVALID_ARGUMENT, "not a live moraine_catalog handle");

	moraine_error_free(NULL);
	moraine_error_free(&err);
}

/* ---- the SQL function interface ---- */

static const moraine_function *fns;
static uint64_t nfns;

static int64_t find(const char *name) {
	for (uint64_t i = 0; i < nfns; i++) {
		if (strcmp(fns[i].name, name) == 0) {
			return (int64_t)i;
		}
	}
	return -1;
}

static moraine_value str_value(const char *s) {
	moraine_value v;
	memset(&v, 0, sizeof(v));
	v.type = MORAINE_TYPE_VARCHAR;
	v.str = s;
	v.len = strlen(s);
	return v;
}

/* call binds and executes function name with positional args and one
 * optional named argument; returns the result (or NULL, with err set). */
static moraine_table *call(moraine_instance in, const char *name, moraine_value *args, uint64_t nargs,
                           const char *named_name, moraine_value named_value, moraine_error *err) {
	int64_t idx = find(name);
	CHECK(idx >= 0, "no function %s", name);
	if (idx < 0) {
		return NULL;
	}
	const moraine_function *fn = &fns[idx];
	moraine_value *named = calloc(fn->named_count ? fn->named_count : 1, sizeof(moraine_value));
	for (uint64_t i = 0; i < fn->named_count; i++) {
		named[i].type = MORAINE_TYPE_ABSENT;
		if (named_name && strcmp(fn->named[i].name, named_name) == 0) {
			named[i] = named_value;
		}
	}
	moraine_bound b = 0;
	moraine_table *cols = NULL, *out = NULL;
	int32_t rc = moraine_bind(in, (uint64_t)idx, args, nargs, named, fn->named_count, &b, &cols, err);
	free(named);
	if (rc != MORAINE_OK) {
		return NULL;
	}
	CHECK(cols != NULL && cols->row_count == 0, "%s: bind columns", name);
	moraine_table_free(cols);
	rc = moraine_execute(b, &out, err);
	moraine_bound_free(b);
	return rc == MORAINE_OK ? out : NULL;
}

static void test_functions(void) {
	moraine_error err = {0};
	fns = moraine_functions(&nfns);
	CHECK(fns != NULL && nfns > 20, "moraine_functions: %llu", (unsigned long long)nfns);
	CHECK(find("moraine_attach") >= 0 && find("moraine_ducklake_snapshot") >= 0 && find("moraine_insert") >= 0,
	      "expected functions missing");

	moraine_instance in = moraine_instance_new();
	CHECK(in != 0, "moraine_instance_new");

	moraine_value args[3];
	args[0] = str_value("w");
	args[1] = str_value(lake_path("fnlake"));
	moraine_table *t = call(in, "moraine_attach", args, 2, NULL, args[0], &err);
	CHECK(t != NULL, "moraine_attach: %s", err.message ? err.message : "");
	if (t != NULL) {
		CHECK(t->row_count == 1 && t->column_count == 4, "attach result %llux%llu", (unsigned long long)t->row_count,
		      (unsigned long long)t->column_count);
		const moraine_string *role = &((const moraine_string *)t->columns[1].data)[0];
		CHECK(role->size == 6 && memcmp(role->data, "writer", 6) == 0, "role %.*s", (int)role->size, role->data);
		moraine_table_free(t);
	}
	moraine_error_free(&err);

	/* An unknown attach option refused at bind with the library's message. */
	moraine_value ro = {0};
	ro.type = MORAINE_TYPE_VARCHAR;
	ro.str = "maybe";
	ro.len = 5;
	args[0] = str_value("r");
	t = call(in, "moraine_attach", args, 2, "read_only", ro, &err);
	CHECK(t == NULL, "read_only := 'maybe' accepted");
	expect_error("read_only 'maybe'", err.code, &err, MORAINE_INVALID_ARGUMENT, "READ_ONLY: 'maybe' is not accepted");

	args[0] = str_value("w");
	args[1] = str_value("s");
	t = call(in, "moraine_create_schema", args, 2, NULL, args[0], &err);
	CHECK(t != NULL, "moraine_create_schema: %s", err.message ? err.message : "");
	moraine_table_free(t);
	moraine_error_free(&err);
	t = call(in, "moraine_create_schema", args, 2, NULL, args[0], &err);
	CHECK(t == NULL, "duplicate schema accepted");
	expect_error("duplicate schema", err.code, &err, MORAINE_ALREADY_EXISTS, "moraine_create_schema: already exists");

	t = call(in, "moraine_ducklake_schema", args, 1, NULL, args[0], &err);
	CHECK(t != NULL && t->row_count == 2, "ducklake_schema rows: %s", err.message ? err.message : "");
	moraine_table_free(t);
	moraine_error_free(&err);

	/* Time travel to snapshot 0: only main. */
	moraine_value at = {0};
	at.type = MORAINE_TYPE_BIGINT;
	at.bigint = 0;
	t = call(in, "moraine_ducklake_schema", args, 1, "snapshot", at, &err);
	CHECK(t != NULL && t->row_count == 1, "ducklake_schema at 0: %s", err.message ? err.message : "");
	moraine_table_free(t);
	moraine_error_free(&err);

	/* Wrong arity and a bad instance. */
	moraine_bound b = 0;
	moraine_table *cols = NULL;
	int32_t rc = moraine_bind(in, (uint64_t)find("moraine_detach"), args, 2, NULL, 0, &b, &cols, &err);
	expect_error("bind arity", rc, &err, MORAINE_INVALID_ARGUMENT, "takes 1 positional arguments");
	rc = moraine_bind(0, 0, args, 2, NULL, 0, &b, &cols, &err);
	expect_error("bind instance 0", rc, &err, MORAINE_INVALID_ARGUMENT, "not a live moraine_instance handle");
	rc = moraine_execute(12345, &t, &err);
	expect_error("execute bogus", rc, &err, MORAINE_INVALID_ARGUMENT, "not a live moraine_bound handle");

	/* The last release detaches the instance's lakes: the lake can then be
	 * attached again by a new instance. */
	moraine_instance_release(in);
	moraine_instance in2 = moraine_instance_new();
	args[0] = str_value("again");
	args[1] = str_value(lake_path("fnlake"));
	t = call(in2, "moraine_attach", args, 2, NULL, args[0], &err);
	CHECK(t != NULL, "re-attach after release: %s", err.message ? err.message : "");
	moraine_table_free(t);
	moraine_error_free(&err);
	moraine_instance_release(in2);
}

/* ---- panics ----
 * A panic inside the library comes back as MORAINE_INTERNAL with a message,
 * never as a crash of the host. A bogus (non-NULL) pointer argument makes
 * the Go side fault while reading it; the Go runtime raises a fault at a
 * small address as a nil-dereference panic in the export, which its
 * recovery turns into the error. */
static void test_panic(void) {
	moraine_error err = {0};
	const char *bogus = (const char *)(uintptr_t)16;

	moraine_catalog h = 42;
	int32_t rc = moraine_attach(bogus, NULL, false, NULL, 0, NULL, &h, &err);
	expect_error("attach with a bogus path pointer", rc, &err, MORAINE_INTERNAL,
	             "panic in the moraine library: runtime error: invalid memory address or nil pointer dereference");
	CHECK(h == 0, "out not reset after a panic: %llu", (unsigned long long)h);
	moraine_commit_log_options cl = {.size = sizeof(moraine_commit_log_options), .tail = false, .poll_interval_ms = 0, .reader_poll_interval_ms = 0, .wal_store = bogus};
	rc = moraine_attach_with_commit_log(lake_path("panic"), NULL, false, NULL, 0, NULL, &cl, &h, &err);
	expect_error("attach with a bogus wal_store pointer", rc, &err, MORAINE_INTERNAL, "panic in the moraine library");
	/* A NULL err: only the code comes back. */
	CHECK(moraine_attach(bogus, NULL, false, NULL, 0, NULL, &h, NULL) == MORAINE_INTERNAL, "panic with a NULL err");

	/* The SQL function interface: a VARCHAR argument whose text is bogus. */
	moraine_instance in = moraine_instance_new();
	CHECK(in != 0, "moraine_instance_new");
	int64_t idx = find("moraine_detach");
	CHECK(idx >= 0, "no moraine_detach");
	moraine_value arg;
	memset(&arg, 0, sizeof(arg));
	arg.type = MORAINE_TYPE_VARCHAR;
	arg.str = bogus;
	arg.len = 4;
	moraine_bound b = 7;
	moraine_table *cols = NULL;
	rc = moraine_bind(in, (uint64_t)idx, &arg, 1, NULL, 0, &b, &cols, &err);
	expect_error("bind with a bogus string", rc, &err, MORAINE_INTERNAL, "panic in the moraine library");
	CHECK(b == 0 && cols == NULL, "bind results not reset after a panic");

	/* The library keeps working after recovering. */
	rc = moraine_attach(lake_path("panic"), NULL, false, NULL, 0, NULL, &h, &err);
	expect_ok("attach after a panic", rc, &err);
	expect_ok("detach after a panic", moraine_detach(h, &err), &err);
	moraine_instance_release(in);
}


/* ---- the storage extension's ABI ---- */
static moraine_value int_value(int64_t v) {
	moraine_value x;
	memset(&x, 0, sizeof(x));
	x.type = MORAINE_TYPE_BIGINT;
	x.bigint = v;
	return x;
}

static void test_storage(void) {
	moraine_error err = {0};
	moraine_catalog empty = 0, lake = 0, h = 0;

	/* Version 2 options: the host's options by name, and LEAVE_EMPTY. */
	moraine_value poll = int_value(40);
	moraine_option opts[] = {{"reader_poll_interval_ms", &poll}};
	moraine_commit_log_options cl = {.size = sizeof(moraine_commit_log_options), .option_count = 1, .options = opts,
	                                 .flags = MORAINE_ATTACH_LEAVE_EMPTY};
	int32_t rc = moraine_attach_with_commit_log(lake_path("storage-empty"), NULL, false, NULL, 0, NULL, &cl, &empty, &err);
	expect_ok("attach(LEAVE_EMPTY)", rc, &err);
	moraine_txn txn = 0;
	expect_ok("txn_begin(empty)", moraine_txn_begin(empty, &txn, &err), &err);
	moraine_table_list *list = NULL;
	expect_ok("txn_tables(empty)", moraine_txn_tables(txn, &list, &err), &err);
	CHECK(list != NULL && !list->has_lake && list->table_count == 0, "an empty store lists tables");
	moraine_table_list_free(list);
	moraine_txn_end(txn);
	expect_ok("detach(empty)", moraine_detach(empty, &err), &err);
	/* Nothing was written: a read-only attach still finds no catalog. */
	rc = moraine_attach(lake_path("storage-empty"), NULL, true, NULL, 0, NULL, &h, &err);
	expect_error("read-only after LEAVE_EMPTY", rc, &err, MORAINE_NOT_FOUND, "no moraine catalog");

	/* Refusals of the option list: named, with what is accepted. */
	moraine_value bogus_v = int_value(1);
	moraine_option bogus[] = {{"bogus", &bogus_v}};
	moraine_commit_log_options bad = {.size = sizeof(moraine_commit_log_options), .option_count = 1, .options = bogus};
	rc = moraine_attach_with_commit_log(lake_path("storage-bad"), NULL, false, NULL, 0, NULL, &bad, &h, &err);
	expect_error("unknown option", rc, &err, MORAINE_INVALID_ARGUMENT, "unknown attach option \"bogus\"; known options: CHECKPOINT");
	moraine_option twice[] = {{"READ_ONLY", &bogus_v}};
	moraine_commit_log_options dup = {.size = sizeof(moraine_commit_log_options), .option_count = 1, .options = twice};
	rc = moraine_attach_with_commit_log(lake_path("lake"), NULL, true, NULL, 0, NULL, &dup, &h, &err);
	expect_error("READ_ONLY twice", rc, &err, MORAINE_INVALID_ARGUMENT, "READ_ONLY is given more than once");
	moraine_commit_log_options flags = {.size = sizeof(moraine_commit_log_options), .flags = 0x80};
	rc = moraine_attach_with_commit_log(lake_path("lake"), NULL, true, NULL, 0, NULL, &flags, &h, &err);
	expect_error("unknown flag", rc, &err, MORAINE_INVALID_ARGUMENT, "unknown flags 0x80");

	/* A lake: the 22 tables, a scan with a projection, a filter and rowid. */
	rc = moraine_attach(lake_path("lake"), NULL, true, NULL, 0, NULL, &lake, &err);
	expect_ok("attach(lake)", rc, &err);
	expect_ok("txn_begin", moraine_txn_begin(lake, &txn, &err), &err);
	expect_ok("txn_tables", moraine_txn_tables(txn, &list, &err), &err);
	CHECK(list != NULL && list->has_lake && list->table_count == 22, "tables: %llu", list ? (unsigned long long)list->table_count : 0);
	int found = 0;
	for (uint64_t i = 0; list && i < list->table_count; i++) {
		const moraine_table_def *t = &list->tables[i];
		if (strcmp(t->name, "ducklake_schema") == 0) {
			found = 1;
			CHECK(t->column_count == 7 && t->primary_key == 0, "ducklake_schema: %llu columns, key %lld",
			      (unsigned long long)t->column_count, (long long)t->primary_key);
			CHECK(strcmp(t->columns[1].name, "schema_uuid") == 0 && strcmp(t->columns[1].type, "UUID") == 0,
			      "column 1 %s %s", t->columns[1].name, t->columns[1].type);
		}
	}
	CHECK(found, "no ducklake_schema");
	moraine_table_list_free(list);

	uint64_t cols[] = {4, MORAINE_COLUMN_ROWID};
	moraine_value zero = int_value(0);
	moraine_filter filters[] = {{0, MORAINE_FILTER_EQ, &zero}, {3, MORAINE_FILTER_IS_NULL, NULL}};
	moraine_scan scan = 0;
	expect_ok("scan_open", moraine_scan_open(txn, "ducklake_schema", cols, 2, filters, 2, &scan, &err), &err);
	moraine_table *batch = NULL;
	expect_ok("scan_next", moraine_scan_next(scan, 0, &batch, &err), &err);
	CHECK(batch != NULL && batch->row_count == 1 && batch->column_count == 2, "batch %llux%llu",
	      batch ? (unsigned long long)batch->row_count : 0, batch ? (unsigned long long)batch->column_count : 0);
	if (batch && batch->row_count == 1) {
		const moraine_string *name = batch->columns[0].data;
		CHECK(batch->columns[0].type == MORAINE_TYPE_VARCHAR && name->size == 4 && memcmp(name->data, "main", 4) == 0,
		      "schema name %.*s", (int)name->size, name->data);
		CHECK(batch->columns[1].type == MORAINE_TYPE_BIGINT && ((const int64_t *)batch->columns[1].data)[0] == 0,
		      "rowid");
	}
	moraine_table_free(batch);
	expect_ok("scan_next (end)", moraine_scan_next(scan, 0, &batch, &err), &err);
	CHECK(batch != NULL && batch->row_count == 0, "a second batch");
	moraine_table_free(batch);
	moraine_scan_close(scan);
	rc = moraine_scan_next(scan, 0, &batch, &err);
	expect_error("next after close", rc, &err, MORAINE_INVALID_ARGUMENT, "not a live moraine_scan handle");
	rc = moraine_scan_open(txn, "nope", cols, 1, NULL, 0, &scan, &err);
	expect_error("scan of a missing table", rc, &err, MORAINE_NOT_FOUND, "table \"nope\" does not exist");
	uint64_t far[] = {99};
	rc = moraine_scan_open(txn, "ducklake_schema", far, 1, NULL, 0, &scan, &err);
	expect_error("scan of column 99", rc, &err, MORAINE_INVALID_ARGUMENT, "no column number 99");
	moraine_txn_end(txn);
	rc = moraine_txn_tables(txn, &list, &err);
	expect_error("tables after end", rc, &err, MORAINE_INVALID_ARGUMENT, "not a live moraine_txn handle");

	moraine_runtime info;
	expect_ok("runtime_info", moraine_runtime_info(&info, &err), &err);
	CHECK(info.transactions == 0 && info.scans == 0, "live: %llu transactions, %llu scans",
	      (unsigned long long)info.transactions, (unsigned long long)info.scans);
	expect_ok("detach(lake)", moraine_detach(lake, &err), &err);
}

/* ---- the storage extension's writes ---- */
static moraine_value null_value(void) {
	moraine_value x;
	memset(&x, 0, sizeof(x));
	x.type = MORAINE_TYPE_NULL;
	return x;
}

static moraine_value bytes_value(int32_t type, const char *data, uint64_t len) {
	moraine_value x;
	memset(&x, 0, sizeof(x));
	x.type = type;
	x.str = data;
	x.len = len;
	return x;
}

/* scan_rows scans columns of table and returns the batch (one batch is
 * enough for these tables); the caller frees it. */
static moraine_table *scan_rows(moraine_txn txn, const char *table, const uint64_t *cols, uint64_t ncols) {
	moraine_error err = {0};
	moraine_scan scan = 0;
	moraine_table *batch = NULL;
	expect_ok("scan_open", moraine_scan_open(txn, table, cols, ncols, NULL, 0, &scan, &err), &err);
	expect_ok("scan_next", moraine_scan_next(scan, 0, &batch, &err), &err);
	moraine_scan_close(scan);
	return batch;
}

static uint64_t row_count(moraine_txn txn, const char *table) {
	uint64_t cols[] = {MORAINE_COLUMN_ROWID};
	moraine_table *b = scan_rows(txn, table, cols, 1);
	uint64_t n = b ? b->row_count : 0;
	moraine_table_free(b);
	return n;
}

static void test_writes(void) {
	moraine_error err = {0};
	moraine_catalog lake = 0;
	moraine_txn txn = 0, other = 0;
	expect_ok("attach(writes)", moraine_attach(lake_path("writes"), NULL, false, NULL, 0, NULL, &lake, &err), &err);
	expect_ok("txn_begin", moraine_txn_begin(lake, &txn, &err), &err);
	expect_ok("txn_begin(other)", moraine_txn_begin(lake, &other, &err), &err);

	/* INSERT: rows row-major, every column. */
	moraine_value tags[] = {int_value(7), int_value(1), null_value(), str_value("k"), str_value("v"),
	                        int_value(8), int_value(1), null_value(), str_value("k2"), null_value()};
	moraine_rows rows = {5, 2, tags};
	expect_ok("insert", moraine_txn_insert(txn, "ducklake_tag", &rows, &err), &err);
	uint64_t cols[] = {MORAINE_COLUMN_ROWID, 0, 3};
	moraine_table *b = scan_rows(txn, "ducklake_tag", cols, 3);
	CHECK(b && b->row_count == 2, "own inserts: %llu rows", b ? (unsigned long long)b->row_count : 0);
	if (b && b->row_count == 2) {
		const int64_t *rowid = b->columns[0].data, *id = b->columns[1].data;
		const moraine_string *key = b->columns[2].data;
		CHECK(rowid[0] == 0 && rowid[1] == 1 && id[0] == 7 && id[1] == 8, "rowids %lld %lld ids %lld %lld",
		      (long long)rowid[0], (long long)rowid[1], (long long)id[0], (long long)id[1]);
		CHECK(key[1].size == 2 && memcmp(key[1].data, "k2", 2) == 0, "key %.*s", (int)key[1].size, key[1].data);
	}
	moraine_table_free(b);
	CHECK(row_count(other, "ducklake_tag") == 0, "another transaction sees the inserts");

	/* Refusals: shape, NOT NULL, the primary key, a missing table. */
	moraine_rows narrow = {4, 1, tags};
	int32_t rc = moraine_txn_insert(txn, "ducklake_tag", &narrow, &err);
	expect_error("insert of 4 values", rc, &err, MORAINE_INVALID_ARGUMENT, "4 values; the table has 5 columns");
	moraine_value meta[] = {null_value(), str_value("v"), null_value(), null_value()};
	moraine_rows meta_rows = {4, 1, meta};
	rc = moraine_txn_insert(txn, "ducklake_metadata", &meta_rows, &err);
	expect_error("NULL key", rc, &err, MORAINE_CONSTRAINT, "NOT NULL constraint failed: ducklake_metadata.key");
	moraine_value schema[] = {int_value(0), null_value(), int_value(1), null_value(), str_value("dup"), str_value("dup/"), null_value()};
	schema[6].type = MORAINE_TYPE_BOOLEAN;
	schema[6].boolean = true;
	moraine_rows schema_rows = {7, 1, schema};
	rc = moraine_txn_insert(txn, "ducklake_schema", &schema_rows, &err);
	expect_error("duplicate schema_id", rc, &err, MORAINE_CONSTRAINT, "Duplicate key \"schema_id: 0\" violates primary key constraint");
	rc = moraine_txn_insert(txn, "nope", &rows, &err);
	expect_error("insert into a missing table", rc, &err, MORAINE_NOT_FOUND, "nope");
	rc = moraine_txn_insert(txn, "ducklake_tag", NULL, &err);
	expect_error("NULL rows", rc, &err, MORAINE_INVALID_ARGUMENT, "rows is NULL");
	moraine_value list = {0};
	list.type = MORAINE_TYPE_LIST;
	moraine_value bad_cells[] = {int_value(9), int_value(1), null_value(), str_value("k"), list};
	moraine_rows bad_rows = {5, 1, bad_cells};
	rc = moraine_txn_insert(txn, "ducklake_tag", &bad_rows, &err);
	expect_error("a LIST cell", rc, &err, MORAINE_INVALID_ARGUMENT, "not a cell");

	/* UPDATE by rowid, then DELETE: counts, rowids kept. */
	int64_t ids[] = {1};
	uint64_t value_col[] = {4};
	moraine_value nv[] = {str_value("v2")};
	moraine_rows upd = {1, 1, nv};
	expect_ok("update", moraine_txn_update(txn, "ducklake_tag", ids, value_col, 1, &upd, &err), &err);
	uint64_t two_cols[] = {4, 5};
	rc = moraine_txn_update(txn, "ducklake_tag", ids, two_cols, 2, &upd, &err);
	expect_error("update with 2 columns of 1 value", rc, &err, MORAINE_INVALID_ARGUMENT, "rows of 1 values for 2 columns");
	int64_t gone[] = {0, 0, 5};
	uint64_t deleted = 42;
	rc = moraine_txn_delete(txn, "ducklake_tag", gone, 3, &deleted, &err);
	expect_error("delete of rowid 5", rc, &err, MORAINE_INVALID_ARGUMENT, "no row with rowid 5");
	CHECK(deleted == 0, "deleted %llu on a refusal", (unsigned long long)deleted);
	expect_ok("delete", moraine_txn_delete(txn, "ducklake_tag", gone, 2, &deleted, &err), &err);
	CHECK(deleted == 1, "deleted %llu, want 1 (rowid 0 twice)", (unsigned long long)deleted);
	uint64_t val[] = {MORAINE_COLUMN_ROWID, 4};
	b = scan_rows(txn, "ducklake_tag", val, 2);
	CHECK(b && b->row_count == 1, "after delete: %llu rows", b ? (unsigned long long)b->row_count : 0);
	if (b && b->row_count == 1) {
		const moraine_string *v = b->columns[1].data;
		CHECK(((const int64_t *)b->columns[0].data)[0] == 1 && v->size == 2 && memcmp(v->data, "v2", 2) == 0,
		      "the updated row");
	}
	moraine_table_free(b);

	/* CREATE TABLE: an inlined-data table of any type; values of types the
	 * ABI has no form for travel as MORAINE_TYPE_DUCKDB, unchanged. */
	moraine_column_def icols[] = {{"row_id", "BIGINT", false}, {"begin_snapshot", "BIGINT", false},
	                              {"end_snapshot", "BIGINT", false}, {"h", "HUGEINT", false},
	                              {"ts", "TIMESTAMP WITH TIME ZONE", false}, {"b", "BLOB", false}};
	moraine_table_def idef = {"ducklake_inlined_data_1_1", 6, icols, -1};
	expect_ok("create_table", moraine_txn_create_table(txn, &idef, false, &err), &err);
	expect_ok("create_table IF NOT EXISTS", moraine_txn_create_table(txn, &idef, true, &err), &err);
	rc = moraine_txn_create_table(txn, &idef, false, &err);
	expect_error("create_table twice", rc, &err, MORAINE_ALREADY_EXISTS, "already exists");
	moraine_column_def ucols[] = {{"id", "BIGINT", false}};
	moraine_table_def udef = {"users", 1, ucols, -1};
	rc = moraine_txn_create_table(txn, &udef, true, &err);
	expect_error("create_table users", rc, &err, MORAINE_UNSUPPORTED, "moraine serves DuckLake's metadata tables only");
	moraine_table_def kdef = {"ducklake_inlined_data_1_2", 6, icols, 9};
	rc = moraine_txn_create_table(txn, &kdef, false, &err);
	expect_error("create_table with primary_key 9", rc, &err, MORAINE_INVALID_ARGUMENT, "primary_key 9");
	/* DROP TABLE: inlined-data tables only; a dropped table is no longer
	 * listed, and IF EXISTS leaves a missing one alone. */
	moraine_table_def ddef = {"ducklake_inlined_data_1_9", 6, icols, -1};
	expect_ok("create_table to drop", moraine_txn_create_table(txn, &ddef, false, &err), &err);
	expect_ok("drop_table", moraine_txn_drop_table(txn, "ducklake_inlined_data_1_9", false, &err), &err);
	expect_ok("drop_table IF EXISTS", moraine_txn_drop_table(txn, "ducklake_inlined_data_1_9", true, &err), &err);
	rc = moraine_txn_drop_table(txn, "ducklake_inlined_data_1_9", false, &err);
	expect_error("drop_table twice", rc, &err, MORAINE_NOT_FOUND, "does not exist");
	rc = moraine_txn_drop_table(txn, "ducklake_tag", false, &err);
	expect_error("drop_table ducklake_tag", rc, &err, MORAINE_UNSUPPORTED, "never dropped");
	rc = moraine_txn_drop_table(txn, NULL, true, &err);
	expect_error("drop_table NULL", rc, &err, MORAINE_INVALID_ARGUMENT, "name must not be NULL");
	/* ALTER TABLE: metadata tables only; a missing column; NULL arguments.
	 * (Adding one would hold the commit to a spec's shapes: the storage
	 * tests migrate a lake through DuckDB.) */
	moraine_column_def xcol = {"x", "VARCHAR", false};
	rc = moraine_txn_add_column(txn, "ducklake_inlined_data_1_1", &xcol, "d", false, &err);
	expect_error("add_column to an inlined-data table", rc, &err, MORAINE_UNSUPPORTED, "metadata tables of a lake only");
	rc = moraine_txn_drop_column(txn, "ducklake_tag", "nope", false, &err);
	expect_error("drop_column nope", rc, &err, MORAINE_NOT_FOUND, "nope");
	expect_ok("drop_column IF EXISTS", moraine_txn_drop_column(txn, "ducklake_tag", "nope", true, &err), &err);
	rc = moraine_txn_add_column(txn, "ducklake_tag", NULL, NULL, false, &err);
	expect_error("add_column NULL", rc, &err, MORAINE_INVALID_ARGUMENT, "must not be NULL");
	moraine_table_list *tl = NULL;
	expect_ok("txn_tables", moraine_txn_tables(txn, &tl, &err), &err);
	CHECK(tl && tl->table_count == 23 && strcmp(tl->tables[22].name, "ducklake_inlined_data_1_1") == 0 &&
	          strcmp(tl->tables[22].columns[3].type, "HUGEINT") == 0,
	      "tables after the create: %llu", tl ? (unsigned long long)tl->table_count : 0);
	moraine_table_list_free(tl);
	expect_ok("txn_tables(other)", moraine_txn_tables(other, &tl, &err), &err);
	CHECK(tl && tl->table_count == 22, "another transaction lists %llu tables", tl ? (unsigned long long)tl->table_count : 0);
	moraine_table_list_free(tl);

	const char enc[] = {0x64, 0x00, (char)0xff, 0x01};
	const char blob[] = {0x00, 0x01};
	moraine_value ts = int_value(1768384800123456LL);
	ts.type = MORAINE_TYPE_TIMESTAMP_TZ;
	moraine_value inl[] = {int_value(0), int_value(1), null_value(), bytes_value(MORAINE_TYPE_DUCKDB, enc, 4), ts,
	                       bytes_value(MORAINE_TYPE_BLOB, blob, 2)};
	moraine_rows inl_rows = {6, 1, inl};
	expect_ok("insert encoded", moraine_txn_insert(txn, "ducklake_inlined_data_1_1", &inl_rows, &err), &err);
	uint64_t icol[] = {3, 4, 5};
	b = scan_rows(txn, "ducklake_inlined_data_1_1", icol, 3);
	CHECK(b && b->row_count == 1, "inlined rows");
	if (b && b->row_count == 1) {
		const moraine_string *e = b->columns[0].data, *bl = b->columns[2].data;
		CHECK(b->columns[0].type == MORAINE_TYPE_DUCKDB && e->size == 4 && memcmp(e->data, enc, 4) == 0,
		      "encoded cell: type %d size %llu", b->columns[0].type, (unsigned long long)e->size);
		CHECK(b->columns[1].type == MORAINE_TYPE_TIMESTAMP_TZ &&
		          ((const int64_t *)b->columns[1].data)[0] == 1768384800123456LL,
		      "timestamp cell: type %d", b->columns[1].type);
		CHECK(b->columns[2].type == MORAINE_TYPE_BLOB && bl->size == 2 && memcmp(bl->data, blob, 2) == 0,
		      "blob cell: type %d", b->columns[2].type);
	}
	moraine_table_free(b);

	/* Ending without a commit is a rollback. */
	moraine_txn_end(txn);
	expect_ok("txn_begin(after rollback)", moraine_txn_begin(lake, &txn, &err), &err);
	CHECK(row_count(txn, "ducklake_tag") == 0, "a rolled-back insert is seen");
	expect_ok("txn_tables(after rollback)", moraine_txn_tables(txn, &tl, &err), &err);
	CHECK(tl && tl->table_count == 22, "a rolled-back create is listed");
	moraine_table_list_free(tl);

	/* A transaction that wrote nothing commits nothing; the handle stays
	 * valid until moraine_txn_end and takes no more writes or commits. */
	moraine_info before, after;
	expect_ok("info", moraine_catalog_info(lake, &before, &err), &err);
	expect_ok("commit (read-only)", moraine_txn_commit(txn, &err), &err);
	expect_ok("info", moraine_catalog_info(lake, &after, &err), &err);
	CHECK(before.head_batch_seq == after.head_batch_seq, "a read-only commit moved the head");
	CHECK(row_count(txn, "ducklake_tag") == 0, "reads after commit");
	rc = moraine_txn_commit(txn, &err);
	expect_error("commit twice", rc, &err, MORAINE_INVALID_ARGUMENT, "committed already");
	rc = moraine_txn_insert(txn, "ducklake_tag", &rows, &err);
	expect_error("insert after commit", rc, &err, MORAINE_INVALID_ARGUMENT, "the transaction has committed");
	moraine_txn_end(txn);
	rc = moraine_txn_commit(txn, &err);
	expect_error("commit after end", rc, &err, MORAINE_INVALID_ARGUMENT, "not a live moraine_txn handle");
	rc = moraine_txn_delete(txn, "ducklake_tag", NULL, 0, NULL, &err);
	expect_error("delete after end", rc, &err, MORAINE_INVALID_ARGUMENT, "not a live moraine_txn handle");

	moraine_txn_end(other);
	expect_ok("detach(writes)", moraine_detach(lake, &err), &err);
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: %s <scratch directory>\n", argv[0]);
		return 2;
	}
	snprintf(scratch, sizeof(scratch), "%s", argv[1]);
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
	if (system(cmd) != 0) {
		fprintf(stderr, "cannot clear %s\n", scratch);
		return 2;
	}
	mkdir(scratch, 0755);
	test_attach();
	test_functions();
	test_storage();
	test_writes();
	test_panic();
	if (failures > 0) {
		fprintf(stderr, "moraine_host_test: %d check(s) failed\n", failures);
		return 1;
	}
	printf("moraine_host_test: all checks passed\n");
	return 0;
}
