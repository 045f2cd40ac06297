// Package store is the only package that talks to Postgres. It owns the
// mirror of Gitea, deliveries, snapshots and the migration runner; its
// methods take a pool or a transaction so a webhook's write and River's
// InsertTx share one transaction.
package store
