-- 008: Reginald's conversations. A conversation keeps only a short summary
-- of each earlier turn (question, answer, the views read); ticket data is
-- fetched through the tools again on every turn, never stored here.

-- A conversation belongs to the token that holds it: the same id under
-- another token is another conversation, so one caller cannot read
-- another's questions by guessing an id.
CREATE TABLE conversation_turns (
    caller          text NOT NULL,
    conversation_id text NOT NULL,
    turn            integer NOT NULL,
    project         text NOT NULL,
    summary         text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (caller, conversation_id, turn)
);
