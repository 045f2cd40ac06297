package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// WebSession is one person signed in with Gitea. Permissions maps a
// project's "owner/repo" to the scope the person holds there (read, write
// or approve); a project missing from it is not theirs to see.
type WebSession struct {
	ID            int64
	Login         string
	GiteaUserID   int64
	CreatedAt     time.Time
	LastSeenAt    time.Time
	IdleExpiresAt time.Time
	ExpiresAt     time.Time
	RevokedAt     *time.Time
	Permissions   map[string]string
	PermissionsAt time.Time
	UserAgent     string
}

// EndsAt is when the session stops working: the first of its absolute
// expiry, its idle expiry and its revocation.
func (s WebSession) EndsAt() time.Time {
	end := s.ExpiresAt
	if s.IdleExpiresAt.Before(end) {
		end = s.IdleExpiresAt
	}
	if s.RevokedAt != nil && s.RevokedAt.Before(end) {
		end = *s.RevokedAt
	}
	return end
}

// Live reports whether the session still works at now.
func (s WebSession) Live(now time.Time) bool { return now.Before(s.EndsAt()) }

const webSessionColumns = `id, login, gitea_user_id, created_at, last_seen_at, idle_expires_at, expires_at, revoked_at, permissions, permissions_at, user_agent`

func scanWebSession(r pgx.Row) (WebSession, error) {
	var s WebSession
	var perms []byte
	err := r.Scan(&s.ID, &s.Login, &s.GiteaUserID, &s.CreatedAt, &s.LastSeenAt, &s.IdleExpiresAt, &s.ExpiresAt, &s.RevokedAt, &perms, &s.PermissionsAt, &s.UserAgent)
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(perms, &s.Permissions); err != nil {
		return s, fmt.Errorf("decode permissions of session %d: %w", s.ID, err)
	}
	return s, nil
}

// CreateWebSession stores a new session under the hash of its cookie
// secret and returns it with its id.
func CreateWebSession(ctx context.Context, q DBTX, secretHash []byte, s WebSession) (WebSession, error) {
	perms, err := json.Marshal(nonNilPermissions(s.Permissions))
	if err != nil {
		return WebSession{}, fmt.Errorf("encode permissions: %w", err)
	}
	row := q.QueryRow(ctx, `INSERT INTO web_sessions (secret_hash, login, gitea_user_id, created_at, last_seen_at, idle_expires_at, expires_at, permissions, permissions_at, user_agent)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING `+webSessionColumns,
		secretHash, s.Login, s.GiteaUserID, s.CreatedAt, s.LastSeenAt, s.IdleExpiresAt, s.ExpiresAt, perms, s.PermissionsAt, s.UserAgent)
	out, err := scanWebSession(row)
	if err != nil {
		return WebSession{}, fmt.Errorf("create session of %s: %w", s.Login, err)
	}
	return out, nil
}

func nonNilPermissions(p map[string]string) map[string]string {
	if p == nil {
		return map[string]string{}
	}
	return p
}

// WebSessionBySecret finds the session a cookie secret's hash belongs to,
// ended or not; ErrNotFound when there is none.
func WebSessionBySecret(ctx context.Context, q DBTX, secretHash []byte) (WebSession, error) {
	s, err := scanWebSession(q.QueryRow(ctx, `SELECT `+webSessionColumns+` FROM web_sessions WHERE secret_hash = $1`, secretHash))
	if noRows(err) {
		return WebSession{}, ErrNotFound
	}
	if err != nil {
		return WebSession{}, fmt.Errorf("find session: %w", err)
	}
	return s, nil
}

// TouchWebSession records use of a live session at now and moves its idle
// expiry to idleUntil (never past its absolute expiry).
func TouchWebSession(ctx context.Context, q DBTX, id int64, now, idleUntil time.Time) error {
	_, err := q.Exec(ctx, `UPDATE web_sessions SET last_seen_at = $2, idle_expires_at = least($3, expires_at)
		WHERE id = $1 AND revoked_at IS NULL`, id, now, idleUntil)
	if err != nil {
		return fmt.Errorf("touch session %d: %w", id, err)
	}
	return nil
}

// SetWebSessionPermissions replaces a session's permissions as read at at.
func SetWebSessionPermissions(ctx context.Context, q DBTX, id int64, perms map[string]string, at time.Time) error {
	data, err := json.Marshal(nonNilPermissions(perms))
	if err != nil {
		return fmt.Errorf("encode permissions: %w", err)
	}
	if _, err := q.Exec(ctx, `UPDATE web_sessions SET permissions = $2, permissions_at = $3 WHERE id = $1`, id, data, at); err != nil {
		return fmt.Errorf("set permissions of session %d: %w", id, err)
	}
	return nil
}

// RevokeWebSession ends one session at now; it reports false when the id
// names no session still live.
func RevokeWebSession(ctx context.Context, q DBTX, id int64, now time.Time) (bool, error) {
	tag, err := q.Exec(ctx, `UPDATE web_sessions SET revoked_at = $2
		WHERE id = $1 AND revoked_at IS NULL AND expires_at > $2 AND idle_expires_at > $2`, id, now)
	if err != nil {
		return false, fmt.Errorf("revoke session %d: %w", id, err)
	}
	return tag.RowsAffected() == 1, nil
}

// RevokeWebSessionsOf ends every live session of a login (any case) and
// returns how many there were.
func RevokeWebSessionsOf(ctx context.Context, q DBTX, login string, now time.Time) (int64, error) {
	tag, err := q.Exec(ctx, `UPDATE web_sessions SET revoked_at = $2
		WHERE lower(login) = lower($1) AND revoked_at IS NULL AND expires_at > $2 AND idle_expires_at > $2`, login, now)
	if err != nil {
		return 0, fmt.Errorf("revoke sessions of %s: %w", login, err)
	}
	return tag.RowsAffected(), nil
}

// ListWebSessions returns sessions newest first: the live ones at now, or
// with ended also those ended since.
func ListWebSessions(ctx context.Context, q DBTX, now time.Time, endedSince *time.Time) ([]WebSession, error) {
	since := now
	if endedSince != nil {
		since = *endedSince
	}
	rows, err := q.Query(ctx, `SELECT `+webSessionColumns+` FROM web_sessions
		WHERE least(expires_at, idle_expires_at, coalesce(revoked_at, 'infinity')) > $1
		ORDER BY created_at DESC, id DESC`, since)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	defer rows.Close()
	var out []WebSession
	for rows.Next() {
		s, err := scanWebSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return out, nil
}

// PruneWebSessions deletes up to limit sessions that ended before cutoff,
// and sign-ins begun a day ago or more and never finished (they are
// refused after 10 minutes), and returns how many sessions went.
func PruneWebSessions(ctx context.Context, q DBTX, cutoff time.Time, limit int) (int64, error) {
	if _, err := q.Exec(ctx, `DELETE FROM web_logins WHERE created_at < now() - interval '1 day'`); err != nil {
		return 0, fmt.Errorf("prune abandoned sign-ins: %w", err)
	}
	tag, err := q.Exec(ctx, `DELETE FROM web_sessions WHERE id IN (
			SELECT id FROM web_sessions WHERE least(expires_at, idle_expires_at, coalesce(revoked_at, 'infinity')) < $1 LIMIT $2)`, cutoff, limit)
	if err != nil {
		return 0, fmt.Errorf("prune sessions ended before %s: %w", cutoff.Format(time.RFC3339), err)
	}
	return tag.RowsAffected(), nil
}

// SaveWebLogin records a sign-in under way: the hash of its state and the
// PKCE verifier, and where to return afterwards.
func SaveWebLogin(ctx context.Context, q DBTX, stateHash []byte, verifier, returnTo string, at time.Time) error {
	_, err := q.Exec(ctx, `INSERT INTO web_logins (state_hash, verifier, return_to, created_at) VALUES ($1, $2, $3, $4)`,
		stateHash, verifier, returnTo, at)
	if err != nil {
		return fmt.Errorf("save sign-in: %w", err)
	}
	return nil
}

// TakeWebLogin removes and returns the sign-in a state's hash belongs to,
// if it began after notBefore; a state works once. ErrNotFound otherwise.
func TakeWebLogin(ctx context.Context, q DBTX, stateHash []byte, notBefore time.Time) (verifier, returnTo string, err error) {
	var fresh bool
	err = q.QueryRow(ctx, `DELETE FROM web_logins WHERE state_hash = $1 RETURNING verifier, return_to, created_at >= $2`,
		stateHash, notBefore).Scan(&verifier, &returnTo, &fresh)
	if noRows(err) || (err == nil && !fresh) {
		return "", "", ErrNotFound
	}
	if err != nil {
		return "", "", fmt.Errorf("take sign-in: %w", err)
	}
	return verifier, returnTo, nil
}
