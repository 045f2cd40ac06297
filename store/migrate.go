package store

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/commitea/commitea/migrations"
)

// migrationLockKey is the advisory lock that serialises migrations, so that
// several replicas starting at once apply each file exactly once.
const migrationLockKey = 0x636f6d6d6974 // "commit"

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []migration
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".sql") {
			continue
		}
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %q: name must start with a number and an underscore", name)
		}
		body, err := fs.ReadFile(migrations.FS, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		out = append(out, migration{version: v, name: name, sql: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", out[i-1].name, out[i].name, out[i].version)
		}
	}
	return out, nil
}

// Migrate applies CommiTea's pending migrations, each in its own transaction
// under an advisory lock, then River's.
func Migrate(ctx context.Context, pool *Pool, log *slog.Logger) error {
	all, err := loadMigrations()
	if err != nil {
		return err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: acquire connection: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLockKey); err != nil {
		return fmt.Errorf("migrate: take lock: %w", err)
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLockKey)
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version int PRIMARY KEY,
		name text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := conn.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("migrate: list applied: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("migrate: scan applied: %w", err)
		}
		applied[v] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("migrate: list applied: %w", err)
	}
	// One line for the whole run: a fresh database applies every
	// migration, and a line each is noise at start-up; the names are at
	// DEBUG.
	var names []string
	for _, m := range all {
		if applied[m.version] {
			continue
		}
		tx, err := conn.Begin(ctx)
		if err != nil {
			return fmt.Errorf("migrate %s: begin: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			_ = tx.Rollback(ctx)
			return fmt.Errorf("migrate %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
			_ = tx.Rollback(ctx)
			return fmt.Errorf("migrate %s: record: %w", m.name, err)
		}
		if err := tx.Commit(ctx); err != nil {
			return fmt.Errorf("migrate %s: commit: %w", m.name, err)
		}
		log.DebugContext(ctx, "applied migration", slog.String("migration", m.name))
		names = append(names, m.name)
	}
	// River's migrator logs each step at INFO, the same lines as the loop
	// below; its failures come back as errors.
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	res, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil)
	if err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	var river []int
	for _, v := range res.Versions {
		river = append(river, v.Version)
	}
	if len(names) > 0 || len(river) > 0 {
		attrs := []any{slog.Int("count", len(names))}
		if len(names) > 0 {
			attrs = append(attrs, slog.String("from", names[0]), slog.String("to", names[len(names)-1]))
		}
		if len(river) > 0 {
			attrs = append(attrs, slog.Int("river", len(river)), slog.Int("riverVersion", river[len(river)-1]))
		}
		log.InfoContext(ctx, "applied migrations", attrs...)
	}
	return nil
}

// MigrationsCurrent reports whether every migration, ours and River's, has
// been applied; readiness depends on it.
func MigrationsCurrent(ctx context.Context, pool *Pool) (bool, error) {
	all, err := loadMigrations()
	if err != nil {
		return false, err
	}
	var n int
	err = pool.QueryRow(ctx, `SELECT count(*) FROM schema_migrations WHERE version = ANY($1)`, versions(all)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("check migrations: %w", err)
	}
	if n != len(all) {
		return false, nil
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return false, fmt.Errorf("check river migrations: %w", err)
	}
	res, err := migrator.Validate(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("check river migrations: %w", err)
	}
	return res.OK, nil
}

func versions(ms []migration) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.version
	}
	return out
}
