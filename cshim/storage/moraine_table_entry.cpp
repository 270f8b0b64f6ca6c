#include "moraine_table_entry.hpp"

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
	return TableStorageInfo();
}

virtual_column_map_t MoraineTableEntry::GetVirtualColumns() const {
	return MoraineScan::VirtualColumns();
}

vector<column_t> MoraineTableEntry::GetRowIdColumns() const {
	return {COLUMN_IDENTIFIER_ROW_ID};
}

} // namespace duckdb
