package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"

	"github.com/commitea/commitea/store"
)

// Scratch creates a fresh, migrated database next to adminURL for a load
// command (which has no testing.T), and returns a pool on it and a cleanup
// that closes the pool and drops the database.
func Scratch(ctx context.Context, adminURL, prefix string, log *slog.Logger) (*store.Pool, func(), error) {
	admin, err := store.Open(ctx, adminURL)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (is PostgreSQL running? set -database or TEST_DATABASE_URL)", err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := prefix + "_" + hex.EncodeToString(b)
	u, err := url.Parse(adminURL)
	if err != nil {
		admin.Close()
		return nil, nil, fmt.Errorf("database URL: %w", err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		admin.Close()
		return nil, nil, fmt.Errorf("create database %s: %w", name, err)
	}
	drop := func() {
		_, _ = admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close()
	}
	u.Path = "/" + name
	pool, err := store.Open(ctx, u.String())
	if err != nil {
		drop()
		return nil, nil, err
	}
	if err := store.Migrate(ctx, pool, log); err != nil {
		pool.Close()
		drop()
		return nil, nil, err
	}
	return pool, func() { pool.Close(); drop() }, nil
}
