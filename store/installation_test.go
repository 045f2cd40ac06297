package store_test

import (
	"context"
	"testing"

	"github.com/commitea/commitea/store"
	"github.com/commitea/commitea/store/storetest"
)

// The installation id is made once and kept; a database that is a copy of
// another (its row names another database) makes its own.
func TestInstallationID(t *testing.T) {
	_, pool := storetest.NewDB(t)
	ctx := context.Background()
	first, err := store.InstallationID(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	again, err := store.InstallationID(ctx, pool)
	if err != nil || again != first || len(first) != 32 {
		t.Fatalf("ids %q then %q (%v)", first, again, err)
	}
	// As a copy finds it: the row of the database it was copied from.
	if _, err := pool.Exec(ctx, `UPDATE installation SET database_oid = 1`); err != nil {
		t.Fatal(err)
	}
	copied, err := store.InstallationID(ctx, pool)
	if err != nil || copied == first {
		t.Fatalf("a copy kept the id %q (%v)", copied, err)
	}
	if again, _ := store.InstallationID(ctx, pool); again != copied {
		t.Fatalf("the copy's id changed again: %q, %q", copied, again)
	}
}
