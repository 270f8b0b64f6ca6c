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

#include "duckdb/execution/physical_operator.hpp"

namespace duckdb {
class MoraineTableEntry;

class MoraineDelete : public PhysicalOperator {
public:
	MoraineDelete(PhysicalPlan &physical_plan, const vector<LogicalType> &types, MoraineTableEntry &table,
	              idx_t row_id_index, idx_t estimated_cardinality);

	MoraineTableEntry &table;
	//! The input column holding the rowid.
	idx_t row_id_index;

public:
	// Source interface: the row count
	SourceResultType GetData(ExecutionContext &context, DataChunk &chunk, OperatorSourceInput &input) const override;
	bool IsSource() const override {
		return true;
	}

public:
	// Sink interface
	unique_ptr<GlobalSinkState> GetGlobalSinkState(ClientContext &context) const override;
	SinkResultType Sink(ExecutionContext &context, DataChunk &chunk, OperatorSinkInput &input) const override;
	SinkFinalizeType Finalize(Pipeline &pipeline, Event &event, ClientContext &context,
	                          OperatorSinkFinalizeInput &input) const override;
	bool IsSink() const override {
		return true;
	}
	bool ParallelSink() const override {
		return false;
	}

	string GetName() const override;
	InsertionOrderPreservingMap<string> ParamsToString() const override;
};

} // namespace duckdb
