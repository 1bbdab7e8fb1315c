// Package webhook receives GitHub webhook deliveries for perfbot serve.
//
// In flows an HTTP request from GitHub: Handler checks its size, its
// X-Hub-Signature-256 HMAC and its headers, drops deliveries it has already
// seen (Deliveries), and decodes the three events perfbot acts on. Out flows
// one Event, handed to a Sink (which queues a job) and a short plain-text
// answer to GitHub:
//
//   - *PullRequest: a pull request opened, reopened, synchronized (new
//     commits) or marked ready for review;
//   - *Command: a comment on a pull request that holds a /perfbot command
//     (see ParseCommand and Usage);
//   - *Push: any push; the Sink decides what a push to the default branch
//     means (Push.ToDefaultBranch).
//
// Everything else is answered "ignored". The package decides nothing about
// who may run commands or which pull requests to benchmark: Command carries
// the author's association and PullRequest says whether it comes from a
// fork and is a draft, and the Sink applies the policy.
package webhook
