#include "moraine_transaction.hpp"

#include "duckdb/parser/parsed_data/create_table_info.hpp"
#include "duckdb/parser/constraints/not_null_constraint.hpp"
#include "duckdb/parser/constraints/unique_constraint.hpp"
#include "duckdb/common/types.hpp"
#include "duckdb/parser/parser.hpp"

#include "moraine_catalog.hpp"
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

moraine_txn MoraineTransaction::Handle() {
	lock_guard<mutex> guard(lock);
	if (txn == 0) {
		MoraineError err;
		moraine_txn out = 0;
		err.Check(moraine_txn_begin(catalog.Handle(), &out, err.Out()), "moraine: beginning a transaction on " + catalog.GetName());
		txn = out;
	}
	return txn;
}

void MoraineTransaction::End() {
	lock_guard<mutex> guard(lock);
	if (txn != 0) {
		moraine_txn_end(txn);
		txn = 0;
	}
}

namespace {
struct TableListDeleter {
	void operator()(moraine_table_list *l) const {
		moraine_table_list_free(l);
	}
};
} // namespace

//! A column type from its text: types an extension defines (JSON) are
//! resolved through the client's catalogs when it can.
static LogicalType ColumnType(const string &text, const shared_ptr<ClientContext> &context) {
	if (context) {
		try {
			return TransformStringToLogicalType(text, *context);
		} catch (std::exception &) {
			// not a type the client knows: the plain parse below
		}
	}
	return TransformStringToLogicalType(text);
}

unique_ptr<MoraineTableEntry> MoraineTransaction::MakeEntry(const moraine_table_def &def) {
	auto &schema = catalog.GetMainSchema();
	auto client = context.lock();
	CreateTableInfo info(schema, def.name);
	for (idx_t c = 0; c < def.column_count; c++) {
		auto &col = def.columns[c];
		auto type = ColumnType(col.type, client);
		info.columns.AddColumn(ColumnDefinition(col.name, std::move(type)));
		if (col.not_null) {
			info.constraints.push_back(make_uniq<NotNullConstraint>(LogicalIndex(c)));
		}
	}
	if (def.primary_key >= 0) {
		info.constraints.push_back(make_uniq<UniqueConstraint>(LogicalIndex(NumericCast<idx_t>(def.primary_key)), true));
	}
	return make_uniq<MoraineTableEntry>(catalog, schema, info);
}

void MoraineTransaction::Load() {
	if (loaded) {
		return;
	}
	Refresh();
}

void MoraineTransaction::Refresh() {
	auto handle = Handle();
	MoraineError err;
	moraine_table_list *raw = nullptr;
	err.Check(moraine_txn_tables(handle, &raw, err.Out()), "moraine: listing the tables of " + catalog.GetName());
	unique_ptr<moraine_table_list, TableListDeleter> list(raw);
	// Entries for the tables not listed before, built unlocked (resolving a
	// type may look into catalogs).
	case_insensitive_map_t<unique_ptr<MoraineTableEntry>> fresh;
	{
		lock_guard<mutex> guard(lock);
		for (idx_t i = 0; i < list->table_count; i++) {
			if (by_name.find(list->tables[i].name) == by_name.end()) {
				fresh[list->tables[i].name] = nullptr;
			}
		}
	}
	for (idx_t i = 0; i < list->table_count; i++) {
		auto it = fresh.find(list->tables[i].name);
		if (it != fresh.end() && !it->second) {
			it->second = MakeEntry(list->tables[i]);
		}
	}
	lock_guard<mutex> guard(lock);
	has_lake = list->has_lake;
	vector<unique_ptr<MoraineTableEntry>> next;
	case_insensitive_map_t<idx_t> next_by_name;
	for (idx_t i = 0; i < list->table_count; i++) {
		auto &def = list->tables[i];
		unique_ptr<MoraineTableEntry> entry;
		auto it = by_name.find(def.name);
		if (it != by_name.end() && tables[it->second]) {
			// Tables never change within a transaction: keep the entry the
			// binder may hold.
			entry = std::move(tables[it->second]);
		} else if (fresh[def.name]) {
			entry = std::move(fresh[def.name]);
		} else {
			entry = MakeEntry(def); // listed meanwhile by another caller, then dropped: rare
		}
		next_by_name[entry->name] = next.size();
		next.push_back(std::move(entry));
	}
	for (auto &old : tables) {
		if (old) {
			retired.push_back(std::move(old));
		}
	}
	tables = std::move(next);
	by_name = std::move(next_by_name);
	loaded = true;
}

ErrorData MoraineTransaction::Commit() {
	moraine_txn handle;
	{
		lock_guard<mutex> guard(lock);
		handle = txn;
	}
	if (handle == 0) {
		return ErrorData(); // never used: nothing pinned, nothing written
	}
	MoraineError err;
	return err.ToErrorData(moraine_txn_commit(handle, err.Out()), "moraine: committing to " + catalog.GetName());
}

bool MoraineTransaction::HasLake() {
	Load();
	lock_guard<mutex> guard(lock);
	return has_lake;
}

optional_ptr<MoraineTableEntry> MoraineTransaction::GetTable(const string &name) {
	Load();
	lock_guard<mutex> guard(lock);
	auto it = by_name.find(name);
	if (it == by_name.end()) {
		return nullptr;
	}
	return tables[it->second].get();
}

void MoraineTransaction::ScanTables(const std::function<void(MoraineTableEntry &)> &callback) {
	Load();
	vector<reference<MoraineTableEntry>> entries;
	{
		lock_guard<mutex> guard(lock);
		for (auto &t : tables) {
			entries.push_back(*t);
		}
	}
	// Entries live until the transaction ends: safe to use unlocked.
	for (auto &t : entries) {
		callback(t.get());
	}
}

} // namespace duckdb
