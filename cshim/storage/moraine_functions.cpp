#include "moraine_functions.hpp"

#include "duckdb/catalog/catalog.hpp"
#include "duckdb/function/table_function.hpp"

#include "moraine_abi.hpp"
#include "moraine_catalog.hpp"

namespace duckdb {

namespace {

// ---- moraine_requests(database) -------------------------------------------

struct RequestsBindData : public TableFunctionData {
	string database;
};

struct RequestsState : public GlobalTableFunctionState {
	MoraineTablePtr table;
	idx_t next = 0;
};

unique_ptr<FunctionData> RequestsBind(ClientContext &context, TableFunctionBindInput &input,
                                      vector<LogicalType> &return_types, vector<string> &names) {
	if (input.inputs[0].IsNull()) {
		throw InvalidInputException("moraine_requests: the database name is NULL");
	}
	auto result = make_uniq<RequestsBindData>();
	result->database = input.inputs[0].ToString();
	names = {"store", "op", "requests"};
	return_types = {LogicalType::VARCHAR, LogicalType::VARCHAR, LogicalType::BIGINT};
	return std::move(result);
}

unique_ptr<GlobalTableFunctionState> RequestsInit(ClientContext &context, TableFunctionInitInput &input) {
	auto &bind_data = input.bind_data->Cast<RequestsBindData>();
	auto &catalog = Catalog::GetCatalog(context, bind_data.database);
	if (catalog.GetCatalogType() != "moraine") {
		throw InvalidInputException("moraine_requests: \"%s\" is a %s database, not a moraine one", bind_data.database,
		                            catalog.GetCatalogType());
	}
	auto state = make_uniq<RequestsState>();
	MoraineError err;
	moraine_table *raw = nullptr;
	err.Check(moraine_catalog_requests(catalog.Cast<MoraineCatalog>().Handle(), &raw, err.Out()), "moraine_requests");
	state->table.reset(raw);
	return std::move(state);
}

void RequestsScan(ClientContext &context, TableFunctionInput &input, DataChunk &output) {
	auto &state = input.global_state->Cast<RequestsState>();
	auto &t = *state.table;
	idx_t count = 0;
	for (; state.next < t.row_count && count < STANDARD_VECTOR_SIZE; state.next++, count++) {
		for (idx_t c = 0; c < 2; c++) {
			auto &s = static_cast<const moraine_string *>(t.columns[c].data)[state.next];
			output.SetValue(c, count, Value(string(s.data, s.size)));
		}
		output.SetValue(2, count, Value::BIGINT(static_cast<const int64_t *>(t.columns[2].data)[state.next]));
	}
	output.SetCardinality(count);
}

// ---- moraine_runtime() ------------------------------------------------------

struct RuntimeState : public GlobalTableFunctionState {
	bool done = false;
};

unique_ptr<FunctionData> RuntimeBind(ClientContext &context, TableFunctionBindInput &input,
                                     vector<LogicalType> &return_types, vector<string> &names) {
	names = {"catalogs", "transactions", "scans", "goroutines"};
	return_types = {LogicalType::BIGINT, LogicalType::BIGINT, LogicalType::BIGINT, LogicalType::BIGINT};
	return make_uniq<TableFunctionData>();
}

unique_ptr<GlobalTableFunctionState> RuntimeInit(ClientContext &context, TableFunctionInitInput &input) {
	return make_uniq<RuntimeState>();
}

void RuntimeScan(ClientContext &context, TableFunctionInput &input, DataChunk &output) {
	auto &state = input.global_state->Cast<RuntimeState>();
	if (state.done) {
		output.SetCardinality(0);
		return;
	}
	state.done = true;
	moraine_runtime info;
	MoraineError err;
	err.Check(moraine_runtime_info(&info, err.Out()), "moraine_runtime");
	output.SetValue(0, 0, Value::BIGINT(NumericCast<int64_t>(info.catalogs)));
	output.SetValue(1, 0, Value::BIGINT(NumericCast<int64_t>(info.transactions)));
	output.SetValue(2, 0, Value::BIGINT(NumericCast<int64_t>(info.scans)));
	output.SetValue(3, 0, Value::BIGINT(NumericCast<int64_t>(info.goroutines)));
	output.SetCardinality(1);
}

} // namespace

void MoraineFunctions::Register(ExtensionLoader &loader) {
	loader.RegisterFunction(
	    TableFunction("moraine_requests", {LogicalType::VARCHAR}, RequestsScan, RequestsBind, RequestsInit));
	loader.RegisterFunction(TableFunction("moraine_runtime", {}, RuntimeScan, RuntimeBind, RuntimeInit));
}

} // namespace duckdb
