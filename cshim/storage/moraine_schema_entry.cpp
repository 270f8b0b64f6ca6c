#include "moraine_schema_entry.hpp"

#include "duckdb/catalog/entry_lookup_info.hpp"
#include "duckdb/common/enum_util.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/parser/constraints/not_null_constraint.hpp"
#include "duckdb/parser/constraints/unique_constraint.hpp"
#include "duckdb/parser/parsed_data/create_schema_info.hpp"
#include "duckdb/parser/parsed_data/create_table_info.hpp"
#include "duckdb/parser/parsed_data/alter_table_info.hpp"
#include "duckdb/parser/parsed_data/drop_info.hpp"
#include "duckdb/parser/expression/constant_expression.hpp"
#include "duckdb/planner/parsed_data/bound_create_table_info.hpp"

#include "moraine_catalog.hpp"
#include "moraine_table_entry.hpp"
#include "moraine_transaction.hpp"

namespace duckdb {

MoraineSchemaEntry::MoraineSchemaEntry(Catalog &catalog, CreateSchemaInfo &info, moraine_catalog handle_p,
                                       bool published_p)
    : SchemaCatalogEntry(catalog, info), handle(handle_p), published(published_p) {
}


optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateTable(CatalogTransaction transaction, BoundCreateTableInfo &info) {
	auto &catalog = ParentCatalog();
	auto &base = info.Base();
	catalog.Cast<MoraineCatalog>().CheckWritable("CREATE TABLE");
	bool if_not_exists = false;
	switch (base.on_conflict) {
	case OnCreateConflict::ERROR_ON_CONFLICT:
		break;
	case OnCreateConflict::IGNORE_ON_CONFLICT:
		if_not_exists = true;
		break;
	default:
		throw NotImplementedException("moraine: CREATE OR REPLACE TABLE %s in \"%s\" is not supported (a metadata "
		                              "table is never dropped)",
		                              base.table, catalog.GetName());
	}
	// The definition as the ABI takes it: names, types as DuckDB spells
	// them, NOT NULL, a single-column PRIMARY KEY; nothing else.
	vector<string> names;
	vector<string> types;
	vector<bool> not_null;
	for (auto &col : base.columns.Logical()) {
		if (col.Generated() || col.HasDefaultValue()) {
			throw NotImplementedException("moraine: CREATE TABLE %s: column %s has a default or is generated, which "
			                              "moraine's tables do not take",
			                              base.table, col.Name());
		}
		names.push_back(col.Name());
		types.push_back(col.Type().ToString());
		not_null.push_back(false);
	}
	int64_t primary_key = -1;
	for (auto &constraint : base.constraints) {
		switch (constraint->type) {
		case ConstraintType::NOT_NULL:
			not_null[constraint->Cast<NotNullConstraint>().index.index] = true;
			break;
		case ConstraintType::UNIQUE: {
			auto &unique = constraint->Cast<UniqueConstraint>();
			if (!unique.IsPrimaryKey()) {
				throw NotImplementedException("moraine: CREATE TABLE %s: UNIQUE constraints are not supported",
				                              base.table);
			}
			if (unique.HasIndex()) {
				primary_key = NumericCast<int64_t>(unique.GetIndex().index);
			} else if (unique.GetColumnNames().size() == 1 &&
			           base.columns.ColumnExists(unique.GetColumnNames()[0])) {
				primary_key =
				    NumericCast<int64_t>(base.columns.GetColumn(unique.GetColumnNames()[0]).Logical().index);
			} else {
				throw NotImplementedException("moraine: CREATE TABLE %s: a PRIMARY KEY of several columns is not "
				                              "supported",
				                              base.table);
			}
			break;
		}
		default:
			throw NotImplementedException("moraine: CREATE TABLE %s: %s constraints are not supported", base.table,
			                              EnumUtil::ToString(constraint->type));
		}
	}
	vector<moraine_column_def> columns;
	for (idx_t i = 0; i < names.size(); i++) {
		moraine_column_def col;
		col.name = names[i].c_str();
		col.type = types[i].c_str();
		col.not_null = not_null[i];
		columns.push_back(col);
	}
	moraine_table_def def;
	def.name = base.table.c_str();
	def.column_count = columns.size();
	def.columns = columns.data();
	def.primary_key = primary_key;

	auto &txn = MoraineTransaction::Get(transaction, catalog);
	txn.Writes(*this, "CREATE TABLE " + base.table);
	MoraineError err;
	// (the library's message names the table)
	err.Check(moraine_txn_create_table(txn.Handle(*this), &def, if_not_exists, err.Out()), "moraine");
	txn.Refresh(*this);
	auto entry = txn.GetTable(*this, base.table);
	if (!entry) {
		throw InternalException("moraine: CREATE TABLE %s: the table is not listed after its creation", base.table);
	}
	return entry.get();
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateFunction(CatalogTransaction transaction, CreateFunctionInfo &info) {
	ParentCatalog().Cast<MoraineCatalog>().NotSupported("CREATE FUNCTION");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateIndex(CatalogTransaction transaction, CreateIndexInfo &info,
                                                           TableCatalogEntry &table) {
	ParentCatalog().Cast<MoraineCatalog>().NotSupported("CREATE INDEX");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateView(CatalogTransaction transaction, CreateViewInfo &info) {
	ParentCatalog().Cast<MoraineCatalog>().NotSupported("CREATE VIEW");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateSequence(CatalogTransaction transaction, CreateSequenceInfo &info) {
	ParentCatalog().Cast<MoraineCatalog>().NotSupported("CREATE SEQUENCE");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateTableFunction(CatalogTransaction transaction,
                                                                   CreateTableFunctionInfo &info) {
	ParentCatalog().Cast<MoraineCatalog>().NotSupported("CREATE FUNCTION");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateCopyFunction(CatalogTransaction transaction,
                                                                  CreateCopyFunctionInfo &info) {
	ParentCatalog().Cast<MoraineCatalog>().NotSupported("CREATE FUNCTION");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreatePragmaFunction(CatalogTransaction transaction,
                                                                    CreatePragmaFunctionInfo &info) {
	ParentCatalog().Cast<MoraineCatalog>().NotSupported("CREATE FUNCTION");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateCollation(CatalogTransaction transaction,
                                                               CreateCollationInfo &info) {
	ParentCatalog().Cast<MoraineCatalog>().NotSupported("CREATE COLLATION");
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::CreateType(CatalogTransaction transaction, CreateTypeInfo &info) {
	ParentCatalog().Cast<MoraineCatalog>().NotSupported("CREATE TYPE");
}

void MoraineSchemaEntry::Alter(CatalogTransaction transaction, AlterInfo &info) {
	auto &catalog = ParentCatalog().Cast<MoraineCatalog>();
	if (info.type != AlterType::ALTER_TABLE) {
		catalog.NotSupported("ALTER " + EnumUtil::ToString(info.type));
	}
	auto &alter = info.Cast<AlterTableInfo>();
	// DuckLake's migration of a catalog adds and drops columns of its
	// metadata tables; nothing else alters them.
	switch (alter.alter_table_type) {
	case AlterTableType::ADD_COLUMN:
	case AlterTableType::REMOVE_COLUMN:
		break;
	default:
		catalog.NotSupported("ALTER TABLE " + EnumUtil::ToString(alter.alter_table_type));
	}
	catalog.CheckWritable("ALTER TABLE");
	auto &txn = MoraineTransaction::Get(transaction, catalog);
	txn.Writes(*this, "ALTER TABLE " + alter.name);
	if (alter.alter_table_type == AlterTableType::REMOVE_COLUMN) {
		auto &remove = alter.Cast<RemoveColumnInfo>();
		txn.DropColumn(*this, alter.name, remove.removed_column, remove.if_column_exists);
		return;
	}
	auto &add = alter.Cast<AddColumnInfo>();
	auto &col = add.new_column;
	if (col.Generated()) {
		throw NotImplementedException("moraine: ALTER TABLE %s ADD COLUMN %s: a generated column", alter.name,
		                              col.Name());
	}
	bool has_default = false;
	string default_text;
	if (col.HasDefaultValue()) {
		auto &expr = col.DefaultValue();
		if (expr.GetExpressionType() != ExpressionType::VALUE_CONSTANT) {
			throw NotImplementedException("moraine: ALTER TABLE %s ADD COLUMN %s: a default that is not a constant (%s)",
			                              alter.name, col.Name(), expr.ToString());
		}
		auto &value = expr.Cast<ConstantExpression>().value;
		if (!value.IsNull()) {
			has_default = true;
			default_text = value.ToString();
		}
	}
	auto type = col.Type().ToString();
	moraine_column_def def;
	def.name = col.Name().c_str();
	def.type = type.c_str();
	def.not_null = false;
	txn.AddColumn(*this, alter.name, def, has_default ? default_text.c_str() : nullptr, add.if_column_not_exists);
}

void MoraineSchemaEntry::DropEntry(ClientContext &context, DropInfo &info) {
	auto &catalog = ParentCatalog().Cast<MoraineCatalog>();
	if (info.type != CatalogType::TABLE_ENTRY) {
		catalog.NotSupported("DROP " + EnumUtil::ToString(info.type));
	}
	catalog.CheckWritable("DROP TABLE");
	auto &txn = MoraineTransaction::Get(context, catalog);
	txn.Writes(*this, "DROP TABLE " + info.name);
	txn.DropTable(*this, info.name, info.if_not_found == OnEntryNotFound::RETURN_NULL);
}

void MoraineSchemaEntry::Scan(ClientContext &context, CatalogType type,
                              const std::function<void(CatalogEntry &)> &callback) {
	if (type != CatalogType::TABLE_ENTRY) {
		return;
	}
	auto &txn = MoraineTransaction::Get(context, ParentCatalog());
	txn.ScanTables(*this, [&](MoraineTableEntry &table) { callback(table); });
}

void MoraineSchemaEntry::Scan(CatalogType type, const std::function<void(CatalogEntry &)> &callback) {
	// Without a client context there is no transaction to read tables at.
}

optional_ptr<CatalogEntry> MoraineSchemaEntry::LookupEntry(CatalogTransaction transaction,
                                                           const EntryLookupInfo &lookup_info) {
	auto type = lookup_info.GetCatalogType();
	if (type != CatalogType::TABLE_ENTRY) {
		return nullptr;
	}
	if (!transaction.transaction && !transaction.HasContext()) {
		return nullptr;
	}
	auto table = MoraineTransaction::Get(transaction, ParentCatalog()).GetTable(*this, lookup_info.GetEntryName());
	if (!table) {
		return nullptr;
	}
	return table.get();
}

} // namespace duckdb
