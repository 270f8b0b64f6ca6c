#include "moraine_functions.hpp"

#include "duckdb/catalog/catalog.hpp"
#include "duckdb/function/table_function.hpp"

#include "moraine_abi.hpp"
#include "moraine_catalog.hpp"

namespace duckdb {

namespace {

//! The bind data of the functions taking a database name.
struct DatabaseBindData : public TableFunctionData {
	string database;
};

//! The state of the functions returning one row.
struct OnceState : public GlobalTableFunctionState {
	bool done = false;
};

unique_ptr<GlobalTableFunctionState> OnceInit(ClientContext &context, TableFunctionInitInput &input) {
	return make_uniq<OnceState>();
}

// ---- moraine_requests(database) -------------------------------------------

struct RequestsState : public GlobalTableFunctionState {
	MoraineTablePtr table;
	idx_t next = 0;
};

unique_ptr<FunctionData> RequestsBind(ClientContext &context, TableFunctionBindInput &input,
                                      vector<LogicalType> &return_types, vector<string> &names) {
	if (input.inputs[0].IsNull()) {
		throw InvalidInputException("moraine_requests: the database name is NULL");
	}
	auto result = make_uniq<DatabaseBindData>();
	result->database = input.inputs[0].ToString();
	names = {"store", "op", "requests"};
	return_types = {LogicalType::VARCHAR, LogicalType::VARCHAR, LogicalType::BIGINT};
	return std::move(result);
}

//! The attached moraine catalog of that name (what names the function in
//! errors).
MoraineCatalog &MoraineCatalogByName(ClientContext &context, const string &database, const char *what) {
	auto &catalog = Catalog::GetCatalog(context, database);
	if (catalog.GetCatalogType() != "moraine") {
		throw InvalidInputException("%s: \"%s\" is a %s database, not a moraine one", what, database,
		                            catalog.GetCatalogType());
	}
	return catalog.Cast<MoraineCatalog>();
}

unique_ptr<GlobalTableFunctionState> RequestsInit(ClientContext &context, TableFunctionInitInput &input) {
	auto &bind_data = input.bind_data->Cast<DatabaseBindData>();
	auto &catalog = MoraineCatalogByName(context, bind_data.database, "moraine_requests");
	auto state = make_uniq<RequestsState>();
	MoraineError err;
	moraine_table *raw = nullptr;
	err.Check(moraine_catalog_requests(catalog.Handle(), &raw, err.Out()), "moraine_requests");
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

// ---- moraine_info(database) ---------------------------------------------------

unique_ptr<FunctionData> InfoBind(ClientContext &context, TableFunctionBindInput &input,
                                  vector<LogicalType> &return_types, vector<string> &names) {
	if (input.inputs[0].IsNull()) {
		throw InvalidInputException("moraine_info: the database name is NULL");
	}
	auto result = make_uniq<DatabaseBindData>();
	result->database = input.inputs[0].ToString();
	names = {"role", "read_only", "format", "head_snapshot", "commits", "conflicts", "claims"};
	return_types = {LogicalType::VARCHAR, LogicalType::BOOLEAN, LogicalType::BIGINT, LogicalType::BIGINT,
	                LogicalType::BIGINT,  LogicalType::BIGINT,  LogicalType::BIGINT};
	return std::move(result);
}

const char *RoleName(int32_t role) {
	switch (role) {
	case MORAINE_ROLE_WRITER:
		return "writer";
	case MORAINE_ROLE_READER:
		return "reader";
	case MORAINE_ROLE_TAILING_READER:
		return "tailing reader";
	case MORAINE_ROLE_COMMITTER:
		return "committer";
	default:
		return "unknown";
	}
}

void InfoScan(ClientContext &context, TableFunctionInput &input, DataChunk &output) {
	auto &state = input.global_state->Cast<OnceState>();
	if (state.done) {
		output.SetCardinality(0);
		return;
	}
	state.done = true;
	auto &catalog = MoraineCatalogByName(context, input.bind_data->Cast<DatabaseBindData>().database, "moraine_info");
	moraine_info info;
	MoraineError err;
	auto rc = moraine_catalog_info(catalog.Handle(), &info, err.Out());
	// MORAINE_NOT_FOUND: a store holding no lake yet, no format, no head.
	bool no_lake = rc == MORAINE_NOT_FOUND;
	if (!no_lake) {
		err.Check(rc, "moraine_info");
	}
	output.SetValue(0, 0, Value(RoleName(info.role)));
	output.SetValue(1, 0, Value::BOOLEAN(info.read_only));
	output.SetValue(2, 0, no_lake ? Value() : Value::BIGINT(NumericCast<int64_t>(info.format)));
	output.SetValue(3, 0, no_lake ? Value() : Value::BIGINT(NumericCast<int64_t>(info.head_snapshot)));
	output.SetValue(4, 0, Value::BIGINT(NumericCast<int64_t>(info.commits)));
	output.SetValue(5, 0, Value::BIGINT(NumericCast<int64_t>(info.commit_conflicts)));
	output.SetValue(6, 0, Value::BIGINT(NumericCast<int64_t>(info.claims)));
	output.SetCardinality(1);
}

// ---- moraine_runtime() ------------------------------------------------------

unique_ptr<FunctionData> RuntimeBind(ClientContext &context, TableFunctionBindInput &input,
                                     vector<LogicalType> &return_types, vector<string> &names) {
	names = {"catalogs", "transactions", "scans", "goroutines"};
	return_types = {LogicalType::BIGINT, LogicalType::BIGINT, LogicalType::BIGINT, LogicalType::BIGINT};
	return make_uniq<TableFunctionData>();
}

void RuntimeScan(ClientContext &context, TableFunctionInput &input, DataChunk &output) {
	auto &state = input.global_state->Cast<OnceState>();
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
	loader.RegisterFunction(TableFunction("moraine_info", {LogicalType::VARCHAR}, InfoScan, InfoBind, OnceInit));
	loader.RegisterFunction(TableFunction("moraine_runtime", {}, RuntimeScan, RuntimeBind, OnceInit));
}

} // namespace duckdb
