//===----------------------------------------------------------------------===//
// moraine storage extension: an attached lake as a DuckDB catalog
//
// ATTACH 'moraine:<uri>' AS m (...) / ATTACH '<uri>' AS m (TYPE moraine):
// one moraine_catalog handle, schema main, tables per transaction. The
// catalog owns the handle and detaches it when DuckDB destroys it (DETACH,
// database shutdown). INSERT, UPDATE and DELETE are planned as the sinks of
// moraine_insert / moraine_update / moraine_delete; a READ_ONLY attach
// refuses them (and every other write).
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/catalog/catalog.hpp"
#include "duckdb/common/mutex.hpp"
#include "duckdb/common/unordered_map.hpp"

#include "moraine_abi.hpp"

namespace duckdb {
class MoraineSchemaEntry;

class MoraineCatalog : public Catalog {
public:
	MoraineCatalog(AttachedDatabase &db, moraine_catalog handle, string path, bool read_only);
	~MoraineCatalog() override;

	moraine_catalog Handle() const {
		return handle;
	}
	//! Whether the lake was attached read-only.
	bool IsReadOnlyAttach() const {
		return read_only;
	}
	MoraineSchemaEntry &GetMainSchema() {
		return *main_schema;
	}
	//! Refuses a write on a READ_ONLY attach.
	void CheckWritable(const string &what);
	//! Refuses a statement moraine does not take (as a write on a
	//! READ_ONLY attach first).
	[[noreturn]] void NotSupported(const string &what);
	//! A column type from its text, as TransformStringToLogicalType reads
	//! it, parsed once per attach (each caller gets its own copy: nothing
	//! of its type info is shared).
	LogicalType ParseType(const string &text);

	void Initialize(bool load_builtin) override;
	string GetCatalogType() override {
		return "moraine";
	}
	optional_ptr<CatalogEntry> CreateSchema(CatalogTransaction transaction, CreateSchemaInfo &info) override;
	void ScanSchemas(ClientContext &context, std::function<void(SchemaCatalogEntry &)> callback) override;
	optional_ptr<SchemaCatalogEntry> LookupSchema(CatalogTransaction transaction, const EntryLookupInfo &schema_lookup,
	                                              OnEntryNotFound if_not_found) override;

	PhysicalOperator &PlanCreateTableAs(ClientContext &context, PhysicalPlanGenerator &planner, LogicalCreateTable &op,
	                                    PhysicalOperator &plan) override;
	PhysicalOperator &PlanInsert(ClientContext &context, PhysicalPlanGenerator &planner, LogicalInsert &op,
	                             optional_ptr<PhysicalOperator> plan) override;
	PhysicalOperator &PlanDelete(ClientContext &context, PhysicalPlanGenerator &planner, LogicalDelete &op,
	                             PhysicalOperator &plan) override;
	PhysicalOperator &PlanUpdate(ClientContext &context, PhysicalPlanGenerator &planner, LogicalUpdate &op,
	                             PhysicalOperator &plan) override;
	PhysicalOperator &PlanMergeInto(ClientContext &context, PhysicalPlanGenerator &planner, LogicalMergeInto &op,
	                                PhysicalOperator &plan) override;
	unique_ptr<LogicalOperator> BindCreateIndex(Binder &binder, CreateStatement &stmt, TableCatalogEntry &table,
	                                            unique_ptr<LogicalOperator> plan) override;

	DatabaseSize GetDatabaseSize(ClientContext &context) override;
	bool InMemory() override;
	string GetDBPath() override;

private:
	void DropSchema(ClientContext &context, DropInfo &info) override;

	moraine_catalog handle;
	string path;
	bool read_only;
	unique_ptr<MoraineSchemaEntry> main_schema;
	mutex type_lock;
	unordered_map<string, LogicalType> types;
};

} // namespace duckdb
