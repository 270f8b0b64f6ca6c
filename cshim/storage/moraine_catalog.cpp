#include "moraine_catalog.hpp"

#include "duckdb/catalog/entry_lookup_info.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/common/exception/binder_exception.hpp"
#include "duckdb/execution/physical_plan_generator.hpp"
#include "duckdb/parser/parsed_data/create_schema_info.hpp"
#include "duckdb/parser/parsed_data/drop_info.hpp"
#include "duckdb/planner/expression/bound_reference_expression.hpp"
#include "duckdb/planner/operator/logical_delete.hpp"
#include "duckdb/planner/operator/logical_insert.hpp"
#include "duckdb/planner/operator/logical_update.hpp"
#include "duckdb/storage/database_size.hpp"

#include "moraine_delete.hpp"
#include "moraine_duckdb_compat.hpp"
#include "moraine_insert.hpp"
#include "moraine_schema_entry.hpp"
#include "moraine_table_entry.hpp"
#include "moraine_transaction.hpp"
#include "moraine_update.hpp"

namespace duckdb {

MoraineCatalog::MoraineCatalog(AttachedDatabase &db, moraine_catalog handle_p, string path_p, bool read_only_p)
    : Catalog(db), handle(handle_p), path(std::move(path_p)), read_only(read_only_p) {
}

MoraineCatalog::~MoraineCatalog() {
	// A writer waits for commits in flight; an error closing cannot be
	// reported from a destructor, and the handles are released regardless.
	for (auto &lake : lakes) {
		moraine_detach(lake.second->Handle(), nullptr);
	}
	moraine_detach(handle, nullptr);
}

void MoraineCatalog::Initialize(bool load_builtin) {
	CreateSchemaInfo info;
	info.schema = DEFAULT_SCHEMA;
	main_schema = make_uniq<MoraineSchemaEntry>(*this, info, handle, true);
}

namespace {
bool IsMain(const string &name) {
	return StringUtil::CIEquals(name, DEFAULT_SCHEMA);
}
} // namespace

MoraineSchemaEntry &MoraineCatalog::OpenLake(const string &name, bool create, bool published) {
	{
		lock_guard<mutex> guard(lake_lock);
		auto it = lakes.find(name);
		if (it != lakes.end()) {
			if (published) {
				it->second->SetPublished();
			}
			return *it->second;
		}
	}
	// Opened unlocked (it reads the store); the first of racing opens is
	// kept and the others detached.
	MoraineError err;
	moraine_catalog lake = 0;
	err.Check(moraine_catalog_open_lake(handle, name.c_str(), create, &lake, err.Out()),
	          "moraine: opening the schema " + name + " of " + GetName());
	CreateSchemaInfo info;
	info.schema = name;
	auto entry = make_uniq<MoraineSchemaEntry>(*this, info, lake, published);
	lock_guard<mutex> guard(lake_lock);
	auto it = lakes.find(name);
	if (it != lakes.end()) {
		moraine_detach(lake, nullptr);
		if (published) {
			it->second->SetPublished();
		}
		return *it->second;
	}
	auto &result = *entry;
	lakes[name] = std::move(entry);
	return result;
}

optional_ptr<MoraineSchemaEntry> MoraineCatalog::FindLake(const string &name, bool listed,
                                                          optional_ptr<MoraineTransaction> txn) {
	optional_ptr<MoraineSchemaEntry> known;
	{
		lock_guard<mutex> guard(lake_lock);
		auto it = lakes.find(name);
		if (it != lakes.end()) {
			known = it->second.get();
		}
	}
	if (known && (known->Published() || (txn && txn->CreatedHere(*known)))) {
		return known;
	}
	if (!listed) {
		// Not known here, or created by a transaction that has not
		// committed: another process may have published it since.
		MoraineError err;
		bool found = false;
		err.Check(moraine_catalog_find_lake(handle, name.c_str(), &found, err.Out()),
		          "moraine: looking up the schema " + name + " of " + GetName());
		if (!found) {
			return nullptr;
		}
	}
	return &OpenLake(name, false, true);
}

optional_ptr<CatalogEntry> MoraineCatalog::CreateSchema(CatalogTransaction transaction, CreateSchemaInfo &info) {
	CheckWritable("CREATE SCHEMA");
	auto &txn = MoraineTransaction::Get(transaction, *this);
	if (IsMain(info.schema) || FindLake(info.schema, false, &txn)) {
		switch (info.on_conflict) {
		case OnCreateConflict::IGNORE_ON_CONFLICT:
			return nullptr;
		case OnCreateConflict::ERROR_ON_CONFLICT:
			throw CatalogException("moraine: schema \"%s\" already exists in \"%s\"", info.schema, GetName());
		default:
			throw NotImplementedException("moraine: CREATE OR REPLACE SCHEMA \"%s\" in \"%s\" is not supported (a "
			                              "schema is a lake, never replaced)",
			                              info.schema, GetName());
		}
	}
	// A lake of its own, listed when this transaction commits.
	auto &lake = OpenLake(info.schema, true, false);
	txn.Writes(lake, "CREATE SCHEMA " + info.schema);
	txn.Created(lake);
	return &lake;
}

void MoraineCatalog::DropSchema(ClientContext &context, DropInfo &info) {
	CheckWritable("DROP SCHEMA");
	throw NotImplementedException("moraine: DROP SCHEMA \"%s\" in \"%s\" is not supported: a schema is a lake, which "
	                              "stays once created",
	                              info.name, GetName());
}

void MoraineCatalog::ScanSchemas(ClientContext &context, std::function<void(SchemaCatalogEntry &)> callback) {
	callback(*main_schema);
	auto &txn = MoraineTransaction::Get(context, *this);
	MoraineError err;
	moraine_table *raw = nullptr;
	// The first listing of this attach reads the store's list now (another
	// process may have published a lake since this process last read it).
	bool fresh = !listed.exchange(true);
	err.Check(moraine_catalog_lakes(handle, fresh, &raw, err.Out()), "moraine: listing the schemas of " + GetName());
	MoraineTablePtr list(raw);
	case_insensitive_set_t seen;
	for (idx_t r = 0; r < list->row_count; r++) {
		auto &s = static_cast<const moraine_string *>(list->columns[0].data)[r];
		string name(s.data, s.size);
		seen.insert(name);
		callback(*FindLake(name, true, &txn));
	}
	// The store's list is refreshed once per reader poll interval: the
	// lakes published here since, and those this transaction created.
	vector<reference<MoraineSchemaEntry>> known;
	{
		lock_guard<mutex> guard(lake_lock);
		for (auto &entry : lakes) {
			if (entry.second->Published()) {
				known.push_back(*entry.second);
			}
		}
	}
	for (auto &lake : txn.CreatedLakes()) {
		known.push_back(lake);
	}
	for (auto &lake : known) {
		if (seen.insert(lake.get().name).second) {
			callback(lake.get());
		}
	}
}

optional_ptr<SchemaCatalogEntry> MoraineCatalog::LookupSchema(CatalogTransaction transaction,
                                                              const EntryLookupInfo &schema_lookup,
                                                              OnEntryNotFound if_not_found) {
	auto &name = schema_lookup.GetEntryName();
	if (IsMain(name)) {
		return main_schema.get();
	}
	optional_ptr<MoraineTransaction> txn;
	if (transaction.transaction || transaction.HasContext()) {
		txn = &MoraineTransaction::Get(transaction, *this);
	}
	auto lake = FindLake(name, false, txn);
	if (lake) {
		return lake.get();
	}
	if (if_not_found == OnEntryNotFound::RETURN_NULL) {
		return nullptr;
	}
	throw CatalogException("moraine: schema \"%s\" does not exist in \"%s\" (its schemas: main and the lakes CREATE "
	                       "SCHEMA made; duckdb_schemas() lists them)",
	                       name, GetName());
}

void MoraineCatalog::CheckWritable(const string &what) {
	if (read_only) {
		throw InvalidInputException("moraine: \"%s\" is attached read-only (READ_ONLY): %s is refused", GetName(),
		                            what);
	}
}

void MoraineCatalog::NotSupported(const string &what) {
	CheckWritable(what);
	throw NotImplementedException("moraine: %s in \"%s\" is not supported: moraine serves DuckLake's metadata tables, "
	                              "which take INSERT, UPDATE, DELETE and CREATE TABLE",
	                              what, GetName());
}

LogicalType MoraineCatalog::ParseType(const string &text) {
	{
		lock_guard<mutex> guard(type_lock);
		auto it = types.find(text);
		if (it != types.end()) {
			return it->second.DeepCopy();
		}
	}
	auto type = MoraineParseTypeText(text); // unlocked: the full parser
	lock_guard<mutex> guard(type_lock);
	types.emplace(text, type.DeepCopy());
	return type;
}

PhysicalOperator &MoraineCatalog::PlanCreateTableAs(ClientContext &context, PhysicalPlanGenerator &planner,
                                                    LogicalCreateTable &op, PhysicalOperator &plan) {
	NotSupported("CREATE TABLE AS");
}

PhysicalOperator &MoraineCatalog::PlanInsert(ClientContext &context, PhysicalPlanGenerator &planner,
                                             LogicalInsert &op, optional_ptr<PhysicalOperator> plan) {
	CheckWritable("INSERT");
	if (op.return_chunk) {
		throw NotImplementedException("moraine: INSERT ... RETURNING into \"%s\" is not supported", GetName());
	}
	if (op.on_conflict_info.action_type != OnConflictAction::THROW) {
		throw NotImplementedException("moraine: INSERT ... ON CONFLICT into \"%s\" is not supported", GetName());
	}
	if (!plan) {
		throw NotImplementedException("moraine: INSERT without rows into \"%s\" is not supported", GetName());
	}
	// A partial column list (INSERT INTO t (a, b) VALUES ...): complete the
	// rows with the other columns' defaults, NULL for these tables.
	if (!op.column_index_map.empty()) {
		plan = planner.ResolveDefaultsProjection(op, *plan);
	}
	auto &insert =
	    planner.Make<MoraineInsert>(op.types, op.table.Cast<MoraineTableEntry>(), op.estimated_cardinality);
	insert.children.push_back(*plan);
	return insert;
}

PhysicalOperator &MoraineCatalog::PlanDelete(ClientContext &context, PhysicalPlanGenerator &planner,
                                             LogicalDelete &op, PhysicalOperator &plan) {
	CheckWritable("DELETE");
	if (op.return_chunk) {
		throw NotImplementedException("moraine: DELETE ... RETURNING from \"%s\" is not supported", GetName());
	}
	auto &row_id = op.expressions[0]->Cast<BoundReferenceExpression>();
	auto &del = planner.Make<MoraineDelete>(op.types, op.table.Cast<MoraineTableEntry>(), row_id.index,
	                                        op.estimated_cardinality);
	del.children.push_back(plan);
	return del;
}

PhysicalOperator &MoraineCatalog::PlanUpdate(ClientContext &context, PhysicalPlanGenerator &planner,
                                             LogicalUpdate &op, PhysicalOperator &plan) {
	CheckWritable("UPDATE");
	if (op.return_chunk) {
		throw NotImplementedException("moraine: UPDATE ... RETURNING of \"%s\" is not supported", GetName());
	}
	auto &update = planner.Make<MoraineUpdate>(op.types, op.table.Cast<MoraineTableEntry>(), op.columns,
	                                           std::move(op.expressions), std::move(op.bound_defaults),
	                                           op.estimated_cardinality);
	update.children.push_back(plan);
	return update;
}

PhysicalOperator &MoraineCatalog::PlanMergeInto(ClientContext &context, PhysicalPlanGenerator &planner,
                                                LogicalMergeInto &op, PhysicalOperator &plan) {
	NotSupported("MERGE INTO (or INSERT ... ON CONFLICT)");
}

unique_ptr<LogicalOperator> MoraineCatalog::BindCreateIndex(Binder &binder, CreateStatement &stmt,
                                                            TableCatalogEntry &table,
                                                            unique_ptr<LogicalOperator> plan) {
	NotSupported("CREATE INDEX");
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
