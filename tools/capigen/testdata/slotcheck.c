// A test-only C_STRUCT extension: its entry point takes the table get_api
// returns, reads every member of struct duckdb_ext_api_v1 by name and compares
// it with the address the host process exports under that name. It always
// fails the load, reporting through set_error either
//   "slotcheck: checked=N unexported=M mismatched=0"
// or the mismatches, so the Go test reads the result from the LOAD error.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "duckdb_capi.h"

static char report[8192];

static void add(const char *s) {
	size_t n = strlen(report);
	if (n + strlen(s) + 1 < sizeof(report)) {
		memcpy(report + n, s, strlen(s) + 1);
	}
}

DUCKDB_EXTENSION_API bool moraine_init_c_api(duckdb_extension_info info, struct duckdb_extension_access *access) {
	const duckdb_ext_api_v1 *api = (const duckdb_ext_api_v1 *)access->get_api(info, "v1.2.0");
	if (api == NULL) {
		return false;
	}
	int checked = 0, unexported = 0, mismatched = 0;
	char line[256];
	report[0] = '\0';
#define CHECK_SLOT(i, name)                                                                                            \
	do {                                                                                                               \
		void *want = dlsym(RTLD_DEFAULT, #name);                                                                       \
		void *got;                                                                                                     \
		memcpy(&got, &api->name, sizeof(got));                                                                         \
		if (want == NULL) {                                                                                            \
			unexported++;                                                                                              \
		} else if (got != want) {                                                                                      \
			mismatched++;                                                                                              \
			snprintf(line, sizeof(line), " [slot %d %s]", (i), #name);                                                 \
			add(line);                                                                                                 \
		} else {                                                                                                       \
			checked++;                                                                                                 \
		}                                                                                                              \
	} while (0);
	DUCKDB_EXT_API_V1_SLOTS(CHECK_SLOT)
	char summary[128];
	snprintf(summary, sizeof(summary), "slotcheck: checked=%d unexported=%d mismatched=%d", checked, unexported,
	         mismatched);
	char out[sizeof(report) + sizeof(summary)];
	snprintf(out, sizeof(out), "%s%s", summary, report);
	access->set_error(info, out);
	return false;
}
