// Package standup computes a project's daily standup from its snapshots,
// renders it as text and delivers it to sinks.
//
// Everything in a standup is computed here, deterministically: the
// milestones at risk (open work and a p80 after the due date, the runway's
// amber and red), each with its chance of making the date and the issues on
// its critical chain; drift (each milestone whose p50 or p80 moved by at
// least one working day since the previous standup, with its causes); a
// plan per person (their capacity, done since the last standup, now, next,
// blocked), where work on a milestone's critical chain is flagged; stale
// blockers; and aging work (open, started issues older than the service
// level expectation the recompute reads from the flow metrics, oldest
// first). A language model may phrase the result (Phraser); its
// prose is kept only when every claim in it is a value of the subject it
// is said of (package prose binds them: a date next to #432 is #432's, a
// status word next to a milestone agrees with its chance and slack), with
// what the project has beyond the report (Known: every milestone's
// forecast, every name) as facts too, and when it mentions every subject
// of the report (Report.Subjects, so sections added later are covered);
// otherwise the deterministic template is used.
//
// # Critical chains
//
// An issue is on its milestone's critical chain when it lay on it in at
// least half the Monte Carlo trials (IssueForecast.CriticalFreq ≥ 0.5).
// An at-risk milestone lists up to five such issues, most frequent first;
// when none reaches half (the chain changes from trial to trial) it lists
// its three most frequent links with their shares, so the reader still sees
// where to look. Now, next and blocked work at or above the bar, or listed
// in an at-risk milestone's chain, carries a CriticalFlag naming the
// milestone, the share and whether the milestone is at risk; when its
// person works part-time (under half the team's median hours a week) the
// item is flagged part-time too, since the chain then waits on few hours.
//
// # Sections: the report's structure and how to extend it
//
// A Report holds typed data, one field per part (AtRisk, Drift, Plan,
// StaleBlockers), and Report.Sections presents it as a reader sees it: a
// list of Section values, each a heading and Entries. An Entry has a
// Subject (an issue by number, a person by login, a milestone by title:
// Subject.Mention is the name prose uses), the rest of its line, Flags
// (critical chain, hard deadline, late, blocked) and sub-entries grouped
// by Role (a milestone's critical chain; a person's done, now, next,
// blocked; a drift's causes). Everything that shows a standup walks
// Sections: Template (and so the prose fallback and every sink), the
// dashboard's standup page, and Report.Subjects, the flat list of every
// subject a complete text names, which a completeness check of model prose
// compares against without knowing any section.
//
// To add a section (aging work, say):
//
//  1. give Report a field for its data, with a JSON name, and fill it in
//     Build from Input (add to Input or Snapshot what it needs);
//  2. write a method returning its Section, with a SectionX key constant,
//     every item an Entry whose Subject is the issue, person or milestone
//     it is about;
//  3. append it to the list in Report.Sections.
//
// Template, the page, Subjects and the prose facts (every field of the
// report but the baseline) then include it with no other change. To add to
// an existing section (the best rescue option of an at-risk milestone, say)
// add a field to its data type (AtRiskMilestone) and a sub-entry with a
// role of its own in that section's method. A stored standup is the
// Report's JSON, so new fields must tolerate being absent in older ones.
//
// # Baselines
//
// The previous standup's snapshot may have been pruned by the time the next
// standup runs (snapshots are kept by count, and a weekend of recomputes
// goes through many), so each report carries a Baseline: the part of its
// snapshot the next drift computation compares against (milestone dates,
// each milestone's open issues and estimates, the calibration). Drift is
// the comparison of that baseline with the current snapshot plus the
// lifecycle transitions recorded between the two.
//
// A first standup has no baseline stored before it. Rather than say
// nothing of drift it compares with the project as it stood at the
// previous working day's hour: the mirror read back from the issue
// history and forecast as the recompute would have (worker's
// Forecaster.BaselineAt; Input.Reconstructed). The report says so
// (Report.Reconstructed), since no standup of that day was ever sent.
package standup
