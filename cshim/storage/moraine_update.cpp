#include "moraine_update.hpp"

#include "duckdb/common/types/data_chunk.hpp"
#include "duckdb/execution/expression_executor.hpp"
#include "duckdb/planner/expression/bound_reference_expression.hpp"

#include "moraine_abi.hpp"
#include "moraine_schema_entry.hpp"
#include "moraine_table_entry.hpp"
#include "moraine_transaction.hpp"

namespace duckdb {

MoraineUpdate::MoraineUpdate(PhysicalPlan &physical_plan, const vector<LogicalType> &types, MoraineTableEntry &table_p,
                             vector<PhysicalIndex> columns_p, vector<unique_ptr<Expression>> expressions_p,
                             vector<unique_ptr<Expression>> bound_defaults_p, idx_t estimated_cardinality)
    : MoraineWriteOperator(physical_plan, types, table_p, "MORAINE_UPDATE", estimated_cardinality),
      columns(std::move(columns_p)), expressions(std::move(expressions_p)),
      bound_defaults(std::move(bound_defaults_p)) {
}

namespace {

class MoraineUpdateGlobalState : public MoraineWriteState {
public:
	MoraineUpdateGlobalState(ClientContext &context, const vector<unique_ptr<Expression>> &bound_defaults,
	                         idx_t column_count)
	    : default_executor(context, bound_defaults), rows(column_count) {
	}

	ExpressionExecutor default_executor;
	vector<int64_t> rowids;
	MoraineRows rows;
};

} // namespace

unique_ptr<GlobalSinkState> MoraineUpdate::GetGlobalSinkState(ClientContext &context) const {
	return make_uniq<MoraineUpdateGlobalState>(context, bound_defaults, columns.size());
}

SinkResultType MoraineUpdate::Sink(ExecutionContext &context, DataChunk &chunk, OperatorSinkInput &input) const {
	auto &state = input.global_state.Cast<MoraineUpdateGlobalState>();
	chunk.Flatten();
	// The new value of each updated column: an input column, or the
	// column's default.
	vector<Vector> defaults;
	defaults.reserve(expressions.size()); // never reallocated: sources point into it
	vector<optional_ptr<Vector>> sources;
	state.default_executor.SetChunk(chunk);
	for (idx_t i = 0; i < expressions.size(); i++) {
		auto &expr = *expressions[i];
		if (expr.GetExpressionType() == ExpressionType::VALUE_DEFAULT) {
			defaults.emplace_back(expr.return_type, chunk.size());
			auto &target = defaults.back();
			state.default_executor.ExecuteExpression(columns[i].index, target);
			sources.push_back(&target);
			continue;
		}
		if (expr.GetExpressionType() != ExpressionType::BOUND_REF) {
			throw InternalException("moraine: UPDATE of %s: an update expression of type %s", table.name,
			                        ExpressionTypeToString(expr.GetExpressionType()));
		}
		sources.push_back(&chunk.data[expr.Cast<BoundReferenceExpression>().index]);
	}
	auto &row_ids = chunk.data[chunk.ColumnCount() - 1];
	auto row_id_data = FlatVector::GetData<row_t>(row_ids);
	for (idx_t r = 0; r < chunk.size(); r++) {
		state.rowids.push_back(row_id_data[r]);
		for (auto &source : sources) {
			state.rows.Append(source->GetValue(r));
		}
	}
	return SinkResultType::NEED_MORE_INPUT;
}

SinkFinalizeType MoraineUpdate::Finalize(Pipeline &pipeline, Event &event, ClientContext &context,
                                         OperatorSinkFinalizeInput &input) const {
	auto &state = input.global_state.Cast<MoraineUpdateGlobalState>();
	state.count = state.rowids.size();
	if (state.count == 0) {
		return SinkFinalizeType::READY;
	}
	vector<uint64_t> column_indexes;
	for (auto &column : columns) {
		column_indexes.push_back(column.index);
	}
	auto &transaction = MoraineTransaction::Get(context, table.ParentCatalog());
	auto &lake = table.ParentSchema().Cast<MoraineSchemaEntry>();
	transaction.Writes(lake, "UPDATE of " + table.name);
	auto rows = state.rows.Get();
	MoraineError err;
	err.Check(moraine_txn_update(transaction.Handle(lake), table.name.c_str(), state.rowids.data(), column_indexes.data(),
	                             column_indexes.size(), &rows, err.Out()),
	          "moraine: UPDATE of " + table.name);
	return SinkFinalizeType::READY;
}

} // namespace duckdb
