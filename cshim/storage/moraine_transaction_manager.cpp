#include "moraine_transaction_manager.hpp"

#include "moraine_catalog.hpp"

namespace duckdb {

MoraineTransactionManager::MoraineTransactionManager(AttachedDatabase &db, MoraineCatalog &catalog_p)
    : TransactionManager(db), catalog(catalog_p) {
}

Transaction &MoraineTransactionManager::StartTransaction(ClientContext &context) {
	auto transaction = make_uniq<MoraineTransaction>(catalog, *this, context);
	auto &result = *transaction;
	lock_guard<mutex> guard(transaction_lock);
	transactions[result] = std::move(transaction);
	return result;
}

ErrorData MoraineTransactionManager::CommitTransaction(ClientContext &context, Transaction &transaction) {
	auto &txn = transaction.Cast<MoraineTransaction>();
	// The change set goes to Go as one commit. DuckDB does not roll back a
	// transaction whose commit failed: end it here either way. A failed
	// commit wrote nothing, except one failing with MORAINE_OUTCOME_UNKNOWN,
	// which may have landed (its message says how to check).
	ErrorData error;
	try {
		error = txn.Commit();
	} catch (std::exception &ex) {
		error = ErrorData(ex);
	}
	txn.End();
	lock_guard<mutex> guard(transaction_lock);
	transactions.erase(transaction);
	return error;
}

void MoraineTransactionManager::RollbackTransaction(Transaction &transaction) {
	auto &txn = transaction.Cast<MoraineTransaction>();
	txn.End(); // the writes stay uncommitted in Go and go with the handle
	lock_guard<mutex> guard(transaction_lock);
	transactions.erase(transaction);
}

void MoraineTransactionManager::Checkpoint(ClientContext &context, bool force) {
	// The lake is durable at every commit; a DuckDB CHECKPOINT has nothing
	// to write.
}

} // namespace duckdb
