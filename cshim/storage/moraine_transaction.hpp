//===----------------------------------------------------------------------===//
// moraine storage extension: a DuckDB transaction on an attached lake
//
// The transaction pins the lake's head on first use (moraine_txn_begin):
// its table entries and every scan read that one head, plus the
// transaction's own writes, which stay in Go until COMMIT hands them over
// (moraine_txn_commit). The entries are built from moraine_txn_tables,
// added to for new tables after a CREATE TABLE, and every entry handed out
// lives as long as the transaction, so the binder's references to them
// stay valid.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/common/case_insensitive_map.hpp"
#include "duckdb/common/atomic.hpp"
#include "duckdb/common/mutex.hpp"
#include "duckdb/transaction/transaction.hpp"

#include "moraine_abi.hpp"

namespace duckdb {
class MoraineCatalog;
class MoraineSchemaEntry;
class MoraineTableEntry;

class MoraineTransaction : public Transaction {
public:
	MoraineTransaction(MoraineCatalog &catalog, TransactionManager &manager, ClientContext &context);
	~MoraineTransaction() override;

	static MoraineTransaction &Get(ClientContext &context, Catalog &catalog);

	//! The pinned head (begun on first call).
	moraine_txn Handle();
	//! The table of that name at the pinned head, or nullptr.
	optional_ptr<MoraineTableEntry> GetTable(const string &name);
	//! Every table at the pinned head, in the order the lake lists them.
	void ScanTables(const std::function<void(MoraineTableEntry &)> &callback);
	//! Lists the tables again (after a CREATE TABLE): entries of tables
	//! already listed are kept, new ones added.
	void Refresh();
	//! Commits the transaction's writes (nothing to do when it never began);
	//! the error, if any, as DuckDB's transaction manager returns it.
	ErrorData Commit();
	//! Releases the pinned head; without a Commit before, the writes are
	//! discarded (a rollback).
	void End();

private:
	void Load();
	unique_ptr<MoraineTableEntry> MakeEntry(const moraine_table_def &def);

	MoraineCatalog &catalog;
	mutex lock;
	moraine_txn txn = 0;
	atomic<bool> loaded {false};
	vector<unique_ptr<MoraineTableEntry>> tables;
	case_insensitive_map_t<idx_t> by_name;
};

} // namespace duckdb
