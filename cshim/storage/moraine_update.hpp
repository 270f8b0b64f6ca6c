//===----------------------------------------------------------------------===//
// moraine storage extension: UPDATE of a table of the lake, by rowid
//
// DuckDB plans UPDATE ... WHERE and UPDATE ... FROM (VALUES ...) as a scan
// (with the rowid) feeding this sink: each input row carries the new
// values of the updated columns and, last, the rowid. The sink collects
// them and hands them to the transaction in one moraine_txn_update when
// the input is done (one batch: keys are checked after all of it). Returns
// the number of rows updated.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/common/index_vector.hpp"

#include "moraine_write_operator.hpp"

namespace duckdb {

class MoraineUpdate : public MoraineWriteOperator {
public:
	MoraineUpdate(PhysicalPlan &physical_plan, const vector<LogicalType> &types, MoraineTableEntry &table,
	              vector<PhysicalIndex> columns, vector<unique_ptr<Expression>> expressions,
	              vector<unique_ptr<Expression>> bound_defaults, idx_t estimated_cardinality);

	//! The updated columns.
	vector<PhysicalIndex> columns;
	//! Per updated column: a reference to the input column with its new
	//! value, or DEFAULT.
	vector<unique_ptr<Expression>> expressions;
	//! Every column's default (for SET x = DEFAULT).
	vector<unique_ptr<Expression>> bound_defaults;

	// Sink interface
	unique_ptr<GlobalSinkState> GetGlobalSinkState(ClientContext &context) const override;
	SinkResultType Sink(ExecutionContext &context, DataChunk &chunk, OperatorSinkInput &input) const override;
	SinkFinalizeType Finalize(Pipeline &pipeline, Event &event, ClientContext &context,
	                          OperatorSinkFinalizeInput &input) const override;
};

} // namespace duckdb
