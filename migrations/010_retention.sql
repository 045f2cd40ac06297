-- 010: retention. Deliveries (whole webhook bodies) and Reginald's turn
-- summaries are pruned by age; these indexes let the pruning find old rows
-- without reading the tables whole.
CREATE INDEX deliveries_received ON deliveries (received_at);
CREATE INDEX conversation_turns_created ON conversation_turns (created_at);
