package sst

import (
	"bytes"
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moraine-go/moraine/core/slate/internal/base"
)

var update = flag.Bool("update", false, "rewrite testdata golden files and fuzz seeds")

func goldenTables() []struct {
	name string
	opts Options
	rows []base.Row
} {
	put := func(k, v string, seq uint64) base.Row {
		return base.Row{Key: []byte(k), Value: []byte(v), Kind: base.KindPut, Seq: seq}
	}
	del := func(k string, seq uint64) base.Row { return base.Row{Key: []byte(k), Kind: base.KindDelete, Seq: seq} }
	return []struct {
		name string
		opts Options
		rows []base.Row
	}{
		{"sorted", Options{Kind: KindSorted, BlockSize: 48}, []base.Row{
			put("", "empty key", 9),
			del("\x00\xff", 4),
			put("apple", "red", 3),
			del("apple", 2),
			put("apricot", "", 5),
			put("banana", "yellow", 1),
		}},
		{"wal", Options{Kind: KindWAL, BlockSize: 32}, []base.Row{
			put("b", "1", 10),
			del("a", 10),
			put("c", "three", 11),
			put("a", "4", 12),
		}},
	}
}

// dump renders a table as labelled hex, one section at a time, so a format
// change shows up in review as a readable diff.
func dump(t testing.TB, data []byte) string {
	tbl, err := OpenBytes(data)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parseFooter(data[len(data)-footerSize:], int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	in := tbl.Info()
	fmt.Fprintf(&b, "# %s table: %d rows, %d blocks, %d bytes, keys [%q, %q], seqs [%d, %d], filter %v\n",
		in.Kind, in.Rows, in.Blocks, in.Size, in.FirstKey, in.LastKey, in.MinSeq, in.MaxSeq, in.HasFilter)
	section := func(name string, off, length int64) {
		fmt.Fprintf(&b, "%s (offset %d, length %d)\n", name, off, length)
		for i := off; i < off+length; i += 16 {
			end := min(i+16, off+length)
			fmt.Fprintf(&b, "  %06x  %s\n", i, hexSpaced(data[i:end]))
		}
	}
	for i, e := range tbl.index {
		section(fmt.Sprintf("block %d: %d rows", i, e.rows), e.off, e.length)
	}
	section("index", f.index.off, f.index.length)
	if f.filter.length > 0 {
		section("filter", f.filter.off, f.filter.length)
	}
	section("info", f.info.off, f.info.length)
	section("footer", int64(len(data)-footerSize), footerSize)
	return b.String()
}

func hexSpaced(b []byte) string {
	s := hex.EncodeToString(b)
	var out strings.Builder
	for i := 0; i < len(s); i += 2 {
		if i > 0 {
			out.WriteByte(' ')
		}
		out.WriteString(s[i : i+2])
	}
	return out.String()
}

// undump reads the bytes back from a dump.
func undump(t testing.TB, s string) []byte {
	var data []byte
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(line, "  ") {
			continue
		}
		fields := strings.Fields(line)
		b, err := hex.DecodeString(strings.Join(fields[1:], ""))
		if err != nil {
			t.Fatalf("bad golden line %q: %v", line, err)
		}
		data = append(data, b...)
	}
	return data
}

func TestGoldenTables(t *testing.T) {
	for _, g := range goldenTables() {
		t.Run(g.name, func(t *testing.T) {
			path := filepath.Join("testdata", g.name+".sst.txt")
			data, _ := build(t, g.opts, g.rows)
			got := "# Golden " + g.name + " table (format version 1). Regenerate: go test -run TestGoldenTables -update\n" + dump(t, data)
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("encoding changed (if intended, bump FormatVersion or regenerate with -update):\n--- got\n%s\n--- want\n%s", got, want)
			}
			// The pinned bytes still read back as the rows.
			pinned := undump(t, string(want))
			if !bytes.Equal(pinned, data) {
				t.Errorf("pinned bytes differ from the builder's")
			}
			tbl, err := OpenBytes(pinned)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := tbl.Rows(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, "pinned rows", rows, g.rows)
		})
	}
}
