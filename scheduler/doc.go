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
// sigma = 1.4826·MAD, pooled towards the prior's 1.63 (SpreadSigma, the one
// spread rule of the live forecast and both backtests): a wider one as if
// the prior were 400 samples (a wide spread from few issues is mostly bulk
// closures and imports), a narrower one with 100 × the share of samples
// whose effort is the people-less replay's queue-share stand-in (which hands
// every issue open at the same time the same hours, an artefact), so a
// narrow spread of tracked time or a person's working hours stands as
// earned. Part of sigma is shared by every issue of a trial
// (Calibration.SharedSigma, SharedSpread): the drift of the median residual
// between 28-day periods beyond sampling noise, plus the centre's own
// uncertainty, at most 0.8·sigma; the drift is scaled by 8 (chosen by
// cross-validation: 28-day medians of finished work cannot see work closed
// in batches). The kernel correlates a trial's draws by (shared/sigma)²
// through their normal scores, so an issue's range is unchanged while a
// milestone's issues run slow or fast together; a label (outside est/ and p/) or person bias is its
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
// Parameters are chosen by leave-one-history-out cross-validation over the
// eight shared Jira histories (TestRealDataCV; testdata/jira-history is a
// copy of them, and no other project of that dataset is read): every
// candidate is backtested on every history, each fold picks on the seven
// others the candidate with the least coverage error (|p50−.5| + |p80−.8|
// + |p90−.9|) plus pinball loss relative to the baseline, items and sets
// alike, and scores it on the one left out. Held out, pooled by cut-off
// (each cut-off weighs the same; sets are one per cut-off), 400 trials
// ("wide" and "narrow" the sigma prior's weights, "floor" the queue floor,
// "shared" the drift scale; "i." items, "s." sets, "pin" pinball loss over
// the baseline's):
//
//	go test ./scheduler -run RealDataCV -v
//	training objective by candidate (all eight, for reference only):
//	  wide=100 narrow=100 floor=0 shared=0     1.868 | items 0.537 0.791 0.885 0.872x | sets 0.743 0.855 0.888 0.626x
//	  wide=100 narrow=100 floor=0 shared=8     1.508 | items 0.533 0.790 0.883 0.872x | sets 0.517 0.825 0.873 0.508x
//	  wide=100 narrow=100 floor=0 shared=16    1.500 | items 0.533 0.790 0.883 0.872x | sets 0.512 0.825 0.873 0.505x
//	  wide=400 narrow=100 floor=0 shared=0     1.763 | items 0.526 0.782 0.880 0.827x | sets 0.739 0.851 0.886 0.567x
//	  wide=400 narrow=100 floor=0 shared=8     1.423 | items 0.522 0.781 0.877 0.827x | sets 0.493 0.822 0.871 0.475x
//	  wide=400 narrow=100 floor=0 shared=16    1.426 | items 0.522 0.781 0.877 0.827x | sets 0.488 0.822 0.871 0.473x
//	held out  chosen on the others                     | i.p50 i.p80 i.p90  i.pin | s.p50 s.p80 s.p90  s.pin
//	APSTUD    wide=400 narrow=100 floor=0 shared=8     | 0.601 0.847 0.924 0.917x | 0.667 0.972 1.000 1.502x
//	BE        wide=400 narrow=100 floor=0 shared=8     | 0.444 0.745 0.859 0.656x | 0.459 0.757 0.919 0.493x
//	CLOV      wide=400 narrow=100 floor=0 shared=8     | 0.560 0.824 0.911 1.051x | 0.672 0.875 0.953 1.083x
//	DAEMON    wide=400 narrow=100 floor=0 shared=8     | 0.498 0.745 0.872 0.674x | 0.478 0.565 0.565 0.958x
//	MESOS     wide=400 narrow=100 floor=0 shared=16    | 0.457 0.718 0.854 0.725x | 0.514 0.840 0.847 0.309x
//	TIMOB     wide=400 narrow=100 floor=0 shared=16    | 0.566 0.826 0.907 0.889x | 0.459 0.804 0.842 0.478x
//	USERGRID  wide=400 narrow=100 floor=0 shared=16    | 0.592 0.878 0.936 0.709x | 0.174 0.783 0.913 0.287x
//	XD        wide=400 narrow=100 floor=0 shared=16    | 0.448 0.676 0.749 0.815x | 0.386 0.843 0.929 0.254x
//	pooled by cut-off, held out (400 trials):
//	  items  786 cut-offs: p50 0.522 p80 0.781 p90 0.877 pinball 134.1 vs baseline 162.2 (0.827x)
//	  sets   606 cut-offs: p50 0.488 p80 0.822 p90 0.871 pinball 194.7 vs baseline 411.8 (0.473x)
//	  items pooled by issue instead: p50 0.475 p80 0.756 p90 0.882 pinball 0.790x
//
// Against the goals (p50 0.45–0.55, p80 0.78–0.85, p90 ≥ 0.87, pinball
// < 0.85×) items and sets meet all four. At 200 trials the same model and
// grid gave sets' p90 0.868 (0.8955 of a forecast's own distribution
// is what the nearest-rank 180th of 200 draws covers on average): the
// figures are at 400 trials, as BenchmarkRealDataBacktest, nearer the
// live forecast's 2,000, and no parameter changed (sets' p90 is 528 of
// 606, one set over the goal). Per history the small, bursty APSTUD and CLOV
// still lose to the baseline on pinball. Without the shared factor sets
// run late (p50 0.741–0.752: the last of many independent draws is late
// and narrow, while on MESOS a set's issues cover their own p50 only 0.35
// of the time and the set's last finish its p50 0.75: Jira projects close
// work in batches at releases). The prior weight 400 for a wide sigma beat
// 100 in every fold. More correlation does not buy the sets' p90: the cap
// of the shared spread at 0.8·sigma binds at scales 8 and 16, and a cap of
// 0.95 makes sets early (p50 0.345, training objective 1.627 against
// 1.419; COMMITEA_CV_GRID='wide=400;shared=8,16;cap=0.8,0.95'). Choices
// the held-out scores dropped: that cap, a scale of 1 on
// the measured drift, and the factor applied to efforts instead of their
// normal scores (it narrowed started issues: items p80 0.760, p90 0.869);
// a queue floor of 0.5 (chosen by one fold of eight, training objective
// 1.719 against 1.713); a wide prior weight of 25 (1.806 against 1.713);
// pooling a narrow stand-in sigma changed nothing on these histories (the
// stand-in's measured sigma is wider than the prior's at their cut-offs;
// 1.713 either way), and stays as the rule for histories where it is not:
//
//	COMMITEA_CV_GRID='narrow=-1,100;floor=-1;shared=-1,1' go test ./scheduler -run RealDataCV -v
//	COMMITEA_CV_GRID='wide=100,25;narrow=100;floor=-1,0.5;shared=1,2.5' go test ./scheduler -run RealDataCV -v
//
// (both before the factor moved to normal scores).
//
// Tried again with the shared factor in place at 200 trials, and dropped
// (sets' p90 stays 0.868 there): a queue floor of 0.5 or 1 (training objective 1.439 and
// 1.534 against 1.419; floor=0.5 was chosen by the MESOS fold only); a
// lower cap of 0.7 or 0.75 (no fold chose one: sets' p50 rises to
// 0.53–0.57 before their p90 reaches 0.871–0.873); and a heavy-tailed
// factor (in one trial of ten m = 3, 5 or 8 times its variance, less in
// the others, every issue's own distribution kept exactly), alone or with
// caps of 0.85 and 0.9: chosen by four folds of eight, held out sets p90
// 527 of 606 (0.8696). What holds the sets' upper tail short is Run's
// calendar horizon: four times the busiest person's mean load plus 400
// days, past which a timeline is extrapolated as if worked around the
// clock. For a modelled worker of a few minutes a day that is about the
// 95th percentile of one issue's effort at sigma 1.6, less for a started
// one, and a set's last finish lies beyond it. A horizon that also holds
// the largest draw of any one issue gives, held out, sets p50 0.480 p80
// 0.847 p90 0.944 (pinball 0.636x), but items p80 0.780 and pinball
// 0.920x (every fold chose a wide prior weight of 6400 among 400, 1600
// and 6400).
//
// Why the truncation helps, and why the figures above flatter the model:
// the shared histories hold only issues resolved by their export (their
// newest resolution), so every outcome scored at a cut-off lies within L =
// export − cut-off days, while Backtest scores that truncated sample as if
// it were complete. A forecast with mass beyond L is charged for outcomes
// the export could not hold; the horizon removes much of that mass. The
// right score compares each outcome with the forecast conditioned on
// finishing within L (its quantile p read at p·F(L)). On a generated
// history of lognormal durations (σ 1.8) cut at an export, scoring the
// truncated copy as complete raises items' coverage from the full
// history's p50 0.538 p80 0.800 p90 0.890 to 0.600 0.865 0.939;
// conditioned on L it gives 0.542 0.793 0.892 (TestBacktestConditionedOnTheExport,
// on the default options and pooled by issue: full 0.509 0.785 0.879,
// plain 0.571 0.865 0.943, conditioned 0.493 0.787 0.888). Scored that
// way, held out, with every fold choosing on the conditioned objective,
// the model and grid above give items p50 0.450 p80 0.695 p90 0.804
// (pinball 0.598x) and sets 0.513 0.731 0.825 (0.288x): the model runs
// early, and the goals are met only through the scoring. The baseline's
// score does not move (its ranges end before L). Measured with the horizon
// holding every draw and conditioned scores, held out, and not landed
// since none meets the items' goals: the grid above with wide prior
// weights up to 6400 (items 0.463 0.702 0.807, sets 0.285 0.607 0.812);
// queue floors of 1.5 to 3, which no longer act only when the queue
// shrinks but slow every forecast (items 0.604 0.813 0.882, sets 0.439
// 0.769 0.886); a floor of 1.5–2 with a shared scale of 2.5 (sets 0.485
// 0.794 0.899 0.251x, items 0.566 0.786 0.866); open issues as censored
// samples (a Kaplan–Meier median and quartile sigma of ln(actual/nominal)
// over the done issues and the open ones' hours so far) with wide prior
// weights of 1600–6400 and a floor of 1 (sets 0.480 0.790 0.901 0.260x,
// items 0.509 0.749 0.849 0.570x), and with a heavier upper tail besides,
// sigma above the median 1, 1.1 or 1.2 times the one below (sets 0.480
// 0.807 0.908 0.259x, items 0.522 0.766 0.858 0.562x: 1.2 meets every goal
// on all eight at once, and the folds holding out TIMOB and DAEMON choose
// 1). What stays short is the upper tail of young issues: open at most a
// week at the cut-off, p50 0.561 but p80 0.750 and p90 0.826.
//
// So the model, the horizon and the plain score stay as they are, and the
// goals (TestRealDataCV's assertions, the table above) are still held to
// the plain score; the conditioned score is reported beside it, not held
// to the goals. Backtest returns both: BacktestResult.Conditioned scores
// the same forecasts against the same outcomes conditioned on finishing
// within L, items and sets, the baseline on its own trials within L, the
// export taken as the newest resolution (the rules are in backtest.go);
// `commitea backtest` prints it as its "export-cond" rows and --json as
// "conditioned": {"items": {...}, "sets": {...}}, the fields of the plain
// score. TestRealDataCV prints it for the held-out forecasts above, chosen
// on the plain objective (which is why it differs from the figures just
// quoted, where the folds chose on the conditioned one, mostly wide=100
// shared=0):
//
//	conditioned on the export (outcomes within export − cut-off), the same held-out forecasts:
//	  items  786 cut-offs: p50 0.442 p80 0.688 p90 0.798 pinball 97.8 vs baseline 162.2 (0.603x)
//	  sets   606 cut-offs: p50 0.322 p80 0.703 p90 0.809 pinball 110.7 vs baseline 411.8 (0.269x)
//	  items pooled by issue instead: p50 0.394 p80 0.642 p90 0.794 pinball 0.612x
//
// Against the goals, scored this way, items miss p50 (0.442), p80 and p90
// and sets all three (p50 0.322: early), while both keep a pinball loss
// far below the baseline's. A rule that meets the goals on the
// conditioned score is still to be found.
package scheduler
