#!/usr/bin/env bash
# ensure-versitygw: make versitygw (the S3 server the S3 tests start, see
# internal/testutil/s3test) at the pinned version available: when the
# versitygw the tests would find is missing or another version, install it
# with `go install` (from the Go module proxy; a few minutes on a cold
# cache, seconds on a warm one) into go's install directory (GOBIN, else
# GOPATH/bin), where the tests look. Prints where it is. Used by `make
# test` (the Makefile's versitygw target) and by .ci/run.
#
#   tools/ensure-versitygw.sh [version]     (default v1.8.0)
#
# Environment: GO (the go command, default go).
set -euo pipefail

VERSION="${1:-v1.8.0}"
MODULE=github.com/versity/versitygw
GO="${GO:-go}"

gobin="$("$GO" env GOBIN)"
if [ -z "$gobin" ]; then
	gobin="$("$GO" env GOPATH | cut -d: -f1)/bin"
fi

# The binary the tests would use: PATH first, then go's install directory.
find_vgw() {
	command -v versitygw 2>/dev/null && return 0
	[ -x "$gobin/versitygw" ] && echo "$gobin/versitygw" && return 0
	return 1
}

is_version() {
	"$GO" version -m "$1" 2>/dev/null |
		awk -v m="$MODULE" -v v="$VERSION" '$1 == "mod" && $2 == m && $3 == v { ok = 1 } END { exit !ok }'
}

if p="$(find_vgw)" && is_version "$p"; then
	echo "versitygw $VERSION: $p"
	exit 0
fi
echo "versitygw $VERSION: installing $MODULE/cmd/versitygw@$VERSION into $gobin (go install; a few minutes on a cold cache)"
GOBIN="$gobin" "$GO" install "$MODULE/cmd/versitygw@$VERSION"
if ! is_version "$gobin/versitygw"; then
	echo "versitygw $VERSION: go install did not produce it in $gobin" >&2
	exit 1
fi
if p="$(find_vgw)" && [ "$p" != "$gobin/versitygw" ] && ! is_version "$p"; then
	echo "versitygw $VERSION: installed in $gobin, but $p (another version) comes first on PATH; the tests use the first they find" >&2
	exit 1
fi
echo "versitygw $VERSION: $gobin/versitygw"
