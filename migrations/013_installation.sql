-- This installation's identity: delivery keys carry it, so that two
-- installations (a staging copy, a second team) never send receivers the
-- same key for different standups. One row, made on first use
-- (store.InstallationID) with the database it was made in: a database
-- copied from another (CREATE DATABASE … TEMPLATE, a restored dump) is a
-- new installation and makes its own id on first use. Deliveries keep the
-- key they were recorded with, so a new id changes only later ones.
CREATE TABLE installation (
    singleton    boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    id           text NOT NULL,
    database_oid oid NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- The idempotency key a delivery is sent under, fixed when the delivery is
-- first recorded: a retry, or a run after an upgrade that changed how keys
-- are made, sends the same key as the first attempt, so a receiver that
-- deduplicates on it drops the repeat. Deliveries recorded before this
-- migration keep the key they were (or would have been) sent under.
ALTER TABLE standup_deliveries ADD COLUMN message_key text NOT NULL DEFAULT '';
UPDATE standup_deliveries
SET message_key = 'commitea-standup-' || project_id || '-' || to_char(day, 'YYYY-MM-DD') || '-' || sink;
