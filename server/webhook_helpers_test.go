package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/perfbot/perfbot/github/webhook"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
)

// webhookServer serves perfbot serve's HTTP side (the real webhook Handler
// with secret, a Dispatcher for repos) over the database at dsn, opened
// with serve's connection pool (DefaultPool), and returns the /webhook
// URL, the server (for /metrics) and the database.
func webhookServer(tb testing.TB, dsn string, secret []byte, repos map[string]Repo) (string, *httptest.Server, *store.DB) {
	tb.Helper()
	return webhookServerLogged(tb, dsn, secret, repos, nil)
}

// webhookServerLogged is webhookServer with the Dispatcher's log going to
// logger.
func webhookServerLogged(tb testing.TB, dsn string, secret []byte, repos map[string]Repo, logger *slog.Logger) (string, *httptest.Server, *store.DB) {
	tb.Helper()
	db, err := store.Open(context.Background(), dsn, store.Options{Pool: DefaultPool()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	q, err := queue.New(db, queue.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(New(Config{
		Webhook: &webhook.Handler{Secret: secret, Sink: &Dispatcher{Repos: repos, Queue: q, Logger: logger}},
		Metrics: NewMetrics(Counts{}, nil),
		Private: true, // /metrics beside the webhook, as dashboard.listen: same does
	}))
	tb.Cleanup(srv.Close)
	return srv.URL + "/webhook", srv, db
}

// proverRepo is the one repository most of these tests serve.
var proverRepo = map[string]Repo{"acme/prover": {Name: "acme/prover", Queue: "gpu"}}

// pullPayload is a pull_request payload as GitHub sends it: action on pull
// request pr of repoName, whose head is head (base: a fixed commit).
func pullPayload(repoName, action string, pr int, head string, draft bool) map[string]any {
	repo := map[string]any{"id": 1, "full_name": repoName, "clone_url": "https://github.com/" + repoName + ".git"}
	return map[string]any{
		"action": action, "number": pr,
		"pull_request": map[string]any{"number": pr, "draft": draft,
			"head": map[string]any{"ref": "f", "sha": head, "repo": repo},
			"base": map[string]any{"ref": "main", "sha": fmt.Sprintf("%040x", 0xba5e), "repo": repo}},
		"repository": repo, "sender": map[string]any{"login": "ada"},
	}
}

// signedDelivery is one webhook delivery as GitHub sends it: its event,
// delivery ID, body and HMAC signature (pr: the pull request it is about,
// for the test's own bookkeeping).
type signedDelivery struct {
	id    string
	event string // X-GitHub-Event; "" is pull_request
	pr    int
	body  []byte
	sig   string
}

// signed makes a delivery of event with payload, signed with secret.
func signed(secret []byte, event, id string, payload map[string]any) signedDelivery {
	body, _ := json.Marshal(payload)
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return signedDelivery{id: id, event: event, body: body, sig: "sha256=" + hex.EncodeToString(m.Sum(nil))}
}

// send posts d and returns the status and the answer's text.
func (d signedDelivery) send(url string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(d.body))
	if err != nil {
		return 0, "", err
	}
	event := d.event
	if event == "" {
		event = "pull_request"
	}
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", d.id)
	req.Header.Set("X-Hub-Signature-256", d.sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(bytes.TrimSpace(text)), nil
}
