#include "moraine_insert.hpp"

#include "duckdb/common/types/data_chunk.hpp"

#include "moraine_abi.hpp"
#include "moraine_schema_entry.hpp"
#include "moraine_table_entry.hpp"
#include "moraine_transaction.hpp"

namespace duckdb {

MoraineInsert::MoraineInsert(PhysicalPlan &physical_plan, const vector<LogicalType> &types, MoraineTableEntry &table_p,
                             idx_t estimated_cardinality)
    : MoraineWriteOperator(physical_plan, types, table_p, "MORAINE_INSERT", estimated_cardinality) {
}

namespace {

class MoraineInsertGlobalState : public MoraineWriteState {
public:
	explicit MoraineInsertGlobalState(idx_t column_count) : rows(column_count) {
	}

	MoraineRows rows;
};

} // namespace

unique_ptr<GlobalSinkState> MoraineInsert::GetGlobalSinkState(ClientContext &context) const {
	return make_uniq<MoraineInsertGlobalState>(table.GetColumns().LogicalColumnCount());
}

SinkResultType MoraineInsert::Sink(ExecutionContext &context, DataChunk &chunk, OperatorSinkInput &input) const {
	auto &state = input.global_state.Cast<MoraineInsertGlobalState>();
	auto column_count = table.GetColumns().LogicalColumnCount();
	if (chunk.ColumnCount() != column_count) {
		throw InternalException("moraine: INSERT into %s got %d columns for a table of %d", table.name,
		                        chunk.ColumnCount(), column_count);
	}
	for (idx_t r = 0; r < chunk.size(); r++) {
		for (idx_t c = 0; c < column_count; c++) {
			state.rows.Append(chunk.GetValue(c, r));
		}
	}
	return SinkResultType::NEED_MORE_INPUT;
}

SinkFinalizeType MoraineInsert::Finalize(Pipeline &pipeline, Event &event, ClientContext &context,
                                         OperatorSinkFinalizeInput &input) const {
	auto &state = input.global_state.Cast<MoraineInsertGlobalState>();
	state.count = state.rows.RowCount();
	if (state.count == 0) {
		return SinkFinalizeType::READY;
	}
	auto &transaction = MoraineTransaction::Get(context, table.ParentCatalog());
	auto &lake = table.ParentSchema().Cast<MoraineSchemaEntry>();
	transaction.Writes(lake, "INSERT into " + table.name);
	auto rows = state.rows.Get();
	MoraineError err;
	err.Check(moraine_txn_insert(transaction.Handle(lake), table.name.c_str(), &rows, err.Out()),
	          "moraine: INSERT into " + table.name);
	return SinkFinalizeType::READY;
}

} // namespace duckdb
