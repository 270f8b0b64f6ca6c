# cmake -DNM=<nm> -DLIB=<libmoraine_storage.so> -P check_exports.cmake
#
# The storage extension exports its entry point and the C ABI (moraine_*)
# and nothing else: no Go runtime symbol (crosscall2, _cgo_*, x_cgo_*), no
# C++ symbol of ours.
execute_process(COMMAND "${NM}" -D --defined-only "${LIB}" OUTPUT_VARIABLE defined RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${LIB} failed")
endif()
string(REGEX REPLACE "\n$" "" defined "${defined}")
string(REPLACE "\n" ";" lines "${defined}")
set(entry FALSE)
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^.* " "" sym "${line}")
  if(sym STREQUAL "moraine_duckdb_cpp_init")
    set(entry TRUE)
  endif()
  if(NOT sym MATCHES "^moraine_" AND NOT sym MATCHES "^(_init|_fini)$")
    message(FATAL_ERROR "${LIB} exports ${sym}; only moraine_* may be exported (moraine_storage.map)")
  endif()
endforeach()
if(NOT entry)
  message(FATAL_ERROR "${LIB} does not export the entry point moraine_duckdb_cpp_init")
endif()
