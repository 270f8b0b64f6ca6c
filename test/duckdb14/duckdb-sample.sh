#!/usr/bin/env bash
# Runs the sample of DuckDB v1.4.4's own sqllogictest files
# (testdata/duckdb-sample.txt) through the sqllogictest-v1.4.4 command.
#
#   duckdb-sample.sh DUCKDB SQLLOGICTEST [ARGS...]
#
# DUCKDB is a checkout of github.com/duckdb/duckdb at tag v1.4.4 (a work
# tree, or a git directory holding the tag: the files are read from v1.4.4
# then). The listed files and DuckDB's data/ directory are copied into a
# temporary directory, which the command runs in (DuckDB's tests name data
# files relative to the repository root); ARGS go to the command before
# the paths (default: --timeout 300). Blobs a partial git directory lacks
# are reported and left out. The temporary directory is removed afterwards.
set -euo pipefail

if [ $# -lt 2 ]; then
	echo "usage: $0 DUCKDB SQLLOGICTEST [ARGS...]" >&2
	exit 2
fi
duckdb=$1
cmd=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
shift 2
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(--timeout 300)
list=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/testdata/duckdb-sample.txt

work=$(mktemp -d "${TMPDIR:-/tmp}/duckdb-sample-XXXXXX")
trap 'rm -rf "$work"' EXIT

mapfile -t files < <(grep -v '^#' "$list" | grep -v '^$')
if [ -d "$duckdb/test/sql" ] && [ -d "$duckdb/data" ]; then
	# A work tree.
	(cd "$duckdb" && tar -cf - data "${files[@]}") | tar -xf - -C "$work"
else
	# A git directory: read tag v1.4.4, blob by blob (a partial clone may lack some).
	git -C "$duckdb" rev-parse --verify -q v1.4.4^{commit} >/dev/null || {
		echo "$duckdb is neither a DuckDB work tree nor a git directory with tag v1.4.4" >&2
		exit 2
	}
	missing=0
	while IFS= read -r -d '' entry; do
		meta=${entry%%$'\t'*}
		path=${entry#*$'\t'}
		sha=${meta##* }
		mkdir -p "$work/$(dirname "$path")"
		if ! git -C "$duckdb" cat-file blob "$sha" >"$work/$path" 2>/dev/null; then
			echo "missing in $duckdb: $path" >&2
			rm -f "$work/$path"
			missing=$((missing + 1))
		fi
	done < <(git -C "$duckdb" ls-tree -r -z v1.4.4 data "${files[@]}")
	[ "$missing" -eq 0 ] || echo "$missing files are missing from $duckdb (tests reading them fail)" >&2
fi

cd "$work"
status=0
"$cmd" "${args[@]}" "${files[@]}" || status=$?
exit "$status"
