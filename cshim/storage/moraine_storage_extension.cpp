//===----------------------------------------------------------------------===//
// moraine storage extension (DuckDB v1.4.4, CPP ABI): the entry point
//
// Registers storage type "moraine" (ATTACH 'moraine:<uri>' / TYPE moraine),
// the "moraine" secret type (S3 credentials scoped by URI prefix, for when
// httpfs is not loaded), and the table functions (moraine_functions.cpp). Attach
// turns DuckDB's options into moraine_attach_with_commit_log's: the access
// mode becomes read_only, every other option goes to the Go core by name,
// unchanged (it checks names and values and opens nothing on a refusal),
// and S3 credentials come from a DuckDB secret when no S3 option is given.
//===----------------------------------------------------------------------===//

#include "duckdb.hpp"
#include "duckdb/catalog/catalog.hpp"
#include "duckdb/function/table_function.hpp"
#include "duckdb/main/attached_database.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/main/extension/extension_loader.hpp"
#include "duckdb/main/secret/secret.hpp"
#include "duckdb/main/secret/secret_manager.hpp"
#include "duckdb/parser/parsed_data/attach_info.hpp"
#include "duckdb/storage/storage_extension.hpp"

#include "moraine_abi.hpp"
#include "moraine_duckdb_compat.hpp"
#include "moraine_catalog.hpp"
#include "moraine_functions.hpp"
#include "moraine_go.hpp"
#include "moraine_transaction_manager.hpp"

#ifndef MORAINE_EXTENSION_NAME
#define MORAINE_EXTENSION_NAME moraine
#endif
#define MORAINE_STRINGIFY_(x) #x
#define MORAINE_STRINGIFY(x)  MORAINE_STRINGIFY_(x)
#define MORAINE_EXTENSION_NAME_STRING MORAINE_STRINGIFY(MORAINE_EXTENSION_NAME)

namespace duckdb {

namespace {

constexpr const char *SECRET_TYPE = "moraine";

//! The S3 settings of one attach, as strings the ABI borrows.
struct S3Settings {
	string key_id, secret, region, session_token, endpoint, url_style;
	int32_t use_ssl = -1;
	bool found = false;
	//! The secret they came from, for messages ("the moraine secret \"x\"").
	string source;

	moraine_s3_config Config() const {
		moraine_s3_config c;
		c.key_id = key_id.c_str();
		c.secret = secret.c_str();
		c.region = region.c_str();
		c.session_token = session_token.c_str();
		c.endpoint = endpoint.c_str();
		c.url_style = url_style.c_str();
		c.use_ssl = use_ssl;
		return c;
	}
};

bool IsS3(const string &uri) {
	return StringUtil::StartsWith(StringUtil::Lower(uri), "s3://");
}

//! Reads a secret's S3 fields (httpfs's s3 secrets and moraine's use the
//! same names).
void FromSecret(const KeyValueSecret &secret, S3Settings &s3) {
	auto get = [&](const char *key, string &out) {
		auto v = secret.TryGetValue(key);
		if (!v.IsNull()) {
			out = v.ToString();
		}
	};
	get("key_id", s3.key_id);
	get("secret", s3.secret);
	get("region", s3.region);
	get("session_token", s3.session_token);
	get("endpoint", s3.endpoint);
	get("url_style", s3.url_style);
	auto ssl = secret.TryGetValue("use_ssl");
	if (!ssl.IsNull()) {
		s3.use_ssl = BooleanValue::Get(ssl.DefaultCastAs(LogicalType::BOOLEAN)) ? 1 : 0;
	}
	s3.found = true;
	s3.source = StringUtil::Format("the %s secret \"%s\"", secret.GetType(), secret.GetName());
}

//! The best-matching secret for uri: an s3 secret (httpfs) first, else a
//! moraine one.
//! moraine:S3://... (the spelling DuckDB does not hand to httpfs) is also
//! looked up as s3://..., the scope secrets are usually given.
S3Settings LookupSecret(ClientContext &context, const string &uri) {
	S3Settings s3;
	auto &manager = SecretManager::Get(context);
	auto transaction = CatalogTransaction::GetSystemCatalogTransaction(context);
	vector<string> paths {uri};
	auto lowered = "s3://" + uri.substr(5);
	if (lowered != uri) {
		paths.push_back(lowered);
	}
	for (auto type : {"s3", SECRET_TYPE}) {
		for (auto &path : paths) {
			auto match = manager.LookupSecret(transaction, path, type);
			if (!match.HasMatch()) {
				continue;
			}
			auto kv = dynamic_cast<const KeyValueSecret *>(&match.GetSecret());
			if (kv) {
				FromSecret(*kv, s3);
				return s3;
			}
		}
	}
	return s3;
}

bool IsS3Option(const string &name) {
	auto lower = StringUtil::Lower(name);
	if (StringUtil::StartsWith(lower, "meta_")) {
		lower = lower.substr(5);
	}
	return StringUtil::StartsWith(lower, "s3_");
}

//! Whether DuckDB made the attach of path READ_ONLY by itself: a remote
//! path (FileSystem::IsRemoteFile: lower-case s3://) with no access mode in
//! the ATTACH's options, in a database that is not read-only.
bool RaisedToReadOnly(ClientContext &context, const AttachInfo &info, const string &path) {
	if (!FileSystem::IsRemoteFile(path) && !FileSystem::IsRemoteFile(info.path)) {
		return false;
	}
	if (DBConfig::GetConfig(context).options.access_mode == AccessMode::READ_ONLY) {
		return false;
	}
	for (auto &entry : info.options) {
		auto name = StringUtil::Lower(entry.first);
		if (name == "read_only" || name == "readonly" || name == "read_write" || name == "access_mode") {
			return false;
		}
	}
	return true;
}

unique_ptr<Catalog> MoraineAttach(optional_ptr<StorageExtensionInfo> storage_info, ClientContext &context,
                                  AttachedDatabase &db, const string &name, AttachInfo &info,
                                  AttachOptions &attach_options) {
	auto path = info.path;
	if (StringUtil::StartsWith(path, "moraine:")) {
		path = path.substr(8);
	}
	bool read_only = attach_options.access_mode == AccessMode::READ_ONLY;
	if (read_only && RaisedToReadOnly(context, info, path)) {
		// DuckDB attaches a remote path (lower-case s3://, with httpfs
		// loaded) READ_ONLY when no access mode is given, before the
		// storage extension sees it (a remote DuckDB file cannot be
		// written), and the storage extension cannot undo it. Rather than a
		// lake that refuses every write later: say what to write.
		throw InvalidInputException(
		    "moraine: attaching %s: DuckDB attaches a lower-case s3:// path read-only unless the ATTACH gives an "
		    "access mode. Give one: ATTACH 'ducklake:moraine:%s' AS <name> (DATA_PATH '...', READ_WRITE) to write "
		    "the lake, or READ_ONLY to read it (for a metadata catalog attached directly: ATTACH 'moraine:%s' AS "
		    "<name> (READ_WRITE)). Spelled S3:// in capitals, the path attaches read-write by default.",
		    name, path, path);
	}

	// Every option DuckDB did not take itself (READ_ONLY, TYPE) goes to the
	// core by name; it refuses unknown ones naming the accepted ones.
	// The option names are the map's keys, which stay put for the call.
	vector<unique_ptr<MoraineValue>> values;
	vector<moraine_option> options;
	bool s3_given = false;
	string wal_store;
	for (auto &entry : attach_options.options) {
		values.push_back(make_uniq<MoraineValue>(entry.second));
		options.push_back(moraine_option {entry.first.c_str(), values.back()->Get()});
		s3_given = s3_given || IsS3Option(entry.first);
		auto lower = StringUtil::Lower(entry.first);
		if ((lower == "wal_store" || lower == "meta_wal_store") && !entry.second.IsNull()) {
			wal_store = entry.second.ToString();
		}
	}

	// S3 credentials: S3_* options when given; else a DuckDB secret scoped
	// to the store; else the AWS environment (the core's default chain).
	S3Settings s3;
	if (!s3_given && (IsS3(path) || IsS3(wal_store))) {
		s3 = LookupSecret(context, IsS3(path) ? path : wal_store);
	}
	auto s3_config = s3.Config();

	moraine_commit_log_options cl;
	std::memset(&cl, 0, sizeof(cl));
	cl.size = sizeof(cl);
	cl.option_count = options.size();
	cl.options = options.data();
	cl.flags = MORAINE_ATTACH_LEAVE_EMPTY;

	// An S3 store's errors name where its credentials came from (never
	// their values), so a refusal says what to fix.
	string what = "moraine: attaching " + name;
	if (IsS3(path) || IsS3(wal_store)) {
		what += StringUtil::Format(" (S3 credentials from %s)",
		                           s3_given   ? string("the S3_* attach options")
		                           : s3.found ? s3.source
		                                      : string("the AWS environment: no S3_* option, and no s3 or moraine "
		                                               "secret whose scope covers the path"));
	}
	MoraineError err;
	moraine_catalog handle = 0;
	err.Check(moraine_attach_with_commit_log(path.c_str(), s3.found ? &s3_config : nullptr, read_only, nullptr, 0,
	                                         nullptr, &cl, &handle, err.Out()),
	          what);
	return make_uniq<MoraineCatalog>(db, handle, path, read_only);
}

unique_ptr<TransactionManager> MoraineCreateTransactionManager(optional_ptr<StorageExtensionInfo> storage_info,
                                                               AttachedDatabase &db, Catalog &catalog) {
	return make_uniq<MoraineTransactionManager>(db, catalog.Cast<MoraineCatalog>());
}

class MoraineStorageExtension : public StorageExtension {
public:
	MoraineStorageExtension() {
		attach = MoraineAttach;
		create_transaction_manager = MoraineCreateTransactionManager;
	}
};

// ---- the moraine secret type -------------------------------------------

unique_ptr<BaseSecret> CreateMoraineSecret(ClientContext &context, CreateSecretInput &input) {
	auto result = make_uniq<KeyValueSecret>(input.scope, SECRET_TYPE, "config", input.name);
	for (auto &option : input.options) {
		result->secret_map[StringUtil::Lower(option.first)] = option.second;
	}
	result->redact_keys = {"secret", "session_token"};
	return std::move(result);
}

void RegisterSecret(ExtensionLoader &loader) {
	SecretType type;
	type.name = SECRET_TYPE;
	type.deserializer = KeyValueSecret::Deserialize<KeyValueSecret>;
	type.default_provider = "config";
	loader.RegisterSecretType(type);

	CreateSecretFunction function = {SECRET_TYPE, "config", CreateMoraineSecret};
	for (auto key : {"key_id", "secret", "region", "session_token", "endpoint", "url_style"}) {
		function.named_parameters[key] = LogicalType::VARCHAR;
	}
	function.named_parameters["use_ssl"] = LogicalType::BOOLEAN;
	loader.RegisterFunction(function);
}

} // namespace

// MORAINE_DUCKLAKE_VERSION is the DuckLake catalog spec this build's
// DuckDB ships (duckdb-versions.txt, through CMakeLists.txt), quoted by
// MORAINE_STRINGIFY (above).

static void LoadInternal(ExtensionLoader &loader) {
	MoraineGoLoad();
	{
		// New lakes are served as the DuckLake this DuckDB runs writes.
		MoraineError err;
		err.Check(moraine_set_ducklake_version(MORAINE_STRINGIFY(MORAINE_DUCKLAKE_VERSION), err.Out()),
		          "moraine: setting the DuckLake version");
	}
	auto &config = DBConfig::GetConfig(loader.GetDatabaseInstance());
	// Both builds serve the storage type moraine; a process runs one.
	if (MoraineHasStorageExtension(config, "moraine")) {
		throw InvalidInputException("%s: a moraine storage extension is already loaded in this database (moraine is "
		                            "the single-writer build, moraine_commitlog the commit-log build); load one of them "
		                            "per process",
		                            MORAINE_EXTENSION_NAME_STRING);
	}
	MoraineRegisterStorageExtension<MoraineStorageExtension>(config, "moraine");
	RegisterSecret(loader);
	MoraineFunctions::Register(loader);
}

} // namespace duckdb

// The entry point is <name>_duckdb_cpp_init: MORAINE_ENTRY expands the
// name (cshim/storage/CMakeLists.txt, MORAINE_STORAGE_NAME) first.
#define MORAINE_ENTRY(NAME, LOADER) DUCKDB_CPP_EXTENSION_ENTRY(NAME, LOADER)
extern "C" {
MORAINE_ENTRY(MORAINE_EXTENSION_NAME, loader) {
	duckdb::LoadInternal(loader);
}
}
