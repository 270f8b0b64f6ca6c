#include "moraine_transaction.hpp"

#include "duckdb/parser/parsed_data/create_table_info.hpp"
#include "duckdb/parser/constraints/not_null_constraint.hpp"
#include "duckdb/parser/constraints/unique_constraint.hpp"
#include "duckdb/common/type_visitor.hpp"
#include "duckdb/common/types.hpp"
#include "duckdb/parser/parser.hpp"
#include "duckdb/transaction/meta_transaction.hpp"
#include "duckdb/catalog/catalog_transaction.hpp"

#include "moraine_catalog.hpp"
#include "moraine_duckdb_compat.hpp"
#include "moraine_schema_entry.hpp"
#include "moraine_table_entry.hpp"

namespace duckdb {

MoraineTransaction::MoraineTransaction(MoraineCatalog &catalog_p, TransactionManager &manager, ClientContext &context)
    : Transaction(manager, context), catalog(catalog_p) {
}

MoraineTransaction::~MoraineTransaction() {
	End();
}

MoraineTransaction &MoraineTransaction::Get(ClientContext &context, Catalog &catalog) {
	return Transaction::Get(context, catalog).Cast<MoraineTransaction>();
}

MoraineTransaction &MoraineTransaction::Get(CatalogTransaction transaction, Catalog &catalog) {
	if (transaction.transaction) {
		return transaction.transaction->Cast<MoraineTransaction>();
	}
	return Get(transaction.GetContext(), catalog);
}

MoraineTransaction::LakeState &MoraineTransaction::StateOf(MoraineSchemaEntry &lake) {
	auto &state = lakes[&lake];
	if (!state) {
		state = make_uniq<LakeState>();
	}
	return *state;
}

moraine_txn MoraineTransaction::Handle(MoraineSchemaEntry &lake) {
	lock_guard<mutex> guard(lock);
	auto &state = StateOf(lake);
	if (state.txn == 0) {
		MoraineError err;
		moraine_txn out = 0;
		err.Check(moraine_txn_begin(lake.Handle(), &out, err.Out()),
		          "moraine: beginning a transaction on " + catalog.GetName() + "." + lake.name);
		state.txn = out;
	}
	return state.txn;
}

void MoraineTransaction::End() {
	lock_guard<mutex> guard(lock);
	for (auto &entry : lakes) {
		if (entry.second->txn != 0) {
			moraine_txn_end(entry.second->txn);
			entry.second->txn = 0;
		}
	}
}

void MoraineTransaction::Writes(MoraineSchemaEntry &lake, const string &what) {
	lock_guard<mutex> guard(lock);
	if (written && written.get() != &lake) {
		throw TransactionException("moraine: a transaction writes to one lake (schema) of \"%s\": it wrote to \"%s\" "
		                           "(%s), so %s in \"%s\" is refused; lakes commit independently, so writes to two "
		                           "could not land together. Commit, then write to \"%s\" in a transaction of its own",
		                           catalog.GetName(), written->name, first_write, what, lake.name, lake.name);
	}
	if (!written) {
		written = &lake;
		first_write = what;
	}
}

void MoraineTransaction::Created(MoraineSchemaEntry &lake) {
	lock_guard<mutex> guard(lock);
	for (auto &c : created) {
		if (&c.get() == &lake) {
			return;
		}
	}
	created.push_back(lake);
}

bool MoraineTransaction::CreatedHere(MoraineSchemaEntry &lake) {
	lock_guard<mutex> guard(lock);
	for (auto &c : created) {
		if (&c.get() == &lake) {
			return true;
		}
	}
	return false;
}

vector<reference<MoraineSchemaEntry>> MoraineTransaction::CreatedLakes() {
	lock_guard<mutex> guard(lock);
	return created;
}

namespace {
struct TableListDeleter {
	void operator()(moraine_table_list *l) const {
		moraine_table_list_free(l);
	}
};
} // namespace

//! A column type from its text: the catalog's cached parse, or, for text
//! naming a type the parser does not know (USER: JSON, ...), that type
//! resolved through the client's catalogs when it can (uncached, so JSON
//! resolves once its extension is loaded).
static LogicalType ColumnType(MoraineCatalog &catalog, const string &text, const shared_ptr<ClientContext> &context) {
	auto type = catalog.ParseType(text);
	if (!context || !TypeVisitor::Contains(type, MORAINE_UNRESOLVED_TYPE)) {
		return type; // what resolving through the catalogs returns for it
	}
	try {
		return TransformStringToLogicalType(text, *context);
	} catch (std::exception &) {
		return type; // not a type the client knows: the plain parse
	}
}

unique_ptr<MoraineTableEntry> MoraineTransaction::MakeEntry(MoraineSchemaEntry &lake, const moraine_table_def &def) {
	auto client = context.lock();
	CreateTableInfo info(lake, def.name);
	for (idx_t c = 0; c < def.column_count; c++) {
		auto &col = def.columns[c];
		auto type = ColumnType(catalog, col.type, client);
		info.columns.AddColumn(ColumnDefinition(col.name, std::move(type)));
		if (col.not_null) {
			info.constraints.push_back(make_uniq<NotNullConstraint>(LogicalIndex(c)));
		}
	}
	if (def.primary_key >= 0) {
		info.constraints.push_back(make_uniq<UniqueConstraint>(LogicalIndex(NumericCast<idx_t>(def.primary_key)), true));
	}
	return make_uniq<MoraineTableEntry>(catalog, lake, info);
}

void MoraineTransaction::Load(MoraineSchemaEntry &lake) {
	{
		lock_guard<mutex> guard(lock);
		if (StateOf(lake).loaded) {
			return;
		}
	}
	Refresh(lake);
}

void MoraineTransaction::Refresh(MoraineSchemaEntry &lake) {
	auto handle = Handle(lake);
	MoraineError err;
	moraine_table_list *raw = nullptr;
	err.Check(moraine_txn_tables(handle, &raw, err.Out()),
	          "moraine: listing the tables of " + catalog.GetName() + "." + lake.name);
	unique_ptr<moraine_table_list, TableListDeleter> list(raw);
	// Entries already built are kept (the binder may hold them), the new
	// ones appended; a table dropped meanwhile left by_name (DropTable).
	vector<idx_t> missing;
	{
		lock_guard<mutex> guard(lock);
		auto &state = StateOf(lake);
		for (idx_t i = 0; i < list->table_count; i++) {
			if (state.by_name.find(list->tables[i].name) == state.by_name.end()) {
				missing.push_back(i);
			}
		}
	}
	// Built unlocked (resolving a type may look into catalogs).
	vector<unique_ptr<MoraineTableEntry>> fresh;
	for (auto i : missing) {
		fresh.push_back(MakeEntry(lake, list->tables[i]));
	}
	lock_guard<mutex> guard(lock);
	auto &state = StateOf(lake);
	for (auto &entry : fresh) {
		if (state.by_name.find(entry->name) != state.by_name.end()) {
			continue; // appended meanwhile by another caller
		}
		state.by_name[entry->name] = state.tables.size();
		state.tables.push_back(std::move(entry));
	}
	state.loaded = true;
}

ErrorData MoraineTransaction::Commit() {
	vector<moraine_txn> handles;
	vector<reference<MoraineSchemaEntry>> to_publish;
	{
		lock_guard<mutex> guard(lock);
		for (auto &entry : lakes) {
			if (entry.second->txn != 0) {
				handles.push_back(entry.second->txn);
			}
		}
		to_publish = created;
	}
	// A created lake is listed before its first commit lands, so no lake
	// that committed goes unlisted (a commit that then fails leaves an
	// empty lake listed, which DuckLake initializes when it next attaches).
	for (auto &lake : to_publish) {
		MoraineError err;
		auto error = err.ToErrorData(moraine_catalog_publish_lake(lake.get().Handle(), err.Out()),
		                             "moraine: creating the schema " + lake.get().name + " in " + catalog.GetName());
		if (error.HasError()) {
			return error;
		}
		lake.get().SetPublished();
	}
	// At most one lake has writes (Writes); the others commit nothing.
	for (auto handle : handles) {
		MoraineError err;
		auto error = err.ToErrorData(moraine_txn_commit(handle, err.Out()), "moraine: committing to " + catalog.GetName());
		if (error.HasError()) {
			return error;
		}
	}
	return ErrorData();
}

optional_ptr<MoraineTableEntry> MoraineTransaction::GetTable(MoraineSchemaEntry &lake, const string &name) {
	Load(lake);
	lock_guard<mutex> guard(lock);
	auto &state = StateOf(lake);
	auto it = state.by_name.find(name);
	if (it == state.by_name.end()) {
		return nullptr;
	}
	return state.tables[it->second].get();
}

void MoraineTransaction::DropTable(MoraineSchemaEntry &lake, const string &name, bool if_exists) {
	Load(lake);
	MoraineError err;
	// (the library's message names the table)
	err.Check(moraine_txn_drop_table(Handle(lake), name.c_str(), if_exists, err.Out()), "moraine");
	Rebuild(lake, name); // the table is listed no more
}

void MoraineTransaction::AddColumn(MoraineSchemaEntry &lake, const string &table, const moraine_column_def &column,
                                   const char *default_value, bool if_not_exists) {
	Load(lake);
	MoraineError err;
	// (the library's message names the table and column)
	err.Check(moraine_txn_add_column(Handle(lake), table.c_str(), &column, default_value, if_not_exists, err.Out()),
	          "moraine");
	Rebuild(lake, table);
}

void MoraineTransaction::DropColumn(MoraineSchemaEntry &lake, const string &table, const string &column,
                                    bool if_exists) {
	Load(lake);
	MoraineError err;
	err.Check(moraine_txn_drop_column(Handle(lake), table.c_str(), column.c_str(), if_exists, err.Out()), "moraine");
	Rebuild(lake, table);
}

void MoraineTransaction::Rebuild(MoraineSchemaEntry &lake, const string &table) {
	{
		lock_guard<mutex> guard(lock);
		auto &state = StateOf(lake);
		auto it = state.by_name.find(table);
		if (it != state.by_name.end()) {
			state.dropped.insert(it->second);
			state.by_name.erase(it);
		}
	}
	Refresh(lake);
}

void MoraineTransaction::ScanTables(MoraineSchemaEntry &lake, const std::function<void(MoraineTableEntry &)> &callback) {
	Load(lake);
	vector<reference<MoraineTableEntry>> entries;
	{
		lock_guard<mutex> guard(lock);
		auto &state = StateOf(lake);
		for (idx_t i = 0; i < state.tables.size(); i++) {
			if (state.dropped.find(i) == state.dropped.end()) {
				entries.push_back(*state.tables[i]);
			}
		}
	}
	// Entries live until the transaction ends: safe to use unlocked.
	for (auto &t : entries) {
		callback(t.get());
	}
}

} // namespace duckdb
