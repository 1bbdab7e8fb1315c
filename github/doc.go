// Package github is perfbot's side of the GitHub REST API, a thin wrapper
// over go-github. In flow pull request numbers, rendered reports and check
// results; out flow pull request details (refs, SHAs, whether the head is
// a fork), perfbot's one comment per pull request, and check runs or
// commit statuses.
//
// A Client authenticates with a token or as a GitHub App installation
// (New). It keeps one comment per pull request, found by
// analysis.SummaryMarker and edited in place, with the reports it replaced
// folded into a collapsed history (UpsertComment); it reports a check
// run per commit and check name, updated in place, or a commit status
// where the Checks API is not available to it (SetCheck). Requests that
// GitHub could not serve are retried and rate limits are waited out
// within RetryPolicy.MaxWait; creations that must happen once are checked
// before they are retried. With Options.DryRun, writes are logged instead
// of sent.
//
// Package githubtest holds a fake GitHub API server for tests; the
// webhook receiver lives in package webhook.
package github
