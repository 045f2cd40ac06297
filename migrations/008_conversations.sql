-- 008: Reginald's conversations. A conversation keeps only a short summary
-- of each earlier turn (question, answer, the views read); ticket data is
-- fetched through the tools again on every turn, never stored here.

CREATE TABLE conversation_turns (
    conversation_id text NOT NULL,
    turn            integer NOT NULL,
    project         text NOT NULL,
    summary         text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (conversation_id, turn)
);
