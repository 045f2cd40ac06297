// Package gitea is CommiTea's adapter to Gitea (and Forgejo): the JSON types
// shared by the REST API and webhook payloads, their conversion into mirror
// rows (package store), the decoding of a webhook delivery into the mirror
// change it calls for, and a client for the reads that reconcile and
// backfill need and the writes apply_changes makes.
//
// The client is built on code.gitea.io/sdk/gitea and speaks raw HTTP only
// where the SDK is wrong.
//
// Through the SDK: listing issues (state all, type all, since), pull
// requests (state all), labels, milestones (state all), tracked times,
// repository comments and an issue's dependencies; getting and creating an
// issue; creating a label; adding, replacing, removing and clearing an
// issue's labels; editing an issue and a milestone; and, for sign-in
// (access.go), a person's permission on a repository (the
// collaborator-permission endpoint, read with CommiTea's token), the
// repository's visibility and the user a token belongs to. The SDK's results are
// converted into this package's types (sdkconvert.go), so callers see one
// set of types for API reads and webhooks alike. The SDK's edit options
// have no omitempty and send unset fields as "title": "" and null; Gitea
// reads both as "leave as is" (routers/api/v1/repo/issue.go and
// milestone.go: an empty title is skipped, nil pointers and a nil assignee
// list are skipped), while milestone 0 and assignees [] clear, so they
// express every edit EditIssueOptions and EditMilestoneOptions can. An
// empty title is refused before sending, since Gitea would keep the old one.
//
// Raw HTTP:
//   - the issue timeline: the SDK's TimelineComment declares "label" as a
//     list while Gitea sends one object, so any label event fails to decode;
//   - adding and removing a dependency: the SDK's IssueMeta carries only the
//     index, while Gitea wants owner, repo and index (and dependencies may
//     cross repositories).
//
// Both paths share one http.Client whose RoundTripper (transport.go) does
// the retries: 429, 5xx and network errors are retried with exponential
// backoff and full jitter, Retry-After is respected up to a cap, and a
// retry that would pass the call's deadline is not attempted. Idempotent
// methods (GET, PUT, DELETE) are retried on any transient failure; creating
// an issue or a label is repeated only when the server cannot have acted
// (429, or a connection never made), since a repeat would file a duplicate;
// PATCH edits of absolute values and adding labels are marked safe. What
// the transport saw travels back in the call's context and becomes an
// *APIError (ErrNotFound, ErrUnavailable). The same transport paces the
// client as a whole: at most Options.MaxConcurrent requests in flight
// across every caller, and a 429 pauses every request until its
// Retry-After, since a forge's rate limit is about the client, not the
// one request it refused.
//
// Every call gets its own deadline (Options.CallTimeout; a paged listing is
// one call per page) and, on the SDK path, its own SDK client: SetContext
// binds a client to one context, so a client shared between goroutines
// would mix their deadlines and cancellations. Those clients are made with
// SetGiteaVersion(""), so NewClient sends no /version request and the SDK's
// version-dependent fallbacks stay off; making one costs no request.
// Listings page with page/limit until X-Total-Count (else Link rel="next",
// else a short page) says they are complete.
//
// Subpackage giteafake is an in-memory fake of the recorded Forgejo for tests.
package gitea
