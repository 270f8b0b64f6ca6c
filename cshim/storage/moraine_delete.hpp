//===----------------------------------------------------------------------===//
// moraine storage extension: DELETE from a table of the lake, by rowid
//
// DuckDB plans DELETE ... WHERE (with IN lists, NOT EXISTS subqueries) and
// an unconditional DELETE FROM as a scan with the rowid feeding this sink.
// It collects the rowids and hands them to the transaction in one
// moraine_txn_delete when the input is done. Returns the number of rows
// deleted (a row reached twice counts once).
//===----------------------------------------------------------------------===//

#pragma once

#include "moraine_write_operator.hpp"

namespace duckdb {

class MoraineDelete : public MoraineWriteOperator {
public:
	MoraineDelete(PhysicalPlan &physical_plan, const vector<LogicalType> &types, MoraineTableEntry &table,
	              idx_t row_id_index, idx_t estimated_cardinality);

	//! The input column holding the rowid.
	idx_t row_id_index;

	// Sink interface
	unique_ptr<GlobalSinkState> GetGlobalSinkState(ClientContext &context) const override;
	SinkResultType Sink(ExecutionContext &context, DataChunk &chunk, OperatorSinkInput &input) const override;
	SinkFinalizeType Finalize(Pipeline &pipeline, Event &event, ClientContext &context,
	                          OperatorSinkFinalizeInput &input) const override;
};

} // namespace duckdb
