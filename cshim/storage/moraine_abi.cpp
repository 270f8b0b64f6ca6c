#include "moraine_abi.hpp"

#include "duckdb/common/exception.hpp"
#include "duckdb/common/exception/catalog_exception.hpp"
#include "duckdb/common/exception/transaction_exception.hpp"

#include <cstring>

namespace duckdb {

void ThrowMoraineError(int32_t code, const string &message) {
	switch (code) {
	case MORAINE_NOT_FOUND:
	case MORAINE_ALREADY_EXISTS:
	case MORAINE_CONSTRAINT:
	case MORAINE_SNAPSHOT_EXPIRED:
		throw CatalogException(message);
	case MORAINE_COMMIT_CONFLICT:
	case MORAINE_RETRY_EXHAUSTED:
		throw TransactionException(message);
	case MORAINE_CORRUPTION:
	case MORAINE_STORE:
	case MORAINE_FENCED:
	case MORAINE_MIGRATION:
	case MORAINE_OPEN_RACED:
		throw IOException(message);
	case MORAINE_INVALID_ARGUMENT:
		throw InvalidInputException(message);
	case MORAINE_INTERRUPTED:
		throw InterruptException();
	case MORAINE_UNSUPPORTED:
		throw NotImplementedException(message);
	default:
		throw InternalException(message);
	}
}

void MoraineError::Check(int32_t rc, const string &what) {
	if (rc == MORAINE_OK) {
		return;
	}
	string message = err.message ? string(err.message) : string("error code ") + std::to_string(rc);
	moraine_error_free(&err);
	ThrowMoraineError(rc, what.empty() ? message : what + ": " + message);
}

MoraineValue::MoraineValue(const Value &v) {
	std::memset(&value, 0, sizeof(value));
	if (v.IsNull()) {
		value.type = MORAINE_TYPE_NULL;
		return;
	}
	switch (v.type().id()) {
	case LogicalTypeId::BOOLEAN:
		value.type = MORAINE_TYPE_BOOLEAN;
		value.boolean = BooleanValue::Get(v);
		return;
	case LogicalTypeId::TINYINT:
	case LogicalTypeId::SMALLINT:
	case LogicalTypeId::INTEGER:
	case LogicalTypeId::BIGINT:
		value.type = MORAINE_TYPE_BIGINT;
		value.bigint = v.GetValue<int64_t>();
		return;
	case LogicalTypeId::UTINYINT:
	case LogicalTypeId::USMALLINT:
	case LogicalTypeId::UINTEGER:
	case LogicalTypeId::UBIGINT:
		value.type = MORAINE_TYPE_UBIGINT;
		value.ubigint = v.GetValue<uint64_t>();
		return;
	default:
		break;
	}
	value.type = MORAINE_TYPE_VARCHAR;
	text = v.ToString();
	value.str = text.c_str();
	value.len = text.size();
}

} // namespace duckdb
