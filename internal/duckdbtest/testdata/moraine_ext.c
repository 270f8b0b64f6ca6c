// A minimal C_STRUCT extension for tests (see duckdbtest.BuildTestLibrary): it asks
// DuckDB for the v1.2.0 C API table and reports success. Built with the system
// C compiler at test time; not part of the product.
#include <stdbool.h>
#include <stddef.h>

#include "duckdb.h"

DUCKDB_EXTENSION_API bool moraine_init_c_api(duckdb_extension_info info, struct duckdb_extension_access *access) {
	const void *api = access->get_api(info, "v1.2.0");
	if (api == NULL) {
		// get_api has already reported the reason through set_error.
		return false;
	}
	return true;
}
