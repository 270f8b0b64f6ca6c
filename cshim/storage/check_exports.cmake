# cmake -DNM=<nm> -DLIB=<libmoraine_storage.so> -P check_exports.cmake
#
# The storage extension exports its entry point and the C ABI (moraine_*)
# and nothing else: no Go runtime symbol (crosscall2, _cgo_*, x_cgo_*), no
# C++ symbol of ours.
cmake_policy(SET CMP0057 NEW) # if(... IN_LIST ...)
execute_process(COMMAND "${NM}" -D --defined-only "${LIB}" OUTPUT_VARIABLE defined RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${LIB} failed")
endif()
string(REGEX REPLACE "\n$" "" defined "${defined}")
string(REPLACE "\n" ";" lines "${defined}")
set(exported "")
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^.* " "" sym "${line}")
  list(APPEND exported "${sym}")
  if(NOT sym MATCHES "^moraine_" AND NOT sym MATCHES "^(_init|_fini)$")
    message(FATAL_ERROR "${LIB} exports ${sym}; only moraine_* may be exported (moraine_storage.map)")
  endif()
endforeach()
# The entry point, and the C ABI a host may call directly (both attach
# entry points among it).
foreach(required moraine_duckdb_cpp_init moraine_attach moraine_attach_with_commit_log moraine_detach
        moraine_error_free moraine_catalog_info moraine_txn_begin moraine_scan_open)
  if(NOT required IN_LIST exported)
    message(FATAL_ERROR "${LIB} does not export ${required}")
  endif()
endforeach()
