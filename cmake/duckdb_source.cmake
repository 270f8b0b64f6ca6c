# cmake -DOUT=<dir> [-DNPM=npm] -P cmake/duckdb_source.cmake
#
# Obtains DuckDB v1.4.4's C++ source: `npm pack duckdb@1.4.4` (the npm
# registry is reachable from every machine here; DuckDB's own servers are
# not), checks the tarball against the pinned SHA-512 and unpacks it so that
# <OUT>/src/include holds DuckDB's headers (<OUT> = the tarball's
# package/src/duckdb). Nothing else is downloaded.
#
# Cached: when <OUT>/.complete names the pinned hash the script does nothing;
# the tarball is kept as <OUT>.tgz. Both the C++ storage extension
# (CMakeLists.txt) and the DuckDB v1.4.4 test host (test/duckdb14, through
# `make duckdb-source`) compile against this one copy.
cmake_minimum_required(VERSION 3.16)

set(DUCKDB_NPM_VERSION "1.4.4")
# sha512 of duckdb-1.4.4.tgz as npm publishes it (its "integrity" field,
# sha512-hEJJ5hyV...mmpog==, in hex).
set(DUCKDB_NPM_SHA512 "844249e61c9517454b8f776638ba6c5ab411d1bddde1892ab72826ea25178c72430e74aa83f5122b171be6abcdace84560f824b5ac94e9d5c2b603ea7269a9a2")

if(NOT OUT)
  message(FATAL_ERROR "duckdb_source.cmake: set -DOUT=<directory>")
endif()
if(NOT NPM)
  set(NPM npm)
endif()

set(stamp "${OUT}/.complete")
if(EXISTS "${stamp}")
  file(READ "${stamp}" have)
  string(STRIP "${have}" have)
  if(have STREQUAL DUCKDB_NPM_SHA512 AND EXISTS "${OUT}/src/include/duckdb.hpp")
    return()
  endif()
endif()

set(tarball "${OUT}.tgz")
set(need_download TRUE)
if(EXISTS "${tarball}")
  file(SHA512 "${tarball}" got)
  if(got STREQUAL DUCKDB_NPM_SHA512)
    set(need_download FALSE)
  endif()
endif()

if(need_download)
  get_filename_component(parent "${OUT}" DIRECTORY)
  set(work "${OUT}.download")
  file(REMOVE_RECURSE "${work}")
  file(MAKE_DIRECTORY "${work}")
  message(STATUS "npm pack duckdb@${DUCKDB_NPM_VERSION} (DuckDB's C++ source, ~11 MB)")
  execute_process(COMMAND "${NPM}" pack "duckdb@${DUCKDB_NPM_VERSION}" --silent
    WORKING_DIRECTORY "${work}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "npm pack duckdb@${DUCKDB_NPM_VERSION} failed (rc ${rc}): ${err}")
  endif()
  set(packed "${work}/duckdb-${DUCKDB_NPM_VERSION}.tgz")
  if(NOT EXISTS "${packed}")
    message(FATAL_ERROR "npm pack left no ${packed}: ${out} ${err}")
  endif()
  file(SHA512 "${packed}" got)
  if(NOT got STREQUAL DUCKDB_NPM_SHA512)
    message(FATAL_ERROR "duckdb-${DUCKDB_NPM_VERSION}.tgz from npm has SHA-512 ${got}, expected the pinned ${DUCKDB_NPM_SHA512}: refusing it")
  endif()
  file(RENAME "${packed}" "${tarball}")
  file(REMOVE_RECURSE "${work}")
endif()

set(unpack "${OUT}.unpack")
file(REMOVE_RECURSE "${unpack}" "${OUT}")
file(MAKE_DIRECTORY "${unpack}")
file(ARCHIVE_EXTRACT INPUT "${tarball}" DESTINATION "${unpack}" PATTERNS "package/src/duckdb/src/include" "package/LICENSE")
if(NOT EXISTS "${unpack}/package/src/duckdb/src/include/duckdb.hpp")
  message(FATAL_ERROR "${tarball} holds no package/src/duckdb/src/include/duckdb.hpp")
endif()
file(RENAME "${unpack}/package/src/duckdb" "${OUT}")
file(RENAME "${unpack}/package/LICENSE" "${OUT}/LICENSE")
file(REMOVE_RECURSE "${unpack}")
file(WRITE "${stamp}" "${DUCKDB_NPM_SHA512}\n")
message(STATUS "DuckDB v${DUCKDB_NPM_VERSION} source in ${OUT}")
