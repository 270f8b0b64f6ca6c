#include "moraine_catalog.hpp"

#include "duckdb/catalog/entry_lookup_info.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/common/exception/binder_exception.hpp"
#include "duckdb/parser/parsed_data/create_schema_info.hpp"
#include "duckdb/storage/database_size.hpp"

#include "moraine_schema_entry.hpp"

namespace duckdb {

MoraineCatalog::MoraineCatalog(AttachedDatabase &db, moraine_catalog handle_p, string path_p, bool read_only_p)
    : Catalog(db), handle(handle_p), path(std::move(path_p)), read_only(read_only_p) {
}

MoraineCatalog::~MoraineCatalog() {
	// A writer waits for commits in flight; an error closing cannot be
	// reported from a destructor, and the handle is released regardless.
	moraine_detach(handle, nullptr);
}

void MoraineCatalog::Initialize(bool load_builtin) {
	CreateSchemaInfo info;
	info.schema = DEFAULT_SCHEMA;
	main_schema = make_uniq<MoraineSchemaEntry>(*this, info);
}

optional_ptr<CatalogEntry> MoraineCatalog::CreateSchema(CatalogTransaction transaction, CreateSchemaInfo &info) {
	throw NotImplementedException("moraine: a lake has the one schema \"main\"; CREATE SCHEMA \"%s\" in \"%s\" is not "
	                              "supported",
	                              info.schema, GetName());
}

void MoraineCatalog::DropSchema(ClientContext &context, DropInfo &info) {
	throw NotImplementedException("moraine: a lake's schema \"main\" cannot be dropped");
}

void MoraineCatalog::ScanSchemas(ClientContext &context, std::function<void(SchemaCatalogEntry &)> callback) {
	callback(*main_schema);
}

optional_ptr<SchemaCatalogEntry> MoraineCatalog::LookupSchema(CatalogTransaction transaction,
                                                              const EntryLookupInfo &schema_lookup,
                                                              OnEntryNotFound if_not_found) {
	auto &name = schema_lookup.GetEntryName();
	if (name == DEFAULT_SCHEMA || StringUtil::CIEquals(name, DEFAULT_SCHEMA)) {
		return main_schema.get();
	}
	if (if_not_found == OnEntryNotFound::RETURN_NULL) {
		return nullptr;
	}
	throw BinderException("moraine: schema \"%s\" does not exist in \"%s\" (a lake has the one schema \"main\")", name,
	                      GetName());
}

namespace {
[[noreturn]] void NoWrites(MoraineCatalog &catalog, const string &what) {
	if (catalog.IsReadOnlyAttach()) {
		throw InvalidInputException("moraine: \"%s\" is attached read-only (READ_ONLY): %s is refused",
		                            catalog.GetName(), what);
	}
	throw NotImplementedException("moraine: %s in \"%s\" is not supported yet: this build of the moraine storage "
	                              "extension serves DuckLake's metadata tables for reading only",
	                              what, catalog.GetName());
}
} // namespace

PhysicalOperator &MoraineCatalog::PlanCreateTableAs(ClientContext &context, PhysicalPlanGenerator &planner,
                                                    LogicalCreateTable &op, PhysicalOperator &plan) {
	NoWrites(*this, "CREATE TABLE AS");
}

PhysicalOperator &MoraineCatalog::PlanInsert(ClientContext &context, PhysicalPlanGenerator &planner,
                                             LogicalInsert &op, optional_ptr<PhysicalOperator> plan) {
	NoWrites(*this, "INSERT");
}

PhysicalOperator &MoraineCatalog::PlanDelete(ClientContext &context, PhysicalPlanGenerator &planner,
                                             LogicalDelete &op, PhysicalOperator &plan) {
	NoWrites(*this, "DELETE");
}

PhysicalOperator &MoraineCatalog::PlanUpdate(ClientContext &context, PhysicalPlanGenerator &planner,
                                             LogicalUpdate &op, PhysicalOperator &plan) {
	NoWrites(*this, "UPDATE");
}

unique_ptr<LogicalOperator> MoraineCatalog::BindCreateIndex(Binder &binder, CreateStatement &stmt,
                                                            TableCatalogEntry &table,
                                                            unique_ptr<LogicalOperator> plan) {
	NoWrites(*this, "CREATE INDEX");
}

DatabaseSize MoraineCatalog::GetDatabaseSize(ClientContext &context) {
	return DatabaseSize();
}

bool MoraineCatalog::InMemory() {
	return StringUtil::StartsWith(path, "memory://");
}

string MoraineCatalog::GetDBPath() {
	return path;
}

} // namespace duckdb
