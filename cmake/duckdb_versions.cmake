# include(cmake/duckdb_versions.cmake) reads duckdb-versions.txt, the one
# list of DuckDB releases the storage extension is built for, and sets
#
#   MORAINE_DUCKDB_ALL            every version, in the file's order
#   DUCKDB_<v>_HEADERS            its headers spec (cmake/duckdb_headers.cmake)
#   DUCKDB_<v>_STATIC             the duckdb-go-bindings/lib/linux-amd64 module version
#   DUCKDB_<v>_STATIC_SUM         that module's go.sum hash
#   DUCKDB_<v>_OFFICIAL           @duckdb/node-bindings-linux-x64's version
#   DUCKDB_<v>_DUCKLAKE           the DuckLake catalog spec it serves
#
# (<v> as written: DUCKDB_v1.4.4_STATIC). A malformed line fails the
# configure, naming it.
file(STRINGS "${MORAINE_ROOT}/duckdb-versions.txt" _moraine_version_lines)
set(MORAINE_DUCKDB_ALL "")
foreach(_line IN LISTS _moraine_version_lines)
  if(_line MATCHES "^[ \t]*(#|$)")
    continue()
  endif()
  if(NOT _line MATCHES "^(v[0-9]+\\.[0-9]+\\.[0-9]+) +([^ ]+) +(v[^# ]+)#(h1:[^ ]+) +([^# ]+)#(sha512-[^ ]+) +([0-9.]+)$")
    message(FATAL_ERROR "duckdb-versions.txt: cannot read the line '${_line}': want <version> <headers> <static-module-version>#<h1:...> <official-version>#<sha512-...> <ducklake spec>")
  endif()
  set(_v "${CMAKE_MATCH_1}")
  list(APPEND MORAINE_DUCKDB_ALL "${_v}")
  set(DUCKDB_${_v}_HEADERS "${CMAKE_MATCH_2}")
  set(DUCKDB_${_v}_STATIC "${CMAKE_MATCH_3}")
  set(DUCKDB_${_v}_STATIC_SUM "${CMAKE_MATCH_4}")
  set(DUCKDB_${_v}_OFFICIAL "${CMAKE_MATCH_5}")
  set(DUCKDB_${_v}_DUCKLAKE "${CMAKE_MATCH_7}")
endforeach()
if(NOT MORAINE_DUCKDB_ALL)
  message(FATAL_ERROR "duckdb-versions.txt lists no DuckDB version")
endif()
