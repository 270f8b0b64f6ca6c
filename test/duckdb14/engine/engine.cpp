// The DuckDB v1.4.4 side of the sqllogictest engine: databases opened
// through DuckDB's C++ API, configured and rendered as DuckDB's own
// sqllogictest runner does (test/sqlite/sqllogic_test_runner.cpp and
// result_helper.cpp at v1.4.4). See engine.h for the boundary's rules.

#include "duckdb.hpp"
#include "duckdb/catalog/catalog_search_path.hpp"
#include "duckdb/common/exception.hpp"
#include "duckdb/common/string_util.hpp"
#include "duckdb/main/client_config.hpp"
#include "duckdb/main/client_data.hpp"
#include "duckdb/main/extension_helper.hpp"

#include "engine.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace duckdb;

struct slt_db {
	unique_ptr<DBConfig> config;
	unique_ptr<DuckDB> db;
	string path;
};

struct slt_conn {
	unique_ptr<Connection> con;
};

struct slt_result {
	std::vector<std::string> names;
	std::vector<std::string> types;
	std::vector<std::string> values; // row-major
	int64_t rows = 0;
};

static char *CopyString(const std::string &s) {
	char *p = static_cast<char *>(std::malloc(s.size() + 1));
	if (p) {
		std::memcpy(p, s.data(), s.size());
		p[s.size()] = '\0';
	}
	return p;
}

static void SetError(slt_error *err, const std::string &type, const std::string &message) {
	if (!err) {
		return;
	}
	err->type = CopyString(type);
	err->message = CopyString(message);
}

static void SetError(slt_error *err, ErrorData &data) {
	SetError(err, Exception::ExceptionTypeToString(data.Type()), data.Message());
}

static void SetError(slt_error *err, std::exception &ex) {
	ErrorData data(ex);
	SetError(err, data);
}

extern "C" void slt_error_free(slt_error *err) {
	if (!err) {
		return;
	}
	std::free(err->type);
	std::free(err->message);
	err->type = nullptr;
	err->message = nullptr;
}

// RunnerConfig sets what DuckDB's runner sets on every database it opens
// (SQLLogicTestRunner's constructor and GetTestConfig, with the default
// test configuration: no autoloading, only core_functions loaded at open).
// The settings DuckDB 1.5 keeps out of DBConfigOptions are set by name,
// which 1.4 takes too.
static void RunnerConfig(DBConfig &config) {
	config.SetOptionByName("allow_unredacted_secrets", Value::BOOLEAN(true));
	config.options.load_extensions = false;
	config.SetOptionByName("autoload_known_extensions", Value::BOOLEAN(false));
	config.SetOptionByName("autoinstall_known_extensions", Value::BOOLEAN(false));
	config.SetOptionByName("allow_unsigned_extensions", Value::BOOLEAN(true));
	config.options.checkpoint_wal_size = 0;
	config.options.checkpoint_on_shutdown = true;
	config.options.abort_on_wal_failure = true;
}

static slt_db *OpenWith(unique_ptr<DBConfig> config, const string &path) {
	auto db = make_uniq<slt_db>();
	db->config = std::move(config);
	db->path = path;
	db->db = make_uniq<DuckDB>(path.empty() ? nullptr : path.c_str(), db->config.get());
	// As the runner: core_functions is loaded at every open.
	ExtensionHelper::LoadExtension(*db->db, "core_functions");
	return db.release();
}

extern "C" slt_db *slt_open(const char *path, int read_only, int n, const char **names, const char **values,
                            slt_error *err) {
	try {
		auto config = make_uniq<DBConfig>();
		RunnerConfig(*config);
		if (read_only) {
			config->options.use_temporary_directory = false;
			config->options.access_mode = AccessMode::READ_ONLY;
		}
		for (int i = 0; i < n; i++) {
			config->SetOptionByName(names[i], Value(values[i]));
		}
		return OpenWith(std::move(config), path ? string(path) : string());
	} catch (std::exception &ex) {
		SetError(err, ex);
	} catch (...) {
		SetError(err, "INTERNAL", "unknown C++ exception opening the database");
	}
	return nullptr;
}

extern "C" void slt_close(slt_db *db) {
	try {
		delete db;
	} catch (...) {
	}
}

static slt_conn *Connect(slt_db *db) {
	auto conn = make_uniq<slt_conn>();
	conn->con = make_uniq<Connection>(*db->db);
	// As the runner's Reconnect.
	auto &client = ClientConfig::GetConfig(*conn->con->context);
	client.enable_progress_bar = true;
	client.print_progress_bar = false;
	return conn.release();
}

extern "C" slt_db *slt_restart(slt_db *db, slt_conn *main, slt_conn **new_main, slt_error *err) {
	if (new_main) {
		*new_main = nullptr;
	}
	try {
		// As the runner's RestartCommand: the new database gets the old
		// one's options, the new main connection the old one's session
		// settings and search path.
		auto config = make_uniq<DBConfig>();
		config->options = DBConfig::GetConfig(*db->db->instance).options;
		bool has_main = main != nullptr;
		ClientConfig client;
		vector<CatalogSearchEntry> paths;
		if (has_main) {
			client = main->con->context->config;
			paths = main->con->context->client_data->catalog_search_path->GetSetPaths();
			delete main;
			main = nullptr;
		}
		string path = db->path;
		delete db;
		db = nullptr;
		auto fresh = OpenWith(std::move(config), path);
		if (has_main) {
			auto conn = Connect(fresh);
			conn->con->context->config = client;
			try {
				conn->con->BeginTransaction();
				conn->con->context->client_data->catalog_search_path->Set(paths, CatalogSetPathType::SET_SCHEMAS);
				conn->con->Commit();
			} catch (std::exception &ex) {
				delete conn;
				delete fresh;
				SetError(err, ex);
				return nullptr;
			}
			*new_main = conn;
		}
		return fresh;
	} catch (std::exception &ex) {
		SetError(err, ex);
	} catch (...) {
		SetError(err, "INTERNAL", "unknown C++ exception restarting the database");
	}
	delete main;
	delete db;
	return nullptr;
}

extern "C" int slt_load_extension(slt_db *db, const char *name, slt_error *err) {
	try {
		switch (ExtensionHelper::LoadExtension(*db->db, name)) {
		case ExtensionLoadResult::LOADED_EXTENSION:
			return 1;
		default:
			return 0;
		}
	} catch (std::exception &ex) {
		SetError(err, ex);
	} catch (...) {
		SetError(err, "INTERNAL", "unknown C++ exception loading an extension");
	}
	return -1;
}

extern "C" slt_conn *slt_connect(slt_db *db, slt_error *err) {
	try {
		return Connect(db);
	} catch (std::exception &ex) {
		SetError(err, ex);
	} catch (...) {
		SetError(err, "INTERNAL", "unknown C++ exception connecting");
	}
	return nullptr;
}

extern "C" void slt_disconnect(slt_conn *conn) {
	try {
		delete conn;
	} catch (...) {
	}
}

extern "C" void slt_interrupt(slt_conn *conn) {
	try {
		conn->con->Interrupt();
	} catch (...) {
	}
}

// Render is TestResultHelper::SQLLogicTestConvertValue: NULL, BOOLEAN as 1
// or 0, anything else cast to VARCHAR, (empty) for the empty string, NUL
// bytes as \0.
static std::string Render(const Value &value, const LogicalType &type, ClientContext &context) {
	if (value.IsNull()) {
		return "NULL";
	}
	if (type.id() == LogicalTypeId::BOOLEAN) {
		return BooleanValue::Get(value) ? "1" : "0";
	}
	auto str = value.CastAs(context, LogicalType::VARCHAR).ToString();
	if (str.empty()) {
		return "(empty)";
	}
	return StringUtil::Replace(str, string("\0", 1), "\\0");
}

extern "C" slt_result *slt_query(slt_conn *conn, const char *sql, slt_error *err) {
	try {
		auto result = conn->con->Query(sql);
		if (result->HasError()) {
			SetError(err, result->GetErrorObject());
			return nullptr;
		}
		auto res = make_uniq<slt_result>();
		auto ncols = result->ColumnCount();
		for (idx_t c = 0; c < ncols; c++) {
			res->names.push_back(result->names[c]);
			res->types.push_back(result->types[c].ToString());
		}
		auto nrows = result->RowCount();
		res->rows = static_cast<int64_t>(nrows);
		res->values.reserve(nrows * ncols);
		auto &context = *conn->con->context;
		for (idx_t r = 0; r < nrows; r++) {
			for (idx_t c = 0; c < ncols; c++) {
				res->values.push_back(Render(result->GetValue(c, r), result->types[c], context));
			}
		}
		return res.release();
	} catch (std::exception &ex) {
		SetError(err, ex);
	} catch (...) {
		SetError(err, "INTERNAL", "unknown C++ exception running a query");
	}
	return nullptr;
}

extern "C" int64_t slt_result_columns(slt_result *res) {
	return static_cast<int64_t>(res->names.size());
}

extern "C" int64_t slt_result_rows(slt_result *res) {
	return res->rows;
}

extern "C" const char *slt_result_name(slt_result *res, int64_t col, size_t *len) {
	*len = res->names[col].size();
	return res->names[col].data();
}

extern "C" const char *slt_result_type(slt_result *res, int64_t col, size_t *len) {
	*len = res->types[col].size();
	return res->types[col].data();
}

extern "C" const char *slt_result_value(slt_result *res, int64_t row, int64_t col, size_t *len) {
	auto &v = res->values[row * static_cast<int64_t>(res->names.size()) + col];
	*len = v.size();
	return v.data();
}

extern "C" void slt_result_free(slt_result *res) {
	delete res;
}

// CastText is the runner's conversion of one side of CompareValues: "NULL"
// is the NULL of the type, anything else a VARCHAR cast to it.
static bool CastText(ClientContext &context, const std::string &text, const LogicalType &type, Value &out) {
	if (text == "NULL") {
		out = Value(type);
		return true;
	}
	out = Value(text);
	return out.TryCastAs(context, type);
}

extern "C" int slt_values_equal(slt_conn *conn, const char *type, const char *actual, const char *expected) {
	try {
		auto sql_type = TransformStringToLogicalType(type, *conn->con->context);
		if (!sql_type.IsNumeric()) {
			return 0;
		}
		auto &context = *conn->con->context;
		Value lvalue, rvalue;
		if (!CastText(context, actual, sql_type, lvalue) || !CastText(context, expected, sql_type, rvalue)) {
			return 0;
		}
		return Value::ValuesAreEqual(context, lvalue, rvalue) ? 1 : 0;
	} catch (...) {
		return 0;
	}
}
