// Package standup computes a project's daily standup from its snapshots,
// renders it as text and delivers it to sinks.
//
// Everything in a standup is computed here, deterministically: drift (each
// milestone whose p50 or p80 moved by at least one working day since the
// previous standup, with its causes), a plan per person (done since the last
// standup, now, next, blocked) and stale blockers. A language model may
// phrase the result (Phraser); its prose is kept only when every number and
// date in it appears in the report (package prose checks that), otherwise
// the deterministic template is used.
//
// The previous standup's snapshot may have been pruned by the time the next
// standup runs (snapshots are kept by count, and a weekend of recomputes
// goes through many), so each report carries a Baseline: the part of its
// snapshot the next drift computation compares against (milestone dates,
// each milestone's open issues and estimates, the calibration). Drift is
// the comparison of that baseline with the current snapshot plus the
// lifecycle transitions recorded between the two.
package standup
