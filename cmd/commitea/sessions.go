package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/commitea/commitea/store"
)

// endedSessionsListed is how long an ended session stays in the table
// (and in `sessions list --all`) before the daily retention job deletes
// it.
const endedSessionsListed = 30 * 24 * time.Hour

// runSessions lists or revokes the sessions of people signed in with
// Gitea: `sessions list [--all]`, `sessions revoke ID…` or
// `sessions revoke --login LOGIN`.
func (m *Main) runSessions(ctx context.Context, g globalOptions, args []string) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "revoke") {
		fs := m.newFlagSet("sessions", "list [--all] | revoke ID... | revoke --login LOGIN", &g)
		if done, err := parseFlags(fs, args); done || err != nil {
			return err
		}
		fs.Usage()
		return usageError{"sessions: say list or revoke"}
	}
	action := args[0]
	var all bool
	var login string
	var fs *flag.FlagSet
	if action == "list" {
		fs = m.newFlagSet("sessions list", "[--all]", &g)
		fs.BoolVar(&all, "all", false, fmt.Sprintf("also list sessions that ended (revoked or expired) in the last %d days", int(endedSessionsListed.Hours()/24)))
	} else {
		fs = m.newFlagSet("sessions revoke", "ID... | --login LOGIN", &g)
		fs.StringVar(&login, "login", "", "revoke every live session of this Gitea `login`")
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{err.Error()}
	}
	var ids []int64
	for _, a := range fs.Args() {
		id, err := strconv.ParseInt(a, 10, 64)
		if action == "list" || err != nil || id <= 0 {
			return usageError{fmt.Sprintf("sessions %s: unexpected argument %q", action, a)}
		}
		ids = append(ids, id)
	}
	if action == "revoke" && (len(ids) == 0) == (login == "") {
		return usageError{"sessions revoke: give session ids (from sessions list) or --login, not both"}
	}
	cfg, err := m.loadConfig(g.configPath, "sessions")
	if err != nil {
		return err
	}
	pool, err := m.openDatabase(ctx, cfg)
	if err != nil {
		return err
	}
	now := time.Now()
	if action == "list" {
		var since *time.Time
		if all {
			t := now.Add(-endedSessionsListed)
			since = &t
		}
		ss, err := store.ListWebSessions(ctx, pool, now, since)
		if err != nil {
			return fmt.Errorf("sessions: %w", err)
		}
		writeSessions(m.Stdout, ss, now)
		return nil
	}
	if login != "" {
		n, err := store.RevokeWebSessionsOf(ctx, pool, login, now)
		if err != nil {
			return fmt.Errorf("sessions: %w", err)
		}
		fmt.Fprintf(m.Stdout, "revoked %d session(s) of %s\n", n, login)
		return nil
	}
	var missing []string
	for _, id := range ids {
		ok, err := store.RevokeWebSession(ctx, pool, id, now)
		if err != nil {
			return fmt.Errorf("sessions: %w", err)
		}
		if !ok {
			missing = append(missing, strconv.FormatInt(id, 10))
			continue
		}
		fmt.Fprintf(m.Stdout, "revoked session %d\n", id)
	}
	if len(missing) > 0 {
		return fmt.Errorf("sessions: no live session %s", strings.Join(missing, ", "))
	}
	return nil
}

// writeSessions prints one line per session: who, since when, its last
// use, when it ends (or how it ended) and what it may see.
func writeSessions(w io.Writer, ss []store.WebSession, now time.Time) {
	if len(ss) == 0 {
		fmt.Fprintln(w, "No sessions.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLOGIN\tSIGNED IN\tLAST SEEN\tSTATE\tPERMISSIONS (read at)")
	stamp := func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04Z") }
	for _, s := range ss {
		state := "live until " + stamp(s.EndsAt())
		switch {
		case s.RevokedAt != nil:
			state = "revoked " + stamp(*s.RevokedAt)
		case !s.Live(now):
			state = "expired " + stamp(s.EndsAt())
		}
		var perms []string
		for p, l := range s.Permissions {
			perms = append(perms, p+":"+l)
		}
		slices.Sort(perms)
		if len(perms) == 0 {
			perms = []string{"none"}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s (%s)\n", s.ID, s.Login, stamp(s.CreatedAt), stamp(s.LastSeenAt), state,
			strings.Join(perms, " "), stamp(s.PermissionsAt))
	}
	_ = tw.Flush()
}
