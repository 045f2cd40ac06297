// Package gitea is CommiTea's adapter to Gitea (and Forgejo): the JSON types
// shared by the REST API and webhook payloads, their conversion into mirror
// rows (package store), the decoding of a webhook delivery into the mirror
// change it calls for, and an HTTP client for the reads that reconcile and
// backfill need and the writes apply_changes makes.
//
// The client speaks raw HTTP (net/http) for every call rather than wrapping
// code.gitea.io/sdk/gitea. The SDK is wrong or unsafe exactly where this
// client has to be right:
//   - its calls take no context; SetContext mutates the shared client, so two
//     goroutines race on each other's deadlines and cancellations;
//   - NewClient calls the server's version endpoint unless given
//     SetGiteaVersion(""), a network call at construction;
//   - its timeline type cannot decode label events (label is an object);
//   - its dependency calls send only the index, while Gitea wants index,
//     owner and repo (cross-repository dependencies);
//   - its edit option structs have no omitempty, so an edit sends
//     "assignees": null, "body": null... instead of the one field the real
//     requests carry, and cannot tell "leave the milestone" from "clear it".
//
// What remains (issue, label, milestone and list calls) would be a thin
// layer over the same requests, and keeping every call on one path gives one
// place for the per-call timeout, retries with backoff and jitter on
// 429/5xx/network errors (Retry-After respected), paging, and typed errors
// (ErrNotFound, ErrUnavailable via *APIError). So the SDK is not imported.
//
// Subpackage giteafake is an in-memory fake of the recorded Forgejo for tests.
package gitea
