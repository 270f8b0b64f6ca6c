//===----------------------------------------------------------------------===//
// moraine storage extension: the DuckDB C++ API as it differs between the
// releases it is built for (duckdb-versions.txt), in one place
//
// MORAINE_DUCKDB_MINOR is the release's minor version (4 for v1.4.x, 5 for
// v1.5.x), set by cshim/storage/CMakeLists.txt from the version it builds
// for. The other files use the names below and never test the version.
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/common/types.hpp"
#include "duckdb/main/config.hpp"
#include "duckdb/storage/storage_extension.hpp"

#ifndef MORAINE_DUCKDB_MINOR
#error "MORAINE_DUCKDB_MINOR (the DuckDB release's minor version) is not defined"
#endif

namespace duckdb {

//! The type id the parser gives a type name it does not know (JSON before
//! its extension binds it): USER in 1.4, UNBOUND in 1.5.
#if MORAINE_DUCKDB_MINOR >= 5
constexpr LogicalTypeId MORAINE_UNRESOLVED_TYPE = LogicalTypeId::UNBOUND;
#else
constexpr LogicalTypeId MORAINE_UNRESOLVED_TYPE = LogicalTypeId::USER;
#endif

//! A type from its SQL text without a client context (the catalog's type
//! cache): 1.5's parser binds through a context, and offers a default
//! binding for callers without one.
inline LogicalType MoraineParseTypeText(const string &text) {
#if MORAINE_DUCKDB_MINOR >= 5
	return UnboundType::TryParseAndDefaultBind(text);
#else
	return TransformStringToLogicalType(text);
#endif
}

//! Whether a storage extension is registered under name, and registering
//! one: DBConfig::storage_extensions in 1.4, StorageExtension's registry
//! in 1.5.
inline bool MoraineHasStorageExtension(DBConfig &config, const string &name) {
#if MORAINE_DUCKDB_MINOR >= 5
	return StorageExtension::Find(config, name) != nullptr;
#else
	return config.storage_extensions.count(name) > 0;
#endif
}

template <class T>
void MoraineRegisterStorageExtension(DBConfig &config, const string &name) {
#if MORAINE_DUCKDB_MINOR >= 5
	StorageExtension::Register(config, name, make_shared_ptr<T>());
#else
	config.storage_extensions[name] = make_uniq<T>();
#endif
}

} // namespace duckdb

//! The name of a physical operator's source method to override: GetData in
//! 1.4; in 1.5 GetData is no longer virtual and wraps GetDataInternal.
#if MORAINE_DUCKDB_MINOR >= 5
#define MORAINE_SOURCE_GET_DATA GetDataInternal
#else
#define MORAINE_SOURCE_GET_DATA GetData
#endif
