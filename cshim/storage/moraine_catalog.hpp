//===----------------------------------------------------------------------===//
// moraine storage extension: an attached lake as a DuckDB catalog
//
// ATTACH 'moraine:<uri>' AS m (...) / ATTACH '<uri>' AS m (TYPE moraine):
// one moraine_catalog handle for the store's own lake, schema main; every
// other schema is a named lake of the store (DuckLake's METADATA_SCHEMA),
// opened on first use as a handle of its own, tables per transaction.
// CREATE SCHEMA creates a lake (listed when its transaction commits). The
// catalog owns the handles and detaches them when DuckDB destroys it
// (DETACH, database shutdown). INSERT, UPDATE and DELETE are planned as the sinks of
// moraine_insert / moraine_update / moraine_delete; a READ_ONLY attach
// refuses them (and every other write).
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/catalog/catalog.hpp"
#include "duckdb/common/atomic.hpp"
#include "duckdb/common/case_insensitive_map.hpp"
#include "duckdb/common/mutex.hpp"
#include "duckdb/common/unordered_map.hpp"

#include "moraine_abi.hpp"

namespace duckdb {
class MoraineSchemaEntry;
class MoraineTransaction;

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
	//! The schema of the named lake: a published one (listed says it is,
	//! else the store is asked), or one txn created; nullptr if neither.
	optional_ptr<MoraineSchemaEntry> FindLake(const string &name, bool listed, optional_ptr<MoraineTransaction> txn);
	//! The entry of the named lake, opened (create: also when unpublished)
	//! on first use; keeps the first of racing opens.
	MoraineSchemaEntry &OpenLake(const string &name, bool create, bool published);

	moraine_catalog handle;
	string path;
	bool read_only;
	unique_ptr<MoraineSchemaEntry> main_schema;
	//! The named lakes opened so far (never removed: the binder may hold
	//! their entries), by name as DuckDB compares schema names.
	mutex lake_lock;
	case_insensitive_map_t<unique_ptr<MoraineSchemaEntry>> lakes;
	//! Whether the store's lakes were listed by this attach yet.
	atomic<bool> listed {false};
	mutex type_lock;
	unordered_map<string, LogicalType> types;
};

} // namespace duckdb
