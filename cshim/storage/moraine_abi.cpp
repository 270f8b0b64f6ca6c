#include "moraine_abi.hpp"

#include "duckdb/common/exception.hpp"
#include "duckdb/common/exception/catalog_exception.hpp"
#include "duckdb/common/exception/transaction_exception.hpp"
#include "duckdb/common/serializer/binary_deserializer.hpp"
#include "duckdb/common/serializer/binary_serializer.hpp"
#include "duckdb/common/serializer/memory_stream.hpp"
#include "duckdb/main/config.hpp"

#include <cstring>

namespace duckdb {

void ThrowMoraineError(int32_t code, const string &message) {
	switch (code) {
	case MORAINE_NOT_FOUND:
	case MORAINE_ALREADY_EXISTS:
	case MORAINE_SNAPSHOT_EXPIRED:
		throw CatalogException(message);
	case MORAINE_CONSTRAINT:
		throw ConstraintException(message);
	case MORAINE_COMMIT_CONFLICT:
	case MORAINE_RETRY_EXHAUSTED:
		throw TransactionException(message);
	case MORAINE_CORRUPTION:
	case MORAINE_STORE:
	case MORAINE_FENCED:
	case MORAINE_MIGRATION:
	case MORAINE_OPEN_RACED:
	case MORAINE_OUTCOME_UNKNOWN:
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

ErrorData MoraineErrorData(int32_t code, const string &message) {
	try {
		ThrowMoraineError(code, message);
	} catch (std::exception &ex) {
		return ErrorData(ex);
	}
}

string MoraineError::TakeMessage(int32_t rc, const string &what) {
	string message = err.message ? string(err.message) : string("error code ") + std::to_string(rc);
	moraine_error_free(&err);
	return what.empty() ? message : what + ": " + message;
}

ErrorData MoraineError::ToErrorData(int32_t rc, const string &what) {
	if (rc == MORAINE_OK) {
		return ErrorData();
	}
	return MoraineErrorData(rc, TakeMessage(rc, what));
}

void MoraineError::Check(int32_t rc, const string &what) {
	if (rc == MORAINE_OK) {
		return;
	}
	ThrowMoraineError(rc, TakeMessage(rc, what));
}

namespace {
//! Sets out (zeroed) to v when v is NULL, a BOOLEAN or an integer (BIGINT
//! for the signed ones, UBIGINT for the unsigned ones); false otherwise.
bool SetScalar(const Value &v, moraine_value &out) {
	if (v.IsNull()) {
		out.type = MORAINE_TYPE_NULL;
		return true;
	}
	switch (v.type().id()) {
	case LogicalTypeId::BOOLEAN:
		out.type = MORAINE_TYPE_BOOLEAN;
		out.boolean = BooleanValue::Get(v);
		return true;
	case LogicalTypeId::TINYINT:
	case LogicalTypeId::SMALLINT:
	case LogicalTypeId::INTEGER:
	case LogicalTypeId::BIGINT:
		out.type = MORAINE_TYPE_BIGINT;
		out.bigint = v.GetValue<int64_t>();
		return true;
	case LogicalTypeId::UTINYINT:
	case LogicalTypeId::USMALLINT:
	case LogicalTypeId::UINTEGER:
	case LogicalTypeId::UBIGINT:
		out.type = MORAINE_TYPE_UBIGINT;
		out.ubigint = v.GetValue<uint64_t>();
		return true;
	default:
		return false;
	}
}
} // namespace

MoraineValue::MoraineValue(const Value &v) {
	std::memset(&value, 0, sizeof(value));
	if (SetScalar(v, value)) {
		return;
	}
	value.type = MORAINE_TYPE_VARCHAR;
	text = v.ToString();
	value.str = text.c_str();
	value.len = text.size();
}

MoraineRows::MoraineRows(idx_t column_count_p) : column_count(column_count_p) {
}

idx_t MoraineRows::RowCount() const {
	return column_count == 0 ? 0 : cells.size() / column_count;
}

moraine_rows MoraineRows::Get() const {
	moraine_rows rows;
	rows.column_count = column_count;
	rows.row_count = RowCount();
	rows.cells = cells.empty() ? nullptr : cells.data();
	return rows;
}

void MoraineRows::Append(const Value &v) {
	moraine_value cell;
	std::memset(&cell, 0, sizeof(cell));
	auto keep = [&](string data, int32_t type) {
		bytes.push_back(std::move(data));
		cell.type = type;
		cell.str = bytes.back().data();
		cell.len = bytes.back().size();
	};
	auto &type = v.type();
	if (!v.IsNull() && type.HasAlias()) {
		cell.type = -1; // an aliased type (JSON, ...) keeps its alias: encoded below
	} else if (!SetScalar(v, cell)) {
		switch (type.id()) {
		case LogicalTypeId::DOUBLE:
			cell.type = MORAINE_TYPE_DOUBLE;
			cell.dbl = DoubleValue::Get(v);
			break;
		case LogicalTypeId::VARCHAR:
			keep(StringValue::Get(v), MORAINE_TYPE_VARCHAR);
			break;
		case LogicalTypeId::BLOB:
			keep(StringValue::Get(v), MORAINE_TYPE_BLOB);
			break;
		case LogicalTypeId::TIMESTAMP_TZ:
			cell.type = MORAINE_TYPE_TIMESTAMP_TZ;
			cell.bigint = TimestampTZValue::Get(v).value;
			break;
		case LogicalTypeId::UUID:
			keep(v.ToString(), MORAINE_TYPE_VARCHAR);
			break;
		default:
			cell.type = -1;
			break;
		}
	}
	if (cell.type == -1) {
		MemoryStream stream;
		SerializationOptions options;
		options.serialization_compatibility = SerializationCompatibility::Latest();
		BinarySerializer::Serialize(v, stream, options);
		keep(string(const_char_ptr_cast(stream.GetData()), NumericCast<size_t>(stream.GetPosition())),
		     MORAINE_TYPE_DUCKDB);
	}
	cells.push_back(cell);
}

Value MoraineDecodeValue(const moraine_string &cell) {
	MemoryStream stream(data_ptr_cast(const_cast<char *>(cell.data)), NumericCast<idx_t>(cell.size));
	BinaryDeserializer deserializer(stream);
	deserializer.Begin();
	auto value = Value::Deserialize(deserializer);
	deserializer.End();
	return value;
}

} // namespace duckdb
