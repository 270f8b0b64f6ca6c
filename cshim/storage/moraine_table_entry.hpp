//===----------------------------------------------------------------------===//
// moraine storage extension: a table of the lake (a ducklake_* metadata
// table or an inlined-data table) at one transaction's head
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/catalog/catalog_entry/table_catalog_entry.hpp"

namespace duckdb {

class MoraineTableEntry : public TableCatalogEntry {
public:
	MoraineTableEntry(Catalog &catalog, SchemaCatalogEntry &schema, CreateTableInfo &info);

	unique_ptr<BaseStatistics> GetStatistics(ClientContext &context, column_t column_id) override;
	TableFunction GetScanFunction(ClientContext &context, unique_ptr<FunctionData> &bind_data) override;
	TableStorageInfo GetStorageInfo(ClientContext &context) override;
	virtual_column_map_t GetVirtualColumns() const override;
	vector<column_t> GetRowIdColumns() const override;
};

} // namespace duckdb
