//===----------------------------------------------------------------------===//
// moraine storage extension: its table functions
//
//   moraine_requests(database)  the object-store requests an attached lake
//                               made, by store and kind
//   moraine_info(database)      an attached lake's role, access, format and head
//   moraine_runtime()           the library's live handles and goroutines
//===----------------------------------------------------------------------===//

#pragma once

#include "duckdb/main/extension/extension_loader.hpp"

namespace duckdb {

class MoraineFunctions {
public:
	static void Register(ExtensionLoader &loader);
};

} // namespace duckdb
