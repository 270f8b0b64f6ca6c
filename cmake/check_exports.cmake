# cmake -DNM=<nm> -DLIB=<library> [-DNO_DUCKDB_CALLS=ON] [-DREQUIRED=a;b] -P cmake/check_exports.cmake
#
# A post-build check of an extension library: it exports moraine_* only
# (its version script hides the Go runtime's symbols, which must never bind
# to a Go host's, and our own C/C++ symbols), and every REQUIRED symbol.
# With NO_DUCKDB_CALLS it also calls no duckdb_* symbol directly (the
# C_STRUCT build reaches DuckDB only through the C API table it copies; a
# direct call would resolve against whatever the host exports).
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

symbols(exported --defined-only)
foreach(sym IN LISTS exported)
  if(NOT sym MATCHES "^moraine_" AND NOT sym MATCHES "^(_init|_fini)$")
    message(FATAL_ERROR "${LIB} exports ${sym}; only moraine_* may be exported (its version script)")
  endif()
endforeach()
foreach(required IN LISTS REQUIRED)
  if(NOT required IN_LIST exported)
    message(FATAL_ERROR "${LIB} does not export ${required}")
  endif()
endforeach()
