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
	txn.End();
	lock_guard<mutex> guard(transaction_lock);
	transactions.erase(transaction);
	return ErrorData();
}

void MoraineTransactionManager::RollbackTransaction(Transaction &transaction) {
	auto &txn = transaction.Cast<MoraineTransaction>();
	txn.End();
	lock_guard<mutex> guard(transaction_lock);
	transactions.erase(transaction);
}

void MoraineTransactionManager::Checkpoint(ClientContext &context, bool force) {
	// The lake is durable at every commit; a DuckDB CHECKPOINT has nothing
	// to write.
}

} // namespace duckdb
