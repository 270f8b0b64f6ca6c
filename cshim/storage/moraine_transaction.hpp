//===----------------------------------------------------------------------===//
// moraine storage extension: a DuckDB transaction on an attached store
//
// Per lake (schema) it uses, the transaction pins the lake's head on first
// use (moraine_txn_begin): that lake's table entries and every scan of it
// read that one head, plus the transaction's own writes, which stay in Go
// until COMMIT hands them over (moraine_txn_commit). The entries are built
// from moraine_txn_tables, added to for new tables after a CREATE TABLE,
// and every entry handed out lives as long as the transaction, so the
// binder's references to them stay valid.
//
// A transaction writes to one lake: lakes commit independently, so writes
// to two could not land atomically; the second lake's first write is
// refused. It publishes the lakes it created (CREATE SCHEMA) before its
// commit.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/common/case_insensitive_map.hpp"
#include "duckdb/common/mutex.hpp"
#include "duckdb/common/unordered_set.hpp"
#include "duckdb/transaction/transaction.hpp"

#include "moraine_abi.hpp"

namespace duckdb {
class MoraineCatalog;
class MoraineSchemaEntry;
class MoraineTableEntry;
struct CatalogTransaction;

class MoraineTransaction : public Transaction {
public:
	MoraineTransaction(MoraineCatalog &catalog, TransactionManager &manager, ClientContext &context);
	~MoraineTransaction() override;

	static MoraineTransaction &Get(ClientContext &context, Catalog &catalog);
	static MoraineTransaction &Get(CatalogTransaction transaction, Catalog &catalog);

	//! The lake's pinned head (begun on first call).
	moraine_txn Handle(MoraineSchemaEntry &lake);
	//! The table of that name at the lake's pinned head, or nullptr.
	optional_ptr<MoraineTableEntry> GetTable(MoraineSchemaEntry &lake, const string &name);
	//! Every table at the lake's pinned head, in the order the lake lists
	//! them.
	void ScanTables(MoraineSchemaEntry &lake, const std::function<void(MoraineTableEntry &)> &callback);
	//! Lists the lake's tables again (after a CREATE TABLE): entries of
	//! tables already listed are kept, new ones added (a table dropped
	//! is never listed again: DropTable removed it).
	void Refresh(MoraineSchemaEntry &lake);
	//! Drops an inlined-data or inlined-deletion table of the lake (the
	//! library refuses any other); with if_exists a table that does not
	//! exist is left alone. Its entry stays alive until the transaction
	//! ends (the binder may hold it) but is no longer listed or found.
	void DropTable(MoraineSchemaEntry &lake, const string &name, bool if_exists);
	//! Adds a column to a metadata table of the lake (default_value: the
	//! text of its constant default, nullptr for NULL) or drops one, as
	//! DuckLake's migration does; the table's entry is built again (the
	//! old one stays alive until the transaction ends).
	void AddColumn(MoraineSchemaEntry &lake, const string &table, const moraine_column_def &column,
	               const char *default_value, bool if_not_exists);
	void DropColumn(MoraineSchemaEntry &lake, const string &table, const string &column, bool if_exists);
	//! Records a write (what) to the lake; refuses it when the transaction
	//! wrote to another lake.
	void Writes(MoraineSchemaEntry &lake, const string &what);
	//! Records a lake this transaction created (published at commit).
	void Created(MoraineSchemaEntry &lake);
	//! Whether this transaction created the lake.
	bool CreatedHere(MoraineSchemaEntry &lake);
	//! Every lake this transaction created.
	vector<reference<MoraineSchemaEntry>> CreatedLakes();
	//! Publishes the lakes the transaction created, then commits its writes
	//! (nothing to do for lakes only read); the error, if any, as DuckDB's
	//! transaction manager returns it.
	ErrorData Commit();
	//! Releases the pinned heads; without a Commit before, the writes are
	//! discarded (a rollback).
	void End();

private:
	//! What the transaction holds of one lake.
	struct LakeState {
		moraine_txn txn = 0;
		bool loaded = false;
		//! Every entry built, dropped ones too (by_name no longer finds
		//! those; dropped holds their indexes).
		vector<unique_ptr<MoraineTableEntry>> tables;
		case_insensitive_map_t<idx_t> by_name;
		unordered_set<idx_t> dropped;
	};
	//! The lake's state (created on first call); call with lock held.
	LakeState &StateOf(MoraineSchemaEntry &lake);
	void Load(MoraineSchemaEntry &lake);
	//! Forgets the entry of a table whose shape changed, and lists the
	//! tables again (Refresh builds its new entry).
	void Rebuild(MoraineSchemaEntry &lake, const string &table);
	unique_ptr<MoraineTableEntry> MakeEntry(MoraineSchemaEntry &lake, const moraine_table_def &def);

	MoraineCatalog &catalog;
	mutex lock;
	unordered_map<MoraineSchemaEntry *, unique_ptr<LakeState>> lakes;
	optional_ptr<MoraineSchemaEntry> written;
	string first_write;
	vector<reference<MoraineSchemaEntry>> created;
};

} // namespace duckdb
