package githubtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// do sends a request to s with the default token (unless header says
// otherwise) and returns the status, the decoded JSON body and the
// response headers.
func do(t *testing.T, s *Server, method, path, body string, header ...string) (int, any, http.Header) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL()+apiPrefix+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+DefaultToken)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("%s %s: body is not JSON: %v", method, path, err)
	}
	return resp.StatusCode, v, resp.Header
}

func message(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["message"].(string)
	return s
}

func TestRepoRequestsNeedAToken(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.AddPullRequest(PR{Owner: "o", Repo: "r", Number: 1})
	for _, auth := range []string{"", "Bearer nope", "Basic xyz"} {
		code, v, _ := do(t, s, "GET", "/repos/o/r/pulls/1", "", "Authorization", auth)
		if code != 401 || message(v) != "Bad credentials" {
			t.Errorf("authorization %q: %d %v, want 401 Bad credentials", auth, code, v)
		}
	}
	s.SetToken("ghp_new")
	if code, _, _ := do(t, s, "GET", "/repos/o/r/pulls/1", "", "Authorization", "token ghp_new"); code != 200 {
		t.Errorf("the new token as 'token': %d, want 200", code)
	}
	if code, _, _ := do(t, s, "GET", "/repos/o/r/pulls/1", ""); code != 401 {
		t.Errorf("the replaced default token: %d, want 401", code)
	}
}

func TestPullRequestShape(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.AddPullRequest(PR{Owner: "o", Repo: "r", Number: 3, Title: "T", HeadRef: "f", HeadSHA: "abc", Fork: true, Author: "eve"})
	code, v, h := do(t, s, "GET", "/repos/o/r/pulls/3", "")
	if code != 200 || h.Get("X-RateLimit-Remaining") == "" {
		t.Fatalf("%d, rate headers %v", code, h)
	}
	pr := v.(map[string]any)
	head := pr["head"].(map[string]any)
	repo := head["repo"].(map[string]any)
	if pr["number"] != 3.0 || pr["state"] != "open" || head["sha"] != "abc" || repo["full_name"] != "eve/r" || repo["fork"] != true ||
		pr["base"].(map[string]any)["ref"] != "main" || pr["user"].(map[string]any)["login"] != "eve" {
		t.Errorf("pull request JSON %v", pr)
	}
	code, v, _ = do(t, s, "GET", "/repos/o/r/pulls/4", "")
	if code != 404 || message(v) != "Not Found" || v.(map[string]any)["documentation_url"] == nil {
		t.Errorf("missing PR: %d %v", code, v)
	}
}

func TestCommentsPaginateWithLinkHeaders(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.AddPullRequest(PR{Owner: "o", Repo: "r", Number: 1})
	for i := range 5 {
		s.AddComment("o", "r", 1, "u", fmt.Sprint(i))
	}
	code, v, h := do(t, s, "GET", "/repos/o/r/issues/1/comments?per_page=2&page=2", "")
	page := v.([]any)
	if code != 200 || len(page) != 2 || page[0].(map[string]any)["body"] != "2" {
		t.Fatalf("page 2: %d %v", code, v)
	}
	base := s.URL() + "/api/v3/repos/o/r/issues/1/comments"
	want := fmt.Sprintf(`<%s?page=3&per_page=2>; rel="next", <%[1]s?page=3&per_page=2>; rel="last", <%[1]s?page=1&per_page=2>; rel="first", <%[1]s?page=1&per_page=2>; rel="prev"`, base)
	if got := h.Get("Link"); got != want {
		t.Errorf("Link:\n got %s\nwant %s", got, want)
	}
	_, v, h = do(t, s, "GET", "/repos/o/r/issues/1/comments?per_page=2&page=3", "")
	if len(v.([]any)) != 1 || strings.Contains(h.Get("Link"), `rel="next"`) {
		t.Errorf("last page: %v, Link %q", v, h.Get("Link"))
	}
	_, v, _ = do(t, s, "GET", "/repos/o/r/issues/1/comments", "")
	if len(v.([]any)) != 5 {
		t.Errorf("default page: %d comments, want 5", len(v.([]any)))
	}
}

func TestCommentValidationAndEdits(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.AddPullRequest(PR{Owner: "o", Repo: "r", Number: 1})
	code, v, _ := do(t, s, "POST", "/repos/o/r/issues/1/comments", `{"body":"hi"}`)
	c := v.(map[string]any)
	if code != 201 || c["body"] != "hi" || c["user"].(map[string]any)["login"] != TokenUser || c["created_at"] == nil {
		t.Fatalf("create: %d %v", code, v)
	}
	id := int64(c["id"].(float64))
	for _, body := range []string{`{"body":""}`, `{}`, fmt.Sprintf(`{"body":%q}`, strings.Repeat("é", 65537))} {
		code, v, _ := do(t, s, "POST", "/repos/o/r/issues/1/comments", body)
		errs, _ := v.(map[string]any)["errors"].([]any)
		if code != 422 || message(v) != "Validation Failed" || len(errs) != 1 {
			t.Errorf("create %.30s: %d %v, want 422 Validation Failed", body, code, v)
		}
	}
	if code, _, _ := do(t, s, "POST", "/repos/o/r/issues/1/comments", fmt.Sprintf(`{"body":%q}`, strings.Repeat("é", 65536))); code != 201 {
		t.Errorf("a body of exactly 65,536 characters: %d, want 201", code)
	}
	if code, _, _ := do(t, s, "PATCH", fmt.Sprintf("/repos/o/r/issues/comments/%d", id), `{"body":"edited"}`); code != 200 {
		t.Errorf("edit: %d", code)
	}
	if got := s.Comments("o", "r", 1); got[0].Body != "edited" {
		t.Errorf("after the edit: %+v", got[0])
	}
	if code, _, _ := do(t, s, "PATCH", "/repos/o/r/issues/comments/999", `{"body":"x"}`); code != 404 {
		t.Errorf("edit of an unknown comment: %d, want 404", code)
	}
	if code, _, _ := do(t, s, "PATCH", fmt.Sprintf("/repos/o/other/issues/comments/%d", id), `{"body":"x"}`); code != 404 {
		t.Errorf("edit through another repository: %d, want 404", code)
	}
	if code, _, _ := do(t, s, "POST", "/repos/o/r/issues/2/comments", `{"body":"x"}`); code != 404 {
		t.Errorf("comment on a missing PR: %d, want 404", code)
	}
}

// jwtFor signs an App JWT as GitHub Apps do.
func jwtFor(t *testing.T, key *rsa.PrivateKey, appID int64, iat, exp time.Time) string {
	t.Helper()
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	signed := enc(map[string]string{"alg": "RS256", "typ": "JWT"}) + "." +
		enc(map[string]any{"iss": fmt.Sprint(appID), "iat": iat.Unix(), "exp": exp.Unix()})
	digest := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig)
}

func TestInstallationTokensAndTheChecksAPI(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	s := New(t)
	s.SetAppKey(9, &key.PublicKey)
	now := time.Now()
	const path = "/app/installations/5/access_tokens"
	for name, jwt := range map[string]string{
		"other key":   jwtFor(t, other, 9, now, now.Add(time.Minute)),
		"unknown app": jwtFor(t, key, 8, now, now.Add(time.Minute)),
		"expired":     jwtFor(t, key, 9, now.Add(-time.Hour), now.Add(-time.Minute)),
		"too long":    jwtFor(t, key, 9, now, now.Add(time.Hour)),
		"garbage":     "a.b.c",
	} {
		if code, v, _ := do(t, s, "POST", path, "", "Authorization", "Bearer "+jwt); code != 401 {
			t.Errorf("%s: %d %v, want 401", name, code, v)
		}
	}
	code, v, _ := do(t, s, "POST", path, "", "Authorization", "Bearer "+jwtFor(t, key, 9, now.Add(-30*time.Second), now.Add(90*time.Second)))
	tok, _ := v.(map[string]any)["token"].(string)
	if code != 201 || tok == "" || v.(map[string]any)["expires_at"] == nil {
		t.Fatalf("token: %d %v", code, v)
	}

	sha := strings.Repeat("a", 40)
	run := `{"name":"perfbot","head_sha":"` + sha + `","status":"in_progress"}`
	if code, v, _ := do(t, s, "POST", "/repos/o/r/check-runs", run); code != 403 || message(v) != "Resource not accessible by personal access token" {
		t.Errorf("check run with the plain token: %d %v, want 403", code, v)
	}
	code, v, _ = do(t, s, "POST", "/repos/o/r/check-runs", run, "Authorization", "token "+tok)
	if code != 201 || v.(map[string]any)["status"] != "in_progress" || v.(map[string]any)["conclusion"] != nil {
		t.Fatalf("check run: %d %v", code, v)
	}
	id := int64(v.(map[string]any)["id"].(float64))
	for _, bad := range []string{`{"status":"done"}`, `{"status":"completed"}`, `{"conclusion":"great"}`, `{"output":{"title":"t"}}`} {
		if code, v, _ := do(t, s, "PATCH", fmt.Sprintf("/repos/o/r/check-runs/%d", id), bad, "Authorization", "token "+tok); code != 422 || message(v) != "Validation Failed" {
			t.Errorf("update %s: %d %v, want 422", bad, code, v)
		}
	}
	code, _, _ = do(t, s, "PATCH", fmt.Sprintf("/repos/o/r/check-runs/%d", id), `{"conclusion":"success"}`, "Authorization", "token "+tok)
	runs := s.CheckRuns("o", "r", sha)
	if code != 200 || len(runs) != 1 || runs[0].Status != "completed" || runs[0].Conclusion != "success" || runs[0].AppID != 9 {
		t.Errorf("a conclusion completes the run: %d %+v", code, runs)
	}
	_, v, _ = do(t, s, "GET", "/repos/o/r/commits/"+sha+"/check-runs?check_name=perfbot&app_id=9", "", "Authorization", "token "+tok)
	if v.(map[string]any)["total_count"] != 1.0 {
		t.Errorf("list: %v", v)
	}
	_, v, _ = do(t, s, "GET", "/repos/o/r/commits/"+sha+"/check-runs?check_name=other", "", "Authorization", "token "+tok)
	if v.(map[string]any)["total_count"] != 0.0 {
		t.Errorf("list by another name: %v", v)
	}
}

func TestStatuses(t *testing.T) {
	t.Parallel()
	s := New(t)
	sha := strings.Repeat("b", 40)
	code, v, _ := do(t, s, "POST", "/repos/o/r/statuses/"+sha, `{"state":"pending","context":"perfbot","description":"running"}`)
	if code != 201 || v.(map[string]any)["state"] != "pending" {
		t.Fatalf("status: %d %v", code, v)
	}
	for _, bad := range []string{`{"state":"running"}`, `{}`, fmt.Sprintf(`{"state":"success","description":%q}`, strings.Repeat("x", 141))} {
		if code, v, _ := do(t, s, "POST", "/repos/o/r/statuses/"+sha, bad); code != 422 {
			t.Errorf("status %.40s: %d %v, want 422", bad, code, v)
		}
	}
	if st := s.Statuses("o", "r", sha); len(st) != 1 || st[0].Context != "perfbot" || st[0].Description != "running" {
		t.Errorf("statuses %+v", st)
	}
}

func TestFaultsAndRecording(t *testing.T) {
	t.Parallel()
	s := New(t)
	s.AddPullRequest(PR{Owner: "o", Repo: "r", Number: 1})
	s.Fail("GET", "/repos/o/r/pulls", 2, Fault{Status: 502})
	s.Fail("", "/repos/o/r/issues", 1, Fault{Status: 403, Header: http.Header{"Retry-After": {"3"}}, Body: `{"message":"slow down"}`})
	var codes []int
	for range 3 {
		code, _, _ := do(t, s, "GET", "/repos/o/r/pulls/1", "")
		codes = append(codes, code)
	}
	if fmt.Sprint(codes) != "[502 502 200]" {
		t.Errorf("codes %v, want two faults then success", codes)
	}
	code, v, h := do(t, s, "POST", "/repos/o/r/issues/1/comments", `{"body":"x"}`)
	if code != 403 || message(v) != "slow down" || h.Get("Retry-After") != "3" || len(s.Comments("o", "r", 1)) != 0 {
		t.Errorf("fault: %d %v %v", code, v, h)
	}
	s.Fail("POST", "/repos/o/r/issues/1/comments", 1, Fault{Status: 502, AfterServing: true})
	if code, _, _ := do(t, s, "POST", "/repos/o/r/issues/1/comments", `{"body":"y"}`); code != 502 || len(s.Comments("o", "r", 1)) != 1 {
		t.Errorf("a lost answer: %d and %d comments, want 502 and the comment kept", code, len(s.Comments("o", "r", 1)))
	}
	reqs := s.Requests()
	if len(reqs) != 5 || reqs[3].Path != "/repos/o/r/issues/1/comments" || string(reqs[3].Body) != `{"body":"x"}` ||
		reqs[0].Header.Get("Authorization") != "Bearer "+DefaultToken {
		t.Errorf("requests %+v", reqs)
	}
	if code, v, _ := do(t, s, "GET", "/repos/o/r/nothing", ""); code != 404 || message(v) != "Not Found" {
		t.Errorf("unknown path: %d %v", code, v)
	}
}
