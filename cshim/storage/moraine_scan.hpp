//===----------------------------------------------------------------------===//
// moraine storage extension: scanning a table of the lake
//
// A table function over moraine_scan_open / moraine_scan_next: projection
// pushdown, the rowid virtual column, and filters on BIGINT, VARCHAR and
// BOOLEAN columns passed to the core as hints (pushdown_complex_filter
// reads them and leaves them in the plan, so DuckDB still applies every
// filter; the core only skips rows a filter certainly rejects). Rows come
// in batches in the C ABI's types and are cast to the declared column
// types; values of the types the ABI has no form for come as DuckDB's
// binary serialization (MORAINE_TYPE_DUCKDB) and are decoded.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/function/table_function.hpp"

#include "moraine_abi.hpp"

namespace duckdb {
class MoraineTableEntry;

//! A filter hint: column <op> constant, in the ABI's terms.
struct MoraineFilterHint {
	idx_t column;
	int32_t op;
	Value constant;
};

struct MoraineScanBindData : public TableFunctionData {
	MoraineScanBindData(MoraineTableEntry &entry, string table);

	//! The entry of the transaction that bound the scan; it lives as long
	//! as that transaction, so a bound scan is never cached beyond it.
	MoraineTableEntry &entry;
	Catalog &catalog;
	string table;
	vector<MoraineFilterHint> hints;

	unique_ptr<FunctionData> Copy() const override;
	bool Equals(const FunctionData &other) const override;
	bool SupportStatementCache() const override {
		return false;
	}
};

class MoraineScan {
public:
	static TableFunction GetFunction();
	static unique_ptr<FunctionData> Bind(MoraineTableEntry &table);
	static virtual_column_map_t VirtualColumns();
};

} // namespace duckdb
