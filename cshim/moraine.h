/*
 * moraine.h: the C ABI of moraine.duckdb_extension (libmoraine.so).
 *
 * The library is a Go c-archive (package extension) linked with the C shim
 * (cshim/moraine_extension.c). DuckDB loads it as an extension through
 * moraine_init_c_api; a C or C++ host (or a future C++ storage shim built
 * against DuckDB's source) can link it and call the functions below
 * directly. Nothing here needs duckdb.h.
 *
 * Conventions, for every function:
 *
 *   - Return value: an error code (MORAINE_OK = 0 on success). On failure,
 *     when err is not NULL, err->code repeats the code and err->message is a
 *     NUL-terminated UTF-8 message allocated by the library; release it with
 *     moraine_error_free. On success err->code is MORAINE_OK and
 *     err->message is NULL. err may be NULL (the message is then dropped).
 *     Whatever err held before the call is overwritten, not freed: free a
 *     message before reusing its moraine_error.
 *   - Strings passed in are borrowed: NUL-terminated UTF-8, read during the
 *     call only; the library keeps no pointer to caller memory.
 *   - Handles (moraine_catalog, moraine_instance, moraine_bound) are opaque
 *     64-bit integers, never pointers; 0 is never a valid handle. Using a
 *     released handle is refused with MORAINE_INVALID_ARGUMENT, never
 *     undefined behaviour.
 *   - Every function may be called from any thread, concurrently.
 *   - A panic inside the library is caught and returned as
 *     MORAINE_INTERNAL; it never unwinds into the caller.
 */
#ifndef MORAINE_H
#define MORAINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Error codes -------------------------------------------------------
 * Wire values, pinned: never renumbered or reused. The DuckDB exception a
 * C++ shim should raise for each is given after it. */
#define MORAINE_OK 0               /* success */
#define MORAINE_NOT_FOUND 1        /* CatalogException */
#define MORAINE_ALREADY_EXISTS 2   /* CatalogException */
#define MORAINE_CONSTRAINT 3       /* ConstraintException (a NOT NULL or PRIMARY KEY violation) */
#define MORAINE_COMMIT_CONFLICT 4  /* TransactionException (the only message containing "conflict") */
#define MORAINE_CORRUPTION 5       /* IOException */
#define MORAINE_STORE 6            /* IOException (also configuration errors) */
#define MORAINE_INVALID_ARGUMENT 7 /* InvalidInputException (bad arguments, bad attach options) */
#define MORAINE_INTERNAL 8         /* InternalException (a caught panic, a bug) */
#define MORAINE_INTERRUPTED 9      /* InterruptException */
#define MORAINE_RETRY_EXHAUSTED 10 /* TransactionException */
#define MORAINE_FENCED 11          /* IOException (another read-write attach took the lake) */
#define MORAINE_MIGRATION 12       /* IOException (the store's format needs a migration or a newer moraine) */
#define MORAINE_SNAPSHOT_EXPIRED 13 /* CatalogException */
#define MORAINE_UNSUPPORTED 14     /* NotImplementedException */
#define MORAINE_OPEN_RACED 15      /* IOException (attach again) */
#define MORAINE_OUTCOME_UNKNOWN 16 /* IOException (a commit that may or may not have landed: check the lake's
                                    * snapshots before running it again; never a conflict DuckLake retries) */

/* An error: code and message. The message is owned by the library until
 * moraine_error_free. */
typedef struct moraine_error {
	int32_t code;
	char *message;
} moraine_error;

/* Frees err->message and resets err to MORAINE_OK / NULL. err may be NULL;
 * calling it twice is harmless. */
void moraine_error_free(moraine_error *err);

/* ---- Attaching a lake (the single-writer path) -------------------------- */

/* An attached lake. */
typedef uint64_t moraine_catalog;

/* S3 settings for s3:// stores. Every string may be NULL or "" (not given:
 * the AWS environment and defaults apply). url_style is "path" or "vhost".
 * use_ssl is -1 (not given), 0 or 1. The settings are ignored when neither
 * the path nor the WAL store is an s3:// URI, so a host may always pass
 * them. */
typedef struct moraine_s3_config {
	const char *key_id;
	const char *secret;
	const char *region;
	const char *session_token;
	const char *endpoint;
	const char *url_style;
	int32_t use_ssl;
} moraine_s3_config;

/* flush_interval_ms: 0 means "not given" (the default: upload as soon as a
 * commit waits); MORAINE_FLUSH_CONTINUOUS asks for that explicitly. */
#define MORAINE_FLUSH_CONTINUOUS UINT64_MAX

/* An attach option as the host received it: a name (any case; a META_
 * prefix, as DuckLake users write it, is ignored; NULL or "" is refused)
 * and its value, which must not be a NULL pointer. The value is taken as
 * a BOOLEAN, BIGINT or UBIGINT, a VARCHAR, or an OTHER as its text (a
 * string; an OTHER integer literal as a BIGINT or UBIGINT, a string
 * literal as a VARCHAR); MORAINE_TYPE_NULL is refused naming the option,
 * and every other type (DOUBLE, BLOB, TIMESTAMP_TZ, LIST, STRUCT, DUCKDB,
 * ABSENT) is refused. */
typedef struct moraine_value moraine_value;
typedef struct moraine_option {
	const char *name;
	const struct moraine_value *value;
} moraine_option;

/* moraine_commit_log_options.flags */
#define MORAINE_ATTACH_LEAVE_EMPTY 1u /* a read-write attach of an empty store writes no genesis: the handle
                                       * holds no lake (moraine_txn_tables lists none) */

/* Commit-log options (RFC 0024), and since version 2 the host's attach
 * options. Without a commit-log provider registered in the process (the
 * plain build registers none) tail and poll_interval_ms are checked and
 * carried but have no effect; reader_poll_interval_ms always applies.
 *
 *   size                     set to sizeof(moraine_commit_log_options); lets
 *                            later versions append fields (version 1 ends
 *                            at wal_store)
 *   tail                     a read-only attach tails the commit log
 *                            (COMMIT_LOG_TAIL; needs read_only)
 *   poll_interval_ms         a committer's commit-log poll
 *                            (COMMIT_LOG_POLL_INTERVAL_MS; 0 = not given;
 *                            not with read_only)
 *   reader_poll_interval_ms  how often a reader looks for new commits
 *                            (READER_POLL_INTERVAL_MS; 0 = not given: 10 s)
 *   wal_store                store URI for the WAL / commit log (WAL_STORE;
 *                            NULL = none), opened with the same S3 settings
 *   option_count, options    (version 2) every further attach option, by
 *                            name (at most 65536 of them). Each value is
 *                            read as moraine_option says, then checked by
 *                            the SQL attach's option rules: an unknown name
 *                            or a bad value is refused naming it and what
 *                            is accepted, and an option given twice (here
 *                            and as an argument) is refused. Read during
 *                            the call only.
 *   flags                    (version 2) MORAINE_ATTACH_* */
typedef struct moraine_commit_log_options {
	uint32_t size;
	bool tail;
	uint64_t poll_interval_ms;
	uint64_t reader_poll_interval_ms;
	const char *wal_store;
	uint64_t option_count;
	const moraine_option *options;
	uint32_t flags;
} moraine_commit_log_options;

/* Attaches the lake at path (a store URI: /abs/dir, ./dir, file:///dir,
 * memory://name, s3://bucket/prefix), read-only or read-write (creating
 * the catalog in an empty store), and stores its handle in *out.
 *
 *   s3          S3 settings, or NULL
 *   data_path   recorded when the catalog is created, or NULL / ""
 *   checkpoint  pins a read-only attach to an engine checkpoint (UUID), or
 *               NULL / ""; refused without read_only
 *   commit_log  commit-log options, or NULL (all not given)
 *
 * The options are checked first (the rules of the attach options, see
 * attach/ and extension/README.md); a refused option gives
 * MORAINE_INVALID_ARGUMENT naming it and nothing is opened. path and out
 * must not be NULL. Detach the handle with moraine_detach. */
int32_t moraine_attach_with_commit_log(const char *path, const moraine_s3_config *s3, bool read_only,
                                       const char *data_path, uint64_t flush_interval_ms, const char *checkpoint,
                                       const moraine_commit_log_options *commit_log, moraine_catalog *out,
                                       moraine_error *err);

/* The older entry point: moraine_attach_with_commit_log with commit_log
 * NULL. */
int32_t moraine_attach(const char *path, const moraine_s3_config *s3, bool read_only, const char *data_path,
                       uint64_t flush_interval_ms, const char *checkpoint, moraine_catalog *out, moraine_error *err);

/* Closes the catalog (a writer first waits for commits in flight) and
 * releases the handle, also when closing reports an error. */
int32_t moraine_detach(moraine_catalog catalog, moraine_error *err);

/* Roles: a writer (single-writer path), a committer (read-write on a
 * log-resident lake, through a commit-log provider), a reader, a tailing
 * reader (read-only with tail on a log-resident lake). */
#define MORAINE_ROLE_WRITER 1
#define MORAINE_ROLE_READER 2
#define MORAINE_ROLE_TAILING_READER 3
#define MORAINE_ROLE_COMMITTER 4

/* What moraine_catalog_info reports. */
typedef struct moraine_info {
	int32_t role;            /* MORAINE_ROLE_* */
	bool read_only;
	uint64_t format;         /* the store's format version */
	uint64_t head_snapshot;  /* the latest snapshot id this handle sees */
	uint64_t head_batch_seq; /* the head's batch counter */
	/* Storage-extension transactions of this attach that committed changes,
	 * and commits refused as conflicts (each a commit DuckLake retries or,
	 * after its last retry, gives up on). */
	uint64_t commits;
	uint64_t commit_conflicts;
	/* Claims of the next slot this attach landed before a retry (commit-log
	 * build: after commits refused three times in a row; 0 otherwise). */
	uint64_t claims;
} moraine_info;

/* Fills *out (not NULL) with the attached lake's role, format, head and
 * commit counts. On a store that holds no lake yet it returns
 * MORAINE_NOT_FOUND with role, read_only and the counts filled in (format
 * and head 0). */
int32_t moraine_catalog_info(moraine_catalog catalog, moraine_info *out, moraine_error *err);

/* What moraine_catalog_requests reports: the object-store requests the
 * attach made so far, by kind, as a table (free with moraine_table_free) of
 * columns store (VARCHAR: 'lake', or 'wal' for WAL_STORE), op (VARCHAR:
 * get, get-range, head, list, put, put-if-absent, put-if-match, delete) and
 * requests (BIGINT). */
typedef struct moraine_table moraine_table;
int32_t moraine_catalog_requests(moraine_catalog catalog, moraine_table **out, moraine_error *err);

/* ---- Several lakes in one store ------------------------------------------
 * The lake an attach opens is the store's own (DuckLake's metadata schema
 * "main"); the store may hold named lakes besides it, one per DuckLake
 * METADATA_SCHEMA, each a catalog of its own (its snapshots, ids, commits
 * and, on a log-resident store, its own commit log). Names compare ASCII
 * case-insensitively; "main" is the store's own and no named lake. */

/* The named lakes published in catalog's store, as a table (free with
 * moraine_table_free) of one column name (VARCHAR), by name. The store's
 * list is read again at most once per reader poll interval
 * (READER_POLL_INTERVAL_MS) unless fresh; a lake published through a
 * handle of this attach is listed at once. */
int32_t moraine_catalog_lakes(moraine_catalog catalog, bool fresh, moraine_table **out, moraine_error *err);

/* Sets *found to whether the lake named name is published in catalog's
 * store. */
int32_t moraine_catalog_find_lake(moraine_catalog catalog, const char *name, bool *found, moraine_error *err);

/* Opens the lake named name in catalog's store with catalog's attach
 * options (read-only when it is) into *out, a handle of its own: detach it
 * with moraine_detach, before or after catalog. Without create, a lake not
 * published is MORAINE_NOT_FOUND; with it, an unpublished lake opens too
 * (holding no lake until its first commit) and is listed once
 * moraine_catalog_publish_lake is called. */
int32_t moraine_catalog_open_lake(moraine_catalog catalog, const char *name, bool create, moraine_catalog *out,
                                  moraine_error *err);

/* Publishes (lists) the named lake lake was opened as; a published lake or
 * the store's own lake is left as it is. Call it before the lake's first
 * commit, so no committed lake goes unlisted. */
int32_t moraine_catalog_publish_lake(moraine_catalog lake, moraine_error *err);

/* ---- The storage extension: transactions, tables, scans -----------------
 * The C++ catalog of the DuckDB v1.4.4 storage extension drives these. A
 * transaction pins the lake's head when it begins: its table list and every
 * scan read that one head (DuckLake 0.3's metadata tables, see package
 * ducklake), so a commit landing meanwhile is seen by the next transaction
 * only. Pinning an unchanged head makes no object-store request. */

/* A DuckDB transaction on an attached lake. */
typedef uint64_t moraine_txn;

/* Begins a transaction on catalog: pins its current head. */
int32_t moraine_txn_begin(moraine_catalog catalog, moraine_txn *out, moraine_error *err);

/* Ends a transaction and releases its handle (0 is ignored). Without a
 * moraine_txn_commit before it, this is a rollback: the transaction's
 * writes are discarded. */
void moraine_txn_end(moraine_txn txn);

/* A column of a table: its name and DuckDB type (text DuckDB's type parser
 * reads, e.g. "BIGINT", "STRUCT(\"x\" DOUBLE)"), and whether it is NOT NULL. */
typedef struct moraine_column_def {
	const char *name;
	const char *type;
	bool not_null;
} moraine_column_def;

/* A table: name, columns, the index of its PRIMARY KEY column (-1: none). */
typedef struct moraine_table_def {
	const char *name;
	uint64_t column_count;
	const moraine_column_def *columns;
	int64_t primary_key;
} moraine_table_def;

/* The tables a transaction sees: those at its head, then those it created
 * (moraine_txn_create_table). has_lake is false for a store that holds no
 * lake at the head (no tables then, but for the ones the transaction
 * created). One allocation owned by the caller: free it with
 * moraine_table_list_free. */
typedef struct moraine_table_list {
	bool has_lake;
	uint64_t head_snapshot;
	uint64_t table_count;
	const moraine_table_def *tables;
} moraine_table_list;

/* Lists the tables of schema main the transaction sees; out must not be
 * NULL. */
int32_t moraine_txn_tables(moraine_txn txn, moraine_table_list **out, moraine_error *err);

/* Frees a table list (NULL is ignored). */
void moraine_table_list_free(moraine_table_list *list);

/* A scan of one table. */
typedef uint64_t moraine_scan;

/* A projected column index meaning DuckDB's rowid: the row's index in the
 * table at the transaction's head; rows the transaction inserted follow
 * (the i-th inserted has rowid head rows + i). Stable for the transaction. */
#define MORAINE_COLUMN_ROWID UINT64_MAX

/* Filter operators: column <op> value; IS_NULL / IS_NOT_NULL take no value. */
#define MORAINE_FILTER_EQ 1
#define MORAINE_FILTER_NE 2
#define MORAINE_FILTER_LT 3
#define MORAINE_FILTER_LE 4
#define MORAINE_FILTER_GT 5
#define MORAINE_FILTER_GE 6
#define MORAINE_FILTER_IS_NULL 7
#define MORAINE_FILTER_IS_NOT_NULL 8

/* A filter on a column (its index in the table), value BIGINT, UBIGINT,
 * VARCHAR or BOOLEAN. Filters are hints: the scan skips only rows a filter
 * certainly rejects, and the host applies its filters to what it returns. */
typedef struct moraine_filter {
	uint64_t column;
	int32_t op;
	const struct moraine_value *value;
} moraine_filter;

/* Opens a scan of the named table as the transaction sees it (its head
 * with the transaction's own writes, as they are when the scan opens),
 * returning the columns listed (indexes into the table's columns, or
 * MORAINE_COLUMN_ROWID). Arrays (at most 1 << 20 columns and as many
 * filters) are read during the call only. */
int32_t moraine_scan_open(moraine_txn txn, const char *table, const uint64_t *columns, uint64_t column_count,
                          const moraine_filter *filters, uint64_t filter_count, moraine_scan *out, moraine_error *err);

/* Returns the next rows (at most max_rows, capped at 1048576 = 1 << 20;
 * 0 means 2048) in *out, one column per projected column in order; a
 * table of zero rows at the end.
 * Each column's MORAINE_TYPE_* is chosen per batch from the values (a
 * value written as MORAINE_TYPE_DUCKDB comes back as one); the host casts
 * it to the column's declared type. Free *out with moraine_table_free. */
int32_t moraine_scan_next(moraine_scan scan, uint64_t max_rows, moraine_table **out, moraine_error *err);

/* Releases a scan (0 is ignored). */
void moraine_scan_close(moraine_scan scan);

/* ---- The storage extension: writes -------------------------------------
 * A transaction's writes stay in the library, visible to its own table
 * list and scans only, until moraine_txn_commit hands them to the catalog
 * as one commit; moraine_txn_end without a commit discards them. Each call
 * is one statement's batch and is atomic: refused, it changes nothing.
 * Refusals: MORAINE_NOT_FOUND (no such table), MORAINE_INVALID_ARGUMENT (a
 * bad shape, rowid or value type), MORAINE_CONSTRAINT (NULL in a NOT NULL
 * or PRIMARY KEY column, or a key another row of the transaction's view
 * holds: the message contains "Duplicate key" and "primary key", as
 * DuckDB's), MORAINE_ALREADY_EXISTS, MORAINE_UNSUPPORTED. Every pointer
 * argument is read during the call only. */

/* Rows of values, row-major: cells holds row_count * column_count values,
 * row r's value of column c at cells[r * column_count + c]. Values are
 * moraine_values of types NULL, BOOLEAN, BIGINT (every signed integer
 * type), UBIGINT (the unsigned ones), DOUBLE, VARCHAR (str/len; also UUID
 * as its text), BLOB (str/len), TIMESTAMP_TZ (microseconds since the epoch
 * in bigint) or DUCKDB (any other type, str/len its binary serialization);
 * the library copies what it keeps. */
typedef struct moraine_rows {
	uint64_t column_count;
	uint64_t row_count;
	const struct moraine_value *cells;
} moraine_rows;

/* Inserts rows into the named table: every column, in the table's column
 * order (column_count is the table's). */
int32_t moraine_txn_insert(moraine_txn txn, const char *table, const moraine_rows *rows, moraine_error *err);

/* Deletes the rows with these rowids (count of them; rowids may be NULL
 * when count is 0) and stores in *deleted (may be NULL) how many were
 * deleted: a rowid given twice or deleted before counts once or not at
 * all. A rowid the table never had is refused. */
int32_t moraine_txn_delete(moraine_txn txn, const char *table, const int64_t *rowids, uint64_t count,
                           uint64_t *deleted, moraine_error *err);

/* Updates columns (column_count indexes into the table's columns, each
 * once) of the rows with these rowids: rows->row_count rowids, row i of
 * rows (rows->column_count == column_count values) the new values of
 * rowids[i]. A rowid given twice takes its last values; primary keys are
 * checked after the whole batch. */
int32_t moraine_txn_update(moraine_txn txn, const char *table, const int64_t *rowids, const uint64_t *columns,
                           uint64_t column_count, const moraine_rows *rows, moraine_error *err);

/* Creates a table in the transaction: DuckLake 0.3's metadata tables (on a
 * store that holds no lake, each exactly as the contract defines it; a
 * PRIMARY KEY column is NOT NULL, as DuckDB's binder makes it) or a
 * ducklake_inlined_data_<table id>_<schema version> table (row_id,
 * begin_snapshot, end_snapshot BIGINT, then columns of any DuckDB type,
 * each type as DuckDB spells it, e.g. LogicalType::ToString(); no
 * constraint) or, on a DuckLake 1.0 lake, a ducklake_inlined_delete_<table
 * id> table (file_id, row_id, begin_snapshot BIGINT). With if_not_exists an existing table of that name is left
 * alone; without, it is MORAINE_ALREADY_EXISTS. Any other table is
 * MORAINE_UNSUPPORTED. The next moraine_txn_tables lists it. */
int32_t moraine_txn_create_table(moraine_txn txn, const moraine_table_def *def, bool if_not_exists,
                                 moraine_error *err);

/* Drops a table in the transaction: an inlined-data table
 * (ducklake_inlined_data_<table id>_<schema version>) or, on a DuckLake
 * 1.0 lake, an inlined-deletion table (ducklake_inlined_delete_<table
 * id>), with its rows. name is borrowed for the call. With if_exists a
 * table that does not exist is left alone; without, it is
 * MORAINE_NOT_FOUND. DuckLake's metadata tables are MORAINE_UNSUPPORTED.
 * The next moraine_txn_tables no longer lists it. */
int32_t moraine_txn_drop_table(moraine_txn txn, const char *name, bool if_exists, moraine_error *err);

/* ALTER TABLE of a metadata table of a lake, as DuckLake's migration of
 * a catalog sends it: adds a column (name, type as DuckDB spells it; every
 * row takes default_value, the text of the column's constant default, or
 * NULL when default_value is NULL) or drops one. All strings are borrowed
 * for the call. With if_not_exists / if_exists an existing (missing)
 * column is left alone; without, it is MORAINE_ALREADY_EXISTS
 * (MORAINE_NOT_FOUND). Inlined-data tables and stores without a lake are
 * MORAINE_UNSUPPORTED. The next moraine_txn_tables lists the table in its
 * new shape. The commit of a transaction that altered tables must leave
 * every metadata table as the DuckLake version it records defines it. */
int32_t moraine_txn_add_column(moraine_txn txn, const char *table, const moraine_column_def *column,
                               const char *default_value, bool if_not_exists, moraine_error *err);
int32_t moraine_txn_drop_column(moraine_txn txn, const char *table, const char *column, bool if_exists,
                                moraine_error *err);

/* Commits the transaction's writes as one commit against its head (a
 * transaction that wrote nothing commits nothing and makes no request). A
 * head that moved meanwhile is MORAINE_COMMIT_CONFLICT. Whatever the
 * outcome, the transaction takes no further write or commit; its handle
 * stays valid until moraine_txn_end, which releases it (a failed commit
 * left nothing behind). */
int32_t moraine_txn_commit(moraine_txn txn, moraine_error *err);

/* What moraine_runtime_info reports: the library's live handles by kind
 * and its Go runtime's goroutines (not counting the idle ones the runtime
 * keeps for host threads that called into Go and returned), so a host can
 * check that what it released is gone (a DETACH leaves no catalog,
 * transaction, scan or goroutine behind). */
typedef struct moraine_runtime {
	uint64_t catalogs;
	uint64_t transactions;
	uint64_t scans;
	uint64_t goroutines;
} moraine_runtime;

/* Fills *out (not NULL). */
int32_t moraine_runtime_info(moraine_runtime *out, moraine_error *err);

/* Sets the DuckLake catalog specification ("0.3" or "1.0"; version is
 * borrowed, not NULL) that the storage interface serves, for the whole
 * process, a store holding no lake yet and a lake that records no version
 * (one the Go API wrote) as: the one the host DuckDB's DuckLake writes. A
 * lake that records its version is served as that version whatever this
 * says. The storage extension calls it once when it loads (one process runs
 * one DuckDB); before any call it is "0.3". Another version is refused
 * (MORAINE_INVALID_ARGUMENT, naming the accepted ones). */
int32_t moraine_set_ducklake_version(const char *version, moraine_error *err);

/* ---- The SQL function interface ----------------------------------------
 * The table functions the DuckDB extension registers (moraine_attach,
 * moraine_lakes, moraine_ducklake_*, moraine_insert, ...), described and run
 * generically: the shim registers every function moraine_functions lists,
 * converts the call's arguments to moraine_values, binds, executes and
 * copies the resulting moraine_table into DuckDB's vectors. Lakes attached
 * through these functions belong to an instance (one per DuckDB database);
 * they are not moraine_catalog handles. */

/* Types of parameters, values and result columns. */
#define MORAINE_TYPE_NULL 0          /* values: SQL NULL */
#define MORAINE_TYPE_BOOLEAN 1
#define MORAINE_TYPE_BIGINT 2        /* values: every signed integer type */
#define MORAINE_TYPE_UBIGINT 3       /* values: every unsigned integer type */
#define MORAINE_TYPE_DOUBLE 4        /* values: DOUBLE and FLOAT */
#define MORAINE_TYPE_VARCHAR 5
#define MORAINE_TYPE_BLOB 6
#define MORAINE_TYPE_TIMESTAMP_TZ 7  /* results and storage writes: microseconds since the epoch (bigint in values) */
#define MORAINE_TYPE_LIST 8          /* values */
#define MORAINE_TYPE_STRUCT 9        /* values */
#define MORAINE_TYPE_OTHER 10        /* values: any other type, as its text */
#define MORAINE_TYPE_ANY 11          /* parameters: any type */
#define MORAINE_TYPE_ABSENT 12       /* values: a named parameter not given */
#define MORAINE_TYPE_DUCKDB 13       /* values (storage writes) and results (scans): a value of any DuckDB type in
                                      * DuckDB's binary serialization (BinarySerializer of a duckdb::Value, its
                                      * type included): str/len in values, moraine_string cells in columns */

/* A parameter: its name (named parameters; positional ones are named for
 * documentation) and MORAINE_TYPE_*. */
typedef struct moraine_param {
	const char *name;
	int32_t type;
} moraine_param;

/* A table function. */
typedef struct moraine_function {
	const char *name;
	const char *description;
	uint64_t param_count;
	const moraine_param *params; /* positional, all required */
	uint64_t named_count;
	const moraine_param *named; /* optional, by name */
} moraine_function;

/* Lists the table functions: *count gets their number. The array and every
 * string it points to are owned by the library and live as long as the
 * process; a function's index in it is what moraine_bind takes. NULL (and
 * *count 0) if the list cannot be built. */
const moraine_function *moraine_functions(uint64_t *count);

/* One argument. Owned by the caller; read during the call only.
 *   type        MORAINE_TYPE_*; the field of that type is meaningful
 *   duckdb_type the DuckDB type id (duckdb_type) it came from, 0 if none
 *   str, len    VARCHAR and OTHER: the text (not NUL-terminated); BLOB: bytes;
 *               DUCKDB: the serialized value
 *   bigint      BIGINT; TIMESTAMP_TZ: microseconds since the epoch
 *   children    LIST: the elements; STRUCT: the fields, with child_names */
typedef struct moraine_value {
	int32_t type;
	int32_t duckdb_type;
	bool boolean;
	int64_t bigint;
	uint64_t ubigint;
	double dbl;
	const char *str;
	uint64_t len;
	uint64_t child_count;
	const struct moraine_value *children;
	const char *const *child_names;
} moraine_value;

/* VARCHAR and BLOB cells. */
typedef struct moraine_string {
	const char *data;
	uint64_t size;
} moraine_string;

/* A result column: name, MORAINE_TYPE_*, and row_count cells.
 *   nulls  one byte per row, 1 for NULL
 *   data   one element per row: bool (BOOLEAN), int64_t (BIGINT,
 *          TIMESTAMP_TZ), uint64_t (UBIGINT), double (DOUBLE),
 *          moraine_string (VARCHAR, BLOB, DUCKDB) */
typedef struct moraine_column {
	const char *name;
	int32_t type;
	const uint8_t *nulls;
	const void *data;
} moraine_column;

/* A result table. One allocation owned by the caller: release it with
 * moraine_table_free. */
typedef struct moraine_table {
	uint64_t column_count;
	uint64_t row_count;
	const moraine_column *columns;
} moraine_table;

/* Frees a table (NULL is ignored). */
void moraine_table_free(moraine_table *table);

/* An instance: the lakes of one DuckDB database. */
typedef uint64_t moraine_instance;

/* Creates an instance holding one reference. */
moraine_instance moraine_instance_new(void);
/* Adds a reference. */
void moraine_instance_retain(moraine_instance instance);
/* Drops a reference; the last one detaches every lake of the instance. */
void moraine_instance_release(moraine_instance instance);

/* A bound call. */
typedef uint64_t moraine_bound;

/* Binds function number `function` of moraine_functions: args holds
 * arg_count positional values (exactly the function's param_count), named
 * holds named_count values in the order of the function's named parameters
 * (MORAINE_TYPE_ABSENT for those not given). Checks the arguments without
 * changing anything, stores the bound call in *out and its result columns
 * (a table of zero rows, to free with moraine_table_free) in *columns. */
int32_t moraine_bind(moraine_instance instance, uint64_t function, const moraine_value *args, uint64_t arg_count,
                     const moraine_value *named, uint64_t named_count, moraine_bound *out, moraine_table **columns,
                     moraine_error *err);

/* Executes a bound call (attaching, committing or reading) and stores its
 * result in *out (free with moraine_table_free). Its columns are those
 * bind reported. A bound call may be executed more than once. */
int32_t moraine_execute(moraine_bound bound, moraine_table **out, moraine_error *err);

/* Releases a bound call. */
void moraine_bound_free(moraine_bound bound);

#ifdef __cplusplus
}
#endif

#endif /* MORAINE_H */
