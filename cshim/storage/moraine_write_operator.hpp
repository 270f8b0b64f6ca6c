//===----------------------------------------------------------------------===//
// moraine storage extension: what INSERT, UPDATE and DELETE share
//
// Each is a sink (not parallel) that collects the statement's input and
// hands it to the transaction in one call when the input is done, then a
// source returning one row: the row count its state recorded.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/execution/physical_operator.hpp"

#include "moraine_duckdb_compat.hpp"

namespace duckdb {
class MoraineTableEntry;

//! The sink state of a write: the row count GetData returns.
class MoraineWriteState : public GlobalSinkState {
public:
	idx_t count = 0;
};

class MoraineWriteOperator : public PhysicalOperator {
public:
	MoraineWriteOperator(PhysicalPlan &physical_plan, const vector<LogicalType> &types, MoraineTableEntry &table,
	                     string name, idx_t estimated_cardinality);

	MoraineTableEntry &table;

public:
	// Source interface: the row count
	SourceResultType MORAINE_SOURCE_GET_DATA(ExecutionContext &context, DataChunk &chunk,
	                                         OperatorSourceInput &input) const override;
	bool IsSource() const override {
		return true;
	}

public:
	// Sink interface (GetGlobalSinkState, Sink, Finalize: the subclass's)
	bool IsSink() const override {
		return true;
	}
	bool ParallelSink() const override {
		return false;
	}

	string GetName() const override;
	InsertionOrderPreservingMap<string> ParamsToString() const override;

private:
	//! What EXPLAIN names the operator.
	string name;
};

} // namespace duckdb
