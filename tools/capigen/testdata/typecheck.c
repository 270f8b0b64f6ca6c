// Assigns every function duckdb.h declares to its member of struct
// duckdb_ext_api_v1. Compiled with -Werror by the tests of tools/capigen: a
// member whose type differs from the function's prototype fails to compile
// (incompatible pointer types).
#include "duckdb_capi.h"

#define ASSIGN(i, name) api->name = name;

void moraine_capi_typecheck(duckdb_ext_api_v1 *api) {
	DUCKDB_EXT_API_V1_SLOTS(ASSIGN)
}
