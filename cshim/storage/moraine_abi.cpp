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

ErrorData MoraineError::ToErrorData(int32_t rc, const string &what) {
	if (rc == MORAINE_OK) {
		return ErrorData();
	}
	string message = err.message ? string(err.message) : string("error code ") + std::to_string(rc);
	moraine_error_free(&err);
	return MoraineErrorData(rc, what.empty() ? message : what + ": " + message);
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
	if (v.IsNull()) {
		cell.type = MORAINE_TYPE_NULL;
	} else if (type.HasAlias()) {
		cell.type = -1; // an aliased type (JSON, ...) keeps its alias: encoded below
	} else {
		switch (type.id()) {
		case LogicalTypeId::BOOLEAN:
			cell.type = MORAINE_TYPE_BOOLEAN;
			cell.boolean = BooleanValue::Get(v);
			break;
		case LogicalTypeId::TINYINT:
		case LogicalTypeId::SMALLINT:
		case LogicalTypeId::INTEGER:
		case LogicalTypeId::BIGINT:
			cell.type = MORAINE_TYPE_BIGINT;
			cell.bigint = v.GetValue<int64_t>();
			break;
		case LogicalTypeId::UTINYINT:
		case LogicalTypeId::USMALLINT:
		case LogicalTypeId::UINTEGER:
		case LogicalTypeId::UBIGINT:
			cell.type = MORAINE_TYPE_UBIGINT;
			cell.ubigint = v.GetValue<uint64_t>();
			break;
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
