-- 019: a snapshot's rescue options live beside its data, written after the
-- snapshot is published. The rescue search takes about a second per
-- milestone at risk; inside the recompute it held back every fresh
-- forecast by that much. NULL means "still being computed" (readers say
-- so); otherwise the complete list, '[]' when no milestone is at risk.
-- Snapshots stored before this kept their options in data->'rescue'.
ALTER TABLE snapshots ADD COLUMN rescue jsonb;
UPDATE snapshots SET rescue = coalesce(nullif(data->'rescue', 'null'), '[]');
