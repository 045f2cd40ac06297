// Package storetest gives tests a real, freshly migrated Postgres database
// of their own. It builds one template database per set of migrations and
// clones it per test, which is much faster than migrating every time and
// lets packages and tests run in parallel without sharing rows.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/commitea/commitea/migrations"
	"github.com/commitea/commitea/store"
)

// DefaultURL is used when TEST_DATABASE_URL is not set.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// templateLock serialises template creation across test processes.
const templateLock = 0x74656d706c // "templ"

// URL returns the administrative database URL tests connect through.
func URL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// NewDB creates a fresh database migrated with every migration (ours and
// River's), returns its URL and a pool on it, and drops it when the test
// ends.
func NewDB(t testing.TB) (string, *store.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := pgx.Connect(ctx, URL())
	if err != nil {
		t.Fatalf("storetest: cannot reach PostgreSQL at %s: %v\n"+
			"Tests need a real PostgreSQL. Start one (for example `pg_ctlcluster 15 main start`, or "+
			"`docker run -p 5432:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:15`) and set "+
			"TEST_DATABASE_URL if it is not at %s.", redact(URL()), err, DefaultURL)
	}
	defer admin.Close(context.WithoutCancel(ctx))

	tmpl, err := ensureTemplate(ctx, admin)
	if err != nil {
		t.Fatalf("storetest: prepare template database: %v", err)
	}
	name := "commitea_t_" + randomSuffix()
	// A template cannot be copied while anyone is connected to it; the
	// creator disconnects before releasing the lock, so retry briefly.
	for attempt := 0; ; attempt++ {
		_, err = admin.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, name, tmpl))
		if err == nil || attempt == 50 || !strings.Contains(err.Error(), "being accessed") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("storetest: create database: %v", err)
	}
	dbURL := withDatabase(URL(), name)
	pool, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatalf("storetest: open %s: %v", name, err)
	}
	t.Cleanup(func() {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, URL())
		if err != nil {
			t.Logf("storetest: drop %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name)); err != nil {
			t.Logf("storetest: drop %s: %v", name, err)
		}
	})
	return dbURL, pool
}

// ensureTemplate creates, once per migration set, a migrated database that
// test databases are cloned from.
func ensureTemplate(ctx context.Context, admin *pgx.Conn) (string, error) {
	sum, err := migrationsHash()
	if err != nil {
		return "", err
	}
	name := "commitea_tmpl_" + sum[:12]
	if _, err := admin.Exec(ctx, `SELECT pg_advisory_lock($1)`, templateLock); err != nil {
		return "", fmt.Errorf("lock: %w", err)
	}
	defer func() { _, _ = admin.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, templateLock) }()
	var ready bool
	err = admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate)`, name).Scan(&ready)
	if err != nil {
		return "", fmt.Errorf("look up template: %w", err)
	}
	if ready {
		return name, nil
	}
	// A half-built template from a crashed run is not marked as a
	// template yet: drop it and start again.
	if _, err := admin.Exec(ctx, fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name)); err != nil {
		return "", fmt.Errorf("drop stale template: %w", err)
	}
	if _, err := admin.Exec(ctx, fmt.Sprintf(`CREATE DATABASE %s`, name)); err != nil {
		return "", fmt.Errorf("create template: %w", err)
	}
	pool, err := store.Open(ctx, withDatabase(URL(), name))
	if err != nil {
		return "", err
	}
	err = store.Migrate(ctx, pool, slog.New(slog.NewTextHandler(io.Discard, nil)))
	pool.Close()
	if err != nil {
		return "", fmt.Errorf("migrate template: %w", err)
	}
	if _, err := admin.Exec(ctx, `UPDATE pg_database SET datistemplate = true WHERE datname = $1`, name); err != nil {
		return "", fmt.Errorf("mark template: %w", err)
	}
	return name, nil
}

// migrationsHash names the template after the migrations it holds, so a
// changed migration gets a new template instead of a stale one.
func migrationsHash() (string, error) {
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := fs.ReadFile(migrations.FS, n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	// River's schema is part of the template too.
	h.Write([]byte("river-v0.51.2"))
	return hex.EncodeToString(h.Sum(nil)), nil
}

func withDatabase(raw, db string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = "/" + db
	return u.String()
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
