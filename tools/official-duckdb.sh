#!/usr/bin/env bash
# tools/official-duckdb.sh <duckdb version> <official spec> <out dir>
#
# DuckDB's official build of one release, from the npm registry (the only
# place on every machine here that has it): the platform package
# @duckdb/node-bindings-linux-x64 holding duckdb.node and DuckDB's official
# libduckdb.so, at the version and integrity of duckdb-versions.txt's
# official-libduckdb column (<official spec>: <npm version>#<integrity>);
# for v1.4.4 also the Node client users run, @duckdb/node-api, and the
# bindings it loads (pinned below: the Node client's test runs there). Each
# tarball is fetched
# with `npm pack`, checked against the integrity (sha512) pinned below as
# npm publishes it, and unpacked into <out dir>/node_modules/<name>, the
# layout Node resolves (require with NODE_PATH=<out dir>/node_modules).
# Nothing else is downloaded; nothing runs from the packages at install.
# Cached: a package whose directory records its pinned integrity is kept.
set -euo pipefail

usage="usage: tools/official-duckdb.sh <duckdb version> <npm version>#<integrity> <out dir>"
version=${1:?$usage}
spec=${2:?$usage}
out=${3:?$usage}
case "$spec" in
*#sha512-*) ;;
*) echo "official-duckdb: '$spec': want <npm version>#sha512-<integrity>" >&2; exit 2 ;;
esac
packages=("@duckdb/node-bindings-linux-x64@${spec%%#*} ${spec#*#}")
if [ "$version" = v1.4.4 ]; then
	packages+=(
		"@duckdb/node-api@1.4.4-r.4 sha512-yUotG8wPSmmEFxAODt07rXJZgV2fhvzhnZX3wrMspQNEaNVwXArzakgKyfakZkYL9me7SK9eDnXYv/XbdifWEg=="
		"@duckdb/node-bindings@1.4.4-r.4 sha512-JYjCaZmqvqrjFBjT3Q6jnb3OFz26lAUTFXUka/HQRxWRy23ZiURZwPYMLkyFBLHa696hNlC85M/EWXDRFnDIfg=="
	)
fi

mkdir -p "$out/node_modules" "$out/tarballs"
for entry in "${packages[@]}"; do
	spec=${entry% *}
	integrity=${entry#* }
	name=${spec%@*}
	dest="$out/node_modules/$name"
	if [ -f "$dest/.integrity" ] && [ "$(cat "$dest/.integrity")" = "$integrity" ]; then
		continue
	fi
	tarball="$out/tarballs/$(echo "${name#@}" | tr / -)-${spec##*@}.tgz"
	if [ ! -f "$tarball" ] || [ "sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)" != "$integrity" ]; then
		work=$(mktemp -d "$out/tarballs/pack.XXXXXX")
		(cd "$work" && npm pack "$spec" --silent >/dev/null)
		got=("$work"/*.tgz)
		mv "${got[0]}" "$tarball"
		rmdir "$work"
	fi
	have="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
	if [ "$have" != "$integrity" ]; then
		echo "official-duckdb: $spec from npm has integrity $have, not the pinned $integrity: refusing it" >&2
		exit 1
	fi
	rm -rf "$dest" && mkdir -p "$dest"
	tar xzf "$tarball" -C "$dest" --strip-components=1
	echo "$integrity" >"$dest/.integrity"
	echo "official-duckdb: $spec in $dest"
done
