#include "moraine_go.hpp"

#include "duckdb/common/exception.hpp"
#include "duckdb/common/vector.hpp"

#include "moraine.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>

// The bytes of libmoraine_go.so, placed in the extension by
// moraine_go_image.cpp (.incbin); hidden.
extern "C" const unsigned char moraine_go_image_begin[];
extern "C" const unsigned char moraine_go_image_end[];

namespace duckdb {

namespace {

//! Every moraine_* function the C++ files call, looked up by name (a
//! forwarder for each is defined at the end of this file).
#define MORAINE_GO_FUNCTIONS(X) \
	X(moraine_error_free) \
	X(moraine_attach_with_commit_log) \
	X(moraine_detach) \
	X(moraine_catalog_info) \
	X(moraine_catalog_requests) \
	X(moraine_catalog_lakes) \
	X(moraine_catalog_find_lake) \
	X(moraine_catalog_open_lake) \
	X(moraine_catalog_publish_lake) \
	X(moraine_runtime_info) \
	X(moraine_set_ducklake_version) \
	X(moraine_txn_begin) \
	X(moraine_txn_end) \
	X(moraine_txn_tables) \
	X(moraine_table_list_free) \
	X(moraine_table_free) \
	X(moraine_scan_open) \
	X(moraine_scan_next) \
	X(moraine_scan_close) \
	X(moraine_txn_insert) \
	X(moraine_txn_delete) \
	X(moraine_txn_update) \
	X(moraine_txn_create_table) \
	X(moraine_txn_drop_table) \
	X(moraine_txn_add_column) \
	X(moraine_txn_drop_column) \
	X(moraine_txn_commit)

struct GoFunctions {
#define MORAINE_GO_SLOT(name) decltype(&::name) name;
	MORAINE_GO_FUNCTIONS(MORAINE_GO_SLOT)
#undef MORAINE_GO_SLOT
};

//! Written once, under load_lock, before loaded is set; read-only after.
GoFunctions go;
std::mutex load_lock;
bool loaded = false;

//! Closes a file descriptor when it goes out of scope.
struct FileCloser {
	int fd;
	~FileCloser() {
		if (fd >= 0) {
			close(fd);
		}
	}
};

//! A file holding the image: an anonymous memfd, or (where memfd_create is
//! refused) a temporary file unlinked at once. Returns its descriptor.
int ImageFile(string &path) {
	int fd = memfd_create("moraine_go", MFD_CLOEXEC);
	if (fd >= 0) {
		path = "/proc/self/fd/" + std::to_string(fd);
		return fd;
	}
	auto memfd_errno = errno;
	const char *dir = getenv("TMPDIR");
	string temp = string(dir && *dir ? dir : "/tmp") + "/moraine_go.XXXXXX";
	vector<char> name(temp.begin(), temp.end());
	name.push_back('\0');
	fd = mkostemp(name.data(), O_CLOEXEC);
	if (fd < 0) {
		throw IOException("moraine: cannot load the Go core: memfd_create failed (%s) and so did a temporary file in "
		                  "%s (%s); set TMPDIR to a writable directory",
		                  strerror(memfd_errno), temp, strerror(errno));
	}
	path = name.data();
	return fd;
}

void WriteAll(int fd, const unsigned char *data, size_t size, const string &path) {
	while (size > 0) {
		auto n = write(fd, data, size);
		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			throw IOException("moraine: cannot load the Go core: writing its image to %s failed: %s", path,
			                  strerror(errno));
		}
		data += n;
		size -= static_cast<size_t>(n);
	}
}

template <class F>
void Lookup(void *library, const char *name, F &slot) {
	void *symbol = dlsym(library, name);
	if (!symbol) {
		throw IOException("moraine: the Go core does not export %s (the extension file is damaged or mixed from two "
		                  "builds)",
		                  name);
	}
	slot = reinterpret_cast<F>(symbol);
}

void LoadLocked() {
	string path;
	FileCloser file {ImageFile(path)};
	bool temporary = path.rfind("/proc/self/fd/", 0) != 0;
	try {
		WriteAll(file.fd, moraine_go_image_begin, size_t(moraine_go_image_end - moraine_go_image_begin), path);
	} catch (...) {
		if (temporary) {
			unlink(path.c_str());
		}
		throw;
	}
	// RTLD_LOCAL: the library's symbols stay out of the host's scope;
	// RTLD_NODELETE: a Go runtime is never unloaded.
	void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	auto error = library ? string() : string(dlerror());
	if (temporary) {
		unlink(path.c_str());
	}
	if (!library) {
		throw IOException("moraine: cannot load the Go core: %s", error);
	}
	GoFunctions f;
#define MORAINE_GO_LOOKUP(name) Lookup(library, #name, f.name);
	MORAINE_GO_FUNCTIONS(MORAINE_GO_LOOKUP)
#undef MORAINE_GO_LOOKUP
	go = f;
}

} // namespace

void MoraineGoLoad() {
	std::lock_guard<std::mutex> guard(load_lock);
	if (loaded) {
		return;
	}
	LoadLocked();
	loaded = true;
}

} // namespace duckdb

// The moraine.h functions the C++ files call, forwarded to the Go core
// (hidden: the extension exports only its entry point). MoraineGoLoad has
// run before any of them can be reached: the entry point calls it first.
using duckdb::go;

extern "C" {

void moraine_error_free(moraine_error *err) {
	go.moraine_error_free(err);
}

int32_t moraine_attach_with_commit_log(const char *path, const moraine_s3_config *s3, bool read_only,
                                       const char *data_path, uint64_t flush_interval_ms, const char *checkpoint,
                                       const moraine_commit_log_options *commit_log, moraine_catalog *out,
                                       moraine_error *err) {
	return go.moraine_attach_with_commit_log(path, s3, read_only, data_path, flush_interval_ms, checkpoint, commit_log, out,
	                                 err);
}

int32_t moraine_detach(moraine_catalog catalog, moraine_error *err) {
	return go.moraine_detach(catalog, err);
}

int32_t moraine_catalog_info(moraine_catalog catalog, moraine_info *out, moraine_error *err) {
	return go.moraine_catalog_info(catalog, out, err);
}

int32_t moraine_catalog_requests(moraine_catalog catalog, moraine_table **out, moraine_error *err) {
	return go.moraine_catalog_requests(catalog, out, err);
}

int32_t moraine_catalog_lakes(moraine_catalog catalog, bool fresh, moraine_table **out, moraine_error *err) {
	return go.moraine_catalog_lakes(catalog, fresh, out, err);
}

int32_t moraine_catalog_find_lake(moraine_catalog catalog, const char *name, bool *found, moraine_error *err) {
	return go.moraine_catalog_find_lake(catalog, name, found, err);
}

int32_t moraine_catalog_open_lake(moraine_catalog catalog, const char *name, bool create, moraine_catalog *out,
                                  moraine_error *err) {
	return go.moraine_catalog_open_lake(catalog, name, create, out, err);
}

int32_t moraine_catalog_publish_lake(moraine_catalog lake, moraine_error *err) {
	return go.moraine_catalog_publish_lake(lake, err);
}

int32_t moraine_runtime_info(moraine_runtime *out, moraine_error *err) {
	return go.moraine_runtime_info(out, err);
}

int32_t moraine_set_ducklake_version(const char *version, moraine_error *err) {
	return go.moraine_set_ducklake_version(version, err);
}

int32_t moraine_txn_begin(moraine_catalog catalog, moraine_txn *out, moraine_error *err) {
	return go.moraine_txn_begin(catalog, out, err);
}

void moraine_txn_end(moraine_txn txn) {
	go.moraine_txn_end(txn);
}

int32_t moraine_txn_tables(moraine_txn txn, moraine_table_list **out, moraine_error *err) {
	return go.moraine_txn_tables(txn, out, err);
}

void moraine_table_list_free(moraine_table_list *list) {
	go.moraine_table_list_free(list);
}

void moraine_table_free(moraine_table *table) {
	go.moraine_table_free(table);
}

int32_t moraine_scan_open(moraine_txn txn, const char *table, const uint64_t *columns, uint64_t column_count,
                          const moraine_filter *filters, uint64_t filter_count, moraine_scan *out,
                          moraine_error *err) {
	return go.moraine_scan_open(txn, table, columns, column_count, filters, filter_count, out, err);
}

int32_t moraine_scan_next(moraine_scan scan, uint64_t max_rows, moraine_table **out, moraine_error *err) {
	return go.moraine_scan_next(scan, max_rows, out, err);
}

void moraine_scan_close(moraine_scan scan) {
	go.moraine_scan_close(scan);
}

int32_t moraine_txn_insert(moraine_txn txn, const char *table, const moraine_rows *rows, moraine_error *err) {
	return go.moraine_txn_insert(txn, table, rows, err);
}

int32_t moraine_txn_delete(moraine_txn txn, const char *table, const int64_t *rowids, uint64_t count,
                           uint64_t *deleted, moraine_error *err) {
	return go.moraine_txn_delete(txn, table, rowids, count, deleted, err);
}

int32_t moraine_txn_update(moraine_txn txn, const char *table, const int64_t *rowids, const uint64_t *columns,
                           uint64_t column_count, const moraine_rows *rows, moraine_error *err) {
	return go.moraine_txn_update(txn, table, rowids, columns, column_count, rows, err);
}

int32_t moraine_txn_create_table(moraine_txn txn, const moraine_table_def *def, bool if_not_exists,
                                 moraine_error *err) {
	return go.moraine_txn_create_table(txn, def, if_not_exists, err);
}

int32_t moraine_txn_drop_table(moraine_txn txn, const char *name, bool if_exists, moraine_error *err) {
	return go.moraine_txn_drop_table(txn, name, if_exists, err);
}

int32_t moraine_txn_add_column(moraine_txn txn, const char *table, const moraine_column_def *column,
                               const char *default_value, bool if_not_exists, moraine_error *err) {
	return go.moraine_txn_add_column(txn, table, column, default_value, if_not_exists, err);
}

int32_t moraine_txn_drop_column(moraine_txn txn, const char *table, const char *column, bool if_exists,
                                moraine_error *err) {
	return go.moraine_txn_drop_column(txn, table, column, if_exists, err);
}

int32_t moraine_txn_commit(moraine_txn txn, moraine_error *err) {
	return go.moraine_txn_commit(txn, err);
}

} // extern "C"
