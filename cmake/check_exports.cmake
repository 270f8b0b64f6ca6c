# cmake -DNM=<nm> -DLIB=<library> [-DNO_DUCKDB_CALLS=ON] [-DREQUIRED=a;b]
#       [-DEXPORTS=a;b] [-DNO_UNDEFINED_DUCKDB=ON -DREADELF=<readelf> -DNO_STATIC_TLS=ON]
#       -P cmake/check_exports.cmake
#
# A post-build check of an extension library: it exports moraine_* only
# (its version script hides the Go runtime's symbols, which must never bind
# to a Go host's, and our own C/C++ symbols), and every REQUIRED symbol.
# With NO_DUCKDB_CALLS it also calls no duckdb_* symbol directly (the
# C_STRUCT build reaches DuckDB only through the C API table it copies; a
# direct call would resolve against whatever the host exports).
# With EXPORTS it exports exactly those symbols (instead of moraine_* only:
# an extension's entry point is named after the extension). With NO_UNDEFINED_DUCKDB it
# leaves no DuckDB symbol (C API or C++) for the host to provide: it carries
# its own DuckDB, so it loads where the host keeps DuckDB's symbols local.
# With NO_STATIC_TLS its dynamic section has no STATIC_TLS flag (an object
# with one must fit its thread-locals into glibc's small static-TLS surplus
# when dlopened, and DuckDB's do not).
cmake_policy(SET CMP0057 NEW) # if(... IN_LIST ...)

function(symbols out flag)
  execute_process(COMMAND "${NM}" -D ${flag} "${LIB}" OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -D ${flag} ${LIB} failed")
  endif()
  string(REGEX REPLACE "\n$" "" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(names "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^.* " "" sym "${line}")
    list(APPEND names "${sym}")
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

if(NO_DUCKDB_CALLS)
  symbols(undefined --undefined-only)
  foreach(sym IN LISTS undefined)
    if(sym MATCHES "^duckdb_")
      message(FATAL_ERROR "${LIB} calls DuckDB directly (${sym}); use the copied C API slots")
    endif()
  endforeach()
endif()

if(NO_UNDEFINED_DUCKDB)
  # Strong undefined symbols only: zstd's optional trace hooks stay weak,
  # as in DuckDB's own builds.
  execute_process(COMMAND "${NM}" -D --undefined-only "${LIB}" OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${NM} -D --undefined-only ${LIB} failed")
  endif()
  string(REGEX MATCHALL "[ ]U [^\n]*[Dd][Uu][Cc][Kk][Dd][Bb][^\n]*" strong "${text}")
  if(strong)
    message(FATAL_ERROR "${LIB} leaves DuckDB symbols to the host: ${strong}")
  endif()
endif()

if(NO_STATIC_TLS)
  execute_process(COMMAND "${READELF}" -d "${LIB}" OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${READELF} -d ${LIB} failed")
  endif()
  if(text MATCHES "STATIC_TLS")
    message(FATAL_ERROR "${LIB} is flagged STATIC_TLS: it would need static TLS when dlopened")
  endif()
endif()

symbols(exported --defined-only)
if(EXPORTS)
  list(REMOVE_ITEM exported _init _fini)
  list(SORT exported)
  set(want ${EXPORTS})
  list(SORT want)
  if(NOT exported STREQUAL want)
    message(FATAL_ERROR "${LIB} exports ${exported}; want exactly ${want}")
  endif()
else()
  foreach(sym IN LISTS exported)
    if(NOT sym MATCHES "^moraine_" AND NOT sym MATCHES "^(_init|_fini)$")
      message(FATAL_ERROR "${LIB} exports ${sym}; only moraine_* may be exported (its version script)")
    endif()
  endforeach()
endif()
foreach(required IN LISTS REQUIRED)
  if(NOT required IN_LIST exported)
    message(FATAL_ERROR "${LIB} does not export ${required}")
  endif()
endforeach()
