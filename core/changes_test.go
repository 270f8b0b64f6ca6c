package core

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestChangesRoundTripThroughDuckLakeGrammar(t *testing.T) {
	cases := []string{
		`created_schema:"main"`,
		`created_table:"main"."t",inserted_into_table:3`,
		`created_table:"we""ird, name"."t.x",dropped_table:7,altered_table:7`,
		`created_view:"s"."v",dropped_view:12,deleted_from_table:4,compacted_table:4`,
		``,
	}
	for _, s := range cases {
		cs, err := parseChanges(s)
		if err != nil {
			t.Fatalf("parse %q: %v", s, err)
		}
		if got := formatChanges(cs); got != s {
			t.Fatalf("round trip %q -> %q", s, got)
		}
	}
	cs, _ := parseChanges(`created_table:"we""ird, name"."t.x"`)
	if len(cs) != 1 || cs[0].Name[0] != `we"ird, name` || cs[0].Name[1] != "t.x" {
		t.Fatalf("quoted names parsed as %+v", cs)
	}
	for _, bad := range []string{`nocolon`, `created_schema:"unterminated`, `created_schema:"a"x`} {
		if _, err := parseChanges(bad); err == nil {
			t.Fatalf("parse %q succeeded", bad)
		}
	}
}

func TestClassifyLostRaces(t *testing.T) {
	names := func(id SchemaID) (string, bool) {
		switch id {
		case 0:
			return "main", true
		case 9:
			return "sales", true
		}
		return "", false
	}
	cs := func(s string, files ...DataFileID) changeSet {
		ch, err := parseChanges(s)
		if err != nil {
			t.Fatal(err)
		}
		return changeSet{Snapshot: 42, Changes: ch, DeletedFiles: files}
	}
	cases := []struct {
		name         string
		mine, theirs changeSet
		conflict     bool
	}{
		{"append/append on one table is benign", cs("inserted_into_table:1"), cs("inserted_into_table:1"), false},
		{"appends to different tables are benign", cs("inserted_into_table:1"), cs("inserted_into_table:2"), false},
		{"insert vs drop conflicts", cs("inserted_into_table:1"), cs("dropped_table:1"), true},
		{"inlined inserts into one table are benign", cs("inlined_insert:1"), cs("inlined_insert:1"), false},
		{"an inlined insert beside a data-file insert is benign", cs("inlined_insert:1"), cs("inserted_into_table:1"), false},
		{"an inlined insert vs a drop conflicts", cs("inlined_insert:1"), cs("dropped_table:1"), true},
		{"an inlined insert vs an alter conflicts", cs("altered_table:1"), cs("inlined_insert:1"), true},
		{"an inlined insert vs a flush is benign", cs("inlined_insert:1"), cs("flushed_inlined:1"), false},
		{"inlined deletes on one table conflict", cs("inlined_delete:1"), cs("inlined_delete:1"), true},
		{"inlined deletes on two tables are benign", cs("inlined_delete:1"), cs("inlined_delete:2"), false},
		{"an inlined delete vs a flush conflicts", cs("flushed_inlined:1"), cs("inlined_delete:1"), true},
		{"an inlined delete vs an inlined insert is benign", cs("inlined_delete:1"), cs("inlined_insert:1"), false},
		{"drop vs insert conflicts", cs("dropped_table:1"), cs("inserted_into_table:1"), true},
		{"insert vs alter conflicts", cs("inserted_into_table:1"), cs("altered_table:1"), true},
		{"insert vs delete conflicts", cs("inserted_into_table:1"), cs("deleted_from_table:1", 5), true},
		{"delete/delete on the same file conflicts", cs("deleted_from_table:1", 5), cs("deleted_from_table:1", 5, 6), true},
		{"delete/delete on disjoint files is benign", cs("deleted_from_table:1", 5), cs("deleted_from_table:1", 6), false},
		{"an untargeted delete conflicts with any delete", cs("deleted_from_table:1"), cs("deleted_from_table:1", 6), true},
		{"delete vs compaction conflicts", cs("deleted_from_table:1", 5), cs("compacted_table:1"), true},
		{"merge counts as compaction", cs("deleted_from_table:1", 5), cs("merge_adjacent:1"), true},
		{"alter/alter conflicts", cs("altered_table:1"), cs("altered_table:1"), true},
		{"alter of another table is benign", cs("altered_table:1"), cs("altered_table:2"), false},
		{"both change the schema list", cs(`created_schema:"a"`), cs(`created_schema:"b"`), true},
		{"schema create vs schema drop", cs(`created_schema:"a"`), cs("dropped_schema:9"), true},
		{"table create vs table create elsewhere is benign", cs(`created_table:"main"."a"`), cs(`created_table:"main"."b"`), false},
		{"creating a table in a schema the other dropped", cs(`created_table:"sales"."t"`), cs("dropped_schema:9"), true},
		{"creating a table in another schema than the dropped one", cs(`created_table:"main"."t"`), cs("dropped_schema:9"), false},
		{"unknown change kinds always conflict", cs("inserted_into_table:1"), cs("renamed_universe:1"), true},
		{"view alter/alter conflicts", cs("altered_view:3"), cs("dropped_view:3"), true},
		{"flush vs insert is benign", cs("inserted_into_table:1"), cs("flushed_inlined:1"), false},
		{"flush vs delete conflicts", cs("deleted_from_table:1"), cs("flushed_inlined:1"), true},
		{"stats-only commit (no changes) is benign", cs(""), cs("altered_table:1"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reason := classify(tc.mine, tc.theirs, names)
			if (reason != "") != tc.conflict {
				t.Fatalf("classify = %q, want conflict=%v", reason, tc.conflict)
			}
			if strings.Contains(strings.ToLower(reason), "conflict") {
				t.Fatalf("the reason itself must not say conflict (only the CommitConflict kind does): %q", reason)
			}
		})
	}
}

// Every change kind DuckLake 0.3 writes into changes_made is known and
// classified: the kinds are read from DuckLake's own output, the metadata
// SQL it sent for 42 user actions (../shared/ducklake/
// metadata-sql-contract.txt, captured with DuckDB's query log). An unknown
// kind makes every lost race a hard conflict ("recorded an unknown
// change"), where DuckLake on its own catalogs would retry.
func TestDuckLakeChangeKindsAreKnown(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "shared", "ducklake", "metadata-sql-contract.txt"))
	if err != nil {
		t.Fatalf("DuckLake's metadata SQL contract (../shared beside the repository): %v", err)
	}
	// INSERT INTO ... ducklake_snapshot_changes VALUES (<id>, '<changes_made>', ...
	re := regexp.MustCompile(`ducklake_snapshot_changes VALUES \(\d+, '((?:[^']|'')*)'`)
	kinds := map[string]bool{}
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		chs, err := parseChanges(strings.ReplaceAll(m[1], "''", "'"))
		if err != nil {
			t.Errorf("DuckLake wrote changes_made %q, which does not parse: %v", m[1], err)
			continue
		}
		for _, ch := range chs {
			kinds[ch.Kind] = true
		}
	}
	// The contract covers inserts (data files and inlined rows), deletes
	// (both), schema changes, views, compaction and flushes.
	for _, want := range []string{chCreatedSchema, chCreatedTable, chInsertedInto, chInlinedInsert, chInlinedDelete, chDeletedFrom, chFlushedInlined} {
		if !kinds[want] {
			t.Errorf("DuckLake's output holds no %q: the contract is not the one this test reads", want)
		}
	}
	for k := range kinds {
		if !knownChange[k] {
			t.Errorf("DuckLake writes change kind %q, which moraine does not know", k)
		}
		// Classified: a race between two entries of the kind on one table
		// is decided by the rules, not refused as unknown.
		one := changeSet{Snapshot: 1, Changes: []change{{Kind: k, ID: 7}}}
		if strings.Contains(classify(one, one, func(SchemaID) (string, bool) { return "main", true }), "unknown") {
			t.Errorf("change kind %q is classified as unknown", k)
		}
	}
}
