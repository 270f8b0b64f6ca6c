// What DuckDB's static library expects from the generated extension loader
// of a DuckDB build (it lists and loads the extensions linked into that
// build). This extension links DuckDB's static library without any of them,
// as DuckDB's own loadable extensions do, so the loader it carries knows
// none: loading an extension inside this extension's copy of DuckDB never
// finds a linked one (the host's DuckDB loads extensions, not this copy).
#include "duckdb/main/database.hpp"

namespace duckdb {

bool TryLoadLinkedExtension(DuckDB &db, const string &extension) {
	return false;
}

vector<string> LinkedExtensions() {
	return {};
}

vector<string> LoadedExtensionTestPaths() {
	return {};
}

} // namespace duckdb
