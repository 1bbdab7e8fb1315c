package githubtest

import (
	"fmt"
	"net/http"
	"regexp"
	"time"
)

// A CommitComment is a comment on a commit (not on a line of it).
type CommitComment struct {
	ID                   int64
	SHA                  string
	Body                 string
	User                 string // the author's login
	HTMLURL              string
	CreatedAt, UpdatedAt time.Time
}

type commitKey struct {
	repoKey
	sha string
}

var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// CommitComments returns the comments on a commit, oldest first.
func (s *Server) CommitComments(owner, repo, sha string) []CommitComment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []CommitComment
	for _, c := range s.commitComments[commitKey{repoKey{owner, repo}, sha}] {
		out = append(out, *c)
	}
	return out
}

// AllCommitComments counts the comments on every commit of a repository.
func (s *Server) AllCommitComments(owner, repo string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, cs := range s.commitComments {
		if k.repoKey == (repoKey{owner, repo}) {
			n += len(cs)
		}
	}
	return n
}

// createCommitComment answers POST /repos/{owner}/{repo}/commits/{sha}/comments
// as GitHub does for a comment on the whole commit: 201 with the comment,
// 422 for a SHA that names no commit (the fake takes every full SHA).
func (s *Server) createCommitComment(w http.ResponseWriter, r *http.Request) {
	sha := r.PathValue("sha")
	var in struct {
		Body *string `json:"body"`
	}
	if !decode(w, r, &in) || !validBody(w, in.Body) {
		return
	}
	if !fullSHA.MatchString(sha) {
		writeError(w, http.StatusUnprocessableEntity, "No commit found for SHA: "+sha)
		return
	}
	k := commitKey{repoOf(r), sha}
	s.mu.Lock()
	if s.commitComments == nil {
		s.commitComments = map[commitKey][]*CommitComment{}
	}
	s.lastID++
	now := time.Now().UTC().Truncate(time.Second)
	c := &CommitComment{
		ID: s.lastID, SHA: sha, Body: *in.Body, User: callerOf(r).login,
		HTMLURL:   fmt.Sprintf("%s/%s/%s/commit/%s#commitcomment-%d", s.srv.URL, k.owner, k.repo, sha, s.lastID),
		CreatedAt: now, UpdatedAt: now,
	}
	s.commitComments[k] = append(s.commitComments[k], c)
	out := map[string]any{
		"id": c.ID, "body": c.Body, "commit_id": c.SHA, "html_url": c.HTMLURL,
		"path": nil, "position": nil, "line": nil, "user": userJSON(c.User),
		"created_at": timeJSON(c.CreatedAt), "updated_at": timeJSON(c.UpdatedAt),
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}
