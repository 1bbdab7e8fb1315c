package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseCommand checks what ParseCommand promises for any comment: a
// command has at most one of Run, Bisect and Err; a run's count is 0 or
// within 2..1000; a bisection's revisions look like one git revision each
// (no leading '-', no "..", no blank or control character, at most 255
// bytes), so nothing it accepts can be read by git as an option or a range.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{
		"/perfbot run", "/perfbot run count=20", "/perfbot bisect v1.0 main phase=msm_h",
		"/perfbot bisect -x main", "/perfbot bisect a..b c", "> /perfbot run", "```\n/perfbot run\n```",
		"thanks!\n/perfbot run count=1", "/perfbot", "/perfbot frobnicate", "\t/perfbot run count=1001",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		cmd, ok := ParseCommand(body)
		if !ok {
			if cmd != nil {
				t.Fatalf("no command but %+v", cmd)
			}
			return
		}
		set := 0
		for _, b := range []bool{cmd.Run != nil, cmd.Bisect != nil, cmd.Err != nil} {
			if b {
				set++
			}
		}
		if set > 1 {
			t.Fatalf("%q: more than one of run, bisect, error: %+v", body, cmd)
		}
		if r := cmd.Run; r != nil && r.Count != 0 && (r.Count < 2 || r.Count > 1000) {
			t.Fatalf("%q: count %d outside 2..1000", body, r.Count)
		}
		if b := cmd.Bisect; b != nil {
			for _, rev := range []string{b.Good, b.Bad} {
				if rev == "" || strings.HasPrefix(rev, "-") || strings.Contains(rev, "..") || len(rev) > 255 ||
					!utf8.ValidString(rev) || strings.ContainsFunc(rev, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
					t.Fatalf("%q: revision %q accepted", body, rev)
				}
			}
		}
	})
}

// FuzzHandlerSignedBodies sends any body, JSON or form-encoded, correctly
// signed, as each event perfbot knows, through the Handler with a Sink
// that takes everything: it must answer, never panic, with one of the
// statuses its documentation lists, and hand the Sink only events it
// decoded with the delivery's ID.
func FuzzHandlerSignedBodies(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.json")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		event := strings.SplitN(filepath.Base(name), "_", 3)
		kind := event[0]
		if kind == "issue" || kind == "pull" {
			kind = event[0] + "_" + event[1]
		}
		f.Add(kind, b, false)
		f.Add(kind, b, true)
	}
	f.Add("pull_request", []byte(`{"action":"opened"}`), false)
	f.Add("push", []byte(`not json`), true)
	secret := []byte("fuzz-secret")
	f.Fuzz(func(t *testing.T, event string, payload []byte, form bool) {
		var sink recordingSink
		h := &Handler{Secret: secret, Sink: &sink}
		body, ctype := payload, "application/json"
		if form {
			body, ctype = []byte("payload="+url.QueryEscape(string(payload))), "application/x-www-form-urlencoded"
		}
		m := hmac.New(sha256.New, secret)
		m.Write(body)
		req := httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", "fuzz-1")
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusAccepted, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("event %q: status %d %q", event, rec.Code, rec.Body)
		}
		for _, e := range sink.got() {
			if e.DeliveryID() != "fuzz-1" {
				t.Fatalf("event %T with delivery %q", e, e.DeliveryID())
			}
		}
		if rec.Code != http.StatusAccepted && rec.Code != http.StatusOK && len(sink.got()) > 0 {
			t.Fatalf("status %d but the Sink got %d events", rec.Code, len(sink.got()))
		}
	})
}
