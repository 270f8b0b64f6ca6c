//===----------------------------------------------------------------------===//
// moraine storage extension: a schema of an attached store, one lake
//
// Schema main is the store's own lake; every other schema is a named lake
// of the store (DuckLake's METADATA_SCHEMA), a moraine_catalog handle of
// its own that the catalog opens on first use and detaches with itself.
// Its tables are the transaction's (MoraineTransaction): DuckLake's
// metadata tables and the lake's inlined-data tables at the lake's pinned
// head, and those the transaction created. CREATE TABLE [IF NOT EXISTS]
// goes to the transaction (moraine_txn_create_table: Go decides which
// tables may be created); every other create, alter and drop is refused.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/catalog/catalog_entry/schema_catalog_entry.hpp"
#include "duckdb/common/atomic.hpp"

#include "moraine_abi.hpp"

namespace duckdb {

class MoraineSchemaEntry : public SchemaCatalogEntry {
public:
	//! The schema of the lake handle serves (the catalog keeps the handle).
	//! A published lake is listed in the store; an unpublished one was
	//! created by a transaction that has not committed yet.
	MoraineSchemaEntry(Catalog &catalog, CreateSchemaInfo &info, moraine_catalog handle, bool published);

	moraine_catalog Handle() const {
		return handle;
	}
	bool Published() const {
		return published;
	}
	void SetPublished() {
		published = true;
	}

	optional_ptr<CatalogEntry> CreateTable(CatalogTransaction transaction, BoundCreateTableInfo &info) override;
	optional_ptr<CatalogEntry> CreateFunction(CatalogTransaction transaction, CreateFunctionInfo &info) override;
	optional_ptr<CatalogEntry> CreateIndex(CatalogTransaction transaction, CreateIndexInfo &info,
	                                       TableCatalogEntry &table) override;
	optional_ptr<CatalogEntry> CreateView(CatalogTransaction transaction, CreateViewInfo &info) override;
	optional_ptr<CatalogEntry> CreateSequence(CatalogTransaction transaction, CreateSequenceInfo &info) override;
	optional_ptr<CatalogEntry> CreateTableFunction(CatalogTransaction transaction,
	                                               CreateTableFunctionInfo &info) override;
	optional_ptr<CatalogEntry> CreateCopyFunction(CatalogTransaction transaction,
	                                              CreateCopyFunctionInfo &info) override;
	optional_ptr<CatalogEntry> CreatePragmaFunction(CatalogTransaction transaction,
	                                                CreatePragmaFunctionInfo &info) override;
	optional_ptr<CatalogEntry> CreateCollation(CatalogTransaction transaction, CreateCollationInfo &info) override;
	optional_ptr<CatalogEntry> CreateType(CatalogTransaction transaction, CreateTypeInfo &info) override;
	void Alter(CatalogTransaction transaction, AlterInfo &info) override;
	void Scan(ClientContext &context, CatalogType type, const std::function<void(CatalogEntry &)> &callback) override;
	void Scan(CatalogType type, const std::function<void(CatalogEntry &)> &callback) override;
	void DropEntry(ClientContext &context, DropInfo &info) override;
	optional_ptr<CatalogEntry> LookupEntry(CatalogTransaction transaction, const EntryLookupInfo &lookup_info) override;

private:
	moraine_catalog handle;
	atomic<bool> published;
};

} // namespace duckdb
