package duckdbtest

import (
	"fmt"
	"strconv"
	"strings"
)

// colType is a parsed DuckDB type name, as duckdb-go reports it through
// (*sql.ColumnType).DatabaseTypeName: "INTEGER", "DECIMAL(10,2)", "INTEGER[]",
// "VARCHAR[3]", `STRUCT("a" INTEGER, "b" VARCHAR[])`, "MAP(VARCHAR, INTEGER)",
// `UNION("k" INTEGER, "s" VARCHAR)`, "ENUM", "JSON", ...
type colType struct {
	name   string     // "INTEGER", "DECIMAL", "LIST", "ARRAY", "STRUCT", "MAP", "UNION", ...
	scale  int        // DECIMAL
	elem   *colType   // LIST, ARRAY
	key    *colType   // MAP
	value  *colType   // MAP
	fields []colField // STRUCT, UNION (members)
	text   string     // the type name as reported
}

type colField struct {
	name string
	typ  *colType
}

// parseType parses a DuckDB type name as duckdb-go prints it.
func parseType(s string) (*colType, error) {
	p := &typeParser{s: s}
	t, err := p.parse()
	if err != nil {
		return nil, fmt.Errorf("cannot parse type %q: %w", s, err)
	}
	p.skipSpace()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("cannot parse type %q: unexpected %q", s, p.s[p.i:])
	}
	return t, nil
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) skipSpace() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *typeParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *typeParser) expect(c byte) error {
	p.skipSpace()
	if p.peek() != c {
		return fmt.Errorf("expected %q at offset %d", c, p.i)
	}
	p.i++
	return nil
}

func (p *typeParser) word() string {
	p.skipSpace()
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

// fieldName reads a struct field or union member name: "..." with "" for a
// quote, or a bare word.
func (p *typeParser) fieldName() (string, error) {
	p.skipSpace()
	if p.peek() != '"' {
		w := p.word()
		if w == "" {
			return "", fmt.Errorf("expected a field name at offset %d", p.i)
		}
		return w, nil
	}
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		if c == '"' {
			if p.peek() == '"' {
				b.WriteByte('"')
				p.i++
				continue
			}
			return b.String(), nil
		}
		b.WriteByte(c)
	}
	return "", fmt.Errorf("unterminated field name")
}

func (p *typeParser) parse() (*colType, error) {
	start := p.i
	name := strings.ToUpper(p.word())
	if name == "" {
		return nil, fmt.Errorf("expected a type name at offset %d", p.i)
	}
	t := &colType{name: name}
	switch name {
	case "DECIMAL":
		if err := p.expect('('); err != nil {
			return nil, err
		}
		if _, err := strconv.Atoi(p.word()); err != nil {
			return nil, fmt.Errorf("bad DECIMAL width")
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
		scale, err := strconv.Atoi(p.word())
		if err != nil {
			return nil, fmt.Errorf("bad DECIMAL scale")
		}
		t.scale = scale
		if err := p.expect(')'); err != nil {
			return nil, err
		}
	case "STRUCT", "UNION":
		if err := p.expect('('); err != nil {
			return nil, err
		}
		for {
			fn, err := p.fieldName()
			if err != nil {
				return nil, err
			}
			ft, err := p.parse()
			if err != nil {
				return nil, err
			}
			t.fields = append(t.fields, colField{name: fn, typ: ft})
			p.skipSpace()
			if p.peek() == ',' {
				p.i++
				continue
			}
			if err := p.expect(')'); err != nil {
				return nil, err
			}
			break
		}
	case "MAP":
		if err := p.expect('('); err != nil {
			return nil, err
		}
		k, err := p.parse()
		if err != nil {
			return nil, err
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
		v, err := p.parse()
		if err != nil {
			return nil, err
		}
		if err := p.expect(')'); err != nil {
			return nil, err
		}
		t.key, t.value = k, v
	}
	for {
		p.skipSpace()
		if p.peek() != '[' {
			break
		}
		p.i++
		list := &colType{name: "LIST", elem: t}
		if n := p.word(); n != "" {
			if _, err := strconv.Atoi(n); err != nil {
				return nil, fmt.Errorf("bad array size %q", n)
			}
			list.name = "ARRAY"
		}
		if err := p.expect(']'); err != nil {
			return nil, err
		}
		t = list
	}
	t.text = p.s[start:p.i]
	return t, nil
}

// numeric type names, for comparing results.
func (t *colType) isFloat() bool { return t.name == "FLOAT" || t.name == "DOUBLE" }

func (t *colType) isExactNumeric() bool {
	switch t.name {
	case "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
		"UBIGINT", "UHUGEINT", "DECIMAL", "BIGNUM":
		return true
	}
	return false
}
