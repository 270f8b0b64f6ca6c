package attach

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moraine-go/moraine/core"
	"github.com/moraine-go/moraine/core/objstore"
)

const ckpt = "01234567-89ab-cdef-0123-456789abcdef"

func opts(kv ...any) []Option {
	var out []Option
	for i := 0; i < len(kv); i += 2 {
		out = append(out, Option{Name: kv[i].(string), Value: kv[i+1]})
	}
	return out
}

func TestParseAccepts(t *testing.T) {
	yes := true
	no := false
	for _, tc := range []struct {
		name string
		path string
		opts []Option
		want func(c *Config) string // "" when fine
	}{
		{"defaults", "/tmp/lake", nil, func(c *Config) string {
			if c.ReadOnly || c.Catalog != (core.CatalogOptions{}) || c.WalStore != "" || len(c.Given) != 0 {
				return fmt.Sprintf("%+v", c)
			}
			return ""
		}},
		{"read_only bool", "/tmp/lake", opts("read_only", true), func(c *Config) string { return check(c.ReadOnly, "ReadOnly") }},
		{"READ_ONLY string", "/tmp/lake", opts("READ_ONLY", "Yes"), func(c *Config) string { return check(c.ReadOnly, "ReadOnly") }},
		{"Read_Only integer 0", "/tmp/lake", opts("Read_Only", int64(0)), func(c *Config) string { return check(!c.ReadOnly && c.Has("READ_ONLY"), "ReadOnly false, given") }},
		{"read_only off", "/tmp/lake", opts("read_only", "off"), func(c *Config) string { return check(!c.ReadOnly, "ReadOnly false") }},
		{"data_path", "./lake", opts("data_path", "s3://b/data/"), func(c *Config) string { return check(c.Catalog.DataPath == "s3://b/data/", "DataPath") }},
		{"flush 0 is continuous", "/tmp/lake", opts("flush_interval_ms", int32(0)), func(c *Config) string { return check(c.Catalog.FlushInterval == 0, "FlushInterval") }},
		{"flush integer", "/tmp/lake", opts("FLUSH_INTERVAL_MS", int64(250)), func(c *Config) string {
			return check(c.Catalog.FlushInterval == 250*time.Millisecond, "FlushInterval")
		}},
		{"flush string of digits", "/tmp/lake", opts("flush_interval_ms", "75"), func(c *Config) string {
			return check(c.Catalog.FlushInterval == 75*time.Millisecond, "FlushInterval")
		}},
		{"flush unsigned", "/tmp/lake", opts("flush_interval_ms", uint64(1)), func(c *Config) string {
			return check(c.Catalog.FlushInterval == time.Millisecond, "FlushInterval")
		}},
		{"reader poll", "memory://x", opts("read_only", true, "reader_poll_interval_ms", 50), func(c *Config) string {
			return check(c.Catalog.ReaderPollInterval == 50*time.Millisecond, "ReaderPollInterval")
		}},
		{"reader poll on a writer (bounds its own reads)", "memory://x", opts("reader_poll_interval_ms", 50), func(c *Config) string {
			return check(c.Catalog.ReaderPollInterval == 50*time.Millisecond, "ReaderPollInterval")
		}},
		{"checkpoint", "/tmp/lake", opts("read_only", 1, "checkpoint", strings.ToUpper(ckpt)), func(c *Config) string {
			return check(c.Catalog.Checkpoint == ckpt, "Checkpoint normalized")
		}},
		{"wal store", "/tmp/lake", opts("wal_store", "memory://wal"), func(c *Config) string { return check(c.WalStore == "memory://wal", "WalStore") }},
		{"commit log tail", "/tmp/lake", opts("read_only", true, "commit_log_tail", true), func(c *Config) string {
			return check(c.Catalog.CommitLogTail, "CommitLogTail")
		}},
		{"commit log tail false on a writer", "/tmp/lake", opts("commit_log_tail", false), func(c *Config) string {
			return check(!c.Catalog.CommitLogTail, "CommitLogTail false")
		}},
		{"commit log poll", "/tmp/lake", opts("commit_log_poll_interval_ms", "20"), func(c *Config) string {
			return check(c.Catalog.CommitLogPollInterval == 20*time.Millisecond, "CommitLogPollInterval")
		}},
		{"s3 settings", "s3://bucket/lake", opts("s3_endpoint", "http://127.0.0.1:9000", "S3_REGION", "eu-west-1", "s3_key_id", "k",
			"s3_secret", "s", "s3_session_token", "tok", "s3_url_style", "VHOST", "s3_use_ssl", false), func(c *Config) string {
			want := objstore.S3Options{Endpoint: "http://127.0.0.1:9000", Region: "eu-west-1", AccessKeyID: "k", SecretAccessKey: "s",
				SessionToken: "tok", URLStyle: "vhost", UseSSL: &no}
			if c.S3.UseSSL == nil || *c.S3.UseSSL != *want.UseSSL {
				return "UseSSL"
			}
			c.S3.UseSSL, want.UseSSL = nil, nil
			return check(c.S3 == want, fmt.Sprintf("S3 %+v", c.S3))
		}},
		{"s3 settings for the wal store only", "/tmp/lake", opts("wal_store", "s3://b/wal", "s3_use_ssl", "true"), func(c *Config) string {
			return check(c.S3.UseSSL != nil && *c.S3.UseSSL == yes, "UseSSL")
		}},
		{"path forms", "file:///tmp/lake", nil, func(*Config) string { return "" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.path, tc.opts)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if msg := tc.want(c); msg != "" {
				t.Fatalf("wrong %s: %+v", msg, c)
			}
		})
	}
}

func check(ok bool, what string) string {
	if ok {
		return ""
	}
	return what
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string
		opts []Option
		want []string // substrings of the message
	}{
		{"unknown option lists the known ones", "/tmp/lake", opts("bogus_option", 1),
			[]string{`unknown attach option "bogus_option"`, "known options: CHECKPOINT, COMMIT_LOG_POLL_INTERVAL_MS, COMMIT_LOG_TAIL, DATA_PATH, FLUSH_INTERVAL_MS, READER_POLL_INTERVAL_MS, READ_ONLY, S3_ENDPOINT"}},
		{"given twice (any case)", "/tmp/lake", opts("read_only", true, "READ_ONLY", true), []string{"READ_ONLY is given more than once"}},
		{"read_only not a bool", "/tmp/lake", opts("read_only", "maybe"), []string{"READ_ONLY: 'maybe' is not accepted", "a boolean (true/false"}},
		{"read_only 2", "/tmp/lake", opts("read_only", 2), []string{"READ_ONLY: 2 is not accepted"}},
		{"read_only NULL", "/tmp/lake", opts("read_only", nil), []string{"READ_ONLY: NULL is not accepted"}},
		{"data_path empty", "/tmp/lake", opts("data_path", ""), []string{"DATA_PATH: '' is not accepted (accepted: a non-empty string)"}},
		{"data_path integer", "/tmp/lake", opts("data_path", 3), []string{"DATA_PATH: 3 is not accepted"}},
		{"flush negative", "/tmp/lake", opts("flush_interval_ms", -1), []string{"FLUSH_INTERVAL_MS: -1 is not accepted (accepted: an integer number of milliseconds from 0 to 86400000)"}},
		{"flush too big", "/tmp/lake", opts("flush_interval_ms", uint64(1<<63)), []string{"FLUSH_INTERVAL_MS: 9223372036854775808 is not accepted"}},
		{"flush not a number", "/tmp/lake", opts("flush_interval_ms", "soon"), []string{"FLUSH_INTERVAL_MS: 'soon' is not accepted"}},
		{"flush bool", "/tmp/lake", opts("flush_interval_ms", true), []string{"FLUSH_INTERVAL_MS: true is not accepted"}},
		{"reader poll 0", "/tmp/lake", opts("read_only", true, "reader_poll_interval_ms", 0), []string{"READER_POLL_INTERVAL_MS: 0 is not accepted (accepted: an integer number of milliseconds from 1 to 86400000)"}},
		{"checkpoint not a uuid", "/tmp/lake", opts("read_only", true, "checkpoint", "latest"), []string{"CHECKPOINT: 'latest' is not accepted (accepted: a checkpoint id"}},
		{"checkpoint without read_only", "/tmp/lake", opts("checkpoint", ckpt), []string{"CHECKPOINT needs READ_ONLY"}},
		{"checkpoint with read_only false", "/tmp/lake", opts("read_only", false, "checkpoint", ckpt), []string{"CHECKPOINT needs READ_ONLY"}},
		{"tail without read_only", "/tmp/lake", opts("commit_log_tail", true), []string{"COMMIT_LOG_TAIL needs READ_ONLY"}},
		{"tail with checkpoint", "/tmp/lake", opts("read_only", true, "checkpoint", ckpt, "commit_log_tail", true), []string{"COMMIT_LOG_TAIL and CHECKPOINT conflict"}},
		{"reader poll with checkpoint", "/tmp/lake", opts("read_only", true, "checkpoint", ckpt, "reader_poll_interval_ms", 5), []string{"READER_POLL_INTERVAL_MS and CHECKPOINT conflict"}},
		{"commit log poll on a reader", "/tmp/lake", opts("read_only", true, "commit_log_poll_interval_ms", 5), []string{"COMMIT_LOG_POLL_INTERVAL_MS is a committer's poll"}},
		{"commit log poll 0", "/tmp/lake", opts("commit_log_poll_interval_ms", 0), []string{"COMMIT_LOG_POLL_INTERVAL_MS: 0 is not accepted"}},
		{"commit log tail not a bool", "/tmp/lake", opts("read_only", true, "commit_log_tail", "always"), []string{"COMMIT_LOG_TAIL: 'always' is not accepted"}},
		{"flush on a reader", "/tmp/lake", opts("read_only", true, "flush_interval_ms", 5), []string{"FLUSH_INTERVAL_MS paces the writer's uploads"}},
		{"wal store bad scheme", "/tmp/lake", opts("wal_store", "gs://b/wal"), []string{"WAL_STORE: 'gs://b/wal' is not accepted", `unknown store scheme "gs"`}},
		{"wal store not a string", "/tmp/lake", opts("wal_store", 7), []string{"WAL_STORE: 7 is not accepted"}},
		{"url style", "s3://b/l", opts("s3_url_style", "virtual"), []string{"S3_URL_STYLE: 'virtual' is not accepted (accepted: 'path' or 'vhost')"}},
		{"use ssl", "s3://b/l", opts("s3_use_ssl", "sometimes"), []string{"S3_USE_SSL: 'sometimes' is not accepted"}},
		{"s3 option without an s3 store", "/tmp/lake", opts("s3_region", "us-east-1"), []string{"S3_REGION applies to s3:// stores, but neither the path '/tmp/lake' nor WAL_STORE is one"}},
		{"empty path", "", nil, []string{"store path: the store URI is empty"}},
		{"bad scheme", "ftp://x/y", nil, []string{`store path: unknown store scheme "ftp"`}},
		{"s3 without bucket", "s3://", nil, []string{"has no bucket"}},
		{"memory without name", "memory://", nil, []string{"needs a name"}},
		{"scheme without slashes", "s3:bucket", nil, []string{"is not a recognised store URI"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(tc.path, tc.opts)
			if err == nil {
				t.Fatalf("Parse accepted %+v", c)
			}
			if !errors.Is(err, core.InvalidArgument) {
				t.Fatalf("error kind %v, want InvalidArgument: %v", core.KindOf(err), err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestKnownAndDescribe(t *testing.T) {
	known := Known()
	if len(known) != 15 {
		t.Fatalf("Known() = %v", known)
	}
	for _, k := range known {
		if Describe(k) == "" || Describe(strings.ToLower(k)) == "" {
			t.Errorf("no description for %s", k)
		}
	}
	if Describe("nope") != "" {
		t.Error("Describe of an unknown option")
	}
}

// A refused parse opens nothing: no directory appears.
func TestRefusedParseOpensNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	if _, err := Parse(dir, opts("checkpoint", ckpt)); err == nil {
		t.Fatal("accepted")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the store directory exists after a refused parse: %v", err)
	}
}

func TestOpenWriterThenReader(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "lake")
	c, err := Parse(dir, opts("data_path", "/data/", "flush_interval_ms", 0))
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close(ctx)
	if w.Role() != core.RoleWriter || w.Catalog.ReadOnly() {
		t.Fatalf("role %s", w.Role())
	}
	if _, err := w.Catalog.Commit(ctx, func(tx *core.Transaction) error { _, err := tx.CreateSchema("s"); return err }); err != nil {
		t.Fatal(err)
	}
	s, _ := w.Catalog.View(ctx)
	if v, _ := s.Option(core.ScopeGlobal, 0, "data_path"); v != "/data/" {
		t.Fatalf("data_path %q", v)
	}

	rc, err := Parse(dir, opts("read_only", true, "reader_poll_interval_ms", 10, "commit_log_tail", true))
	if err != nil {
		t.Fatal(err)
	}
	r, err := rc.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close(ctx)
	if r.Role() != core.RoleReader || !r.Catalog.ReadOnly() {
		t.Fatalf("role %s", r.Role())
	}
	h, err := r.Catalog.Head(ctx)
	if err != nil || h.SnapshotID != 1 {
		t.Fatalf("reader head %+v %v", h, err)
	}
}

func TestOpenErrorsAreTyped(t *testing.T) {
	ctx := context.Background()
	c, err := Parse(filepath.Join(t.TempDir(), "empty"), opts("read_only", true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Open(ctx); !errors.Is(err, core.NotFound) {
		t.Fatalf("read-only open of an empty store: %v", err)
	}
	c, err = Parse("memory://wal-test", opts("wal_store", "memory://wal-test-wal"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a.WalStore == nil {
		t.Fatal("no WAL store")
	}
	a.Close(ctx)
}

// DuckLake users write META_<option>; DuckLake strips the prefix, and an
// option given with it directly is the option without it.
func TestParseMetaPrefix(t *testing.T) {
	c, err := Parse("memory://x", opts("META_READER_POLL_INTERVAL_MS", int64(40), "meta_read_only", true))
	if err != nil {
		t.Fatal(err)
	}
	if c.Catalog.ReaderPollInterval != 40*time.Millisecond || !c.ReadOnly {
		t.Fatalf("META_ options not applied: %+v", c)
	}
	if _, err := Parse("memory://x", opts("read_only", true, "META_READ_ONLY", true)); err == nil || !strings.Contains(err.Error(), "more than once") {
		t.Fatalf("READ_ONLY and META_READ_ONLY together: %v, want given more than once", err)
	}
	if _, err := Parse("memory://x", opts("META_", true)); err == nil || !strings.Contains(err.Error(), `unknown attach option "META_"`) {
		t.Fatalf("bare META_: %v", err)
	}
}

// A refused credential is named, its value never shown.
func TestParseNeverShowsCredentials(t *testing.T) {
	for _, name := range []string{"S3_SECRET", "S3_KEY_ID", "S3_SESSION_TOKEN"} {
		const value = "AKIA-do-not-print-me"
		_, err := Parse("s3://b/p", opts(name, []byte(value)))
		if err == nil {
			t.Fatalf("%s given a BLOB was accepted", name)
		}
		if strings.Contains(err.Error(), "do-not-print") || strings.Contains(err.Error(), "BLOB of") {
			t.Fatalf("%s: the message shows the value: %v", name, err)
		}
		if !strings.Contains(err.Error(), name) {
			t.Fatalf("%s: the message does not name the option: %v", name, err)
		}
		if _, err := Parse("s3://b/p", opts(name, int64(12345678))); err == nil || strings.Contains(err.Error(), "12345678") {
			t.Fatalf("%s given an integer: %v", name, err)
		}
	}
}

// Open counts every request the catalog makes.
func TestOpenCountsRequests(t *testing.T) {
	c, err := Parse(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	if got := a.Requests.Snapshot().Total(); got == 0 {
		t.Fatal("an open that created a lake counted no request")
	}
	if a.WalRequests != nil {
		t.Fatal("WalRequests set without WAL_STORE")
	}
}
