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

void MoraineTransaction::Load() {
	if (loaded) {
		return;
	}
	auto handle = Handle();
	MoraineError err;
	moraine_table_list *raw = nullptr;
	err.Check(moraine_txn_tables(handle, &raw, err.Out()), "moraine: listing the tables of " + catalog.GetName());
	unique_ptr<moraine_table_list, TableListDeleter> list(raw);
	lock_guard<mutex> guard(lock);
	if (loaded) {
		return;
	}
	has_lake = list->has_lake;
	auto &schema = catalog.GetMainSchema();
	for (idx_t i = 0; i < list->table_count; i++) {
		auto &def = list->tables[i];
		CreateTableInfo info(schema, def.name);
		for (idx_t c = 0; c < def.column_count; c++) {
			auto &col = def.columns[c];
			auto type = TransformStringToLogicalType(col.type);
			info.columns.AddColumn(ColumnDefinition(col.name, std::move(type)));
			if (col.not_null) {
				info.constraints.push_back(make_uniq<NotNullConstraint>(LogicalIndex(c)));
			}
		}
		if (def.primary_key >= 0) {
			info.constraints.push_back(make_uniq<UniqueConstraint>(LogicalIndex(NumericCast<idx_t>(def.primary_key)), true));
		}
		auto entry = make_uniq<MoraineTableEntry>(catalog, schema, info);
		by_name[entry->name] = tables.size();
		tables.push_back(std::move(entry));
	}
	loaded = true;
}

bool MoraineTransaction::HasLake() {
	Load();
	return has_lake;
}

optional_ptr<MoraineTableEntry> MoraineTransaction::GetTable(const string &name) {
	Load();
	auto it = by_name.find(name);
	if (it == by_name.end()) {
		return nullptr;
	}
	return tables[it->second].get();
}

void MoraineTransaction::ScanTables(const std::function<void(MoraineTableEntry &)> &callback) {
	Load();
	for (auto &t : tables) {
		callback(*t);
	}
}

} // namespace duckdb
