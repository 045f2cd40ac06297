-- Language-model usage, one row per day, role, tool and model, added to by
-- every request (failed ones too). Daily budgets are checked against the
-- sums of a day's rows, and `commitea usage` prints them.

CREATE TABLE model_usage (
    -- day is the calendar day of the router's time zone (UTC by default).
    day               date NOT NULL,
    role              text NOT NULL,   -- small or big
    tool              text NOT NULL,   -- capture_work, standup, …
    model             text NOT NULL,   -- provider:model that was asked
    requests          bigint NOT NULL DEFAULT 0,
    failures          bigint NOT NULL DEFAULT 0,
    prompt_tokens     bigint NOT NULL DEFAULT 0,
    completion_tokens bigint NOT NULL DEFAULT 0,
    cost_usd          double precision NOT NULL DEFAULT 0,
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (day, role, tool, model)
);
