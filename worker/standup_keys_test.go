package worker

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/worker/standup"
)

var messageID = regexp.MustCompile(`(?m)^Message-ID: <([^@>]+)@([^>]+)>`)

// deliverKeys runs the day's standup to every sink and returns the
// webhook's delivery key and the email's Message-ID key and host.
func (f *standupFixture) deliverKeys(t *testing.T) (webhook, email, host string) {
	t.Helper()
	jobs := f.startJobs(t)
	if _, err := jobs.Insert(context.Background(), StandupArgs{ProjectID: f.p.ID, Day: standupDay}, nil); err != nil {
		t.Fatal(err)
	}
	f.waitIdle(t)
	f.wantOnceEach(t)
	webhook = f.webhook.Received()[0].Header.Get("X-CommiTea-Delivery")
	m := messageID.FindStringSubmatch(f.smtp.Messages()[0].Data)
	if m == nil {
		t.Fatalf("no Message-ID in:\n%s", f.smtp.Messages()[0].Data)
	}
	return webhook, m[1], m[2]
}

// Two installations, each with its own database, give the same project
// and day different delivery keys: a receiver deduplicating on them keeps
// both. The key names the installation, stored once in the database, and
// the Message-ID's host is the public URL's.
func TestDeliveryKeysDifferAcrossInstallations(t *testing.T) {
	ctx := context.Background()
	var hooks, emails []string
	for range 2 {
		f := newStandupFixture(t)
		f.emailHost = "commitea.example.com"
		webhook, email, host := f.deliverKeys(t)
		id, err := store.InstallationID(ctx, f.pool)
		if err != nil {
			t.Fatal(err)
		}
		want := standup.MessageKey(id, f.p.ID, standupDay, standup.SinkWebhook)
		if webhook != want || !strings.Contains(webhook, id) {
			t.Errorf("webhook key %q, want %q", webhook, want)
		}
		if host != "commitea.example.com" || email != standup.MessageKey(id, f.p.ID, standupDay, standup.SinkEmail) {
			t.Errorf("Message-ID <%s@%s>", email, host)
		}
		for sink, d := range f.deliveries(t) {
			if d.MessageKey != standup.MessageKey(id, f.p.ID, standupDay, sink) {
				t.Errorf("%s: stored key %q", sink, d.MessageKey)
			}
		}
		hooks, emails = append(hooks, webhook), append(emails, email)
	}
	if hooks[0] == hooks[1] || emails[0] == emails[1] {
		t.Errorf("two installations share keys: webhook %v, email %v", hooks, emails)
	}
}

// A standup delivered under the old key (project, day and sink only)
// before the upgrade is not delivered again after it, and one still
// pending then goes out under the key it was recorded with, so a receiver
// that saw a first attempt drops the repeat.
func TestUpgradeKeepsTheKeysOfDeliveriesAlreadyRecorded(t *testing.T) {
	f := newStandupFixture(t)
	ctx := context.Background()
	day, _ := ParseDay(standupDay)

	// The database as the previous release left it: no installation, no
	// stored keys, the standup computed and two deliveries recorded, the
	// webhook's done, the email's still pending (a crash before sending).
	var version int
	if err := f.pool.QueryRow(ctx, `SELECT version FROM schema_migrations WHERE name LIKE '%installation%'`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`DROP TABLE installation`,
		`ALTER TABLE standup_deliveries DROP COLUMN message_key`,
		fmt.Sprintf(`DELETE FROM schema_migrations WHERE version = %d`, version),
	} {
		if _, err := f.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	g, err := f.standups.Generate(ctx, f.p.ID, day)
	if err != nil {
		t.Fatal(err)
	}
	content := fmt.Sprintf(`{"project":"acme/app","day":%q}`, standupDay)
	if _, err := f.pool.Exec(ctx, `INSERT INTO standups (project_id, day, snapshot_version, content, text) VALUES ($1, $2, $3, $4, $5)`,
		f.p.ID, day, g.SnapshotVersion, content, g.Text); err != nil {
		t.Fatal(err)
	}
	if _, err := f.pool.Exec(ctx, `INSERT INTO standup_deliveries (project_id, day, sink, status, attempts, delivered_at)
		VALUES ($1, $2, 'webhook', 'delivered', 1, now()), ($1, $2, 'email', 'pending', 0, NULL)`, f.p.ID, day); err != nil {
		t.Fatal(err)
	}

	if err := store.Migrate(ctx, f.pool, quietLog()); err != nil {
		t.Fatal(err)
	}
	old := func(sink string) string { return fmt.Sprintf("commitea-standup-%d-%s-%s", f.p.ID, standupDay, sink) }
	ds := f.deliveries(t)
	if ds["webhook"].MessageKey != old("webhook") || ds["email"].MessageKey != old("email") {
		t.Fatalf("after the upgrade the keys are %q and %q, want the old ones", ds["webhook"].MessageKey, ds["email"].MessageKey)
	}

	jobs := f.startJobs(t)
	if _, err := jobs.Insert(ctx, StandupArgs{ProjectID: f.p.ID, Day: standupDay}, nil); err != nil {
		t.Fatal(err)
	}
	f.waitIdle(t)
	got := f.received(t)
	if got[standup.SinkWebhook] != 0 {
		t.Errorf("the webhook got the standup delivered before the upgrade again (%d times)", got[standup.SinkWebhook])
	}
	if got[standup.SinkEmail] != 1 {
		t.Fatalf("email received %d, want the pending delivery once", got[standup.SinkEmail])
	}
	if m := messageID.FindStringSubmatch(f.smtp.Messages()[0].Data); m == nil || m[1] != old("email") {
		t.Errorf("the pending email went out as %v, want its recorded key %s", m, old("email"))
	}
	// Sinks first recorded after the upgrade get the new key.
	id, err := store.InstallationID(ctx, f.pool)
	if err != nil {
		t.Fatal(err)
	}
	if k := f.webhook.Received(); len(k) != 0 {
		t.Fatalf("webhook received %d", len(k))
	}
	if s := f.deliveries(t)[standup.SinkSlack]; s.MessageKey != standup.MessageKey(id, f.p.ID, standupDay, standup.SinkSlack) {
		t.Errorf("a delivery recorded after the upgrade has key %q", s.MessageKey)
	}
}
