#include "moraine_schema_entry.hpp"

#include "duckdb/catalog/entry_lookup_info.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/parser/parsed_data/create_schema_info.hpp"

#include "moraine_catalog.hpp"
#include "moraine_table_entry.hpp"
#include "moraine_transaction.hpp"

namespace duckdb {

MoraineSchemaEntry::MoraineSchemaEntry(Catalog &catalog, CreateSchemaInfo &info) : SchemaCatalogEntry(catalog, info) {
}

namespace {
[[noreturn]] void ReadOnlyLake(const Catalog &catalog, const string &what) {
	throw NotImplementedException("moraine: %s in \"%s\" is not supported yet: this build of the moraine storage "
	                              "extension serves DuckLake's metadata tables for reading only",
	                              what, catalog.GetName());
}
} // namespace

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateTable(CatalogTransaction transaction, BoundCreateTableInfo &info) {
	ReadOnlyLake(ParentCatalog(), "CREATE TABLE");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateFunction(CatalogTransaction transaction, CreateFunctionInfo &info) {
	ReadOnlyLake(ParentCatalog(), "CREATE FUNCTION");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateIndex(CatalogTransaction transaction, CreateIndexInfo &info,
                                                           TableCatalogEntry &table) {
	ReadOnlyLake(ParentCatalog(), "CREATE INDEX");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateView(CatalogTransaction transaction, CreateViewInfo &info) {
	ReadOnlyLake(ParentCatalog(), "CREATE VIEW");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateSequence(CatalogTransaction transaction, CreateSequenceInfo &info) {
	ReadOnlyLake(ParentCatalog(), "CREATE SEQUENCE");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateTableFunction(CatalogTransaction transaction,
                                                                   CreateTableFunctionInfo &info) {
	ReadOnlyLake(ParentCatalog(), "CREATE FUNCTION");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateCopyFunction(CatalogTransaction transaction,
                                                                  CreateCopyFunctionInfo &info) {
	ReadOnlyLake(ParentCatalog(), "CREATE FUNCTION");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreatePragmaFunction(CatalogTransaction transaction,
                                                                    CreatePragmaFunctionInfo &info) {
	ReadOnlyLake(ParentCatalog(), "CREATE FUNCTION");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateCollation(CatalogTransaction transaction,
                                                               CreateCollationInfo &info) {
	ReadOnlyLake(ParentCatalog(), "CREATE COLLATION");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateType(CatalogTransaction transaction, CreateTypeInfo &info) {
	ReadOnlyLake(ParentCatalog(), "CREATE TYPE");
}

void MoraineSchemaEntry::Alter(CatalogTransaction transaction, AlterInfo &info) {
	ReadOnlyLake(ParentCatalog(), "ALTER");
}

void MoraineSchemaEntry::DropEntry(ClientContext &context, DropInfo &info) {
	ReadOnlyLake(ParentCatalog(), "DROP");
}

void MoraineSchemaEntry::Scan(ClientContext &context, CatalogType type,
                              const std::function<void(CatalogEntry &)> &callback) {
	if (type != CatalogType::TABLE_ENTRY) {
		return;
	}
	auto &txn = MoraineTransaction::Get(context, ParentCatalog());
	txn.ScanTables([&](MoraineTableEntry &table) { callback(table); });
}

void MoraineSchemaEntry::Scan(CatalogType type, const std::function<void(CatalogEntry &)> &callback) {
	// Without a client context there is no transaction to read tables at.
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::LookupEntry(CatalogTransaction transaction,
                                                           const EntryLookupInfo &lookup_info) {
	auto type = lookup_info.GetCatalogType();
	if (type != CatalogType::TABLE_ENTRY) {
		return nullptr;
	}
	optional_ptr<MoraineTransaction> txn;
	if (transaction.transaction) {
		txn = &transaction.transaction->Cast<MoraineTransaction>();
	} else if (transaction.HasContext()) {
		txn = &MoraineTransaction::Get(transaction.GetContext(), ParentCatalog());
	} else {
		return nullptr;
	}
	auto table = txn->GetTable(lookup_info.GetEntryName());
	if (!table) {
		return nullptr;
	}
	return table.get();
}

} // namespace duckdb
