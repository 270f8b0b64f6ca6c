#include "moraine_transaction.hpp"

#include "duckdb/parser/parsed_data/create_table_info.hpp"
#include "duckdb/parser/constraints/not_null_constraint.hpp"
#include "duckdb/parser/constraints/unique_constraint.hpp"
#include "duckdb/common/type_visitor.hpp"
#include "duckdb/common/types.hpp"
#include "duckdb/parser/parser.hpp"

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

unique_ptr<MoraineTableEntry> MoraineTransaction::MakeEntry(const moraine_table_def &def) {
	auto &schema = catalog.GetMainSchema();
	auto client = context.lock();
	CreateTableInfo info(schema, def.name);
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
	// Within a transaction the list only grows (the head's tables, then
	// those the transaction created; nothing is dropped): entries already
	// built are kept (the binder may hold them), the new ones appended.
	vector<idx_t> missing;
	{
		lock_guard<mutex> guard(lock);
		for (idx_t i = 0; i < list->table_count; i++) {
			if (by_name.find(list->tables[i].name) == by_name.end()) {
				missing.push_back(i);
			}
		}
	}
	// Built unlocked (resolving a type may look into catalogs).
	vector<unique_ptr<MoraineTableEntry>> fresh;
	for (auto i : missing) {
		fresh.push_back(MakeEntry(list->tables[i]));
	}
	lock_guard<mutex> guard(lock);
	for (auto &entry : fresh) {
		if (by_name.find(entry->name) != by_name.end()) {
			continue; // appended meanwhile by another caller
		}
		by_name[entry->name] = tables.size();
		tables.push_back(std::move(entry));
	}
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
