package githubtest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxBody is GitHub's limit on a comment body, in characters.
const maxBody = 65536

// maxOutput is GitHub's limit on a check run's summary and text.
const maxOutput = 65535

var (
	checkStatuses    = []string{"queued", "in_progress", "completed"}
	checkConclusions = []string{"action_required", "cancelled", "failure", "neutral", "success", "skipped", "timed_out"}
	statusStates     = []string{"error", "failure", "pending", "success"}
)

func (s *Server) routes() {
	const repo = apiPrefix + "/repos/{owner}/{repo}"
	s.mux.HandleFunc("GET "+repo+"/pulls/{number}", s.getPull)
	s.mux.HandleFunc("GET "+repo+"/issues/{number}/comments", s.listComments)
	s.mux.HandleFunc("POST "+repo+"/issues/{number}/comments", s.createComment)
	s.mux.HandleFunc("PATCH "+repo+"/issues/comments/{id}", s.editComment)
	s.mux.HandleFunc("POST "+repo+"/check-runs", s.createCheckRun)
	s.mux.HandleFunc("PATCH "+repo+"/check-runs/{id}", s.updateCheckRun)
	s.mux.HandleFunc("GET "+repo+"/commits/{ref}/check-runs", s.listCheckRuns)
	s.mux.HandleFunc("POST "+repo+"/statuses/{sha}", s.createStatus)
	s.mux.HandleFunc("POST "+repo+"/commits/{sha}/comments", s.createCommitComment)
	s.mux.HandleFunc("POST "+apiPrefix+"/app/installations/{id}/access_tokens", s.accessToken)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "Not Found")
	})
}

type callerKey struct{}

func withCaller(ctx context.Context, c caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerOf(r *http.Request) caller {
	c, _ := r.Context().Value(callerKey{}).(caller)
	return c
}

func repoOf(r *http.Request) repoKey {
	return repoKey{r.PathValue("owner"), r.PathValue("repo")}
}

// issueOf returns the pull request a request names, answering 404 when
// there is none.
func (s *Server) issueOf(w http.ResponseWriter, r *http.Request) (issueKey, bool) {
	n, err := strconv.Atoi(r.PathValue("number"))
	k := issueKey{repoOf(r), n}
	if err == nil {
		s.mu.Lock()
		_, ok := s.pulls[k]
		s.mu.Unlock()
		if ok {
			return k, true
		}
	}
	writeError(w, http.StatusNotFound, "Not Found")
	return k, false
}

// decode reads a JSON request body into v, answering 400 as GitHub does
// when it is not JSON.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "Problems parsing JSON")
		return false
	}
	return true
}

func timeJSON(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func userJSON(login string) map[string]any {
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return map[string]any{"login": login, "type": typ}
}

func (s *Server) repoJSON(owner, name string, fork bool, cloneURL string) map[string]any {
	return map[string]any{
		"name":      name,
		"full_name": owner + "/" + name,
		"owner":     userJSON(owner),
		"fork":      fork,
		"clone_url": cloneURL,
		"html_url":  fmt.Sprintf("%s/%s/%s", s.srv.URL, owner, name),
	}
}

func (s *Server) getPull(w http.ResponseWriter, r *http.Request) {
	k, ok := s.issueOf(w, r)
	if !ok {
		return
	}
	s.mu.Lock()
	pr := *s.pulls[k]
	s.mu.Unlock()

	base := s.repoJSON(pr.Owner, pr.Repo, false, pr.CloneURL)
	var head any
	headOwner := pr.Owner
	if pr.Fork {
		headOwner = pr.Author
	}
	if !pr.HeadRepoDeleted {
		head = s.repoJSON(headOwner, pr.Repo, pr.Fork, fmt.Sprintf("%s/%s/%s.git", s.srv.URL, headOwner, pr.Repo))
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"url":      fmt.Sprintf("%s%s/repos/%s/%s/pulls/%d", s.srv.URL, apiPrefix, pr.Owner, pr.Repo, pr.Number),
		"html_url": fmt.Sprintf("%s/%s/%s/pull/%d", s.srv.URL, pr.Owner, pr.Repo, pr.Number),
		"number":   pr.Number,
		"state":    pr.State,
		"title":    pr.Title,
		"draft":    pr.Draft,
		"merged":   pr.Merged,
		"user":     userJSON(pr.Author),
		"base": map[string]any{
			"label": pr.Owner + ":" + pr.BaseRef, "ref": pr.BaseRef, "sha": pr.BaseSHA,
			"repo": base, "user": userJSON(pr.Owner),
		},
		"head": map[string]any{
			"label": headOwner + ":" + pr.HeadRef, "ref": pr.HeadRef, "sha": pr.HeadSHA,
			"repo": head, "user": userJSON(headOwner),
		},
	})
}

func commentJSON(c *IssueComment) map[string]any {
	return map[string]any{
		"id":         c.ID,
		"html_url":   c.HTMLURL,
		"body":       c.Body,
		"user":       userJSON(c.User),
		"created_at": timeJSON(c.CreatedAt),
		"updated_at": timeJSON(c.UpdatedAt),
	}
}

// intParam reads a positive integer query parameter, def when absent.
func intParam(q url.Values, name string, def int) int {
	if n, err := strconv.Atoi(q.Get(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func (s *Server) listComments(w http.ResponseWriter, r *http.Request) {
	k, ok := s.issueOf(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	perPage := min(intParam(q, "per_page", 30), 100)
	page := intParam(q, "page", 1)

	s.mu.Lock()
	all := s.comments[k]
	from := min((page-1)*perPage, len(all))
	var out []map[string]any
	for _, c := range all[from:min(from+perPage, len(all))] {
		out = append(out, commentJSON(c))
	}
	total := len(all)
	s.mu.Unlock()

	last := max((total+perPage-1)/perPage, 1)
	link := func(p int, rel string) string {
		v := url.Values{}
		for key, vals := range q {
			v[key] = vals
		}
		v.Set("per_page", strconv.Itoa(perPage))
		v.Set("page", strconv.Itoa(p))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, s.srv.URL, r.URL.Path, v.Encode(), rel)
	}
	var links []string
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(min(page-1, last), "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	if out == nil {
		out = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, out)
}

// validBody answers 422 unless body is a valid comment body.
func validBody(w http.ResponseWriter, body *string) bool {
	switch {
	case body == nil || strings.TrimSpace(*body) == "":
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed",
			fieldError{Resource: "IssueComment", Field: "body", Code: "missing_field"})
		return false
	case utf8.RuneCountInString(*body) > maxBody:
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed",
			fieldError{Resource: "IssueComment", Field: "body", Code: "custom",
				Message: fmt.Sprintf("body is too long (maximum is %d characters)", maxBody)})
		return false
	}
	return true
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request) {
	k, ok := s.issueOf(w, r)
	if !ok {
		return
	}
	var in struct {
		Body *string `json:"body"`
	}
	if !decode(w, r, &in) || !validBody(w, in.Body) {
		return
	}
	s.mu.Lock()
	c := s.addComment(k, callerOf(r).login, *in.Body)
	out := commentJSON(c)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) editComment(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var in struct {
		Body *string `json:"body"`
	}
	if !decode(w, r, &in) {
		return
	}
	s.mu.Lock()
	var found *IssueComment
	rk := repoOf(r)
	for k, cs := range s.comments {
		if k.repoKey != rk {
			continue
		}
		for _, c := range cs {
			if c.ID == id {
				found = c
			}
		}
	}
	s.mu.Unlock()
	if found == nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	if !validBody(w, in.Body) {
		return
	}
	s.mu.Lock()
	found.Body = *in.Body
	found.UpdatedAt = time.Now().UTC().Truncate(time.Second)
	out := commentJSON(found)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// checkRunInput is the body of a create or update of a check run.
type checkRunInput struct {
	Name        *string `json:"name"`
	HeadSHA     *string `json:"head_sha"`
	Status      *string `json:"status"`
	Conclusion  *string `json:"conclusion"`
	DetailsURL  *string `json:"details_url"`
	StartedAt   *string `json:"started_at"`
	CompletedAt *string `json:"completed_at"`
	Output      *struct {
		Title   *string `json:"title"`
		Summary *string `json:"summary"`
		Text    *string `json:"text"`
	} `json:"output"`
}

// validate answers 422 and returns false when in is not a valid check
// run; create says whether name and head_sha are required.
func (in *checkRunInput) validate(w http.ResponseWriter, create bool) bool {
	fail := func(field, code, msg string) bool {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed",
			fieldError{Resource: "CheckRun", Field: field, Code: code, Message: msg})
		return false
	}
	switch {
	case create && (in.Name == nil || *in.Name == ""):
		return fail("name", "missing_field", "")
	case create && (in.HeadSHA == nil || *in.HeadSHA == ""):
		return fail("head_sha", "missing_field", "")
	case in.Status != nil && !slices.Contains(checkStatuses, *in.Status):
		return fail("status", "invalid", fmt.Sprintf("status %q is not included in the list", *in.Status))
	case in.Conclusion != nil && !slices.Contains(checkConclusions, *in.Conclusion):
		return fail("conclusion", "invalid", fmt.Sprintf("conclusion %q is not included in the list", *in.Conclusion))
	case in.Status != nil && *in.Status == "completed" && in.Conclusion == nil:
		return fail("conclusion", "missing_field", "conclusion is required when status is completed")
	case in.Output != nil && (in.Output.Title == nil || in.Output.Summary == nil):
		return fail("output", "missing_field", "output needs a title and a summary")
	case in.Output != nil && (utf8.RuneCountInString(*in.Output.Summary) > maxOutput ||
		in.Output.Text != nil && utf8.RuneCountInString(*in.Output.Text) > maxOutput):
		return fail("output", "custom", fmt.Sprintf("output summary and text are limited to %d characters", maxOutput))
	}
	return true
}

// apply writes in's fields into c, as GitHub does: a conclusion completes
// the run, and a status other than completed clears the conclusion.
func (in *checkRunInput) apply(c *CheckRun, now time.Time) {
	if in.Name != nil {
		c.Name = *in.Name
	}
	if in.DetailsURL != nil {
		c.DetailsURL = *in.DetailsURL
	}
	if in.Status != nil {
		c.Status = *in.Status
		if c.Status != "completed" {
			c.Conclusion, c.CompletedAt = "", time.Time{}
		}
	}
	if in.Conclusion != nil {
		c.Status, c.Conclusion, c.CompletedAt = "completed", *in.Conclusion, now
	}
	if in.Output != nil {
		c.Title, c.Summary = *in.Output.Title, *in.Output.Summary
		if in.Output.Text != nil {
			c.Text = *in.Output.Text
		}
	}
}

func (s *Server) checkRunJSON(rk repoKey, c *CheckRun) map[string]any {
	var conclusion any
	if c.Conclusion != "" {
		conclusion = c.Conclusion
	}
	return map[string]any{
		"id":           c.ID,
		"name":         c.Name,
		"head_sha":     c.HeadSHA,
		"status":       c.Status,
		"conclusion":   conclusion,
		"details_url":  c.DetailsURL,
		"html_url":     fmt.Sprintf("%s/%s/%s/runs/%d", s.srv.URL, rk.owner, rk.repo, c.ID),
		"started_at":   timeJSON(c.StartedAt),
		"completed_at": timeJSON(c.CompletedAt),
		"output": map[string]any{
			"title": c.Title, "summary": c.Summary, "text": c.Text, "annotations_count": 0,
		},
		"app": map[string]any{"id": c.AppID, "slug": "perfbot"},
	}
}

// appOnly answers 403 as GitHub does when the Checks API is called
// without an App installation token.
func appOnly(w http.ResponseWriter, r *http.Request) bool {
	if callerOf(r).appID == 0 {
		writeError(w, http.StatusForbidden, "Resource not accessible by personal access token")
		return false
	}
	return true
}

func (s *Server) createCheckRun(w http.ResponseWriter, r *http.Request) {
	if !appOnly(w, r) {
		return
	}
	var in checkRunInput
	if !decode(w, r, &in) || !in.validate(w, true) {
		return
	}
	now := time.Now().UTC().Truncate(time.Second)
	rk := repoOf(r)
	s.mu.Lock()
	s.lastID++
	c := &CheckRun{ID: s.lastID, HeadSHA: *in.HeadSHA, Status: "queued", AppID: callerOf(r).appID, StartedAt: now}
	in.apply(c, now)
	s.checkRuns[rk] = append(s.checkRuns[rk], c)
	out := s.checkRunJSON(rk, c)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) updateCheckRun(w http.ResponseWriter, r *http.Request) {
	if !appOnly(w, r) {
		return
	}
	var in checkRunInput
	if !decode(w, r, &in) {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	rk := repoOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.checkRuns[rk], func(c *CheckRun) bool { return c.ID == id })
	if i < 0 {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	c := s.checkRuns[rk][i]
	if c.AppID != callerOf(r).appID {
		writeError(w, http.StatusForbidden, "Invalid app_id: the check run belongs to another App")
		return
	}
	if !in.validate(w, false) {
		return
	}
	in.apply(c, time.Now().UTC().Truncate(time.Second))
	c.Updates++
	writeJSON(w, http.StatusOK, s.checkRunJSON(rk, c))
}

func (s *Server) listCheckRuns(w http.ResponseWriter, r *http.Request) {
	if !appOnly(w, r) {
		return
	}
	q := r.URL.Query()
	rk, ref := repoOf(r), r.PathValue("ref")
	perPage := min(intParam(q, "per_page", 30), 100)
	page := intParam(q, "page", 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	var match []map[string]any
	runs := s.checkRuns[rk]
	for i := len(runs) - 1; i >= 0; i-- { // newest first
		c := runs[i]
		if c.HeadSHA != ref ||
			q.Has("check_name") && q.Get("check_name") != c.Name ||
			q.Has("status") && q.Get("status") != c.Status ||
			q.Has("app_id") && q.Get("app_id") != strconv.FormatInt(c.AppID, 10) {
			continue
		}
		match = append(match, s.checkRunJSON(rk, c))
	}
	from := min((page-1)*perPage, len(match))
	pageRuns := match[from:min(from+perPage, len(match))]
	if pageRuns == nil {
		pageRuns = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"total_count": len(match), "check_runs": pageRuns})
}

func (s *Server) createStatus(w http.ResponseWriter, r *http.Request) {
	var in struct {
		State       *string `json:"state"`
		TargetURL   *string `json:"target_url"`
		Description *string `json:"description"`
		Context     *string `json:"context"`
	}
	if !decode(w, r, &in) {
		return
	}
	fail := func(field, code, msg string) {
		writeError(w, http.StatusUnprocessableEntity, "Validation Failed",
			fieldError{Resource: "Status", Field: field, Code: code, Message: msg})
	}
	switch {
	case in.State == nil:
		fail("state", "missing_field", "")
		return
	case !slices.Contains(statusStates, *in.State):
		fail("state", "invalid", fmt.Sprintf("state %q is not included in the list", *in.State))
		return
	case in.Description != nil && utf8.RuneCountInString(*in.Description) > 140:
		fail("description", "custom", "description is too long (maximum is 140 characters)")
		return
	}
	st := &Status{SHA: r.PathValue("sha"), State: *in.State, Context: "default",
		Creator: callerOf(r).login, CreatedAt: time.Now().UTC().Truncate(time.Second)}
	if in.Context != nil {
		st.Context = *in.Context
	}
	if in.Description != nil {
		st.Description = *in.Description
	}
	if in.TargetURL != nil {
		st.TargetURL = *in.TargetURL
	}
	rk := repoOf(r)
	s.mu.Lock()
	s.lastID++
	st.ID = s.lastID
	s.statuses[rk] = append(s.statuses[rk], st)
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"id": st.ID, "state": st.State, "description": st.Description, "target_url": st.TargetURL,
		"context": st.Context, "creator": userJSON(st.Creator),
		"created_at": timeJSON(st.CreatedAt), "updated_at": timeJSON(st.CreatedAt),
	})
}

func (s *Server) accessToken(w http.ResponseWriter, r *http.Request) {
	installation, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	jwt, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		writeError(w, http.StatusUnauthorized, "A JSON web token could not be decoded")
		return
	}
	appID, problem := verifyJWT(jwt, s.appKey, time.Now())
	if problem != "" {
		writeError(w, http.StatusUnauthorized, problem)
		return
	}
	s.mu.Lock()
	s.tokenCount++
	token := fmt.Sprintf("ghs_githubtest_%d_%d", installation, s.tokenCount)
	s.installs[token] = appID
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"token":                token,
		"expires_at":           timeJSON(time.Now().Add(time.Hour)),
		"permissions":          map[string]string{"checks": "write", "pull_requests": "write", "statuses": "write", "issues": "write"},
		"repository_selection": "all",
	})
}
