// Package scheduler is CommiTea's pure domain core: lifecycle inference,
// effort calibration, the Monte Carlo schedule, focus and runway, what-if,
// backtest and flow metrics. It takes plain structs and a seed and returns plain structs;
// it imports only the standard library and gonum, so it runs and benchmarks
// without a database. Where the design left a choice open, the choice is
// written down here.
//
// # Lifecycle
//
// Infer evaluates every issue of a project at one instant with a single
// rule, which Replay also applies step by step to rebuild an issue's
// transitions from its Gitea timeline, so live ingest (Diff; the worker
// cites "delivery:<id>") and backfill ("timeline:<event id>") agree. First
// match wins: done (closed; discarded when a wontfix, duplicate, invalid or
// not-planned label, or a scoped label ending so, is present, case and
// punctuation ignored), in_review (an open pull request closes it by keyword
// close/closes/closed, fix/fixes/fixed, resolve/resolves/resolved + "#N", or
// its head branch is the issue's ref), steeping (assigned), triage (an
// estimate, an explicit p/0..p/3 or a milestone), diagnosis. Flags, on open
// issues: blocked (an open dependency in this repository; other repositories
// are not followed), stale (steeping with at least 3 whole working days
// without activity between the last activity's date and today on the first
// assignee's calendar), missing_estimate, and unschedulable with the first
// reason of cycle, missing_dependency, too_large (est/xxl, est/xxxl, ...,
// est/2xl, ...; other unknown est/* values are only a missing estimate),
// inherited by issues that depend on an unschedulable one; aging is set
// afterwards from the flow metrics (see Flow). Every value
// carries its provenance ("label:est/m", "pr:#12 closes #5",
// "assignee:alice"). Pull requests get no status of their own.
//
// # Calibration
//
// A sample is a done, non-discarded issue that carries an estimate; actual
// effort is tracked time, else the working hours in steeping/in_review
// shared equally among the assignee's concurrent issues
// (SharedWorkingHours). Work closed too fast to have been work (under 5
// working minutes or 1/64 of the nominal hours: bulk closes, imports,
// duplicates closed on sight) is not a sample (PlausibleSample; counted in
// Calibration.Implausible), and the multiplier stays within
// MultiplierBound(n) = 4·√(n/10) (at least 4) of the prior either way. ln(actual/nominal) = mu + label bias + person bias +
// e is fitted over the last year of samples (at most 1,000): mu = median,
// sigma = 1.4826·MAD, pooled towards the prior's 1.63 as if it were 100
// samples when wider (a wide spread from few issues is mostly bulk closures
// and imports; a narrow one is kept as earned); a label (outside est/ and p/) or person bias is its
// median residual shrunk by n/(n+5), groups of one ignored. Under 10
// samples is a cold start with priors derived from public data in
// TestRealDataPriors: multiplier 1.0 and sigma 1.63 (2,480 Jira issues,
// ln(spent/estimate) median 0.00, MAD-sigma 1.63), 1.42 h per story point
// (median in-progress working hours per point over 6,594 issues).
//
// # Monte Carlo schedule
//
// Run forecasts open work. Each trial draws every open issue's effort from
// its calibrated lognormal (Calibration.EffortParams of the estimate's
// nominal hours; an issue without an estimate counts as est/m with a 1.5x
// wider sigma; a steeping or in-review issue with SpentHours draws its total
// conditioned on exceeding them, by inverse CDF, and schedules the
// remainder), then list-schedules it: one fixed work order (priority, hard
// deadline, earliest milestone due, already started, number; dependencies
// pulled ahead of their dependents, taking the rank of the most urgent
// one); each person works their share in that
// order, one issue at a time, on their calendar (a window from 09:00 local
// for HoursPerDay hours on WorkingDays, minus holidays and time off; the
// zero Calendar is 6 h Monday to Friday, UTC); an issue starts when all its
// dependencies are done. Unassigned issues go to whoever frees up first in a
// planning pass at median effort and keep that person in every trial: giving
// them out afresh per trial made bigger estimates finish some issues
// earlier, which a forecast people trust must never do; within an hour the
// plan's choices stand (see One planning rule). Unknown
// dependencies, cycles and estimates above est/xl make an issue, and what
// depends on it, unschedulable with that reason.
//
// Output: per issue p10/p50/p80 and how often it is on its milestone's
// critical chain; per milestone p10/p50/p80 of its last issue's finish, the
// chance of meeting the due date (two decimals, as shown everywhere) and
// slack (due − p80 in whole working days, Monday to Friday, between the two
// dates); per person median load. Draws are keyed by a counter hash of
// (seed, draw key, trial) into lognormal tables, the draw key being the
// issue's number or, for an issue filed from a proposal, the proposal's key;
// the seed is derived from the input unless given, so equal inputs give
// equal output whatever the number of workers, and a what-if differs from
// its baseline only where it reaches. Trials run in blocks of 64 on every
// core; issue quantiles come from 128-bucket histograms sized by a 256-trial
// pilot, milestone quantiles are exact.
//
// # Focus, runway and what-if
//
// Focus ranks a person's (or the team's) issues by priority, hard deadline,
// milestone risk, critical-chain frequency, issues unblocked and p50;
// blocked issues wait in Later; Now is the issue in progress or the top one;
// each item has a one-line rationale from those factors. Runway lists each
// milestone's p50–p80 band, due date and slack, and the team's weekly
// capacity and load. WhatIf applies changes (estimate, priority, milestone,
// due date, hardness, dependencies, close, label removal, proposed issues,
// capacity) to a copy of an Input, forecasts both with the same seed and
// plan and describes the difference, or says "no change"; DiffForecasts
// describes any two forecasts the same way, listing only what changed as
// people read it (dates to the day, pDue to two decimals, slack).
//
// # One planning rule
//
// What a write tool quotes before a change is what the first snapshot
// after the change shows, to the day and to two decimals of pDue, for
// every milestone and issue. Both come from one function of a mirror state
// and a plan (worker: Forecaster.forecast): the lifecycle inferred as of
// the plan's hour, the calibration fitted on that state's samples, the
// capacity calendar, the draw keys and the plan's choices. The what-if
// makes its changes to a copy of the mirror the way Gitea and the
// write-through will (labels of a scope replaced, closed_at stamped, a new
// issue numbered after every number the mirror holds), not to the engine's
// input, so a close that makes a calibration sample, an estimate that moves
// an issue from diagnosis to triage or a label removed are forecast as the
// recompute will forecast them.
//
// A plan is an hour (AsOf: the forecast's Now, rounded down to the hour,
// UTC) and who picks up each unassigned issue in it (Input.Planned). The
// first snapshot of an hour plans afresh; later ones keep its choices, plan
// unassigned issues new since around them and keep those choices too. Effort already
// spent is measured up to the hour, so a close or a start later in the hour
// counts from the next one, whichever clock read it. Proposed issues keep
// their draws once Gitea files them (ProposalDrawKey, recorded for the
// issue filed), and take their place in the work order by their expected
// number: after every issue there is, in the batch's order.
//
// A what-if is made on the plan the next recompute forecasts the change on
// first: the one a write tool holds (below), else the latest snapshot's,
// the forecast its caller sees. When the mirror changed since the latest
// snapshot and that plan's hour is over, the recompute stores a snapshot on
// it anyway, then one on the current hour's plan: the boundary is crossed
// in a snapshot of its own, and the quote is what the first one shows. A
// write tool holds the plan it quoted on with each of its writes (a
// periodic recompute landing between the quote and the write would
// otherwise move to the new hour's plan first); the recompute that covers
// the writes releases it. Its baseline is the latest snapshot's forecast
// when that snapshot was computed from the same input, else forecast too.
//
// Where a PM's two expectations conflict, the quote coming true wins over a
// change moving only what it touches: a close that adds a calibration
// sample moves every estimate with it, and the quote says so. Within a
// plan both hold for everything else: the plan's choices of who picks up
// what do not move with a change, so more work or less capacity never
// makes any issue's or milestone's date earlier or its chance of the due
// date higher, and less work or more capacity never the reverse; a hire
// takes unassigned work from the next hour's plan on (the forecast of that
// hour then shows it). An added dependency on work already ahead of its
// dependent in the work order only adds a wait and moves nothing earlier;
// one on work queued behind it pulls that work ahead (it is needed first),
// which may then finish earlier, and so may what waits on it, but never the
// dependent itself; one that closes a cycle makes its issues unschedulable
// and their milestone is forecast from the rest. Issue dates are exact to
// the day (and so monotone) within 256 days; further out they are read
// from buckets of 2, 4, ... days, their last day, which keeps them
// monotone. api/quote_test.go holds both properties on generated projects
// through the fake forge. Capacity directives shape the calendars from the plan's hour on;
// spent effort and calibration samples are measured on the configured
// calendars, so telling CommiTea about time off never rewrites how much
// work the past held.
//
// # Flow
//
// Flow computes, from the recorded transitions alone, what Kanban teams
// read every day; the recompute stores it with the snapshot. Every figure
// is in calendar days of the project's time zone (a day is a local date, a
// week runs Monday to Sunday), over a window of the last 90 local dates up
// to today (FlowOptions.WindowDays), which starts no earlier than the
// project's first recorded transition. An issue's state on a day is its
// state at the end of that day. Discarded issues are not delivered work and
// are left out of every figure.
//
//   - Started: the first transition into steeping or in_review. Done: the
//     issue's last transition is into done, on that transition's date.
//   - Cycle time of an issue done in the window: done date − start date + 1
//     calendar days (started and finished the same day is one day). A
//     reopened issue's clock runs on from its first start to its final done;
//     an issue that went back to triage keeps its first start too. Issues
//     done without ever starting count in throughput, not in cycle time
//     (CycleTimes.Unstarted). Its 50th, 70th, 85th and 95th percentiles are
//     nearest rank (the smallest value at least p% of cycle times do not
//     exceed), shown as lines on the scatterplot.
//   - Work item age of an open issue now in steeping or in_review: today −
//     start date + 1, read against those percentiles (Past: the highest one
//     it exceeds).
//   - Service level expectation: the cycle time that SLEPercentile% (85 by
//     default) of the window's finished work met, once at least
//     MinSLESamples (5) cycle times are known; without one nothing is aging.
//   - Aging (a flag, joining blocked, stale, missing_estimate and
//     unschedulable): open, started and older than the SLE, strictly.
//     MarkAging sets it on the statuses with its provenance ("age:19d since
//     2026-03-28", "sle:p85=17d of 40").
//   - Throughput: issues done per Monday week of the window; the first and
//     the current week may be partial (WeekCount.Days). Predictability is
//     read over complete weeks: their 10th, 50th and 90th percentiles and
//     the ratio p90/p10 (1 when every week finishes the same; 0 stands for
//     "unbounded" when the 10th percentile week finishes nothing).
//   - Work in progress: issues in steeping or in_review at the end of each
//     day. Cumulative flow: issues in each of the five states at the end of
//     each day, stacked; the done band counts every issue done so far.
//
// "How many by when": RunDoneBy is Run that also counts, in every trial,
// how many open issues are done by the end of each local day of a horizon
// (day 0 is today), so the answer respects dependencies, calendars and
// estimates like the schedule. It is stored as three curves, "at least N
// with 50%, 80% and 90% probability" (the largest N that that share of
// trials reaches), so any date of the horizon is a lookup (DoneBy.On).
// Unschedulable issues are never done. BaselineDoneBy is the
// throughput-only answer beside it: the backtest baseline's resampling of
// the complete weeks' throughput. Run itself does none of this counting.
// Counting costs about half of what scheduling costs per trial, so a curve
// counts the first DoneByTrials (2,048) trials only: on the 2,000-issue
// benchmark project with a year of days, RunDoneBy took 11% more CPU than
// Run at 10,000 trials (221 against 200 ms) and 39% more at the default
// 2,000 (97 against 70 ms), medians of interleaved runs.
//
// # Backtest
//
// Backtest replays a history: cut-offs every 14 days after a 90-day warm-up
// (at least 20 resolved), up to 180 days before the newest resolution. At
// each one the work then open is forecast by Run from what was known then.
// Histories show that open work is not done in creation order (the rank
// correlation of creation and resolution is −0.2 to −0.6), so the team's
// hours are shared among all open issues (k people, k = mean issues in
// progress over the previous quarter), every open issue conditioned on the
// share it has had; p90 extends p50→p80 lognormally. Scores: coverage of
// p50/p80/p90, median relative width (p90−p10)/(p50−cutoff), and pinball
// loss in days. The baseline resamples weekly throughput over the open queue
// in creation order, as common forecasting tools do. Milestone-shaped sets
// (the open issues created in the 28 days before a cut-off) are scored by
// their last finish, against the baseline's time to complete that many.
//
// On the shared Jira histories (400 trials, seed 1; "b." is the baseline):
//
//	history    cutoffs  items |   p50   p80   p90  width  pinball | b.p50 b.p80 b.p90  b.wid   b.pinb
//	APSTUD          73   2395 | 0.676 0.919 0.982   7.41    118.7 | 0.405 0.463 0.490   1.07     69.1
//	BE              52   1146 | 0.501 0.766 0.885   5.36     42.9 | 0.315 0.357 0.383   1.08     58.1
//	CLOV           105   1297 | 0.591 0.870 0.956   6.12    116.8 | 0.383 0.466 0.506   1.31     80.5
//	DAEMON          73    828 | 0.501 0.764 0.889   4.87    111.6 | 0.319 0.377 0.409   1.71    178.5
//	MESOS          149  61533 | 0.427 0.728 0.914   4.01    145.3 | 0.333 0.350 0.360   0.28    221.7
//	TIMOB          210  40922 | 0.584 0.836 0.913   5.86    275.1 | 0.284 0.310 0.323   0.54    272.1
//	USERGRID        40   1332 | 0.508 0.784 0.872   5.63     57.7 | 0.249 0.290 0.308   0.93     80.5
//	XD              84   5578 | 0.581 0.857 0.941   6.21     51.8 | 0.288 0.335 0.356   1.01     65.3
//	pooled         786 115031 | 0.500 0.779 0.916   5.16    183.8 | 0.314 0.338 0.351   0.42    223.7
//
// Pooled, p50 and p80 coverage are in their target bands, p80 is far closer
// to 80% than the baseline's, and the pinball loss is lower. Per history,
// p50 coverage is in band on seven of eight and p80 on six (APSTUD runs late
// and wide, MESOS's p80 covers 0.73), p80 is closer to 80% than the
// baseline's on all eight, and the pinball loss is lower on five, level on
// TIMOB and higher on the small, bursty APSTUD and CLOV. Pooling a wide
// sigma towards the prior (see Calibration) is what brought the small
// histories near: before it, APSTUD, CLOV and DAEMON scored 290, 233 and
// 466 days.
package scheduler
