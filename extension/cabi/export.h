/*
 * export.h: included by the cgo preambles of package extension (not part
 * of the public ABI). The exported Go functions take these typedefs where
 * moraine.h has const pointers, so the prototypes cgo generates in
 * _cgo_export.h are the same types as moraine.h's, and the C compiler
 * checks every export against moraine.h when it builds _cgo_export.c.
 */
#ifndef MORAINE_EXTENSION_EXPORT_H
#define MORAINE_EXTENSION_EXPORT_H

#include <stdlib.h>

#include "moraine.h"

typedef const char *moraine_cstr;
typedef const moraine_s3_config *moraine_s3_config_cptr;
typedef const moraine_commit_log_options *moraine_commit_log_options_cptr;
typedef const moraine_value *moraine_value_cptr;
typedef const moraine_function *moraine_function_cptr;
typedef const uint64_t *moraine_u64_cptr;
typedef const moraine_filter *moraine_filter_cptr;
typedef const moraine_rows *moraine_rows_cptr;
typedef const int64_t *moraine_i64_cptr;
typedef const moraine_table_def *moraine_table_def_cptr;
typedef const moraine_column_def *moraine_column_def_cptr;

#endif
