// Prints "<slot> <member> <offsetof>" for every member of struct
// duckdb_ext_api_v1 and then "sizeof <size>", as the C compiler lays the
// generated header out. Compiled and run by the tests of tools/capigen.
#include <stddef.h>
#include <stdio.h>

#include "duckdb_capi.h"

#define PRINT_OFFSET(i, name) printf("%d %s %zu\n", (i), #name, offsetof(duckdb_ext_api_v1, name));

int main(void) {
	DUCKDB_EXT_API_V1_SLOTS(PRINT_OFFSET)
	printf("sizeof %zu\n", sizeof(duckdb_ext_api_v1));
	return 0;
}
