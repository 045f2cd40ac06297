package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The demo creates its own database beside the one DATABASE_URL names and
// recreates it on every run; creating and dropping databases is
// PostgreSQL administration, so it lives here with the other pgx code.

// RecreateDemoDatabase drops and creates name on the server adminURL
// points at, and returns the URL of the new database. It refuses, touching
// nothing, when the database is in use (another demo is running on it), is
// the one adminURL names, or holds something other than a demo's project
// (repo), and marks the new one with marker, the comment that says a
// later run may drop it.
func RecreateDemoDatabase(ctx context.Context, adminURL, name, repo, marker string) (string, error) {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return "", fmt.Errorf("connect to PostgreSQL (DATABASE_URL): %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if strings.EqualFold(name, conn.Config().Database) {
		return "", fmt.Errorf("demo: --database %s is the database DATABASE_URL connects to; the demo needs one of its own, which it drops and recreates", name)
	}
	inUse := func(n int) error {
		return fmt.Errorf("demo: database %s is in use (%d connections; another commitea demo?): stop that first, or give this one --database <another name>", name, n)
	}
	var comment *string
	err = conn.QueryRow(ctx, `SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = $1`, name).Scan(&comment)
	exists := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("look up the demo database %s: %w", name, err)
	}
	dbURL, err := withDatabase(adminURL, name)
	if err != nil {
		return "", err
	}
	ident := pgx.Identifier{name}.Sanitize()
	if exists {
		var users int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = $1`, name).Scan(&users); err != nil {
			return "", fmt.Errorf("look up connections to %s: %w", name, err)
		}
		if users > 0 {
			return "", inUse(users)
		}
		if comment == nil || *comment != marker {
			if err := olderDemoDatabase(ctx, dbURL, name, repo); err != nil {
				return "", err
			}
		}
		// Without FORCE: a connection that arrived since the check makes
		// the drop fail rather than be cut.
		if _, err := conn.Exec(ctx, "DROP DATABASE "+ident); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "55006" { // object_in_use
				return "", inUse(1)
			}
			return "", fmt.Errorf("drop the demo database %s: %w", name, err)
		}
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return "", fmt.Errorf("create the demo database %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, "COMMENT ON DATABASE "+ident+" IS "+quoteLiteral(marker)); err != nil {
		return "", fmt.Errorf("mark the demo database %s: %w", name, err)
	}
	return dbURL, nil
}

// olderDemoDatabase accepts a database without the demo's mark only when
// it is empty or holds nothing but the demo's project, as the demo made
// them before it marked its databases.
func olderDemoDatabase(ctx context.Context, dbURL, name, repo string) error {
	refuse := fmt.Errorf("demo: database %s exists and was not made by commitea demo, which drops and recreates its database; "+
		"give it --database <another name> (or drop %s yourself if it is yours to lose)", name, name)
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("look into %s: %w", name, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var tables int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')`).Scan(&tables); err != nil {
		return fmt.Errorf("look into %s: %w", name, err)
	}
	if tables == 0 {
		return nil
	}
	var projects []string
	rows, err := conn.Query(ctx, `SELECT owner || '/' || name FROM projects`)
	if err != nil {
		return refuse // not CommiTea's tables
	}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return refuse
		}
		projects = append(projects, p)
	}
	rows.Close()
	if rows.Err() != nil || slices.ContainsFunc(projects, func(p string) bool { return p != repo }) {
		return refuse
	}
	return nil
}

// quoteLiteral quotes s as an SQL string literal (COMMENT takes no
// parameters).
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// withDatabase is the connection string u with its database replaced.
func withDatabase(u, name string) (string, error) {
	if strings.Contains(u, "://") {
		parsed, err := url.Parse(u)
		if err != nil {
			return "", fmt.Errorf("DATABASE_URL: %w", err)
		}
		parsed.Path = "/" + name
		return parsed.String(), nil
	}
	// key=value form: a later dbname wins.
	return u + " dbname=" + name, nil
}
