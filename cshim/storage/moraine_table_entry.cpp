#include "moraine_table_entry.hpp"

#include "duckdb/parser/constraints/unique_constraint.hpp"
#include "duckdb/storage/table_storage_info.hpp"
#include "duckdb/storage/statistics/base_statistics.hpp"

#include "moraine_scan.hpp"

namespace duckdb {

MoraineTableEntry::MoraineTableEntry(Catalog &catalog, SchemaCatalogEntry &schema, CreateTableInfo &info)
    : TableCatalogEntry(catalog, schema, info) {
}

unique_ptr<BaseStatistics> MoraineTableEntry::GetStatistics(ClientContext &context, column_t column_id) {
	return nullptr;
}

TableFunction MoraineTableEntry::GetScanFunction(ClientContext &context, unique_ptr<FunctionData> &bind_data) {
	bind_data = MoraineScan::Bind(*this);
	return MoraineScan::GetFunction();
}

TableStorageInfo MoraineTableEntry::GetStorageInfo(ClientContext &context) {
	// The primary key, which the Go core enforces, as DuckDB's binder
	// expects to find it (ON CONFLICT targets, updates of key columns).
	TableStorageInfo result;
	for (auto &constraint : GetConstraints()) {
		if (constraint->type != ConstraintType::UNIQUE) {
			continue;
		}
		auto &unique = constraint->Cast<UniqueConstraint>();
		if (unique.HasIndex()) {
			IndexInfo info;
			info.is_unique = true;
			info.is_primary = unique.IsPrimaryKey();
			info.is_foreign = false;
			info.column_set.insert(unique.GetIndex().index);
			result.index_info.push_back(std::move(info));
		}
	}
	return result;
}

virtual_column_map_t MoraineTableEntry::GetVirtualColumns() const {
	return MoraineScan::VirtualColumns();
}

vector<column_t> MoraineTableEntry::GetRowIdColumns() const {
	return {COLUMN_IDENTIFIER_ROW_ID};
}

} // namespace duckdb
