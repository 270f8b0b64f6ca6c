package storage

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core/objstore"
	"github.com/moraine-go/moraine/internal/testutil/s3test"
)

// httpfsExtension is DuckDB v1.4.4's httpfs (../shared/httpfs, built from
// the commit DuckDB pins): DuckLake's data path to S3. It loads into a
// host that exports DuckDB's symbols (the duckdb-go shell), not into the
// official libduckdb.so loaded RTLD_LOCAL.
func httpfsExtension(t *testing.T) string {
	t.Helper()
	p := filepath.Join(repoRoot(), "..", "shared", "httpfs", "v1.4.4", "httpfs.duckdb_extension")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("httpfs for DuckDB v1.4.4 is not at %s (../shared/httpfs): %v", p, err)
	}
	return p
}

// s3Secret is the one secret a user writes: DuckDB's s3 secret, which
// httpfs uses for the data and moraine for the catalog.
func s3Secret(loc s3test.Location) string {
	endpoint := strings.TrimPrefix(strings.TrimPrefix(loc.Server.Endpoint, "http://"), "https://")
	return fmt.Sprintf("CREATE SECRET bucket (TYPE s3, KEY_ID %s, SECRET %s, REGION %s, ENDPOINT %s, URL_STYLE 'path', USE_SSL false, SCOPE %s)",
		sqlString(loc.Server.AccessKey), sqlString(loc.Server.SecretKey), sqlString(loc.Server.Region), sqlString(endpoint),
		sqlString("s3://"+loc.Bucket+"/"+loc.Prefix))
}

// The whole lake in the bucket: DuckLake's catalog in moraine on S3 and its
// Parquet files beside it through httpfs, one s3 secret for both, through
// both builds: writes, deletes and updates (delete files in the bucket),
// time travel, inlined rows flushed to Parquet, compaction, expiry and
// cleanup (the objects really gone, nothing live removed), orphaned files
// removed; then a fresh process with only the secret reads the same lake.
func TestDuckLakeDataInTheBucket(t *testing.T) {
	if version != "v1.4.4" {
		t.Skipf("httpfs is built for DuckDB v1.4.4 only (../shared/httpfs); this run is %s", version)
	}
	httpfs := httpfsExtension(t)
	// DuckDB attaches a lower-case s3:// path read-only unless told
	// otherwise (S3:// in capitals is not a remote path to it): both
	// spellings, lower case with READ_WRITE.
	for _, b := range []struct{ name, ext, scheme, mode string }{
		{"single-writer", extension(), "s3://", ", READ_WRITE"},
		{"commit-log", commitLogExtension(), "S3://", ""},
	} {
		t.Run(b.name, func(t *testing.T) {
			loc := s3test.NewLocation(t)
			store, err := loc.Open(bg)
			if err != nil {
				t.Fatal(err)
			}
			root := "s3://" + loc.Bucket + "/" + loc.Prefix
			lake := b.scheme + loc.Bucket + "/" + loc.Prefix + "/lake"
			start := func() *duck {
				d := startDuckWith(t, b.ext)
				d.ok("", "LOAD "+sqlString(httpfs))
				d.ok("", "LOAD "+sqlString(ducklakeExtension()))
				d.ok("", s3Secret(loc))
				return d
			}
			attach := "ATTACH " + sqlString("ducklake:moraine:"+lake) + " AS lake (DATA_PATH " + sqlString(root+"/data/") + ", DATA_INLINING_ROW_LIMIT 10" + b.mode + ")"
			d := start()
			if b.mode != "" {
				// Without an access mode, the lower-case path is refused,
				// saying what to write (not attached read-only to refuse
				// every write later).
				r, err := d.try("", "ATTACH "+sqlString("ducklake:moraine:"+lake)+" AS lake (DATA_PATH "+sqlString(root+"/data/")+")")
				if err != nil || !strings.Contains(r.Error, "read-only unless the ATTACH gives an access mode") || !strings.Contains(r.Error, "READ_WRITE") {
					t.Fatalf("ATTACH of a lower-case s3:// path without an access mode: %v %q, want the refusal naming READ_WRITE", err, r.Error)
				}
			}
			d.ok("", attach)
			d.ok("", "CREATE TABLE lake.t (id BIGINT, v VARCHAR)")
			d.ok("", "INSERT INTO lake.t SELECT i, 'v' || i FROM range(10000) r(i)")
			d.ok("", "INSERT INTO lake.t SELECT i, 'w' || i FROM range(10000, 20000) r(i)")
			if n := len(objects(t, store, "data/", ".parquet")); n != 2 {
				t.Fatalf("%d Parquet files in the bucket after two inserts, want 2", n)
			}
			d.ok("", "DELETE FROM lake.t WHERE id % 10 = 0")
			d.ok("", "UPDATE lake.t SET v = 'updated' WHERE id = 1")
			d.ok("", "INSERT INTO lake.t VALUES (-1, 'inlined'), (-2, 'inlined')")
			want := "18002|179999997|updated|2" // 20000 rows, 2000 deleted, 2 inlined
			read := func(d *duck) string {
				return d.value("", "SELECT count(*) || '|' || sum(id) || '|' || (SELECT v FROM lake.t WHERE id = 1) || '|' || (SELECT count(*) FROM lake.t WHERE v = 'inlined') FROM lake.t")
			}
			if got := read(d); got != want {
				t.Fatalf("count|sum|v(1)|inlined = %s, want %s", got, want)
			}
			if got := d.value("", "SELECT count(*) FROM lake.t AT (VERSION => 2)"); got != "10000" {
				t.Fatalf("count at version 2 = %s, want 10000", got)
			}
			before := objects(t, store, "data/", "")
			d.ok("", "CALL ducklake_flush_inlined_data('lake')")
			d.ok("", "CALL ducklake_merge_adjacent_files('lake')")
			d.ok("", "CALL ducklake_expire_snapshots('lake', older_than => now())")
			d.ok("", "CALL ducklake_cleanup_old_files('lake', cleanup_all => true)")
			if got := read(d); got != want {
				t.Fatalf("after maintenance: count|sum|v(1)|inlined = %s, want %s", got, want)
			}
			// Every object under data/ is a file the catalog lists, and
			// every listed file is there.
			live := d.value("", "SELECT string_agg(f, '|' ORDER BY f) FROM (SELECT data_file AS f FROM ducklake_list_files('lake', 't') UNION ALL SELECT delete_file FROM ducklake_list_files('lake', 't') WHERE delete_file IS NOT NULL)")
			wantKeys := strings.Split(live, "|")
			for i, k := range wantKeys {
				wantKeys[i] = strings.TrimPrefix(k, root+"/")
			}
			slices.Sort(wantKeys)
			if got := objects(t, store, "data/", ""); !slices.Equal(got, wantKeys) {
				t.Fatalf("after cleanup the bucket holds %q, the catalog lists %q", got, wantKeys)
			}
			removed := 0
			for _, k := range before {
				if !slices.Contains(wantKeys, k) {
					removed++
				}
			}
			if removed == 0 {
				t.Fatalf("compaction and cleanup removed no object from the bucket (before: %q)", before)
			}
			t.Logf("%d objects under data/ before maintenance, %d after (%d removed)", len(before), len(wantKeys), removed)
			// An orphan (a file no commit references) is found and removed;
			// nothing live goes.
			orphan := "data/main/t/orphan.parquet"
			parquet, _, err := store.Get(bg, wantKeys[0])
			if err != nil {
				t.Fatal(err)
			}
			if _, err := store.Put(bg, orphan, parquet); err != nil {
				t.Fatal(err)
			}
			if got := d.value("", "SELECT string_agg(path, '|') FROM ducklake_delete_orphaned_files('lake', cleanup_all => true)"); got != root+"/"+orphan {
				t.Fatalf("ducklake_delete_orphaned_files removed %q, want only %s", got, root+"/"+orphan)
			}
			if got := objects(t, store, "data/", ""); !slices.Equal(got, wantKeys) {
				t.Fatalf("after removing the orphan the bucket holds %q, want %q", got, wantKeys)
			}
			d.ok("", "DETACH lake")
			d.close()

			// The lake is the prefix: a fresh process with only the secret.
			f := start()
			f.ok("", "ATTACH "+sqlString("ducklake:moraine:"+lake)+" AS lake (READ_ONLY)")
			if got := read(f); got != want {
				t.Fatalf("a fresh process reads count|sum|v(1)|inlined = %s, want %s", got, want)
			}
		})
	}
}

// objects lists the keys under prefix (ending with suffix) of store.
func objects(t *testing.T, store objstore.Store, prefix, suffix string) []string {
	t.Helper()
	infos, err := objstore.ListAll(bg, store, prefix, "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range infos {
		if strings.HasSuffix(o.Key, suffix) {
			keys = append(keys, o.Key)
		}
	}
	return keys
}

// TestREADMES3Path runs the README's S3 section as written, with the test
// server's bucket and credentials put in for its placeholders (and its
// endpoint added to the secret): httpfs, one s3 secret, the lake's catalog
// and data in the bucket. In the duckdb-go host (httpfs resolves DuckDB's
// symbols from the host).
func TestREADMES3Path(t *testing.T) {
	if version != "v1.4.4" {
		t.Skipf("httpfs is built for DuckDB v1.4.4 only (../shared/httpfs); this run is %s", version)
	}
	var block string
	for _, b := range readmeBlocks(t, "sql") {
		if strings.Contains(b, "ducklake:moraine:s3://bucket/lake") {
			block = b
		}
	}
	if block == "" {
		t.Fatal("README: the S3 section's sql block (ducklake:moraine:s3://bucket/lake) not found")
	}
	loc := s3test.NewLocation(t)
	endpoint := strings.TrimPrefix(loc.Server.Endpoint, "http://")
	script := block
	for _, r := range [][2]string{
		{"LOAD httpfs;", "LOAD " + sqlString(httpfsExtension(t)) + ";"},
		{"KEY_ID '<key id>'", "KEY_ID " + sqlString(loc.Server.AccessKey)},
		{"SECRET '<secret>'", "SECRET " + sqlString(loc.Server.SecretKey) + ", ENDPOINT " + sqlString(endpoint) + ", URL_STYLE 'path', USE_SSL false"},
		{"REGION 'us-east-1'", "REGION " + sqlString(loc.Server.Region)},
		{"s3://bucket/", "s3://" + loc.Bucket + "/" + loc.Prefix + "/"},
	} {
		if !strings.Contains(script, r[0]) {
			t.Fatalf("README's S3 block lacks %q:\n%s", r[0], block)
		}
		script = strings.ReplaceAll(script, r[0], r[1])
	}
	h := hosts()[0]
	_, runSQL := readmeCheckout(t, h)
	out := runSQL("INSTALL moraine FROM 'build/repository';\nLOAD '../shared/ducklake/v1.4.4/ducklake.duckdb_extension';\n" + script)
	if !strings.HasSuffix(strings.TrimSpace(out), "n\n1000") {
		t.Fatalf("README's S3 script printed\n%s\nwant n, then 1000", out)
	}
	store, err := loc.Open(bg)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(objects(t, store, "lake-data/", ".parquet")); n != 1 {
		t.Errorf("%d Parquet files under lake-data/ in the bucket, want 1", n)
	}
	if n := len(objects(t, store, "lake/", "")); n == 0 {
		t.Error("no catalog objects under lake/ in the bucket")
	}
}

// faultProxy fronts the S3 server for DuckDB (moraine's requests and
// httpfs's alike) and injects faults while a mode is set: every n-th
// request answered 503 SlowDown, PUTs delayed, PUTs refused as by a full
// disk (507), or the server gone (connections closed without an answer).
type faultProxy struct {
	url      string
	mode     atomic.Int32
	requests atomic.Int64
	injected [faultDown + 1]atomic.Int64 // by mode
}

const (
	faultNone = iota
	faultFlaky
	faultSlowPuts
	faultDiskFull
	faultDown
)

func newFaultProxy(t *testing.T, endpoint string) *faultProxy {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := p.requests.Add(1)
		mode := p.mode.Load()
		switch mode {
		case faultFlaky:
			if n%4 == 0 {
				p.injected[mode].Add(1)
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>injected</Message></Error>`)
				return
			}
		case faultSlowPuts:
			if r.Method == http.MethodPut {
				p.injected[mode].Add(1)
				time.Sleep(1500 * time.Millisecond)
			}
		case faultDiskFull:
			if r.Method == http.MethodPut || r.Method == http.MethodPost {
				p.injected[mode].Add(1)
				w.WriteHeader(http.StatusInsufficientStorage)
				fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>no space left on device (injected)</Message></Error>`)
				return
			}
		case faultDown:
			p.injected[mode].Add(1)
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// The whole lake in the bucket under faults: 503s on a quarter of the
// requests, PUTs of seconds, PUTs refused as by a full disk, and the
// server gone for a few seconds in the middle of a COMMIT that wrote
// Parquet. Each statement ends with a landed commit or an error (none
// hangs, none crashes DuckDB); once the faults stop the next commit lands,
// a fresh process reads every acknowledged row once, and every file the
// catalog lists is in the bucket. Through both builds.
func TestDuckLakeDataInTheBucketUnderFaults(t *testing.T) {
	if version != "v1.4.4" {
		t.Skipf("httpfs is built for DuckDB v1.4.4 only (../shared/httpfs); this run is %s", version)
	}
	httpfs := httpfsExtension(t)
	for _, b := range []struct{ name, ext string }{{"single-writer", extension()}, {"commit-log", commitLogExtension()}} {
		t.Run(b.name, func(t *testing.T) {
			loc := s3test.NewLocation(t)
			proxy := newFaultProxy(t, loc.Server.Endpoint)
			viaProxy := loc
			viaProxy.Server.Endpoint = proxy.url
			root := "s3://" + loc.Bucket + "/" + loc.Prefix
			l := logLake{name: b.name, uri: "S3://" + loc.Bucket + "/" + loc.Prefix + "/lake", data: root + "/data/", dataPrefix: "data/",
				setup: []string{"LOAD " + sqlString(httpfs), s3Secret(viaProxy)}}
			var err error
			if l.store, err = loc.Open(bg); err != nil {
				t.Fatal(err)
			}
			start := func() *duck {
				d := startDuckWith(t, b.ext)
				d.ok("", "LOAD "+sqlString(ducklakeExtension()))
				for _, s := range l.setup {
					d.ok("", s)
				}
				d.ok("", l.attachSQL())
				return d
			}
			d := start()
			d.ok("", "CREATE TABLE lake.t (id BIGINT, pad VARCHAR)")
			var acked []int64
			refused := map[string]int{}
			next := int64(0)
			insert := func(fault string, rows int) {
				first := next
				next += int64(rows)
				r, err := d.try("", fmt.Sprintf("INSERT INTO lake.t SELECT i, repeat('x', 100) FROM range(%d, %d) r(i)", first, first+int64(rows)))
				if err != nil {
					t.Fatalf("%s: the DuckDB process died: %v", fault, err)
				}
				if r.Error != "" {
					refused[fault]++
					t.Logf("%s: INSERT of ids %d..%d refused: %s", fault, first, first+int64(rows)-1, firstLine(r.Error))
					return
				}
				for i := first; i < first+int64(rows); i++ {
					acked = append(acked, i)
				}
			}
			for _, f := range []struct {
				name string
				mode int32
				n    int
			}{{"503 on a quarter of the requests", faultFlaky, 6}, {"PUTs of 1.5 s", faultSlowPuts, 2}, {"PUTs refused as by a full disk", faultDiskFull, 2}} {
				proxy.mode.Store(f.mode)
				for range f.n {
					insert(f.name, 2000)
				}
				proxy.mode.Store(faultNone)
				insert("after "+f.name, 10) // the next commit lands
				if refused["after "+f.name] != 0 {
					t.Fatalf("the first commit after %s was refused", f.name)
				}
			}
			// The server gone for 3 s in the middle of a COMMIT writing
			// Parquet (its data files reach the bucket in the first few
			// hundred milliseconds; the catalog's commit follows).
			done := make(chan struct{})
			go func() {
				defer close(done)
				time.Sleep(150 * time.Millisecond)
				proxy.mode.Store(faultDown)
				time.Sleep(3 * time.Second)
				proxy.mode.Store(faultNone)
			}()
			insert("server down mid-COMMIT", 200000)
			<-done
			insert("after the server came back", 10)
			if refused["after the server came back"] != 0 {
				t.Fatal("the first commit after the server came back was refused")
			}
			var injected []int64
			for i := range proxy.injected {
				injected = append(injected, proxy.injected[i].Load())
			}
			t.Logf("%d requests through the proxy; faults injected (503s, slow PUTs, full disk, server down): %v; INSERTs refused: %v", proxy.requests.Load(), injected[1:], refused)
			if injected[faultDown] == 0 {
				t.Fatal("no request of the long INSERT met the server down: the fault missed its COMMIT")
			}

			check := start()
			if got := ids(t, check, "lake.t"); !slices.Equal(got, acked) {
				t.Fatalf("a fresh process reads %d ids, want the %d acknowledged (first difference at %d)", len(got), len(acked), firstDiff(got, acked))
			}
			checkDataFiles(t, l, check, "t")
		})
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func firstDiff(a, b []int64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
