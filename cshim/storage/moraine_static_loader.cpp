// What DuckDB's static library expects from the generated extension loader
// of a DuckDB build (it lists and loads the extensions linked into that
// build). This extension links DuckDB's static library without any of them,
// as DuckDB's own loadable extensions do, so the loader it carries knows
// none: loading an extension inside this extension's copy of DuckDB never
// finds a linked one (the host's DuckDB loads extensions, not this copy).
// The loader's functions moved into ExtensionHelper in 1.5
// (MORAINE_DUCKDB_MINOR, moraine_duckdb_compat.hpp).
#include "duckdb/main/database.hpp"
#include "duckdb/main/extension_helper.hpp"

namespace duckdb {

vector<string> LinkedExtensions() {
	return {};
}

#if MORAINE_DUCKDB_MINOR >= 5
void ExtensionHelper::LoadAllExtensions(DuckDB &db) {
}

vector<string> ExtensionHelper::LoadedExtensionTestPaths() {
	return {};
}

ExtensionLoadResult ExtensionHelper::LoadExtension(DuckDB &db, const std::string &extension) {
	return ExtensionLoadResult::NOT_LOADED;
}
#else
bool TryLoadLinkedExtension(DuckDB &db, const string &extension) {
	return false;
}

vector<string> LoadedExtensionTestPaths() {
	return {};
}
#endif

} // namespace duckdb
