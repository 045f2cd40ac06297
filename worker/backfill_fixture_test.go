package worker

import (
	"context"
	"testing"
	"time"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
	"github.com/commitea/commitea/worker/gitea"
	"github.com/commitea/commitea/worker/gitea/giteafake"
)

// backfillFake backfills the fake forge's project into a fresh database as
// of now, with the syncer the tests share (tune, when not nil, adjusts it
// first), and returns the database and the project.
func backfillFake(t *testing.T, fake *giteafake.Server, now time.Time, tune func(*Syncer)) (*store.Pool, store.Project) {
	t.Helper()
	ctx := context.Background()
	_, pool := storetest.NewDB(t)
	client, err := gitea.New(fake.URL, fake.Token(), gitea.Options{BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p, err := store.EnsureProject(ctx, pool, "acme", "teapot")
	if err != nil {
		t.Fatal(err)
	}
	s := &Syncer{Pool: pool, Gitea: client, Log: quietLog(), Replayer: LifecycleReplayer{}, Now: func() time.Time { return now }}
	if tune != nil {
		tune(s)
	}
	if err := s.Backfill(ctx, p); err != nil {
		t.Fatal(err)
	}
	return pool, p
}

// backfillGenerated backfills the project the fake forge generates from gen
// into a fresh database, as of gen.Now.
func backfillGenerated(t *testing.T, gen giteafake.Project) (*store.Pool, store.Project) {
	t.Helper()
	fake, err := giteafake.New(giteafake.Options{Generate: &gen})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	return backfillFake(t, fake, gen.Now, nil)
}
