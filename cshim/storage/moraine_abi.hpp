//===----------------------------------------------------------------------===//
// moraine storage extension: the C ABI of the Go core, from C++
//
// cshim/moraine.h is the boundary; this header adds what every C++ file
// needs on top of it: errors raised as DuckDB exceptions by code, RAII for
// what the library allocates, DuckDB values turned into moraine_values
// (attach options and filter hints; the rows of writes) and back.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/common/error_data.hpp"
#include "duckdb/common/types/value.hpp"
#include "duckdb/common/unique_ptr.hpp"

#include "moraine.h"

#include <deque>

namespace duckdb {

//! Throws the DuckDB exception for a moraine error code (moraine.h pins the
//! mapping: NOT_FOUND -> CatalogException, CONSTRAINT ->
//! ConstraintException, COMMIT_CONFLICT -> TransactionException, ...). The
//! message is used as given.
[[noreturn]] void ThrowMoraineError(int32_t code, const string &message);

//! The same error as ErrorData (what a transaction manager's commit
//! returns).
ErrorData MoraineErrorData(int32_t code, const string &message);

//! An error out-parameter for one ABI call; frees the message.
class MoraineError {
public:
	MoraineError() {
		err.code = MORAINE_OK;
		err.message = nullptr;
	}
	~MoraineError() {
		moraine_error_free(&err);
	}
	MoraineError(const MoraineError &) = delete;
	MoraineError &operator=(const MoraineError &) = delete;

	moraine_error *Out() {
		moraine_error_free(&err);
		return &err;
	}
	//! Throws when rc is not MORAINE_OK; what prefixes the message.
	void Check(int32_t rc, const string &what);
	//! The error as ErrorData (none when rc is MORAINE_OK); what prefixes
	//! the message.
	ErrorData ToErrorData(int32_t rc, const string &what);

private:
	//! The message (what prefixes it), freed from err.
	string TakeMessage(int32_t rc, const string &what);

	moraine_error err;
};

//! Frees a moraine_table.
struct MoraineTableDeleter {
	void operator()(moraine_table *t) const {
		moraine_table_free(t);
	}
};
using MoraineTablePtr = unique_ptr<moraine_table, MoraineTableDeleter>;

//! A moraine_value holding a DuckDB value: BOOLEAN, BIGINT (the signed
//! integers), UBIGINT (the unsigned ones), NULL, or VARCHAR (everything
//! else, as its text). Keeps the text alive as long as it lives.
class MoraineValue {
public:
	explicit MoraineValue(const Value &value);
	MoraineValue(const MoraineValue &) = delete;
	MoraineValue &operator=(const MoraineValue &) = delete;

	const moraine_value *Get() const {
		return &value;
	}

private:
	moraine_value value;
	string text;
};

//! Rows of values for the ABI's writes (moraine_rows), appended cell by
//! cell in row-major order. Values cross natively where the ABI has a form
//! for them: BOOLEAN, the integers (BIGINT / UBIGINT), DOUBLE, VARCHAR,
//! BLOB, TIMESTAMP WITH TIME ZONE (microseconds), UUID (as its text); every
//! other type (DECIMAL, HUGEINT, DATE, TIMESTAMP, INTERVAL, FLOAT, STRUCT,
//! LIST, MAP, aliased types, ...) as MORAINE_TYPE_DUCKDB, DuckDB's binary
//! serialization of the Value, so it comes back exactly (MoraineDecodeValue).
class MoraineRows {
public:
	explicit MoraineRows(idx_t column_count);
	MoraineRows(const MoraineRows &) = delete;
	MoraineRows &operator=(const MoraineRows &) = delete;

	void Append(const Value &value);
	idx_t RowCount() const;
	//! The rows; valid until the next Append.
	moraine_rows Get() const;

private:
	idx_t column_count;
	vector<moraine_value> cells;
	//! The bytes of string cells (a deque: growing never moves them).
	std::deque<string> bytes;
};

//! Decodes a MORAINE_TYPE_DUCKDB cell (DuckDB's binary serialization of a
//! Value).
Value MoraineDecodeValue(const moraine_string &cell);

} // namespace duckdb
