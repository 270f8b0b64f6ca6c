//go:build cgo

package duckdbtest

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// TestFormatMatchesDuckDB renders values with the runner's formatter and
// compares with DuckDB's own CAST(... AS VARCHAR) of the same value.
func TestFormatMatchesDuckDB(t *testing.T) {
	db := Open(t, "")
	if _, err := db.Exec("SET TimeZone = 'UTC'"); err != nil {
		t.Fatal(err)
	}
	exprs := []string{
		// integers
		"42::TINYINT", "(-128)::TINYINT", "32767::SMALLINT", "(-7)::INTEGER", "9223372036854775807::BIGINT",
		"255::UTINYINT", "65535::USMALLINT", "4294967295::UINTEGER", "18446744073709551615::UBIGINT",
		"170141183460469231731687303715884105727::HUGEINT", "(-170141183460469231731687303715884105727)::HUGEINT",
		"340282366920938463463374607431768211455::UHUGEINT",
		// floats
		"1.5::DOUBLE", "1.0::DOUBLE", "100.0::FLOAT", "0.1::DOUBLE", "0.1::FLOAT", "(1/3)::DOUBLE", "(1/3)::FLOAT",
		"1e15::DOUBLE", "1e16::DOUBLE", "123456789012345.6::DOUBLE", "1e-4::DOUBLE", "1e-5::DOUBLE",
		"0.0001234::DOUBLE", "3.5e-7::DOUBLE", "1e300::DOUBLE", "1e20::FLOAT", "1234567.0::FLOAT", "16777216::FLOAT",
		"'nan'::DOUBLE", "'inf'::DOUBLE", "'-inf'::DOUBLE", "'nan'::FLOAT", "0::DOUBLE", "(-2.5e-300)::DOUBLE",
		"1.7976931348623157e308::DOUBLE", "4.9e-324::DOUBLE", "3.4028235e38::FLOAT", "(-1e16)::DOUBLE",
		"9999999999999998::DOUBLE", "123456789.125::DOUBLE",
		// decimals
		"3::DECIMAL(10,2)", "(-1.5)::DECIMAL(4,1)", "0.05::DECIMAL(4,3)", "123::DECIMAL(38,0)",
		"12345678901234567890.123::DECIMAL(38,3)", "(-0.001)::DECIMAL(18,3)", "0::DECIMAL(5,2)",
		"99999.9999::DECIMAL(9,4)",
		// booleans, strings, blobs
		"true", "false", "'hello'", "'a b'", "'it''s'", "'\\'", "'ä漢'", "'x'::ENUM('x', 'y')",
		"'a'::BLOB", "'\\xFF\\x00abc'::BLOB", "'a\\x01'::BLOB", "'''\"\\x5C x~'::BLOB", "''::BLOB",
		"'0101'::BIT", "'6ba7b810-9dad-11d1-80b4-00c04fd430c8'::UUID",
		// dates and times
		"DATE '2024-01-02'", "DATE '0044-03-15'", "DATE '0001-01-01'", "DATE '0044-03-15' - 2000*366",
		"'infinity'::DATE", "'-infinity'::DATE", "DATE '9999-12-31'",
		"TIMESTAMP '2024-01-02 03:04:05'", "TIMESTAMP '2024-01-02 03:04:05.123'", "TIMESTAMP '2024-01-02 03:04:05.000001'",
		"'infinity'::TIMESTAMP", "'-infinity'::TIMESTAMP", "TIMESTAMP '0010-01-01 00:00:00' - INTERVAL 20 YEAR",
		"TIMESTAMP_NS '2024-01-01 01:02:03.123456789'", "TIMESTAMP_NS '2024-01-01 01:02:03'",
		"'2024-01-01 01:02:03'::TIMESTAMP_S", "'2024-01-01 01:02:03.5'::TIMESTAMP_MS",
		"TIMESTAMPTZ '2024-01-02 03:04:05.123456+00'", "TIMESTAMPTZ '2024-06-30 23:59:59+02'",
		"TIME '01:02:03'", "TIME '01:02:03.5'", "TIME '23:59:59.999999'", "TIME '00:00:00'",
		"'01:02:03+05:30'::TIMETZ", "'01:02:03-08'::TIMETZ", "'01:02:03+00'::TIMETZ",
		// intervals
		"INTERVAL '1 year 2 months 3 days 04:05:06.5'", "INTERVAL '-3 days'", "INTERVAL '0 seconds'",
		"INTERVAL '-14 months -3 hours'", "INTERVAL '36 hours'", "INTERVAL '1 month'", "INTERVAL '1 day 1 microsecond'",
		"INTERVAL '-1 year'", "INTERVAL '25 months'", "INTERVAL '-00:00:01.25'",
		// nested
		"[1, 2, NULL]", "[]::INTEGER[]", "[[1, 2], [3]]", "[1.5::DOUBLE, 2]", "[true]", "[NULL]",
		"['a', NULL, '', 'it''s', 'a b', 'NULL', 'null', 'Null', 'NULLx']",
		"['[a]', 'a,b', 'a''b', '{', 'x:y', 'x=y', '(p)', 'q\"r', 'a\\b', 'a\\,b']",
		"[' lead', 'trail ', E'\\tx', E'x\\n', E'a\\nb', ' ', '  x ', 'ä']",
		"{'a': 1, 'b': 'x'}", "{'a': NULL, 'b': 'it''s', 'c c': 'x'}", "{'A': 1, 'a b': 2, 'it''s': 3, 'q\"': 4}",
		"{'x': [1, 2], 'y': {'z': 'w'}}", "[{'a': [1]}]", "{'a': ''}", "{'a\\b': 1}",
		"MAP {'k': 1, 'j': NULL}", "MAP {'a b': 'c d'}", "MAP {'x,y': ''}", "[MAP {1: [2]}]", "MAP {}::MAP(INTEGER, INTEGER)",
		"[1, 2]::INTEGER[2]", "['x', 'y']::VARCHAR[2]", "['x', 'y']::ENUM('x', 'y')[]", "[[1, 2]]::INTEGER[2][]",
		"union_value(k := 1)::UNION(k INTEGER, s VARCHAR)", "union_value(s := 'a,b')::UNION(k INTEGER, s VARCHAR)",
		"[union_value(s := 'a,b')::UNION(k INTEGER, s VARCHAR)]",
		"[DATE '2024-01-02']", "[TIMESTAMP '2024-01-02 03:04:05']", "['a'::BLOB, '\\x00'::BLOB]", "[1.50::DECIMAL(4,2)]",
		"['6ba7b810-9dad-11d1-80b4-00c04fd430c8'::UUID]", "[INTERVAL '1 day']", "{'t': TIME '01:02:03'}",
		"[0.1::FLOAT, 1e20::DOUBLE]", "[123456789012345678901234567890::HUGEINT]",
		"[TIME '01:02:03', TIME '00:00:00']", "[INTERVAL '1 day 01:00:00']", "[TIMESTAMPTZ '2024-01-02 03:04:05+00']",
		// float ties and interval edges (DuckDB prints more digits than Go's shortest)
		"(-1961978.75)::FLOAT", "45602632::FLOAT", "(-336671.625)::FLOAT", "1000000.1::FLOAT", "524288.1::FLOAT",
		"16777215::FLOAT", "8388607.5::FLOAT", "18014398509481988::DOUBLE", "9007199254740993::DOUBLE",
		"0.30000000000000004::DOUBLE", "2.5::FLOAT", "1.401298464324817e-45::FLOAT", "5e-324::DOUBLE",
	}
	rng := rand.New(rand.NewSource(1))
	for range 1000 {
		exprs = append(exprs, fmt.Sprintf("%g::DOUBLE", (rng.Float64()-0.5)*pow10(rng.Intn(40)-20)))
		exprs = append(exprs, fmt.Sprintf("%g::FLOAT", (rng.Float64()-0.5)*pow10(rng.Intn(20)-10)))
		exprs = append(exprs, fmt.Sprintf("(%d)::BIGINT", rng.Int63()-rng.Int63()))
	}
	for range 50 {
		exprs = append(exprs, fmt.Sprintf("INTERVAL (%d) MICROSECONDS + INTERVAL (%d) DAYS + INTERVAL (%d) MONTHS",
			rng.Int63n(1e13)-5e12, rng.Intn(100)-50, rng.Intn(100)-50))
		exprs = append(exprs, fmt.Sprintf("TIMESTAMP '1970-01-01' + INTERVAL (%d) MICROSECONDS", rng.Int63n(1e17)-5e16))
	}
	fails := 0
	for _, e := range exprs {
		rows, err := db.Query("SELECT " + e + ", CAST(" + e + " AS VARCHAR)")
		if err != nil {
			t.Errorf("%s: %v", e, err)
			continue
		}
		cts, _ := rows.ColumnTypes()
		typ, err := parseType(cts[0].DatabaseTypeName())
		if err != nil {
			t.Errorf("%s: %v", e, err)
			rows.Close()
			continue
		}
		for rows.Next() {
			var v any
			var want *string
			if err := rows.Scan(&v, &want); err != nil {
				t.Errorf("%s: scan: %v", e, err)
				continue
			}
			got, err := formatTop(v, typ)
			if err != nil {
				t.Errorf("%s (%s): %v", e, typ.text, err)
				continue
			}
			w := "NULL"
			if want != nil {
				w = *want
				if w == "" {
					w = "(empty)"
				}
			}
			if got != w {
				fails++
				t.Errorf("%s (%s, Go %T %#v):\n got %q\nwant %q", e, typ.text, v, v, got, w)
			}
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s: %v", e, err)
		}
		rows.Close()
	}
	if fails > 0 {
		t.Logf("%d of %d values rendered differently from DuckDB", fails, len(exprs))
	}
}

func pow10(n int) float64 {
	f := 1.0
	for ; n > 0; n-- {
		f *= 10
	}
	for ; n < 0; n++ {
		f /= 10
	}
	return f
}

func TestFormatJSONIsAnError(t *testing.T) {
	db := Open(t, "")
	rows, err := db.Query(`SELECT '{"a": 1}'::JSON`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, _ := rows.ColumnTypes()
	typ, err := parseType(cts[0].DatabaseTypeName())
	if err != nil {
		t.Fatal(err)
	}
	rows.Next()
	var v any
	if err := rows.Scan(&v); err != nil {
		t.Fatal(err)
	}
	if _, err := formatTop(v, typ); err == nil || !strings.Contains(err.Error(), "cast the column to VARCHAR") {
		t.Fatalf("formatTop(JSON) = %v", err)
	}
}

func TestParseType(t *testing.T) {
	for in, want := range map[string]string{
		"INTEGER":                                "INTEGER",
		"DECIMAL(10,2)":                          "DECIMAL/2",
		"INTEGER[]":                              "LIST<INTEGER>",
		"VARCHAR[3]":                             "ARRAY<VARCHAR>",
		"INTEGER[2][]":                           "LIST<ARRAY<INTEGER>>",
		`STRUCT("a" INTEGER, "b""c" VARCHAR[])`:  `STRUCT{a:INTEGER,b"c:LIST<VARCHAR>}`,
		`MAP(VARCHAR, STRUCT("x" DECIMAL(4,1)))`: "MAP<VARCHAR,STRUCT{x:DECIMAL/1}>",
		`UNION("k" INTEGER, "s" VARCHAR)`:        "UNION{k:INTEGER,s:VARCHAR}",
		`STRUCT("x" ENUM)[]`:                     "LIST<STRUCT{x:ENUM}>",
	} {
		typ, err := parseType(in)
		if err != nil {
			t.Errorf("parseType(%q): %v", in, err)
			continue
		}
		if got := describe(typ); got != want {
			t.Errorf("parseType(%q) = %s, want %s", in, got, want)
		}
		if typ.text != in {
			t.Errorf("parseType(%q).text = %q", in, typ.text)
		}
	}
	for _, in := range []string{"", "DECIMAL(10)", "STRUCT(", `STRUCT("a INTEGER)`, "INTEGER[x]", "MAP(INTEGER)", "INTEGER junk"} {
		if _, err := parseType(in); err == nil {
			t.Errorf("parseType(%q) succeeded", in)
		}
	}
}

func describe(t *colType) string {
	switch t.name {
	case "DECIMAL":
		return fmt.Sprintf("DECIMAL/%d", t.scale)
	case "LIST", "ARRAY":
		return t.name + "<" + describe(t.elem) + ">"
	case "MAP":
		return "MAP<" + describe(t.key) + "," + describe(t.value) + ">"
	case "STRUCT", "UNION":
		var parts []string
		for _, f := range t.fields {
			parts = append(parts, f.name+":"+describe(f.typ))
		}
		return t.name + "{" + strings.Join(parts, ",") + "}"
	}
	return t.name
}
