# moraine build, lint and test entry points.
#
#   make test    the README's test command: builds the extensions (make
#                extension), then every Go test with the race detector on
#                (test/sql runs the C_STRUCT build's sqllogictests in DuckDB
#                1.5.6, test/storage the storage extension's in DuckDB
#                v1.4.4, in the duckdb-go host and in DuckDB's official
#                libduckdb.so and Node client), the C host test of the ABI, the DuckDB 2.0.0 load
#                smoke test (test/duckdb20), and the tests of the nested
#                modules internal/sqllogictest and test/duckdb14.
#                S3 tests use MORAINE_S3_ENDPOINT if set, else start
#                versitygw themselves (internal/testutil/s3test); they never
#                skip. make test installs versitygw v1.8.0 first when it is
#                missing (make versitygw: go install, from the Go module
#                proxy).
#   make extension   build/moraine.duckdb_extension (C_STRUCT, DuckDB
#                1.5.6/2.0.0), build/v1.4.4/moraine.duckdb_extension (the
#                storage extension), its commit-log build
#                build/commitlog/v1.4.4/moraine_commitlog.duckdb_extension,
#                build/repository/ holding them, and the DuckDB
#                v1.4.4 commands build/sqllogictest-v1.4.4 and
#                build/duckdb-shell-v1.4.4 (cmake + go build + npm pack of
#                DuckDB's source; see extension/README.md), and DuckDB's
#                official v1.4.4 build with its hosts (make official-v1.4.4).
#                Needs cmake, g++, npm, openssl.
#   make demo    the README's first command: DuckLake on moraine in DuckDB's
#                official v1.4.4 build, on local files under build/demo.
#   make capi-check  fail if cshim/duckdb_capi.h is stale (tools/capigen).
#   make lint    gofmt must have nothing to say; go vet.
#   make fmt     rewrite Go files with gofmt.
#
# .ci/run (CI on a fresh machine) installs what the tests need, starts the S3
# server and runs `make lint` then `make test`.
#
# Variables: GO (go binary), TIMEOUT (go test -timeout), PKGS (packages),
# TESTFLAGS (extra go test flags, e.g. TESTFLAGS='-run S3 -v'), BUILD_DIR
# (default build/), DUCKDB_SRC (DuckDB v1.4.4's source, default
# $(BUILD_DIR)/duckdb-v1.4.4), DUCKDB (a DuckDB checkout, for make duckdb-sample).

SHELL     := /bin/bash
GO        ?= go
TIMEOUT   ?= 30m
PKGS      ?= ./...
TESTFLAGS ?=

# Go sources, minus testdata, hidden directories and build output.
FIND_GO = find . -name '*.go' -not -path '*/testdata/*' -not -path './.*' -not -path './build/*' -print0

.PHONY: all test test-go test-storage-versions lint fmt vet help versitygw extension extension-libs extension-commitlog capi-check test-extension-host test-duckdb20

all: lint test

help:
	@sed -n 's/^#   //p' $(MAKEFILE_LIST)

# Every package runs under the race detector (the concurrent ones need it;
# the rest cost little). `go test -json` goes through tools/testsummary,
# which prints a per-package summary (with how many S3 tests ran and every
# skipped test) and the output of failures; the raw stream is kept in
# build/test-output.json. test/sql finds the extension `make extension`
# built through MORAINE_EXTENSION_DIR.
# One make run, so `extension` is built once for all of them, in this order;
# MORAINE_EXTENSION_DIR points them at what it built (test/duckdb14 then uses
# build/sqllogictest-v1.4.4 instead of building its own).
test: export MORAINE_EXTENSION_DIR := $(BUILD_DIR)
test: test-go test-storage-versions test-extension-host test-duckdb20 test-sqllogictest test-duckdb14

test-go: extension versitygw
	@mkdir -p build
	set -o pipefail; MORAINE_EXTENSION_DIR=$(BUILD_DIR) MORAINE_COMMITLOG_EXTENSION_DIR=$(BUILD_DIR)/commitlog $(GO) test -race -count=1 -timeout $(TIMEOUT) -json $(TESTFLAGS) $(PKGS) \
		| tee build/test-output.json | $(GO) run ./tools/testsummary

# test/storage once more for every DuckDB release but v1.4.4 (test-go ran
# the package on v1.4.4): the same tests on that release's extension,
# DuckLake and both of its hosts (MORAINE_DUCKDB_VERSION); on a release
# whose DuckLake writes catalog spec 1.0 (duckdb-versions.txt's last
# column) DuckLake 1.0's own suite (ducklake-suite-1.0.json), and the
# test/sql/storage files not written for 0.3 alone.
# The tests of DuckLake's data in the bucket need httpfs, which
# ../shared/httpfs has for v1.4.4 only: they run in test-go's v1.4.4 pass.
HTTPFS_TESTS := TestDuckLakeDataInTheBucket|TestDuckLakeDataInTheBucketUnderFaults|TestREADMES3Path
# The migration tests use v1.4.4 and v1.5.5 whatever the pass's release:
# test-go's v1.4.4 pass runs them, the other passes skip them.
MIGRATION_TESTS := TestDuckLakeMigratesA03Lake|TestDuckLakeMigrationSurvivesSIGKILL
test-storage-versions: extension versitygw
	@set -e; for v in $(filter-out v1.4.4,$(DUCKDB_VERSIONS)); do \
		run="-skip $(HTTPFS_TESTS)|$(MIGRATION_TESTS)"; \
		echo "test/storage on DuckDB $$v $$run"; \
		MORAINE_DUCKDB_VERSION=$$v MORAINE_EXTENSION_DIR=$(BUILD_DIR) MORAINE_COMMITLOG_EXTENSION_DIR=$(BUILD_DIR)/commitlog \
			$(GO) test -race -count=1 -timeout $(TIMEOUT) $(TESTFLAGS) $$run ./test/storage/; \
	done

# versitygw, the S3 server the S3 tests start, at the version .ci/run uses:
# installed with go install when missing (tools/ensure-versitygw.sh). Not
# needed when MORAINE_S3_ENDPOINT points the tests at a running server.
VERSITYGW_VERSION ?= v1.8.0

versitygw:
ifeq ($(MORAINE_S3_ENDPOINT),)
	@GO=$(GO) tools/ensure-versitygw.sh $(VERSITYGW_VERSION)
else
	@echo "versitygw: not needed, the S3 tests use MORAINE_S3_ENDPOINT=$(MORAINE_S3_ENDPOINT)"
endif

lint:
	@out="$$($(FIND_GO) | xargs -0 gofmt -l)" || { echo "gofmt failed (syntax errors above)"; exit 1; }; \
	if [ -n "$$out" ]; then \
		echo "gofmt: these files need formatting (run 'make fmt'):"; \
		echo "$$out" | sed 's/^/  /'; \
		exit 1; \
	fi
	@echo "gofmt: ok"
	$(GO) vet $(PKGS)
	$(GO) vet -tags legacylakes ./core # the legacy lakes' generator (core/legacy_lakes_write_test.go)
	cd test/duckdb20 && $(GO) vet ./...
	$(MAKE) --no-print-directory vet-nested

vet:
	$(GO) vet $(PKGS)

fmt:
	$(FIND_GO) | xargs -0 gofmt -w

# Benchmarks are run by hand, with the commands BENCHMARK.md gives.

# --- extension ---------------------------------------------------------------
#   make extension-libs       cmake configures the top-level CMakeLists.txt into
#                             build/cmake and builds: go build -buildmode=c-archive
#                             ./extension, the C shim linked with it into
#                             libmoraine.so and the C++ storage extension into
#                             libmoraine_storage.so, the DuckDB trailers
#                             (tools/exttrailer) -> build/moraine.duckdb_extension
#                             and build/v1.4.4/moraine.duckdb_extension, and the
#                             private repository build/repository/.
#   make extension            extension-libs, extension-commitlog and the two
#                             v1.4.4 commands.
#   make extension-commitlog  the same libraries with the Go half built with
#                             the in-tree commit log's glue (provider/glue,
#                             MORAINE_GO_GLUE: it registers the commit log at
#                             load) into build/commitlog/: the C_STRUCT one
#                             (test/sqlcommitlog runs it) and the storage
#                             extension moraine_commitlog, laid out in
#                             build/repository/ beside moraine.
#   make test-extension-host  the C host test (cshim/test/host_test.c, ctest).
#   make test-duckdb20        the DuckDB 2.0.0 load smoke test (test/duckdb20).
#   make capi-check           cshim/duckdb_capi.h matches tools/capigen's output.
#
# Variables: CMAKE (cmake binary), BUILD_DIR (default build/).

CMAKE         ?= cmake
BUILD_DIR     ?= $(CURDIR)/build
EXT_BUILD_DIR := $(BUILD_DIR)/cmake

extension: extension-libs extension-commitlog hosts

# The DuckDB releases the storage extension and its test hosts are built
# for: duckdb-versions.txt, one line each (CMake reads the same file).
VERSIONS_FILE   := duckdb-versions.txt
DUCKDB_VERSIONS := $(shell awk '!/^[[:space:]]*(\#|$$)/ {print $$1}' $(VERSIONS_FILE))
# $(call version_field,<version>,<column>): a column of the version's line.
version_field    = $(shell awk -v v=$(1) '$$1 == v {print $$$(2)}' $(VERSIONS_FILE))
CMAKE_VERSIONS  := $(subst $(eval) ,;,$(DUCKDB_VERSIONS))

extension-libs:
	$(CMAKE) -S . -B $(EXT_BUILD_DIR) -DGO=$(GO) -DMORAINE_OUTPUT_DIR=$(BUILD_DIR) "-DMORAINE_DUCKDB_VERSIONS=$(CMAKE_VERSIONS)"
	$(CMAKE) --build $(EXT_BUILD_DIR) --parallel

extension-commitlog:
	$(CMAKE) -S . -B $(BUILD_DIR)/cmake-commitlog -DGO=$(GO) -DMORAINE_OUTPUT_DIR=$(BUILD_DIR)/commitlog -DMORAINE_GO_GLUE=$(CURDIR)/provider/glue \
		-DMORAINE_STORAGE=ON -DMORAINE_STORAGE_NAME=moraine_commitlog -DMORAINE_STORAGE_REPOSITORY=$(BUILD_DIR)/repository "-DMORAINE_DUCKDB_VERSIONS=$(CMAKE_VERSIONS)"
	$(CMAKE) --build $(BUILD_DIR)/cmake-commitlog --parallel

# make extension-glue COMMIT_LOG_GLUE=<dir of a Go package> [COMMIT_LOG_NAME=<name>]
# builds the storage extension with a commit log's glue linked in (the
# package's init registers the provider: README "Bringing your own commit
# log"), named COMMIT_LOG_NAME (default: the glue directory's parent's name),
# for every release, into build/<name>/<version>/<name>.duckdb_extension and
# the private repository build/<name>/repository. Nothing of this repository
# changes; moraine_commitlog is the same route with provider/glue.
COMMIT_LOG_GLUE ?=
COMMIT_LOG_NAME ?= $(notdir $(patsubst %/,%,$(dir $(abspath $(COMMIT_LOG_GLUE)))))

.PHONY: extension-glue
extension-glue:
	@test -n "$(COMMIT_LOG_GLUE)" || { echo "usage: make extension-glue COMMIT_LOG_GLUE=<dir of a Go package> [COMMIT_LOG_NAME=<name>]"; exit 2; }
	$(CMAKE) -S . -B $(BUILD_DIR)/cmake-$(COMMIT_LOG_NAME) -DGO=$(GO) -DMORAINE_OUTPUT_DIR=$(BUILD_DIR)/$(COMMIT_LOG_NAME) \
		-DMORAINE_GO_GLUE=$(abspath $(COMMIT_LOG_GLUE)) -DMORAINE_STORAGE_NAME=$(COMMIT_LOG_NAME) "-DMORAINE_DUCKDB_VERSIONS=$(CMAKE_VERSIONS)"
	$(CMAKE) --build $(BUILD_DIR)/cmake-$(COMMIT_LOG_NAME) --parallel

test-extension-host: extension
	cd $(EXT_BUILD_DIR) && ctest --output-on-failure

test-duckdb20: extension
	cd test/duckdb20 && MORAINE_EXTENSION_DIR=$(BUILD_DIR) $(GO) test -count=1 -timeout $(TIMEOUT) ./...

capi-check:
	$(GO) run ./tools/capigen -check

# --- the test hosts, per DuckDB release -------------------------------------
#   make hosts                every release's hosts (below).
#   make duckdb-headers-<v>   DuckDB <v>'s C++ headers in build/duckdb-<v>
#                             (cmake/duckdb_headers.cmake: npm or ../shared,
#                             the hash pinned in duckdb-versions.txt).
#   make sqllogictest-<v>     build/sqllogictest-<v>: runs sqllogictest files
#                             against DuckDB <v> with the moraine extension
#                             and DuckLake (test/duckdb14, README
#                             "sqllogictest-v1.4.4"); --host official runs them
#                             in build/sqllogictest-official-<v> instead.
#   make duckdb-shell-<v>     build/duckdb-shell-<v>: a DuckDB <v> process Go
#                             tests drive over a pipe (test/storage); with
#                             --sql, a plain DuckDB <v> running a SQL script
#                             from stdin (the README's DuckLake example).
#   make official-<v>         DuckDB's official <v> build from npm
#                             (tools/official-duckdb.sh, integrity pinned in
#                             duckdb-versions.txt) into build/official/<v>; then
#                             build/duckdb-official-<v> (duckdb-shell's interface
#                             over that libduckdb.so opened with RTLD_LOCAL, as
#                             Python, Node and Java open theirs) and
#                             build/sqllogictest-official-<v>. For v1.4.4 also
#                             the official Node client (@duckdb/node-api).
#                             Needs npm and openssl.
#   make test-sqllogictest    the runner module's own tests (internal/sqllogictest,
#                             a module of its own, so not in ./...).
#   make test-duckdb14        test/duckdb14's go test (DuckDB v1.4.4 engine).
#   make vet-nested           go vet of those two modules (part of make lint).
#   make duckdb-sample DUCKDB=<duckdb checkout or git dir>
#                             DuckDB v1.4.4's test/sql sample
#                             (test/duckdb14/testdata/duckdb-sample.txt) through
#                             the command, extracted into a temporary directory.
#
# The duckdb-go hosts are test/duckdb14 built with that release's duckdb-go
# (go.mod for v1.4.4, go.<v>.mod for the others) and its headers.

SLT_PKG := github.com/moraine-go/moraine/test/duckdb14/slt
DUCKDB  ?=
# DuckDB v1.4.4's headers: what the test/duckdb14 module compiles against
# by default (go vet, go test of the module).
DUCKDB_SRC := $(BUILD_DIR)/duckdb-v1.4.4

.PHONY: hosts test-sqllogictest test-duckdb14 vet-nested duckdb-sample demo

# $(call host_rules,<version>): the targets above for one release.
define host_rules
.PHONY: duckdb-headers-$(1) sqllogictest-$(1) duckdb-shell-$(1) official-$(1)
hosts: sqllogictest-$(1) duckdb-shell-$(1) official-$(1)

duckdb-headers-$(1):
	@$$(CMAKE) "-DSPEC=$$(call version_field,$(1),2)" -DOUT=$$(BUILD_DIR)/duckdb-$(1) -DSHARED=$$(CURDIR)/../shared -P cmake/duckdb_headers.cmake

sqllogictest-$(1): duckdb-headers-$(1)
	cd test/duckdb14 && CGO_CXXFLAGS="-g -O2 -I$$(BUILD_DIR)/duckdb-$(1)/src/include" $$(GO) build $$(call modfile,$(1)) \
		-ldflags "-X $$(SLT_PKG).RepoRoot=$$(CURDIR) -X $$(SLT_PKG).Version=$(1)" -o $$(BUILD_DIR)/sqllogictest-$(1) ./cmd/sqllogictest

duckdb-shell-$(1):
	cd test/duckdb14 && $$(GO) build $$(call modfile,$(1)) -o $$(BUILD_DIR)/duckdb-shell-$(1) ./cmd/duckdb-shell

official-$(1): duckdb-headers-v1.4.4
	tools/official-duckdb.sh $(1) "$$(call version_field,$(1),4)" $$(BUILD_DIR)/official/$(1)
	cd test/duckdb14 && $$(GO) build -ldflags "-X main.libduckdb=$$(BUILD_DIR)/official/$(1)/$$(LIBDUCKDB)" \
		-o $$(BUILD_DIR)/duckdb-official-$(1) ./cmd/duckdb-official
	cd test/duckdb14 && $$(GO) build -ldflags "-X $$(SLT_PKG).RepoRoot=$$(CURDIR) -X $$(SLT_PKG).Version=$(1) \
		-X github.com/moraine-go/moraine/test/duckdb14/capiengine.LibDuckDB=$$(BUILD_DIR)/official/$(1)/$$(LIBDUCKDB)" \
		-o $$(BUILD_DIR)/sqllogictest-official-$(1) ./cmd/sqllogictest-official
endef
# The release's go.mod of test/duckdb14 (-modfile; none for go.mod itself).
modfile = $(if $(wildcard test/duckdb14/go.$(1).mod),-modfile=go.$(1).mod)
LIBDUCKDB := node_modules/@duckdb/node-bindings-linux-x64/libduckdb.so
$(foreach v,$(DUCKDB_VERSIONS),$(eval $(call host_rules,$(v))))

# The commands of the tests' default release (v1.4.4), by their old names.
.PHONY: duckdb-source
duckdb-source: duckdb-headers-v1.4.4

# make demo: the README's first command. DuckLake on moraine in DuckDB's
# official v1.4.4 build on local files (tools/demo.sql, a fresh lake in
# build/demo), each statement printed before its result.
demo: extension-libs official-v1.4.4
	rm -rf $(BUILD_DIR)/demo && mkdir -p $(BUILD_DIR)/demo
	$(BUILD_DIR)/duckdb-official-v1.4.4 --setting extension_directory=$(BUILD_DIR)/demo/extensions --sql --echo < tools/demo.sql

test-sqllogictest:
	cd internal/sqllogictest && $(GO) test -race -count=1 -timeout $(TIMEOUT) ./...

SLT14_CXXFLAGS = CGO_CXXFLAGS="-g -O2 -I$(DUCKDB_SRC)/src/include"

test-duckdb14: duckdb-source
	cd test/duckdb14 && $(SLT14_CXXFLAGS) $(GO) test -race -count=1 -timeout $(TIMEOUT) ./...

vet-nested: duckdb-source
	cd internal/sqllogictest && $(GO) vet ./...
	cd test/duckdb14 && $(SLT14_CXXFLAGS) $(GO) vet ./...

duckdb-sample: sqllogictest-v1.4.4
	@test -n "$(DUCKDB)" || { echo "usage: make duckdb-sample DUCKDB=<duckdb checkout or git dir at v1.4.4>"; exit 2; }
	test/duckdb14/duckdb-sample.sh "$(DUCKDB)" $(BUILD_DIR)/sqllogictest-v1.4.4

# --- proto -------------------------------------------------------------------
#   make proto        regenerate core/internal/catalogpb from proto/ (buf +
#                     protoc-gen-go, pinned below, installed into build/tools
#                     from the Go module proxy on first use; no protoc, no BSR).
#   make proto-check  regenerate into a temp dir and diff against the
#                     checked-in code (fails when proto/ and catalogpb drift).
#
# The generated code is checked in: building moraine never needs buf.

BUF_VERSION           ?= v1.75.0
PROTOC_GEN_GO_VERSION ?= v1.36.12
TOOLS_DIR             := $(CURDIR)/build/tools
BUF                   := $(TOOLS_DIR)/buf
PROTO_TOOL_STAMPS     := $(TOOLS_DIR)/.buf-$(BUF_VERSION) $(TOOLS_DIR)/.protoc-gen-go-$(PROTOC_GEN_GO_VERSION)
# buf finds the local plugin protoc-gen-go on PATH: the pinned one first.
PROTO_ENV             := PATH="$(TOOLS_DIR):$$PATH"

.PHONY: proto proto-check

proto: $(PROTO_TOOL_STAMPS)
	$(PROTO_ENV) $(BUF) lint
	$(PROTO_ENV) $(BUF) generate

proto-check: $(PROTO_TOOL_STAMPS)
	@tmp="$$(mktemp -d)"; trap 'rm -rf "$$tmp"' EXIT; \
	$(PROTO_ENV) $(BUF) lint && \
	$(PROTO_ENV) $(BUF) generate --output "$$tmp" && \
	diff -r -x doc.go -x '*_test.go' "$$tmp/core/internal/catalogpb" core/internal/catalogpb && \
	echo "proto: generated code is up to date"

# A version bump changes the stamp name, so the new version gets installed.
$(TOOLS_DIR)/.buf-$(BUF_VERSION):
	GOBIN=$(TOOLS_DIR) $(GO) install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	@touch $@

$(TOOLS_DIR)/.protoc-gen-go-$(PROTOC_GEN_GO_VERSION):
	GOBIN=$(TOOLS_DIR) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	@touch $@
