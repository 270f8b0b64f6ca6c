# cmake -DNM=<nm> -DLIB=<libmoraine.so> -P check_symbols.cmake
#
# The extension must call DuckDB only through the C API table (a direct
# duckdb_* call would resolve against whatever the host exports, and fail in
# a host that exports nothing), and export only moraine_* (moraine.map).
execute_process(COMMAND "${NM}" -D --undefined-only "${LIB}" OUTPUT_VARIABLE undefined RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D --undefined-only ${LIB} failed")
endif()
string(REGEX MATCHALL "[ \t]duckdb_[A-Za-z0-9_]+" direct "${undefined}")
if(direct)
  message(FATAL_ERROR "${LIB} calls DuckDB directly (use the copied C API slots):${direct}")
endif()
execute_process(COMMAND "${NM}" -D --defined-only "${LIB}" OUTPUT_VARIABLE defined RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${LIB} failed")
endif()
string(REGEX REPLACE "\n$" "" defined "${defined}")
string(REPLACE "\n" ";" lines "${defined}")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^.* " "" sym "${line}")
  if(NOT sym MATCHES "^moraine_" AND NOT sym MATCHES "^(MORAINE|_init|_fini)")
    message(FATAL_ERROR "${LIB} exports ${sym}; only moraine_* may be exported (moraine.map)")
  endif()
endforeach()
