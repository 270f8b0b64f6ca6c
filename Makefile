# moraine build, lint and test entry points.
#
#   make test    the README's test command: every Go test, race detector on.
#                S3 tests use MORAINE_S3_ENDPOINT if set, else start
#                versitygw themselves (internal/testutil/s3test); they never
#                skip. Install it with
#                  go install github.com/versity/versitygw/cmd/versitygw@v1.8.0
#   make lint    gofmt must have nothing to say; go vet.
#   make fmt     rewrite Go files with gofmt.
#
# .ci/run (CI on a fresh machine) installs what the tests need, starts the S3
# server and runs `make lint` then `make test`.
#
# Variables: GO (go binary), TIMEOUT (go test -timeout), PKGS (packages),
# TESTFLAGS (extra go test flags, e.g. TESTFLAGS='-run S3 -v').

GO        ?= go
TIMEOUT   ?= 30m
PKGS      ?= ./...
TESTFLAGS ?=

# Go sources, minus testdata, hidden directories and build output.
FIND_GO = find . -name '*.go' -not -path '*/testdata/*' -not -path './.*' -not -path './build/*' -print0

.PHONY: all test lint fmt vet help

all: lint test

help:
	@sed -n 's/^#   //p' $(MAKEFILE_LIST)

# For now every package runs under the race detector (the concurrent ones
# need it; the rest cost little). Split into test-race / test-short here if
# the suite gets slow.
test:
	$(GO) test -race -count=1 -timeout $(TIMEOUT) $(TESTFLAGS) $(PKGS)

lint:
	@out="$$($(FIND_GO) | xargs -0 gofmt -l)" || { echo "gofmt failed (syntax errors above)"; exit 1; }; \
	if [ -n "$$out" ]; then \
		echo "gofmt: these files need formatting (run 'make fmt'):"; \
		echo "$$out" | sed 's/^/  /'; \
		exit 1; \
	fi
	@echo "gofmt: ok"
	$(GO) vet $(PKGS)

vet:
	$(GO) vet $(PKGS)

fmt:
	$(FIND_GO) | xargs -0 gofmt -w

# Room for later targets: extension (cmake build of the DuckDB extension),
# proto (generated code), bench (benchmarks with counting stores).
