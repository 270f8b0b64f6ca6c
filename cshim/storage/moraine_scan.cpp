#include "moraine_scan.hpp"

#include "duckdb/common/exception/conversion_exception.hpp"
#include "duckdb/common/types/vector.hpp"
#include "duckdb/common/vector_operations/vector_operations.hpp"
#include "duckdb/function/table_function.hpp"
#include "duckdb/planner/expression/bound_columnref_expression.hpp"
#include "duckdb/planner/expression/bound_comparison_expression.hpp"
#include "duckdb/planner/expression/bound_constant_expression.hpp"
#include "duckdb/planner/expression/bound_operator_expression.hpp"
#include "duckdb/planner/operator/logical_get.hpp"

#include "moraine_schema_entry.hpp"
#include "moraine_table_entry.hpp"
#include "moraine_transaction.hpp"

namespace duckdb {

MoraineScanBindData::MoraineScanBindData(MoraineTableEntry &entry_p, string table_p)
    : entry(entry_p), catalog(entry_p.ParentCatalog()), table(std::move(table_p)) {
}

unique_ptr<FunctionData> MoraineScanBindData::Copy() const {
	auto result = make_uniq<MoraineScanBindData>(entry, table);
	result->hints = hints;
	return std::move(result);
}

bool MoraineScanBindData::Equals(const FunctionData &other_p) const {
	auto &other = other_p.Cast<MoraineScanBindData>();
	return &catalog == &other.catalog && table == other.table;
}

unique_ptr<FunctionData> MoraineScan::Bind(MoraineTableEntry &table) {
	return make_uniq<MoraineScanBindData>(table, table.name);
}

virtual_column_map_t MoraineScan::VirtualColumns() {
	virtual_column_map_t result;
	result.insert(make_pair(COLUMN_IDENTIFIER_ROW_ID, TableColumn("rowid", LogicalType::ROW_TYPE)));
	return result;
}

namespace {

struct MoraineScanState : public GlobalTableFunctionState {
	~MoraineScanState() override {
		moraine_scan_close(scan);
	}
	moraine_scan scan = 0;
	bool done = false;
};

//! A column the core can filter on: its declared type is one the hints
//! compare exactly (the core keeps what it cannot decide anyway).
bool Hintable(const LogicalType &type) {
	return type.id() == LogicalTypeId::BIGINT || type.id() == LogicalTypeId::BOOLEAN ||
	       (type.id() == LogicalTypeId::VARCHAR && !type.HasAlias());
}

int32_t HintOp(ExpressionType type) {
	switch (type) {
	case ExpressionType::COMPARE_EQUAL:
		return MORAINE_FILTER_EQ;
	case ExpressionType::COMPARE_NOTEQUAL:
		return MORAINE_FILTER_NE;
	case ExpressionType::COMPARE_LESSTHAN:
		return MORAINE_FILTER_LT;
	case ExpressionType::COMPARE_LESSTHANOREQUALTO:
		return MORAINE_FILTER_LE;
	case ExpressionType::COMPARE_GREATERTHAN:
		return MORAINE_FILTER_GT;
	case ExpressionType::COMPARE_GREATERTHANOREQUALTO:
		return MORAINE_FILTER_GE;
	default:
		return 0;
	}
}

//! The table column a column reference of the scan's output points at.
optional_idx ScanColumnOf(LogicalGet &get, const Expression &expr) {
	if (expr.GetExpressionClass() != ExpressionClass::BOUND_COLUMN_REF) {
		return optional_idx();
	}
	auto &ref = expr.Cast<BoundColumnRefExpression>();
	if (ref.binding.table_index != get.table_index || ref.depth != 0) {
		return optional_idx();
	}
	auto &ids = get.GetColumnIds();
	if (ref.binding.column_index >= ids.size()) {
		return optional_idx();
	}
	auto &index = ids[ref.binding.column_index];
	if (index.IsVirtualColumn() || index.HasChildren()) {
		return optional_idx();
	}
	return index.GetPrimaryIndex();
}

void PushdownComplexFilter(ClientContext &context, LogicalGet &get, FunctionData *bind_data_p,
                           vector<unique_ptr<Expression>> &filters) {
	auto &bind_data = bind_data_p->Cast<MoraineScanBindData>();
	for (auto &filter : filters) {
		auto &expr = *filter;
		if (expr.GetExpressionClass() == ExpressionClass::BOUND_COMPARISON) {
			auto &cmp = expr.Cast<BoundComparisonExpression>();
			auto op = HintOp(cmp.GetExpressionType());
			auto column = ScanColumnOf(get, *cmp.left);
			auto *constant = cmp.right.get();
			if (!column.IsValid()) {
				// constant <op> column: flip the comparison
				column = ScanColumnOf(get, *cmp.right);
				constant = cmp.left.get();
				op = HintOp(FlipComparisonExpression(cmp.GetExpressionType()));
			}
			if (!column.IsValid() || op == 0 || constant->GetExpressionClass() != ExpressionClass::BOUND_CONSTANT) {
				continue;
			}
			auto &type = bind_data.entry.GetColumn(LogicalIndex(column.GetIndex())).Type();
			auto &value = constant->Cast<BoundConstantExpression>().value;
			if (!Hintable(type) || value.type() != type) {
				continue;
			}
			bind_data.hints.push_back(MoraineFilterHint {column.GetIndex(), op, value});
		} else if (expr.GetExpressionType() == ExpressionType::OPERATOR_IS_NULL ||
		           expr.GetExpressionType() == ExpressionType::OPERATOR_IS_NOT_NULL) {
			auto &op_expr = expr.Cast<BoundOperatorExpression>();
			if (op_expr.children.size() != 1) {
				continue;
			}
			auto column = ScanColumnOf(get, *op_expr.children[0]);
			if (!column.IsValid()) {
				continue;
			}
			auto op = expr.GetExpressionType() == ExpressionType::OPERATOR_IS_NULL ? MORAINE_FILTER_IS_NULL
			                                                                        : MORAINE_FILTER_IS_NOT_NULL;
			bind_data.hints.push_back(MoraineFilterHint {column.GetIndex(), op, Value()});
		}
	}
	// Every filter stays in the plan: the hints only let the core skip rows.
}

unique_ptr<GlobalTableFunctionState> InitGlobal(ClientContext &context, TableFunctionInitInput &input) {
	auto &bind_data = input.bind_data->Cast<MoraineScanBindData>();
	auto &txn = MoraineTransaction::Get(context, bind_data.catalog);
	vector<uint64_t> columns;
	for (auto &id : input.column_indexes) {
		if (id.IsRowIdColumn()) {
			columns.push_back(MORAINE_COLUMN_ROWID);
		} else if (id.IsVirtualColumn()) {
			throw InternalException("moraine: scan of %s asked for virtual column %d", bind_data.table,
			                        id.GetPrimaryIndex());
		} else {
			columns.push_back(id.GetPrimaryIndex());
		}
	}
	vector<unique_ptr<MoraineValue>> values;
	vector<moraine_filter> filters;
	for (auto &hint : bind_data.hints) {
		moraine_filter f;
		f.column = hint.column;
		f.op = hint.op;
		f.value = nullptr;
		if (!hint.constant.IsNull()) {
			values.push_back(make_uniq<MoraineValue>(hint.constant));
			f.value = values.back()->Get();
		}
		filters.push_back(f);
	}
	auto state = make_uniq<MoraineScanState>();
	MoraineError err;
	auto &lake = bind_data.entry.ParentSchema().Cast<MoraineSchemaEntry>();
	err.Check(moraine_scan_open(txn.Handle(lake), bind_data.table.c_str(), columns.data(), columns.size(), filters.data(),
	                            filters.size(), &state->scan, err.Out()),
	          "moraine: scanning " + bind_data.table);
	return std::move(state);
}

//! One cell of a batch column as a DuckDB value of the carried type.
Value CellValue(const moraine_column &col, idx_t row) {
	if (col.nulls[row]) {
		return Value();
	}
	switch (col.type) {
	case MORAINE_TYPE_BOOLEAN:
		return Value::BOOLEAN(static_cast<const bool *>(col.data)[row]);
	case MORAINE_TYPE_BIGINT:
		return Value::BIGINT(static_cast<const int64_t *>(col.data)[row]);
	case MORAINE_TYPE_UBIGINT:
		return Value::UBIGINT(static_cast<const uint64_t *>(col.data)[row]);
	case MORAINE_TYPE_DOUBLE:
		return Value::DOUBLE(static_cast<const double *>(col.data)[row]);
	case MORAINE_TYPE_TIMESTAMP_TZ:
		return Value::TIMESTAMPTZ(timestamp_tz_t(static_cast<const int64_t *>(col.data)[row]));
	case MORAINE_TYPE_VARCHAR: {
		auto &s = static_cast<const moraine_string *>(col.data)[row];
		return Value(string(s.data, s.size));
	}
	case MORAINE_TYPE_BLOB: {
		auto &s = static_cast<const moraine_string *>(col.data)[row];
		return Value::BLOB(const_data_ptr_cast(s.data), s.size);
	}
	case MORAINE_TYPE_DUCKDB:
		return MoraineDecodeValue(static_cast<const moraine_string *>(col.data)[row]);
	default:
		throw InternalException("moraine: a scan column of unknown type %d", col.type);
	}
}

template <class T>
void CopyFixed(const moraine_column &col, idx_t count, Vector &out) {
	auto data = FlatVector::GetData<T>(out);
	auto &validity = FlatVector::Validity(out);
	auto src = static_cast<const T *>(col.data);
	for (idx_t r = 0; r < count; r++) {
		if (col.nulls[r]) {
			validity.SetInvalid(r);
		} else {
			data[r] = src[r];
		}
	}
}

//! Copies a batch column into a vector of the type it carries; false for
//! any other pairing.
bool CopyCarried(const moraine_column &col, idx_t count, Vector &out) {
	auto &type = out.GetType();
	switch (type.id()) {
	case LogicalTypeId::BIGINT:
		if (col.type == MORAINE_TYPE_BIGINT) {
			CopyFixed<int64_t>(col, count, out);
			return true;
		}
		break;
	case LogicalTypeId::UBIGINT:
		if (col.type == MORAINE_TYPE_UBIGINT) {
			CopyFixed<uint64_t>(col, count, out);
			return true;
		}
		break;
	case LogicalTypeId::DOUBLE:
		if (col.type == MORAINE_TYPE_DOUBLE) {
			CopyFixed<double>(col, count, out);
			return true;
		}
		break;
	case LogicalTypeId::BOOLEAN:
		if (col.type == MORAINE_TYPE_BOOLEAN) {
			CopyFixed<bool>(col, count, out);
			return true;
		}
		break;
	case LogicalTypeId::TIMESTAMP_TZ:
		if (col.type == MORAINE_TYPE_TIMESTAMP_TZ) {
			CopyFixed<int64_t>(col, count, out);
			return true;
		}
		break;
	case LogicalTypeId::VARCHAR:
	case LogicalTypeId::BLOB:
		if ((col.type == MORAINE_TYPE_VARCHAR && type.id() == LogicalTypeId::VARCHAR && !type.HasAlias()) ||
		    (col.type == MORAINE_TYPE_BLOB && type.id() == LogicalTypeId::BLOB)) {
			auto data = FlatVector::GetData<string_t>(out);
			auto &validity = FlatVector::Validity(out);
			auto src = static_cast<const moraine_string *>(col.data);
			for (idx_t r = 0; r < count; r++) {
				if (col.nulls[r]) {
					validity.SetInvalid(r);
				} else {
					data[r] = StringVector::AddStringOrBlob(out, src[r].data, src[r].size);
				}
			}
			return true;
		}
		break;
	default:
		break;
	}
	return false;
}

//! The DuckDB type of a batch column's cells (what CellValue makes of
//! them); INVALID for DUCKDB cells (each of its own type) and the rest.
LogicalType CarriedType(int32_t type) {
	switch (type) {
	case MORAINE_TYPE_BOOLEAN:
		return LogicalType::BOOLEAN;
	case MORAINE_TYPE_BIGINT:
		return LogicalType::BIGINT;
	case MORAINE_TYPE_UBIGINT:
		return LogicalType::UBIGINT;
	case MORAINE_TYPE_DOUBLE:
		return LogicalType::DOUBLE;
	case MORAINE_TYPE_TIMESTAMP_TZ:
		return LogicalType::TIMESTAMP_TZ;
	case MORAINE_TYPE_VARCHAR:
		return LogicalType::VARCHAR;
	case MORAINE_TYPE_BLOB:
		return LogicalType::BLOB;
	default:
		return LogicalType::INVALID;
	}
}

void CopyColumn(const string &table, const string &name, const moraine_column &col, idx_t count, Vector &out) {
	if (CopyCarried(col, count, out)) {
		return;
	}
	auto &type = out.GetType();
	// Another pairing (UUIDs carried as VARCHAR, JSON, narrower integers,
	// ...): DuckDB's default cast of the whole column from the carried
	// type, the one Value::DefaultTryCastAs applies to each cell.
	auto carried = CarriedType(col.type);
	if (carried.id() != LogicalTypeId::INVALID && !type.IsNested()) {
		Vector cells(carried, count);
		CopyCarried(col, count, cells);
		string error;
		bool converted;
		try {
			converted = VectorOperations::DefaultTryCast(cells, out, count, &error);
		} catch (std::exception &) {
			converted = false;
		}
		if (converted) {
			return;
		}
		// A cell does not convert: the cell by cell pass below names the
		// first one.
	}
	// Cell by cell: DUCKDB cells (each a value of its own type; one of the
	// column's own type is taken as it is), and the errors.
	for (idx_t r = 0; r < count; r++) {
		Value value;
		try {
			value = CellValue(col, r);
		} catch (SerializationException &ex) {
			throw IOException("moraine: %s.%s: a stored value does not decode: %s", table, name, ex.what());
		}
		if (value.IsNull()) {
			FlatVector::SetNull(out, r, true);
			continue;
		}
		Value cast;
		string error;
		if (!value.DefaultTryCastAs(type, cast, &error)) {
			throw ConversionException("moraine: %s.%s: the stored value %s does not convert to %s: %s", table, name,
			                          value.ToSQLString(), type.ToString(), error);
		}
		out.SetValue(r, cast);
	}
}

void ScanFunction(ClientContext &context, TableFunctionInput &input, DataChunk &output) {
	auto &bind_data = input.bind_data->Cast<MoraineScanBindData>();
	auto &state = input.global_state->Cast<MoraineScanState>();
	if (state.done) {
		output.SetCardinality(0);
		return;
	}
	MoraineError err;
	moraine_table *raw = nullptr;
	err.Check(moraine_scan_next(state.scan, STANDARD_VECTOR_SIZE, &raw, err.Out()), "moraine: scanning " + bind_data.table);
	MoraineTablePtr batch(raw);
	auto count = NumericCast<idx_t>(batch->row_count);
	if (count == 0) {
		state.done = true;
		output.SetCardinality(0);
		return;
	}
	if (batch->column_count != output.ColumnCount()) {
		throw InternalException("moraine: scan of %s returned %d columns, expected %d", bind_data.table,
		                        batch->column_count, output.ColumnCount());
	}
	for (idx_t c = 0; c < output.ColumnCount(); c++) {
		auto &col = batch->columns[c];
		CopyColumn(bind_data.table, col.name ? col.name : "?", col, count, output.data[c]);
	}
	output.SetCardinality(count);
}

BindInfo GetBindInfo(const optional_ptr<FunctionData> bind_data) {
	return BindInfo(bind_data->Cast<MoraineScanBindData>().entry);
}

virtual_column_map_t GetVirtualColumns(ClientContext &context, optional_ptr<FunctionData> bind_data) {
	return MoraineScan::VirtualColumns();
}

InsertionOrderPreservingMap<string> ToString(TableFunctionToStringInput &input) {
	InsertionOrderPreservingMap<string> result;
	auto &bind_data = input.bind_data->Cast<MoraineScanBindData>();
	result["Table"] = bind_data.table;
	if (!bind_data.hints.empty()) {
		result["Filter hints"] = std::to_string(bind_data.hints.size());
	}
	return result;
}

} // namespace

TableFunction MoraineScan::GetFunction() {
	TableFunction function("moraine_scan", {}, ScanFunction, nullptr, InitGlobal);
	function.projection_pushdown = true;
	function.filter_pushdown = false;
	function.pushdown_complex_filter = PushdownComplexFilter;
	function.get_virtual_columns = GetVirtualColumns;
	function.get_bind_info = GetBindInfo;
	function.to_string = ToString;
	return function;
}

} // namespace duckdb
