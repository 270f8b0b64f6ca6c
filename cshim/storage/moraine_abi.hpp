//===----------------------------------------------------------------------===//
// moraine storage extension: the C ABI of the Go core, from C++
//
// cshim/moraine.h is the boundary; this header adds what every C++ file
// needs on top of it: errors raised as DuckDB exceptions by code, RAII for
// what the library allocates, and DuckDB values turned into moraine_values.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/common/types/value.hpp"
#include "duckdb/common/unique_ptr.hpp"

#include "moraine.h"

namespace duckdb {

//! Throws the DuckDB exception for a moraine error code (moraine.h pins the
//! mapping: NOT_FOUND -> CatalogException, COMMIT_CONFLICT ->
//! TransactionException, ...). The message is used as given.
[[noreturn]] void ThrowMoraineError(int32_t code, const string &message);

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

private:
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

} // namespace duckdb
