# cmake -DSPEC=<headers spec> -DOUT=<dir> [-DSHARED=<../shared>] [-DNPM=npm] -P cmake/duckdb_headers.cmake
#
# Obtains one DuckDB release's C++ headers into <OUT>/src/include, from the
# headers column of duckdb-versions.txt (SPEC):
#
#   npm:<package>@<version>#sha512=<hex>   `npm pack` of DuckDB's source package
#                                          (the npm registry is reachable from every
#                                          machine here; DuckDB's own servers are not)
#   shared:<path>#sha256=<hex>             a tarball under ../shared (SHARED), of
#                                          src/include and third_party under duckdb-<v>/
#
# The tarball is checked against the pinned hash before anything is unpacked;
# nothing else is downloaded. Cached: when <OUT>/.complete names the pinned
# hash the script does nothing; an npm tarball is kept as <OUT>.tgz. The
# storage extension (cshim/storage) and the duckdb-go test hosts
# (test/duckdb14, through `make duckdb-headers-<version>`) compile against
# these copies.
cmake_minimum_required(VERSION 3.19)

if(NOT OUT OR NOT SPEC)
  message(FATAL_ERROR "duckdb_headers.cmake: set -DSPEC=<headers spec> -DOUT=<directory>")
endif()
if(NOT NPM)
  set(NPM npm)
endif()
if(NOT SPEC MATCHES "^(npm|shared):([^#]+)#(sha512|sha256)=([0-9a-f]+)$")
  message(FATAL_ERROR "duckdb_headers.cmake: headers spec '${SPEC}': want npm:<package>@<version>#sha512=<hex> or shared:<path>#sha256=<hex>")
endif()
set(kind "${CMAKE_MATCH_1}")
set(source "${CMAKE_MATCH_2}")
string(TOUPPER "${CMAKE_MATCH_3}" algo)
set(pinned "${CMAKE_MATCH_4}")

set(stamp "${OUT}/.complete")
if(EXISTS "${stamp}")
  file(READ "${stamp}" have)
  string(STRIP "${have}" have)
  if(have STREQUAL pinned AND EXISTS "${OUT}/src/include/duckdb.hpp")
    return()
  endif()
endif()

# check(<file>): fail unless the file has the pinned hash.
function(check file)
  file(${algo} "${file}" got)
  if(NOT got STREQUAL pinned)
    message(FATAL_ERROR "${file} has ${algo} ${got}, not the pinned ${pinned} (duckdb-versions.txt): refusing it")
  endif()
endfunction()

if(kind STREQUAL "npm")
  set(tarball "${OUT}.tgz")
  set(need_download TRUE)
  if(EXISTS "${tarball}")
    file(${algo} "${tarball}" got)
    if(got STREQUAL pinned)
      set(need_download FALSE)
    endif()
  endif()
  if(need_download)
    set(work "${OUT}.download")
    file(REMOVE_RECURSE "${work}")
    file(MAKE_DIRECTORY "${work}")
    message(STATUS "npm pack ${source} (DuckDB's C++ source)")
    execute_process(COMMAND "${NPM}" pack "${source}" --silent
      WORKING_DIRECTORY "${work}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "npm pack ${source} failed (rc ${rc}): ${err}")
    endif()
    file(GLOB packed "${work}/*.tgz")
    if(NOT packed)
      message(FATAL_ERROR "npm pack ${source} left no tarball: ${out} ${err}")
    endif()
    check("${packed}")
    file(RENAME "${packed}" "${tarball}")
    file(REMOVE_RECURSE "${work}")
  endif()
  check("${tarball}")
  set(inner "package/src/duckdb")
  set(patterns "package/src/duckdb/src/include" "package/LICENSE")
else()
  if(NOT SHARED)
    message(FATAL_ERROR "duckdb_headers.cmake: ${SPEC} needs -DSHARED=<the ../shared directory>")
  endif()
  set(tarball "${SHARED}/${source}")
  if(NOT EXISTS "${tarball}")
    message(FATAL_ERROR "${tarball} (duckdb-versions.txt) does not exist: ../shared must be beside the repository")
  endif()
  check("${tarball}")
  get_filename_component(name "${tarball}" NAME)
  string(REGEX REPLACE "-headers\\.tar\\.gz$" "" inner "${name}")
  set(patterns "${inner}")
endif()

set(unpack "${OUT}.unpack")
file(REMOVE_RECURSE "${unpack}" "${OUT}")
file(MAKE_DIRECTORY "${unpack}")
file(ARCHIVE_EXTRACT INPUT "${tarball}" DESTINATION "${unpack}" PATTERNS ${patterns})
if(NOT EXISTS "${unpack}/${inner}/src/include/duckdb.hpp")
  message(FATAL_ERROR "${tarball} holds no ${inner}/src/include/duckdb.hpp")
endif()
file(RENAME "${unpack}/${inner}" "${OUT}")
if(EXISTS "${unpack}/package/LICENSE")
  file(RENAME "${unpack}/package/LICENSE" "${OUT}/LICENSE")
endif()
file(REMOVE_RECURSE "${unpack}")
file(WRITE "${stamp}" "${pinned}\n")
message(STATUS "DuckDB headers (${source}) in ${OUT}")
