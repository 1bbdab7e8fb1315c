package webhook

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	gh "github.com/google/go-github/v60/github"
)

// DefaultMaxBody is the body limit when Handler.MaxBody is 0. GitHub caps
// payloads at 25 MB; the events perfbot reads are a few kilobytes, and a
// push of many commits stays well under 5 MiB.
const DefaultMaxBody = 5 << 20

// forgetTimeout bounds Deliveries.Forget after a Sink failure; it runs even
// when GitHub has hung up.
const forgetTimeout = 5 * time.Second

// Outcomes passed to Handler.Observe.
const (
	OutcomeAccepted     = "accepted"      // handed to the Sink
	OutcomeIgnored      = "ignored"       // not for perfbot (also ping)
	OutcomeDuplicate    = "duplicate"     // delivery already handed to the Sink
	OutcomeBadSignature = "bad_signature" // X-Hub-Signature-256 missing or wrong
	OutcomeBadRequest   = "bad_request"   // not POST, headers missing, payload malformed
	OutcomeTooLarge     = "too_large"     // body over MaxBody
	OutcomeError        = "error"         // misconfigured Handler, Deliveries or Sink failed
)

// A Sink takes the events the Handler accepts, typically by inserting a
// job into a queue. GitHub expects an answer within 10 seconds and perfbot
// aims at 100 ms; that budget is the Sink's, so Handle must not do slow
// work itself. A non-nil error makes the Handler answer 500, and GitHub can
// redeliver the event. Handle is called from many goroutines at once.
type Sink interface {
	Handle(ctx context.Context, e Event) error
}

// A OnceSink is a Sink that records the delivery ID itself, in the same
// transaction as the work it queues, so that a failure leaves neither
// and GitHub's redelivery is handled as new. When the Handler's Sink is
// one, the Handler calls HandleOnce and leaves Deliveries unused.
type OnceSink interface {
	Sink
	// HandleOnce handles e unless its delivery ID was handled before.
	// An error means nothing was recorded or queued.
	HandleOnce(ctx context.Context, e Event) (Handled, error)
}

// Handled says what a OnceSink did with an event that it did not fail on.
type Handled struct {
	// Duplicate: the delivery ID was handled before; nothing was done.
	Duplicate bool
	// Ignored, when set, says why the event queues nothing (an
	// unconfigured repository, a draft): nothing was recorded, and the
	// Handler answers "ignored: " and the reason.
	Ignored string
}

// Deliveries remembers which X-GitHub-Delivery IDs were handed to the
// Sink, so that an event GitHub delivers twice (a redelivery from the
// webhook settings, or a retry) is queued once.
//
// It de-duplicates GitHub's deliveries; it is no defence against an
// attacker who replays a captured request, since the delivery header is
// not covered by the signature and can be changed.
type Deliveries interface {
	// FirstSeen records id and reports whether it was new. Of two
	// concurrent calls with the same id, exactly one returns true.
	FirstSeen(ctx context.Context, id string) (bool, error)
	// Forget removes id, so that a later delivery with it reaches the Sink
	// again. The Handler calls it when the Sink fails. Forget can fail
	// too (the database that just failed the Sink is often still gone),
	// and then GitHub's redelivery is dropped as a duplicate: a Sink that
	// can record the ID with its own work should be a OnceSink instead.
	Forget(ctx context.Context, id string) error
}

// A Handler is the http.Handler for GitHub webhook deliveries. Set Secret
// and Sink; the other fields are optional. A Handler must not be changed
// once it serves.
//
// It answers, in this order: 405 to anything but POST; 500 when Secret or
// Sink is unset; 413 to a body over MaxBody; 401 when X-Hub-Signature-256
// is missing or is not the HMAC-SHA256 of the body with Secret; 400 when
// X-GitHub-Event or X-GitHub-Delivery is missing; 200 "pong" to ping; 202
// "ignored: ..." to events and actions perfbot does not act on; 400 to a
// malformed payload; 200 "duplicate delivery" when Deliveries (or a
// OnceSink) has seen the delivery; then it calls the Sink and answers 202 "accepted", or 500 if
// the Sink failed. Every answer is one line of plain text.
//
// Only deliveries that would reach the Sink are recorded in Deliveries,
// so ignored events (most comments) cost no write.
type Handler struct {
	// Secret is the webhook secret set in GitHub. Empty refuses every
	// delivery (and logs why).
	Secret []byte
	// Sink takes accepted events. Required.
	Sink Sink
	// Deliveries, if not nil, drops deliveries already handed to the Sink.
	// Unused when Sink is a OnceSink.
	Deliveries Deliveries
	// MaxBody is the largest body read, in bytes; 0 means DefaultMaxBody.
	MaxBody int64
	// Logger logs one line per delivery with keys delivery, event, repo,
	// pr, outcome and status; nil discards.
	Logger *slog.Logger
	// Observe, if not nil, is called once per request with the event
	// (pull_request, issue_comment, push, ping; "other" for any other
	// event, "" when the header is missing) and one of the Outcome
	// constants, for metrics. It must be fast and safe for concurrent use.
	Observe func(event, outcome string)
}

// A result is the Handler's answer to one request, logged and observed in
// one place.
type result struct {
	status  int
	text    string
	outcome string
	event   Event // set when a payload was decoded into one
	err     error // logged, never sent to GitHub
}

// ServeHTTP handles one webhook delivery.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res := h.serve(w, r)
	h.log(r, res)
	if h.Observe != nil {
		h.Observe(eventLabel(r.Header.Get(gh.EventTypeHeader)), res.outcome)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(res.status)
	io.WriteString(w, oneLine(res.text)+"\n")
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) result {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return result{status: http.StatusMethodNotAllowed, text: "method not allowed: GitHub webhooks are POST", outcome: OutcomeBadRequest}
	}
	switch {
	case len(h.Secret) == 0:
		return result{status: http.StatusInternalServerError, text: "webhook secret not configured", outcome: OutcomeError,
			err: errors.New("webhook secret is empty: refusing every delivery; set the webhook secret")}
	case h.Sink == nil:
		return result{status: http.StatusInternalServerError, text: "webhook sink not configured", outcome: OutcomeError,
			err: errors.New("webhook handler has no sink: refusing every delivery")}
	}

	limit := h.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return result{status: http.StatusRequestEntityTooLarge, text: fmt.Sprintf("payload too large: over %d bytes", limit), outcome: OutcomeTooLarge}
		}
		return result{status: http.StatusBadRequest, text: "could not read the body", outcome: OutcomeBadRequest, err: fmt.Errorf("read body: %w", err)}
	}

	sig := r.Header.Get(gh.SHA256SignatureHeader)
	if sig == "" {
		return result{status: http.StatusUnauthorized, text: "missing X-Hub-Signature-256 header", outcome: OutcomeBadSignature}
	}
	if !validSignature(sig, body, h.Secret) {
		return result{status: http.StatusUnauthorized, text: "X-Hub-Signature-256 does not match the payload: check the webhook secret", outcome: OutcomeBadSignature}
	}

	name := r.Header.Get(gh.EventTypeHeader)
	if name == "" {
		return result{status: http.StatusBadRequest, text: "missing X-GitHub-Event header", outcome: OutcomeBadRequest}
	}
	delivery := r.Header.Get(gh.DeliveryIDHeader)
	if delivery == "" {
		return result{status: http.StatusBadRequest, text: "missing X-GitHub-Delivery header", outcome: OutcomeBadRequest}
	}

	var decode func(delivery string, payload []byte) (Event, string, error)
	switch name {
	case "ping":
		return result{status: http.StatusOK, text: "pong", outcome: OutcomeIgnored}
	case "pull_request":
		decode = decodePullRequest
	case "issue_comment":
		decode = decodeIssueComment
	case "push":
		decode = decodePush
	default:
		return ignored("event " + name)
	}
	payload, err := formPayload(r.Header.Get("Content-Type"), body)
	if err != nil {
		return result{status: http.StatusBadRequest, text: err.Error(), outcome: OutcomeBadRequest}
	}
	ev, reason, err := decode(delivery, payload)
	switch {
	case err != nil:
		return result{status: http.StatusBadRequest, text: err.Error(), outcome: OutcomeBadRequest}
	case ev == nil:
		return ignored(reason)
	}
	return h.deliver(r.Context(), ev)
}

// deliver hands ev to the Sink once per delivery ID: a OnceSink keeps
// the ID itself; any other Sink is guarded by Deliveries, if set.
func (h *Handler) deliver(ctx context.Context, ev Event) result {
	if s, ok := h.Sink.(OnceSink); ok {
		done, err := s.HandleOnce(ctx, ev)
		switch {
		case err != nil:
			return notQueued(ev, fmt.Errorf("sink: %w", err))
		case done.Duplicate:
			return duplicate(ev)
		case done.Ignored != "":
			res := ignored(done.Ignored)
			res.event = ev
			return res
		}
		return accepted(ev)
	}
	id := ev.DeliveryID()
	if h.Deliveries != nil {
		first, err := h.Deliveries.FirstSeen(ctx, id)
		if err != nil {
			return result{status: http.StatusInternalServerError, text: "internal error: event not queued", outcome: OutcomeError, event: ev,
				err: fmt.Errorf("record delivery: %w", err)}
		}
		if !first {
			return duplicate(ev)
		}
	}
	if err := h.Sink.Handle(ctx, ev); err != nil {
		err = fmt.Errorf("sink: %w", err)
		if h.Deliveries != nil {
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), forgetTimeout)
			if ferr := h.Deliveries.Forget(fctx, id); ferr != nil {
				err = errors.Join(err, fmt.Errorf("forget delivery (a redelivery will be dropped as a duplicate): %w", ferr))
			}
			cancel()
		}
		return notQueued(ev, err)
	}
	return accepted(ev)
}

func accepted(ev Event) result {
	return result{status: http.StatusAccepted, text: "accepted", outcome: OutcomeAccepted, event: ev}
}

func duplicate(ev Event) result {
	return result{status: http.StatusOK, text: "duplicate delivery", outcome: OutcomeDuplicate, event: ev}
}

// notQueued is the answer when the Sink failed: nothing was kept.
func notQueued(ev Event, err error) result {
	return result{status: http.StatusInternalServerError, text: "internal error: event not queued; redeliver it", outcome: OutcomeError, event: ev, err: err}
}

func ignored(reason string) result {
	return result{status: http.StatusAccepted, text: "ignored: " + reason, outcome: OutcomeIgnored}
}

// validSignature reports whether sig is "sha256=" and the hex HMAC-SHA256
// of body keyed with secret. The comparison takes constant time.
func validSignature(sig string, body, secret []byte) bool {
	hexMAC, ok := strings.CutPrefix(sig, "sha256=")
	if !ok {
		return false
	}
	got, err := hex.DecodeString(hexMAC)
	if err != nil || len(got) != sha256.Size {
		return false
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

// formPayload returns the JSON payload of a body: the body itself, or its
// "payload" field when the webhook is set to send
// application/x-www-form-urlencoded. The signature covers the whole body
// either way.
func formPayload(contentType string, body []byte) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return body, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, fmt.Errorf("malformed form body: %v", err)
	}
	if !form.Has("payload") {
		return nil, errors.New("form body has no payload field")
	}
	return []byte(form.Get("payload")), nil
}

func (h *Handler) log(r *http.Request, res result) {
	if h.Logger == nil {
		return
	}
	level := slog.LevelInfo
	switch res.outcome {
	case OutcomeIgnored:
		level = slog.LevelDebug
	case OutcomeBadSignature, OutcomeBadRequest, OutcomeTooLarge:
		level = slog.LevelWarn
	case OutcomeError:
		level = slog.LevelError
	}
	attrs := []slog.Attr{
		slog.String("delivery", r.Header.Get(gh.DeliveryIDHeader)),
		slog.String("event", r.Header.Get(gh.EventTypeHeader)),
	}
	if res.event != nil {
		attrs = append(attrs, slog.String("repo", res.event.RepoName()))
		switch e := res.event.(type) {
		case *PullRequest:
			attrs = append(attrs, slog.Int("pr", e.Number))
		case *Command:
			attrs = append(attrs, slog.Int("pr", e.Number))
		}
	}
	attrs = append(attrs, slog.String("outcome", res.outcome), slog.Int("status", res.status))
	msg := "webhook: " + oneLine(res.text)
	if res.err != nil {
		attrs = append(attrs, slog.Any("error", res.err))
	}
	h.Logger.LogAttrs(r.Context(), level, msg, attrs...)
}

// eventLabel bounds the event names passed to Observe: the header is
// chosen by the sender.
func eventLabel(name string) string {
	switch name {
	case "", "ping", "pull_request", "issue_comment", "push":
		return name
	}
	return "other"
}

// oneLine keeps an answer on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
