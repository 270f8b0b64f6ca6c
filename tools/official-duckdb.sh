#!/usr/bin/env bash
# tools/official-duckdb.sh <out dir>
#
# DuckDB's official v1.4.4 build, from the npm registry (the only place on
# every machine here that has it): the Node client users run,
# @duckdb/node-api, the bindings it loads, and the platform package holding
# duckdb.node and DuckDB's official libduckdb.so. Each tarball is fetched
# with `npm pack`, checked against the integrity (sha512) pinned below as
# npm publishes it, and unpacked into <out dir>/node_modules/<name>, the
# layout Node resolves (require with NODE_PATH=<out dir>/node_modules).
# Nothing else is downloaded; nothing runs from the packages at install.
# Cached: a package whose directory records its pinned integrity is kept.
set -euo pipefail

out=${1:?usage: tools/official-duckdb.sh <out dir>}
packages=(
	"@duckdb/node-api@1.4.4-r.4 sha512-yUotG8wPSmmEFxAODt07rXJZgV2fhvzhnZX3wrMspQNEaNVwXArzakgKyfakZkYL9me7SK9eDnXYv/XbdifWEg=="
	"@duckdb/node-bindings@1.4.4-r.4 sha512-JYjCaZmqvqrjFBjT3Q6jnb3OFz26lAUTFXUka/HQRxWRy23ZiURZwPYMLkyFBLHa696hNlC85M/EWXDRFnDIfg=="
	"@duckdb/node-bindings-linux-x64@1.4.4-r.4 sha512-jBTL/WvfwxLToFa/pVHfT6elMtltJGnc3wSuxZD9OfMltit9YUdVFS37vBFQzXMT1Z8OWjtSjMh+zPKxOwHLHA=="
)

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
