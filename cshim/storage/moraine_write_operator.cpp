#include "moraine_write_operator.hpp"

#include "duckdb/common/types/data_chunk.hpp"

#include "moraine_table_entry.hpp"

namespace duckdb {

MoraineWriteOperator::MoraineWriteOperator(PhysicalPlan &physical_plan, const vector<LogicalType> &types,
                                           MoraineTableEntry &table_p, string name_p, idx_t estimated_cardinality)
    : PhysicalOperator(physical_plan, PhysicalOperatorType::EXTENSION, types, estimated_cardinality), table(table_p),
      name(std::move(name_p)) {
}

SourceResultType MoraineWriteOperator::MORAINE_SOURCE_GET_DATA(ExecutionContext &context, DataChunk &chunk,
                                               OperatorSourceInput &input) const {
	auto &state = sink_state->Cast<MoraineWriteState>();
	chunk.SetCardinality(1);
	chunk.SetValue(0, 0, Value::BIGINT(NumericCast<int64_t>(state.count)));
	return SourceResultType::FINISHED;
}

string MoraineWriteOperator::GetName() const {
	return name;
}

InsertionOrderPreservingMap<string> MoraineWriteOperator::ParamsToString() const {
	InsertionOrderPreservingMap<string> result;
	result["Table Name"] = table.name;
	return result;
}

} // namespace duckdb
