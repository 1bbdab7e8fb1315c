package webhook

import (
	"strings"
	"time"
)

// An Event is what the Handler hands to the Sink: a *PullRequest, a
// *Command or a *Push. The interface is sealed; a type switch over those
// three is exhaustive.
type Event interface {
	// DeliveryID returns the X-GitHub-Delivery GUID the event came with.
	DeliveryID() string
	// RepoName returns the repository's full name, "owner/name".
	RepoName() string

	isEvent()
}

// A PullRequest is a pull_request delivery whose action asks for a
// benchmark (opened, synchronize, reopened or ready_for_review) or drops
// the ones queued (closed).
type PullRequest struct {
	Delivery string // X-GitHub-Delivery
	Repo     string // base repository, "owner/name"
	Action   string // opened, synchronize, reopened, ready_for_review or closed
	Number   int
	Draft    bool
	// Fork is true when the head branch lives in another repository than
	// the base (or that repository was deleted). Its code is untrusted.
	Fork     bool
	BaseRef  string // branch name, without refs/heads/
	BaseSHA  string
	HeadRef  string // branch name in the head repository
	HeadSHA  string
	CloneURL string // the base repository's; HeadSHA is fetchable from it as refs/pull/Number/head, fork or not
	Sender   string // login of whoever caused the event
	// UpdatedAt is the pull request's updated_at in the payload: GitHub's
	// clock, which orders one pull request's events however late or in
	// whatever order they are delivered (zero if the payload lacks it).
	UpdatedAt time.Time
}

// A Command is a /perfbot command in a new comment on a pull request.
// Exactly one of Run, Bisect and Err is set, or none of them for
// "/perfbot help" (and a bare "/perfbot"): then the answer is Usage.
type Command struct {
	Delivery string // X-GitHub-Delivery
	Repo     string // "owner/name"
	Number   int    // the pull request's number
	// CommentID identifies the comment, to react to it or quote it.
	CommentID int64
	Author    string // the comment author's login
	// Association is the comment author's author_association: OWNER,
	// MEMBER, COLLABORATOR, CONTRIBUTOR, FIRST_TIME_CONTRIBUTOR,
	// FIRST_TIMER, MANNEQUIN or NONE. The Sink decides who may run what.
	Association string
	Run         *RunCommand
	Bisect      *BisectCommand
	// Err is set when the comment holds a /perfbot command with bad
	// arguments; it says what was wrong, and the reply should add Usage.
	Err error
}

// A RunCommand asks for a benchmark of the pull request's head against its
// base: "/perfbot run [count=N]".
type RunCommand struct {
	Count int // runs a side, 2 to 1000; 0 means the configured default
}

// A BisectCommand asks for the first commit between Good and Bad that is
// slower: "/perfbot bisect GOOD BAD [phase=P]". Good and Bad are git
// revisions as the user wrote them, checked only for shape (see
// ParseCommand); the Sink resolves them.
type BisectCommand struct {
	Good, Bad string
	Phase     string // "" means the benchmark's total
}

// A Push is a push delivery: a branch or tag created, moved or deleted.
type Push struct {
	Delivery      string // X-GitHub-Delivery
	Repo          string // "owner/name"
	Ref           string // full ref, "refs/heads/main" or "refs/tags/v1.2.0"
	Before        string // SHA before the push; all zeros for a new ref
	After         string // SHA after the push; all zeros for a deleted ref
	DefaultBranch string // the repository's default branch name, "main"
	CloneURL      string
	Sender        string // login of the pusher
}

// DeliveryID returns the X-GitHub-Delivery GUID.
func (p *PullRequest) DeliveryID() string { return p.Delivery }

// RepoName returns the base repository's full name.
func (p *PullRequest) RepoName() string { return p.Repo }

func (*PullRequest) isEvent() {}

// DeliveryID returns the X-GitHub-Delivery GUID.
func (c *Command) DeliveryID() string { return c.Delivery }

// RepoName returns the repository's full name.
func (c *Command) RepoName() string { return c.Repo }

func (*Command) isEvent() {}

// DeliveryID returns the X-GitHub-Delivery GUID.
func (p *Push) DeliveryID() string { return p.Delivery }

// RepoName returns the repository's full name.
func (p *Push) RepoName() string { return p.Repo }

func (*Push) isEvent() {}

// ToDefaultBranch reports whether the push moved or created the
// repository's default branch; a deletion is not one.
func (p *Push) ToDefaultBranch() bool {
	return p.DefaultBranch != "" &&
		p.Ref == "refs/heads/"+p.DefaultBranch &&
		!isZeroSHA(p.After)
}

// isZeroSHA reports whether sha is GitHub's "no commit" value: all zeros
// (40 of them for SHA-1 repositories, 64 for SHA-256), or empty.
func isZeroSHA(sha string) bool {
	return strings.Trim(sha, "0") == ""
}
