//go:build cgo

package duckdbtest

import (
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
)

// Values are rendered as DuckDB renders them when cast to VARCHAR (which is
// what DuckDB's own test runners compare against), from what duckdb-go
// returns and the column's type name:
//
//	integers, HUGEINT      42, -7, 170141183460469231731687303715884105727
//	DOUBLE, FLOAT          1.5, 1.0, 0.1, 1e+16, 1e-05, nan, -inf (digits: see shortestDigits)
//	DECIMAL(w,s)           3.00, -0.50 (exactly s fraction digits)
//	BOOLEAN                true, false
//	DATE, TIMESTAMP...     2024-01-02, 2024-01-02 03:04:05.123, 0044-03-15 (BC), infinity
//	TIMESTAMPTZ            2024-01-02 03:04:05+00 (the runner sets TimeZone to UTC)
//	INTERVAL               1 year 2 months 3 days 04:05:06.5, 00:00:00
//	BLOB                   a\x01\xFF
//	LIST, ARRAY            [1, 2, NULL]
//	STRUCT                 {'a': 1, 'b': x}
//	MAP                    {k=1, j=NULL}
//	strings nested in LIST/STRUCT/MAP are quoted when DuckDB quotes them:
//	                       [a b, '', 'x,y', 'it\'s', 'NULL']
//
// At the top level NULL is "NULL" and the empty string "(empty)". JSON columns
// (which duckdb-go decodes) and types without a rendering here are errors
// naming the column type: cast such columns to VARCHAR in the test query.

// formatTop renders a top-level result value.
func formatTop(v any, t *colType) (string, error) {
	if v == nil {
		return "NULL", nil
	}
	s, err := format(v, t, false)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "(empty)", nil
	}
	return strings.ReplaceAll(s, "\x00", `\0`), nil
}

func format(v any, t *colType, nested bool) (string, error) {
	if v == nil {
		return "NULL", nil
	}
	bad := func() (string, error) {
		return "", fmt.Errorf("cannot render %T as %s (cast the column to VARCHAR in the query)", v, t.text)
	}
	switch t.name {
	case "BOOLEAN":
		if b, ok := v.(bool); ok {
			return strconv.FormatBool(b), nil
		}
	case "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT":
		switch x := v.(type) {
		case int8, int16, int32, int64, uint8, uint16, uint32, uint64, int, uint:
			return fmt.Sprint(x), nil
		}
	case "HUGEINT", "UHUGEINT", "BIGNUM":
		if x, ok := v.(*big.Int); ok {
			return x.String(), nil
		}
	case "FLOAT":
		if x, ok := v.(float32); ok {
			return formatFloat(float64(x), 32), nil
		}
	case "DOUBLE":
		if x, ok := v.(float64); ok {
			return formatFloat(x, 64), nil
		}
	case "DECIMAL":
		if x, ok := v.(duckdb.Decimal); ok && x.Value != nil {
			return formatDecimal(x.Value, t.scale), nil
		}
	case "VARCHAR", "ENUM", "BIT":
		if s, ok := v.(string); ok {
			return text(s, nested), nil
		}
	case "BLOB":
		if b, ok := v.([]byte); ok {
			return text(formatBlob(b), nested), nil
		}
	case "UUID":
		switch b := v.(type) {
		case []byte:
			if len(b) == 16 {
				return text(formatUUID(b), nested), nil
			}
		case duckdb.UUID:
			return text(formatUUID(b[:]), nested), nil
		case string:
			return text(b, nested), nil
		}
	case "DATE":
		if x, ok := v.(time.Time); ok {
			return text(formatDate(x), nested), nil
		}
	case "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS":
		if x, ok := v.(time.Time); ok {
			return text(formatTimestamp(x, t.name == "TIMESTAMP_NS", ""), nested), nil
		}
	case "TIMESTAMPTZ":
		if x, ok := v.(time.Time); ok {
			return text(formatTimestamp(x.UTC(), false, "+00"), nested), nil
		}
	case "TIME":
		if x, ok := v.(time.Time); ok {
			return text(formatClock(x.Hour(), x.Minute(), x.Second(), x.Nanosecond()/1000), nested), nil
		}
	case "TIMETZ":
		if x, ok := v.(time.Time); ok {
			_, off := x.Zone()
			return text(formatClock(x.Hour(), x.Minute(), x.Second(), x.Nanosecond()/1000)+formatOffset(off), nested), nil
		}
	case "INTERVAL":
		if x, ok := v.(duckdb.Interval); ok {
			return text(formatInterval(x), nested), nil
		}
	case "LIST", "ARRAY":
		if xs, ok := v.([]any); ok {
			parts := make([]string, len(xs))
			for i, e := range xs {
				s, err := format(e, t.elem, true)
				if err != nil {
					return "", err
				}
				parts[i] = s
			}
			return "[" + strings.Join(parts, ", ") + "]", nil
		}
	case "STRUCT":
		if m, ok := v.(map[string]any); ok {
			parts := make([]string, len(t.fields))
			for i, f := range t.fields {
				s, err := format(m[f.name], f.typ, true)
				if err != nil {
					return "", err
				}
				parts[i] = quoteAlways(f.name) + ": " + s
			}
			return "{" + strings.Join(parts, ", ") + "}", nil
		}
	case "MAP":
		var keys, values []any
		switch m := v.(type) {
		case duckdb.OrderedMap:
			keys, values = m.Keys(), m.Values()
		case *duckdb.OrderedMap:
			keys, values = m.Keys(), m.Values()
		default:
			return bad()
		}
		parts := make([]string, len(keys))
		for i := range keys {
			k, err := format(keys[i], t.key, true)
			if err != nil {
				return "", err
			}
			val, err := format(values[i], t.value, true)
			if err != nil {
				return "", err
			}
			parts[i] = k + "=" + val
		}
		return "{" + strings.Join(parts, ", ") + "}", nil
	case "UNION":
		if u, ok := v.(duckdb.Union); ok {
			for _, f := range t.fields {
				if f.name == u.Tag {
					// DuckDB does not quote a union's value, even when nested.
					return format(u.Value, f.typ, false)
				}
			}
		}
	}
	return bad()
}

// formatFloat renders like DuckDB: the fewest significant digits that
// identify the value (see shortestDigits), positional for decimal exponents
// -4..15 (always with a fraction), else d.ddde±XX.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	neg, digits, exp := shortestDigits(f, bits)
	sign := ""
	if neg {
		sign = "-"
	}
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es = "-"
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, es, abs(exp))
	}
	var intPart, frac string
	if exp >= 0 {
		if len(digits) > exp+1 {
			intPart, frac = digits[:exp+1], digits[exp+1:]
		} else {
			intPart = digits + strings.Repeat("0", exp+1-len(digits))
		}
	} else {
		intPart, frac = "0", strings.Repeat("0", -exp-1)+digits
	}
	if frac == "" {
		frac = "0"
	}
	return sign + intPart + "." + frac
}

// shortestDigits returns the significant digits and decimal exponent DuckDB
// prints for f (a float32 when bits is 32).
//
// For DOUBLE that is the shortest decimal that reads back as f, which is what
// Go's strconv produces. For FLOAT, DuckDB takes the shortest correctly rounded
// decimal that lies strictly inside f's rounding interval, stopping at the
// first length where the candidate is exactly on the interval's edge or f is
// exactly halfway between two candidates; it then prints f's exact value
// instead (336671.625f is "336671.625" where Go says "336671.62", 45602632f is
// "45602632.0" where Go says "4.560263e+07"). Both rules were checked against
// DuckDB 1.5.6 on 30000 random values of each type (TestFormatMatchesDuckDB
// keeps a sample).
func shortestDigits(f float64, bits int) (neg bool, digits string, exp int) {
	if bits == 32 {
		if s, ok := float32Digits(float32(f)); ok {
			return splitE(s)
		}
	}
	return splitE(strconv.FormatFloat(f, 'e', -1, 64))
}

// float32Digits applies the FLOAT rule above; ok is false when DuckDB prints
// the exact value.
func float32Digits(f float32) (string, bool) {
	x := float64(f)
	xr := new(big.Rat).SetFloat64(x)
	half := big.NewRat(1, 2)
	mid := func(other float32) *big.Rat {
		if math.IsInf(float64(other), 0) {
			return nil
		}
		return new(big.Rat).Mul(new(big.Rat).Add(new(big.Rat).SetFloat64(float64(other)), xr), half)
	}
	loMid := mid(math.Nextafter32(f, float32(math.Inf(-1))))
	hiMid := mid(math.Nextafter32(f, float32(math.Inf(1))))
	// Past the largest finite value the next step is as wide as the last one.
	if loMid == nil {
		loMid = new(big.Rat).Sub(xr, new(big.Rat).Sub(hiMid, xr))
	}
	if hiMid == nil {
		hiMid = new(big.Rat).Add(xr, new(big.Rat).Sub(xr, loMid))
	}
	for p := 1; p <= 9; p++ {
		s := strconv.FormatFloat(x, 'e', p-1, 64) // correctly rounded to p digits
		c, ok := new(big.Rat).SetString(s)
		if !ok {
			return "", false
		}
		lo, hi := c.Cmp(loMid), c.Cmp(hiMid)
		if lo < 0 || hi > 0 {
			continue
		}
		if lo == 0 || hi == 0 {
			return "", false // on the edge of the interval
		}
		_, _, e := splitE(s)
		unit := new(big.Rat)
		if k := e - p + 1; k >= 0 {
			unit.SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(k)), nil))
		} else {
			unit.SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-k)), nil))
		}
		dist := new(big.Rat).Sub(xr, c)
		if dist.Abs(dist).Cmp(unit.Mul(unit, half)) == 0 {
			return "", false // f is halfway between two p-digit decimals
		}
		return s, true
	}
	return "", false
}

// splitE splits a strconv 'e' format number into sign, significant digits
// (no trailing zeros) and decimal exponent.
func splitE(s string) (neg bool, digits string, exp int) {
	mant, e, _ := strings.Cut(s, "e")
	neg = strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	digits = strings.TrimRight(strings.Replace(mant, ".", "", 1), "0")
	if digits == "" {
		digits = "0"
	}
	exp, _ = strconv.Atoi(e)
	return neg, digits, exp
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func formatDecimal(v *big.Int, scale int) string {
	neg := v.Sign() < 0
	digits := new(big.Int).Abs(v).String()
	if scale > 0 {
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// formatBlob renders bytes as DuckDB does: printable ASCII as is, the rest as
// \xHH.
func formatBlob(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		if c >= 0x20 && c <= 0x7e && c != '\\' && c != '\'' && c != '"' {
			s.WriteByte(c)
			continue
		}
		fmt.Fprintf(&s, `\x%02X`, c)
	}
	return s.String()
}

func formatUUID(b []byte) string {
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// DuckDB's infinite dates and timestamps, as duckdb-go converts them.
var (
	dateInfinity    = time.Date(5881580, time.July, 11, 0, 0, 0, 0, time.UTC)
	dateNegInfinity = time.Date(-5877641, time.June, 24, 0, 0, 0, 0, time.UTC)
	tsInfinity      = time.UnixMicro(math.MaxInt64).UTC()
	tsNegInfinity   = time.UnixMicro(-math.MaxInt64).UTC()
)

func formatDate(t time.Time) string {
	switch {
	case t.Equal(dateInfinity):
		return "infinity"
	case t.Equal(dateNegInfinity):
		return "-infinity"
	}
	return formatYMD(t)
}

// formatYMD renders the date part; years before 1 are BC (year 0 is 1 BC).
func formatYMD(t time.Time) string {
	y := t.Year()
	if y <= 0 {
		return fmt.Sprintf("%04d-%02d-%02d (BC)", 1-y, int(t.Month()), t.Day())
	}
	return fmt.Sprintf("%04d-%02d-%02d", y, int(t.Month()), t.Day())
}

func formatTimestamp(t time.Time, nanos bool, suffix string) string {
	if !nanos {
		switch {
		case t.Equal(tsInfinity):
			return "infinity"
		case t.Equal(tsNegInfinity):
			return "-infinity"
		}
	}
	date := formatYMD(t)
	var clock string
	if nanos {
		clock = fmt.Sprintf("%02d:%02d:%02d", t.Hour(), t.Minute(), t.Second())
		if ns := t.Nanosecond(); ns != 0 {
			clock += strings.TrimRight(fmt.Sprintf(".%09d", ns), "0")
		}
	} else {
		clock = formatClock(t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/1000)
	}
	return date + " " + clock + suffix
}

// formatClock renders HH:MM:SS[.ffffff] with trailing zeros of the fraction cut.
func formatClock(h, m, s, micros int) string {
	out := fmt.Sprintf("%02d:%02d:%02d", h, m, s)
	if micros != 0 {
		out += strings.TrimRight(fmt.Sprintf(".%06d", micros), "0")
	}
	return out
}

// formatOffset renders a UTC offset in seconds as +HH[:MM[:SS]].
func formatOffset(sec int) string {
	sign := "+"
	if sec < 0 {
		sign, sec = "-", -sec
	}
	out := fmt.Sprintf("%s%02d", sign, sec/3600)
	if m, s := sec%3600/60, sec%60; m != 0 || s != 0 {
		out += fmt.Sprintf(":%02d", m)
		if s != 0 {
			out += fmt.Sprintf(":%02d", s)
		}
	}
	return out
}

func formatInterval(iv duckdb.Interval) string {
	var parts []string
	unit := func(n int64, name string) {
		if n == 0 {
			return
		}
		if n == 1 || n == -1 {
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
		} else {
			parts = append(parts, fmt.Sprintf("%d %ss", n, name))
		}
	}
	unit(int64(iv.Months/12), "year")
	unit(int64(iv.Months%12), "month")
	unit(int64(iv.Days), "day")
	if iv.Micros != 0 || len(parts) == 0 {
		micros := iv.Micros
		sign := ""
		if micros < 0 {
			sign = "-"
			if micros == math.MinInt64 {
				// not representable as a positive int64; DuckDB cannot produce it
				micros++
			}
			micros = -micros
		}
		h := micros / 3_600_000_000
		micros %= 3_600_000_000
		m := micros / 60_000_000
		micros %= 60_000_000
		s := micros / 1_000_000
		micros %= 1_000_000
		clock := fmt.Sprintf("%s%02d:%02d:%02d", sign, h, m, s)
		if micros != 0 {
			clock += strings.TrimRight(fmt.Sprintf(".%06d", micros), "0")
		}
		parts = append(parts, clock)
	}
	return strings.Join(parts, " ")
}

// text renders a value that DuckDB renders as text: as is at the top level,
// through quoteNested inside a LIST, STRUCT or MAP.
func text(s string, nested bool) string {
	if nested {
		return quoteNested(s)
	}
	return s
}

// quoteNested renders a string inside a LIST, STRUCT or MAP: as is, or quoted
// with ' (and \ and ' escaped by a backslash) when it is empty, is NULL in
// any case, starts or ends with white space, or holds one of "'(),:=[]{}.
func quoteNested(s string) string {
	if !needsQuotes(s) {
		return s
	}
	return quoteAlways(s)
}

func needsQuotes(s string) bool {
	if s == "" || strings.EqualFold(s, "null") {
		return true
	}
	if isSpace(s[0]) || isSpace(s[len(s)-1]) {
		return true
	}
	return strings.ContainsAny(s, `"'(),:=[]{}`)
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func quoteAlways(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s + "'"
}
