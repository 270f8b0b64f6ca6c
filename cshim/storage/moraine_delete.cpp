#include "moraine_delete.hpp"

#include "duckdb/common/types/data_chunk.hpp"

#include "moraine_abi.hpp"
#include "moraine_schema_entry.hpp"
#include "moraine_table_entry.hpp"
#include "moraine_transaction.hpp"

namespace duckdb {

MoraineDelete::MoraineDelete(PhysicalPlan &physical_plan, const vector<LogicalType> &types, MoraineTableEntry &table_p,
                             idx_t row_id_index_p, idx_t estimated_cardinality)
    : MoraineWriteOperator(physical_plan, types, table_p, "MORAINE_DELETE", estimated_cardinality),
      row_id_index(row_id_index_p) {
}

namespace {

class MoraineDeleteGlobalState : public MoraineWriteState {
public:
	vector<int64_t> rowids;
};

} // namespace

unique_ptr<GlobalSinkState> MoraineDelete::GetGlobalSinkState(ClientContext &context) const {
	return make_uniq<MoraineDeleteGlobalState>();
}

SinkResultType MoraineDelete::Sink(ExecutionContext &context, DataChunk &chunk, OperatorSinkInput &input) const {
	auto &state = input.global_state.Cast<MoraineDeleteGlobalState>();
	auto &row_ids = chunk.data[row_id_index];
	UnifiedVectorFormat format;
	row_ids.ToUnifiedFormat(chunk.size(), format);
	auto data = UnifiedVectorFormat::GetData<row_t>(format);
	for (idx_t r = 0; r < chunk.size(); r++) {
		auto idx = format.sel->get_index(r);
		if (format.validity.RowIsValid(idx)) {
			state.rowids.push_back(data[idx]);
		}
	}
	return SinkResultType::NEED_MORE_INPUT;
}

SinkFinalizeType MoraineDelete::Finalize(Pipeline &pipeline, Event &event, ClientContext &context,
                                         OperatorSinkFinalizeInput &input) const {
	auto &state = input.global_state.Cast<MoraineDeleteGlobalState>();
	if (state.rowids.empty()) {
		return SinkFinalizeType::READY;
	}
	auto &transaction = MoraineTransaction::Get(context, table.ParentCatalog());
	auto &lake = table.ParentSchema().Cast<MoraineSchemaEntry>();
	transaction.Writes(lake, "DELETE from " + table.name);
	uint64_t deleted = 0;
	MoraineError err;
	err.Check(moraine_txn_delete(transaction.Handle(lake), table.name.c_str(), state.rowids.data(), state.rowids.size(),
	                             &deleted, err.Out()),
	          "moraine: DELETE from " + table.name);
	state.count = NumericCast<idx_t>(deleted);
	return SinkFinalizeType::READY;
}

} // namespace duckdb
