package core_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

var (
	schemaPool = []string{"main", "s1", "s2", "s3"}
	relPool    = []string{"t1", "t2", "t3", "v1", "v2", "x"} // tables and views share names
)

func pickRandom[T any](r *rand.Rand, s []T) (T, bool) {
	var zero T
	if len(s) == 0 {
		return zero, false
	}
	return s[r.IntN(len(s))], true
}

// freeRel picks a pool name no table or view of schema uses.
func freeRel(r *rand.Rand, s *core.CatalogView, schema string) (string, bool) {
	var free []string
	for _, n := range relPool {
		_, t := s.TableByName(schema, n)
		_, v := s.ViewByName(schema, n)
		if !t && !v {
			free = append(free, n)
		}
	}
	return pickRandom(r, free)
}

type fileRef struct {
	table core.TableID
	file  core.DataFileID
}

// randomOp applies one valid random change to tx and names it ("" when
// the drawn change had nothing to apply to).
func randomOp(r *rand.Rand, tx *core.Transaction) (string, error) {
	s := tx.View()
	schemas := s.Schemas()
	tables := s.AllTables()
	views := s.AllViews()
	var files []core.DataFile
	var dels []core.DeleteFile
	for _, t := range tables {
		files = append(files, s.DataFiles(t.ID)...)
		dels = append(dels, s.DeleteFiles(t.ID)...)
	}
	schemaName := func(id core.SchemaID) string { sc, _ := s.Schema(id); return sc.Name }
	switch r.IntN(15) {
	case 0:
		var free []string
		for _, n := range schemaPool {
			if _, ok := s.SchemaByName(n); !ok {
				free = append(free, n)
			}
		}
		if n, ok := pickRandom(r, free); ok {
			_, err := tx.CreateSchema(n)
			return "create schema", err
		}
	case 1:
		if sc, ok := pickRandom(r, schemas); ok && sc.Name != "main" {
			return "drop schema", tx.DropSchema(sc.ID, true)
		}
	case 2, 3:
		if sc, ok := pickRandom(r, schemas); ok {
			if n, ok := freeRel(r, s, sc.Name); ok {
				_, err := tx.CreateTable(sc.ID, n, cols("a", "b"))
				return "create table", err
			}
		}
	case 4:
		if t, ok := pickRandom(r, tables); ok {
			if n, ok := freeRel(r, s, schemaName(t.SchemaID)); ok {
				return "rename table", tx.RenameTable(t.ID, n)
			}
		}
	case 5:
		if t, ok := pickRandom(r, tables); ok {
			return "drop table", tx.DropTable(t.ID)
		}
	case 6:
		if sc, ok := pickRandom(r, schemas); ok {
			if n, ok := freeRel(r, s, sc.Name); ok {
				_, err := tx.CreateView(sc.ID, n, "SELECT 1", "", "")
				return "create view", err
			}
		}
	case 7:
		if v, ok := pickRandom(r, views); ok {
			if n, ok := freeRel(r, s, schemaName(v.SchemaID)); ok {
				return "rename view", tx.AlterView(v.ID, n, "")
			}
		}
	case 8:
		if v, ok := pickRandom(r, views); ok {
			return "drop view", tx.DropView(v.ID)
		}
	case 9, 10:
		if t, ok := pickRandom(r, tables); ok {
			_, err := tx.RegisterDataFile(testFileDef(t.ID, fmt.Sprintf("f%d.parquet", r.IntN(1e6)), 10))
			return "register data file", err
		}
	case 11, 12:
		if f, ok := pickRandom(r, files); ok {
			_, err := tx.RegisterDeleteFile(core.DeleteFileDef{TableID: f.TableID, DataFileID: f.ID, Path: fmt.Sprintf("d%d.parquet", r.IntN(1e6)), DeleteCount: 1})
			return "register delete file", err
		}
	case 13:
		if d, ok := pickRandom(r, dels); ok {
			return "expire delete file", tx.ExpireDeleteFile(d.TableID, d.ID)
		}
	case 14:
		if f, ok := pickRandom(r, files); ok {
			return "expire data file", tx.ExpireDataFile(f.TableID, f.ID)
		}
	}
	return "", nil
}

// checkLookups compares every lookup with the handle's materialized head:
// every pool name (live, renamed away, dropped or never used) and every
// (table, data file) pair ever seen.
func checkLookups(t *testing.T, what string, c *core.Catalog, seen map[fileRef]bool) {
	t.Helper()
	s := snap(t, c)
	for _, sn := range schemaPool {
		got, ok, err := c.LookupSchema(bg, sn)
		want, wok := s.SchemaByName(sn)
		if err != nil || ok != wok || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s at %d: LookupSchema(%q) = %+v %v %v, materialized %+v %v", what, s.ID(), sn, got, ok, err, want, wok)
		}
		for _, rn := range relPool {
			gt, ok, err := c.LookupTable(bg, sn, rn)
			wt, wok := s.TableByName(sn, rn)
			if err != nil || ok != wok || !reflect.DeepEqual(gt, wt) {
				t.Fatalf("%s at %d: LookupTable(%q, %q) = %+v %v %v, materialized %+v %v", what, s.ID(), sn, rn, gt, ok, err, wt, wok)
			}
			gv, ok, err := c.LookupView(bg, sn, rn)
			wv, wok := s.ViewByName(sn, rn)
			if err != nil || ok != wok || !reflect.DeepEqual(gv, wv) {
				t.Fatalf("%s at %d: LookupView(%q, %q) = %+v %v %v, materialized %+v %v", what, s.ID(), sn, rn, gv, ok, err, wv, wok)
			}
		}
	}
	for _, tb := range s.AllTables() {
		for _, f := range s.DataFiles(tb.ID) {
			seen[fileRef{tb.ID, f.ID}] = true
		}
	}
	for ref := range seen {
		got, err := c.DeleteFilesOf(bg, ref.table, ref.file)
		want := s.DeleteFilesOf(ref.table, ref.file)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s at %d: DeleteFilesOf(%d, %d) = %+v %v, materialized %+v", what, s.ID(), ref.table, ref.file, got, err, want)
		}
	}
}

// TestLookupsAgreeWithMaterialization is a property test: across random
// sequences of creates, renames and drops of schemas, tables and views and
// registrations and expiries of data and delete files, every name lookup
// and every delete-file lookup agrees with the materialized head, on a
// read-write and a read-only handle, at every format (the index paths at
// 11 and 12, the fallbacks below), and the indexes end exactly as the head
// implies.
func TestLookupsAgreeWithMaterialization(t *testing.T) {
	commits, seeds := 20, 2
	if testing.Short() {
		commits, seeds = 8, 1
	}
	cases := []struct {
		name   string
		format uint64
		setup  func(t *testing.T) objstore.Store
	}{
		{"new catalog at 12", 12, func(t *testing.T) objstore.Store {
			s := objstore.NewMemory(0)
			c := openRW(t, s)
			c.Close(bg)
			return s
		}},
		{"legacy 9 migrated to 12", 12, func(t *testing.T) objstore.Store {
			s := legacyLake(t, 9, nil)
			if _, err := core.Migrate(bg, s, core.MigrateOptions{}); err != nil {
				t.Fatal(err)
			}
			return s
		}},
		{"legacy 11", 11, func(t *testing.T) objstore.Store { return legacyLake(t, 11, nil) }},
		{"legacy 9", 9, func(t *testing.T) objstore.Store { return legacyLake(t, 9, nil) }},
	}
	applied := map[string]int{}
	for ci, tc := range cases {
		for seed := 1; seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed=%d", tc.name, seed), func(t *testing.T) {
				store := tc.setup(t)
				rw := openRW(t, store)
				ro := openRO(t, store, core.CatalogOptions{})
				r := rand.New(rand.NewPCG(uint64(seed), uint64(ci)))
				seen := map[fileRef]bool{{table: 999999, file: 999999}: true}
				for i := 0; i < commits; i++ {
					ops := 1 + r.IntN(3)
					opSeed := r.Uint64()
					var names []string
					commit(t, rw, func(tx *core.Transaction) error {
						rr := rand.New(rand.NewPCG(opSeed, 0)) // the same ops if the closure re-runs
						names = names[:0]
						for k := 0; k < ops; k++ {
							name, err := randomOp(rr, tx)
							if err != nil {
								return fmt.Errorf("%s: %w", name, err)
							}
							names = append(names, name)
						}
						return nil
					})
					for _, n := range names {
						applied[n]++
					}
					if err := ro.Refresh(bg); err != nil {
						t.Fatal(err)
					}
					checkLookups(t, "read-write", rw, seen)
					checkLookups(t, "read-only", ro, seen)
				}
				wantIndexes(t, "after the sequence", store, tc.format)
			})
		}
	}
	for _, op := range []string{"create schema", "drop schema", "create table", "rename table", "drop table", "create view",
		"rename view", "drop view", "register data file", "register delete file", "expire delete file", "expire data file"} {
		if applied[op] == 0 {
			t.Errorf("the random sequences never applied %q (applied: %v)", op, applied)
		}
	}
}

// TestLookupsReadTheIndexes: at 11 and 12 lookups answer from the index
// keys alone (with them removed, they find nothing the materialized head
// still has); below, they materialize.
func TestLookupsReadTheIndexes(t *testing.T) {
	for _, tc := range []struct {
		format              uint64
		byIndex, delByIndex bool
	}{{9, false, false}, {11, true, false}, {12, true, true}} {
		t.Run(fmt.Sprint("format ", tc.format), func(t *testing.T) {
			var store objstore.Store
			if tc.format == 12 {
				store = legacyLake(t, 11, nil)
				if _, err := core.Migrate(bg, store, core.MigrateOptions{}); err != nil {
					t.Fatal(err)
				}
			} else {
				store = legacyLake(t, tc.format, nil)
			}
			if err := core.DropIndexesForTest(bg, store, ""); err != nil {
				t.Fatal(err)
			}
			for _, c := range []*core.Catalog{openRW(t, store), openRO(t, store, core.CatalogOptions{})} {
				s := snap(t, c)
				orders, ok := s.TableByName("sales", "orders")
				if !ok {
					t.Fatal("no sales.orders")
				}
				_, found, err := c.LookupTable(bg, "sales", "orders")
				if err != nil || found == tc.byIndex {
					t.Fatalf("LookupTable with the directory removed: found=%v err=%v (index path %v)", found, err, tc.byIndex)
				}
				_, found, err = c.LookupView(bg, "sales", "large_orders")
				if err != nil || found == tc.byIndex {
					t.Fatalf("LookupView with the directory removed: found=%v err=%v", found, err)
				}
				f := s.DataFiles(orders.ID)[0]
				got, err := c.DeleteFilesOf(bg, orders.ID, f.ID)
				if err != nil || (len(got) == 0) != tc.delByIndex || len(s.DeleteFilesOf(orders.ID, f.ID)) == 0 {
					t.Fatalf("DeleteFilesOf with the lookup removed: %+v %v (index path %v)", got, err, tc.delByIndex)
				}
			}
		})
	}
}
