package storage

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// duckLakeSpec is the DuckLake catalog spec the package's release ships
// (duckdb-versions.txt's last column).
func duckLakeSpec(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(), "duckdb-versions.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 0 && fields[0] == version {
			return fields[len(fields)-1]
		}
	}
	t.Fatalf("duckdb-versions.txt has no line for %s", version)
	return ""
}

// A new lake through the DuckLake this release ships, in both hosts and
// both builds: DuckLake creates its catalog (its spec's tables and version:
// 1.0's on v1.5.5), inlined and Parquet inserts land, and a fresh process
// reads them, time travels, and lists the files; on a 1.0 release also a
// macro (created, used, read back by the fresh process) and sort keys.
func TestDuckLakeNewLakeOfTheReleasesDuckLake(t *testing.T) {
	spec := duckLakeSpec(t)
	is10 := spec == "1.0"
	for _, b := range []struct{ name, ext string }{{"single-writer", extension()}, {"commit-log", commitLogExtension()}} {
		for _, h := range hosts() {
			t.Run(b.name+"/"+h.name, func(t *testing.T) {
				dir := t.TempDir()
				run := func(script string) string {
					t.Helper()
					head := "LOAD " + sqlString(ducklakeExtension()) + ";\nLOAD " + sqlString(b.ext) + ";\n" +
						"ATTACH " + sqlString("ducklake:moraine:"+filepath.Join(dir, "lake")) + " AS lake (DATA_PATH " + sqlString(filepath.Join(dir, "data")+"/") + ");\n"
					cmd := exec.Command(h.shell, "--setting", "extension_directory="+filepath.Join(dir, "ext"), "--sql")
					cmd.Stdin = strings.NewReader(head + script)
					var stderr strings.Builder
					cmd.Stderr = &stderr
					out, err := cmd.Output()
					if err != nil {
						t.Fatalf("%v\n%s%s", err, out, stderr.String())
					}
					return string(out)
				}
				write := `CREATE TABLE lake.t (i INTEGER, s VARCHAR);
INSERT INTO lake.t VALUES (1, 'a'), (2, 'b');
INSERT INTO lake.t SELECT i, 'x' || i FROM range(100, 200) r(i);
SELECT value FROM __ducklake_metadata_lake.ducklake_metadata WHERE key = 'version';
`
				want := "value\n" + spec + "\n"
				if is10 {
					// An inlined row updated under its own row id, rows
					// of a Parquet file deleted into
					// ducklake_inlined_delete_<table>.
					write += `CREATE MACRO lake.add_one(a, b := 1) AS a + b;
ALTER TABLE lake.t SET SORTED BY (i DESC);
INSERT INTO lake.t SELECT i, 'y' FROM range(300, 310) r(i);
SELECT lake.add_one(41) AS v;
SELECT macro_name FROM __ducklake_metadata_lake.ducklake_macro;
UPDATE lake.t SET s = 'B' WHERE i = 2;
DELETE FROM lake.t WHERE i = 150;
SELECT s FROM lake.t WHERE i = 2;
SELECT count(*) AS n FROM lake.t;
`
					want += "v\n42\nmacro_name\nadd_one\ns\nB\nn\n111\n"
				}
				if got := run(write); got != want {
					t.Fatalf("writing the lake:\n%s\nwant\n%s", got, want)
				}
				read := `SELECT count(*) AS n, sum(i) AS total FROM lake.t;
SELECT count(*) AS n FROM lake.t AT (VERSION => 2);
SELECT count(*) > 0 AS files FROM ducklake_list_files('lake', 't');
`
				want = "n|total\n102|14953\nn\n2\nfiles\ntrue\n"
				if is10 {
					read += `SELECT lake.add_one(1, 10) AS v;
SELECT sort_direction FROM __ducklake_metadata_lake.ducklake_sort_expression;
SELECT s FROM lake.t WHERE i = 2;
SELECT count(*) AS n FROM __ducklake_metadata_lake.ducklake_inlined_delete_1;
CALL ducklake_flush_inlined_data('lake');
SELECT count(*) AS n, sum(i) AS total FROM lake.t;
SELECT count(*) AS n FROM __ducklake_metadata_lake.ducklake_inlined_delete_1;
`
					// (13 rows flushed, as DuckLake says on its own
					// DuckDB-file catalog for the same statements)
					want = "n|total\n111|17848\nn\n2\nfiles\ntrue\nv\n11\nsort_direction\nDESC\ns\nB\nn\n1\n" +
						"schema_name|table_name|rows_flushed\nmain|t|13\nn|total\n111|17848\nn\n0\n"
				}
				if got := run(read); got != want {
					t.Fatalf("reading the lake in a fresh process:\n%s\nwant\n%s", got, want)
				}
			})
		}
	}
}

// A lake kept inside DuckLake's DATA_PATH (the store's objects beside the
// Parquet files): DuckLake 1.0's orphan cleanup removes only Parquet
// files no snapshot references, never moraine's objects, and the lake
// reads the same afterwards in a fresh process. DuckLake 0.3's removes
// every file under DATA_PATH it does not list (measured: all 12 objects of
// such a lake), so under 0.3 moraine refuses to create a lake there,
// naming both paths.
func TestOrphanCleanupLeavesALakeInTheDataPath(t *testing.T) {
	h := hosts()[1] // DuckDB's official libduckdb.so
	dir := t.TempDir()
	script := func(script string) (string, error) {
		t.Helper()
		head := "LOAD " + sqlString(ducklakeExtension()) + ";\nLOAD " + sqlString(extension()) + ";\n" +
			"ATTACH " + sqlString("ducklake:moraine:"+filepath.Join(dir, "lake")) + " AS lake (DATA_PATH " + sqlString(dir+"/") + ");\n"
		cmd := exec.Command(h.shell, "--setting", "extension_directory="+filepath.Join(dir, "ext"), "--sql")
		cmd.Stdin = strings.NewReader(head + script)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	run := func(sql string) string {
		t.Helper()
		out, err := script(sql)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return out
	}
	if duckLakeSpec(t) == "0.3" {
		out, err := script("CREATE TABLE lake.t (i INTEGER);\n")
		if err == nil || !strings.Contains(out, "lie inside its DATA_PATH") || !strings.Contains(out, filepath.Join(dir, "lake")) {
			t.Fatalf("a new lake inside DATA_PATH under DuckLake 0.3: %v\n%s", err, out)
		}
		return
	}
	objects := func() int {
		t.Helper()
		n := 0
		err := filepath.WalkDir(filepath.Join(dir, "lake"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	run(`CREATE TABLE lake.t AS SELECT i FROM range(1000) r(i);
DELETE FROM lake.t WHERE i < 500;
SELECT count(*) AS n FROM ducklake_rewrite_data_files('lake', 't', delete_threshold => 0);
SELECT count(*) AS n FROM ducklake_expire_snapshots('lake', older_than => now());
SELECT count(*) AS n FROM ducklake_cleanup_old_files('lake', cleanup_all => true);
`)
	before := objects()
	if before == 0 {
		t.Fatal("the lake holds no objects")
	}
	got := run(`SELECT count(*) AS n FROM ducklake_delete_orphaned_files('lake', cleanup_all => true);
SELECT count(*) AS n, sum(i) AS total FROM lake.t;
`)
	if after := objects(); after < before {
		t.Fatalf("the orphan cleanup removed %d of the lake's %d objects", before-after, before)
	}
	if want := "n\n0\nn|total\n500|374750\n"; got != want {
		t.Fatalf("after the orphan cleanup:\n%s\nwant\n%s", got, want)
	}
	if got := run("SELECT count(*) AS n, sum(i) AS total FROM lake.t;\n"); got != "n|total\n500|374750\n" {
		t.Fatalf("a fresh process reads:\n%s", got)
	}
}

// migrationBuild is one build of the extension, in every release.
type migrationBuild struct{ name, dir, file string }

func migrationBuilds() []migrationBuild {
	return []migrationBuild{
		{"single-writer", dir, "moraine.duckdb_extension"},
		{"commit-log", commitLogDir, "moraine_commitlog.duckdb_extension"},
	}
}

// lakeCommand is DuckDB v's official shell running sql on the lake in lakeDir
// (DuckLake and build b of that release loaded, the lake attached as lake
// with attachOpts after its DATA_PATH).
func lakeCommand(b migrationBuild, v, lakeDir, attachOpts, sql string) *exec.Cmd {
	head := "LOAD " + sqlString(filepath.Join(repoRoot(), "..", "shared", "ducklake", v, "ducklake.duckdb_extension")) + ";\n" +
		"LOAD " + sqlString(filepath.Join(b.dir, v, b.file)) + ";\n" +
		"ATTACH " + sqlString("ducklake:moraine:"+filepath.Join(lakeDir, "lake")) + " AS lake (DATA_PATH " + sqlString(filepath.Join(lakeDir, "data")+"/") + attachOpts + ");\n"
	cmd := exec.Command(filepath.Join(dir, "duckdb-official-"+v), "--setting", "extension_directory="+filepath.Join(lakeDir, "ext"), "--sql")
	cmd.Stdin = strings.NewReader(head + sql)
	return cmd
}

// lakeRun runs lakeCommand and fails the test on an error.
func lakeRun(t *testing.T, b migrationBuild, v, lakeDir, attachOpts, sql string) string {
	t.Helper()
	out, err := lakeCommand(b, v, lakeDir, attachOpts, sql).CombinedOutput()
	if err != nil {
		t.Fatalf("DuckDB %s: %v\n%s", v, err, out)
	}
	return string(out)
}

const (
	migrateFrom = "v1.4.4" // DuckLake 0.3
	migrateTo   = "v1.5.5" // DuckLake 1.0
)

// write03Lake writes a DuckLake 0.3 lake in lakeDir with DuckDB v1.4.4
// (inlined rows, Parquet files, a delete file, a renamed column, several
// schema versions) and returns what reading it at each snapshot gives,
// and the reads that give it.
func write03Lake(t *testing.T, b migrationBuild, lakeDir string) (reads, before string) {
	t.Helper()
	lakeRun(t, b, migrateFrom, lakeDir, ", DATA_INLINING_ROW_LIMIT 10", `CREATE TABLE lake.t (id INTEGER, s VARCHAR);
INSERT INTO lake.t VALUES (1, 'a'), (2, 'b');
INSERT INTO lake.t SELECT i, 'x' || i FROM range(100, 200) r(i);
DELETE FROM lake.t WHERE id = 150;
ALTER TABLE lake.t RENAME COLUMN s TO name;
INSERT INTO lake.t VALUES (3, 'c');
DELETE FROM lake.t WHERE id = 2;
`)
	var r strings.Builder
	for v := 1; v <= 7; v++ {
		fmt.Fprintf(&r, "SELECT %d AS v, count(*) AS n, sum(id) AS total, string_agg(CASE WHEN id < 10 THEN id::VARCHAR END, ',' ORDER BY id) AS small FROM lake.t AT (VERSION => %d);\n", v, v)
	}
	r.WriteString("SELECT * FROM lake.t WHERE id < 10 ORDER BY id;\n")
	before = lakeRun(t, b, migrateFrom, lakeDir, "", r.String())
	if !strings.Contains(before, "7|101|") {
		t.Fatalf("the 0.3 lake reads:\n%s", before)
	}
	return r.String(), before
}

// A lake DuckLake 0.3 wrote, attached by DuckLake 1.0 (DuckDB v1.5.5) with
// AUTOMATIC_MIGRATION, is migrated: the lake records version 1.0, every
// snapshot reads what it read before (time travel, inlined rows), v1.5.5
// writes to it, and v1.4.4 is then refused naming the version, in both
// builds. It uses both releases' builds whatever MORAINE_DUCKDB_VERSION
// says.
func TestDuckLakeMigratesA03Lake(t *testing.T) {
	for _, b := range migrationBuilds() {
		t.Run(b.name, func(t *testing.T) {
			tmp := t.TempDir()
			reads, before := write03Lake(t, b, tmp)
			if out, err := lakeCommand(b, migrateTo, tmp, "", "SELECT 1;\n").CombinedOutput(); err == nil || !strings.Contains(string(out), "AUTOMATIC_MIGRATION") && !strings.Contains(string(out), "migrat") {
				t.Fatalf("DuckLake 1.0 attached the 0.3 lake without being asked to migrate it: %v\n%s", err, out)
			}
			migrated := lakeRun(t, b, migrateTo, tmp, ", AUTOMATIC_MIGRATION TRUE", reads+
				"SELECT value FROM __ducklake_metadata_lake.ducklake_metadata WHERE key = 'version';\n")
			if want := before + "value\n1.0\n"; migrated != want {
				t.Fatalf("after the migration:\n%s\nwant\n%s", migrated, want)
			}
			if got := lakeRun(t, b, migrateTo, tmp, "", "INSERT INTO lake.t VALUES (4, 'd');\nUPDATE lake.t SET name = 'C' WHERE id = 3;\nSELECT * FROM lake.t WHERE id < 10 ORDER BY id;\n"); got != "id|name\n1|a\n3|C\n4|d\n" {
				t.Fatalf("DuckDB %s writing the migrated lake:\n%s", migrateTo, got)
			}
			if out, err := lakeCommand(b, migrateFrom, tmp, "", "SELECT count(*) FROM lake.t;\n").CombinedOutput(); err == nil || !strings.Contains(string(out), "version 1.0") || !strings.Contains(string(out), "DuckDB v1.5") {
				t.Fatalf("DuckDB %s on the migrated lake: %v\n%s", migrateFrom, err, out)
			}
		})
	}
}

// The migration SIGKILLed at points spread over its run leaves the lake
// either as DuckLake 0.3 left it (DuckDB v1.4.4 reads every snapshot as
// before) or migrated completely (v1.4.4 is refused naming version 1.0,
// and v1.5.5 reads every snapshot as before): never in between, in both
// builds (on the commit-log build the migration is one slot).
func TestDuckLakeMigrationSurvivesSIGKILL(t *testing.T) {
	for _, b := range migrationBuilds() {
		t.Run(b.name, func(t *testing.T) {
			outcomes := map[string]int{}
			for _, ms := range []time.Duration{0, 20, 40, 60, 80, 100, 130, 160, 200, 300} {
				delay := ms * time.Millisecond
				tmp := t.TempDir()
				reads, before := write03Lake(t, b, tmp) // DATA_PATH is recorded absolute: no copies
				cmd := lakeCommand(b, migrateTo, tmp, ", AUTOMATIC_MIGRATION TRUE", "SELECT 1 AS migrated;\n")
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(delay)
				cmd.Process.Kill()
				cmd.Wait()
				if out, err := lakeCommand(b, migrateFrom, tmp, "", reads).CombinedOutput(); err == nil {
					if string(out) != before {
						t.Fatalf("killed after %v, the 0.3 lake reads:\n%s\nwant\n%s", delay, out, before)
					}
					outcomes["as DuckLake 0.3 left it"]++
					continue
				} else if !strings.Contains(string(out), "version 1.0") {
					t.Fatalf("killed after %v, DuckDB %s fails on the lake: %v\n%s", delay, migrateFrom, err, out)
				}
				if got := lakeRun(t, b, migrateTo, tmp, "", reads); got != before {
					t.Fatalf("killed after %v, the migrated lake reads:\n%s\nwant\n%s", delay, got, before)
				}
				outcomes["migrated"]++
			}
			t.Logf("outcomes of the killed migrations: %v", outcomes)
		})
	}
}
