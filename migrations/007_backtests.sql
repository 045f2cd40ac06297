-- 007: the latest backtest of each project's own history, which the
-- calibration view shows as the coverage its forecasts have earned.

CREATE TABLE backtests (
    project_id  bigint PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
    -- done_hash identifies the finished work the backtest was run on, so a
    -- recompute knows when it is out of date.
    done_hash   text NOT NULL,
    computed_at timestamptz NOT NULL DEFAULT now(),
    duration_ms double precision NOT NULL,
    result      jsonb NOT NULL
);
