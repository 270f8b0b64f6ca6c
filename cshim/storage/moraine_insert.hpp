//===----------------------------------------------------------------------===//
// moraine storage extension: INSERT into a table of the lake
//
// A sink that collects the statement's rows (every column, in the table's
// order: a partial column list was completed with NULLs by the planner) and
// hands them to the transaction in one moraine_txn_insert when the input
// is done, so the statement is one batch (checked, and refused, as a
// whole) and a statement reading the table it inserts into reads it
// unchanged. Returns the row count, as DuckDB's INSERT does.
//===----------------------------------------------------------------------===//

#pragma once

#include "moraine_write_operator.hpp"

namespace duckdb {

class MoraineInsert : public MoraineWriteOperator {
public:
	MoraineInsert(PhysicalPlan &physical_plan, const vector<LogicalType> &types, MoraineTableEntry &table,
	              idx_t estimated_cardinality);

	// Sink interface
	unique_ptr<GlobalSinkState> GetGlobalSinkState(ClientContext &context) const override;
	SinkResultType Sink(ExecutionContext &context, DataChunk &chunk, OperatorSinkInput &input) const override;
	SinkFinalizeType Finalize(Pipeline &pipeline, Event &event, ClientContext &context,
	                          OperatorSinkFinalizeInput &input) const override;
};

} // namespace duckdb
