package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// Azure Event Grid's publisher credentials (docs/azure.md): an access key,
// or a shared access signature (SAS) signed with one.
const (
	headerSASKey   = "aeg-sas-key"
	headerSASToken = "aeg-sas-token"
	// schemeSAS is the Authorization scheme Event Grid also takes a SAS
	// token in: "Authorization: SharedAccessSignature r=…&e=…&s=…".
	schemeSAS = "SharedAccessSignature"
)

// sasKeyLabel is what a SAS key derivation signs besides the key's hash,
// so that the derived key is good for nothing else.
const sasKeyLabel = "hookrelay eventgrid sas key v1\n"

// sasKeyOf is the Event Grid SAS key of the API key whose stored hash
// (store.APIKeyHash) is keyHash: HMAC-SHA256 under the server's SAS secret,
// in base64, the form Azure's SDKs take an access key in (they decode it and
// sign with the bytes). The server recomputes it from the stored hash, so
// neither the API key nor the SAS key is kept anywhere; a database copy
// alone forges nothing.
func sasKeyOf(secret, keyHash string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(sasKeyLabel + keyHash))
	return m.Sum(nil)
}

// sasToken is a parsed "r=<resource>&e=<expiry>&s=<signature>".
type sasToken struct {
	// signed is the part the signature covers: "r=…&e=…", as sent.
	signed string
	sig    []byte
	// account is the account the resource names; scope its path from
	// "/eventgrid" on.
	account, scope string
	expires        time.Time
}

// sasExpiryLayouts are the forms Azure's SDKs write a SAS token's expiry
// in: RFC 3339 (the Go SDK's tests), .NET's and Java's en-US date and time
// (with .NET's offset, or without), and Python's str(datetime). One without
// a zone is UTC.
var sasExpiryLayouts = []string{time.RFC3339Nano, "1/2/2006 3:4:5 PM -07:00", "1/2/2006 3:4:5 PM",
	"2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999"}

// parseSASToken reads a SAS token; the error says what is wrong with it.
func parseSASToken(tok string) (sasToken, error) {
	signed, sigText, ok := strings.Cut(strings.TrimSpace(tok), "&s=")
	if !ok {
		return sasToken{}, errors.New("it has no signature (s=)")
	}
	q, err := url.ParseQuery(signed)
	if err != nil || len(q) != 2 || len(q["r"]) != 1 || len(q["e"]) != 1 || !strings.HasPrefix(signed, "r=") {
		return sasToken{}, errors.New("it must start r=<resource>&e=<expiry>")
	}
	t := sasToken{signed: signed}
	s, err := url.QueryUnescape(sigText)
	if err == nil {
		t.sig, err = base64.StdEncoding.DecodeString(s)
	}
	if err != nil || len(t.sig) != sha256.Size {
		return sasToken{}, errors.New("its signature (s=) is not a base64 HMAC-SHA256")
	}
	if t.expires, err = parseSASExpiry(q.Get("e")); err != nil {
		return sasToken{}, err
	}
	t.account, t.scope, err = sasResource(q.Get("r"))
	return t, err
}

// parseSASExpiry reads a SAS token's expiry (sasExpiryLayouts).
func parseSASExpiry(e string) (time.Time, error) {
	for _, layout := range sasExpiryLayouts {
		if at, err := time.Parse(layout, e); err == nil {
			return at, nil
		}
	}
	return time.Time{}, fmt.Errorf("its expiry (e=) %q is not a date and time", e)
}

// sasResource reads the account a SAS token's resource names, in its
// "account" query parameter, and the resource's path from "/eventgrid" on:
// "https://hooks.example.com/eventgrid/events?account=acct_1" is acct_1's
// publishing. SDKs append "?api-version=…" to the resource, sometimes after
// a "?" of its own, so a second "?" separates parameters too.
func sasResource(r string) (account, scope string, err error) {
	base, query, _ := strings.Cut(r, "?")
	params, _ := url.ParseQuery(strings.ReplaceAll(query, "?", "&"))
	account = params.Get("account")
	if account == "" {
		return "", "", errors.New("its resource (r=) names no account: sign one like https://<host>/eventgrid/events?account=<account id>")
	}
	u, err := url.Parse(base)
	path := ""
	if err == nil {
		path = strings.TrimSuffix(strings.ToLower(u.Path), "/")
	}
	i := strings.Index(path+"/", "/eventgrid/")
	if i < 0 {
		return "", "", errors.New("its resource (r=) is not under /eventgrid")
	}
	return account, path[i:], nil
}

// covers tells whether the token's resource covers the request path: its
// scope or anything under it ("/eventgrid" covers every Event Grid route).
func (t sasToken) covers(path string) bool {
	path = strings.TrimSuffix(strings.ToLower(path), "/")
	return path == t.scope || strings.HasPrefix(path, t.scope+"/")
}

// identifySASToken sets the account a SAS token was signed for, from the
// header field (aeg-sas-token or Authorization).
func (s *Server) identifySASToken(c echo.Context, field, tok string) error {
	if s.Auth.SASSecret == "" {
		return unauthorizedField(field, "SAS tokens are off on this server (HOOKRELAY_EVENTGRID_SAS_SECRET is not set): send aeg-sas-key: <API key> instead")
	}
	t, err := parseSASToken(tok)
	if err != nil {
		return unauthorizedField(field, "the SAS token must read r=<resource>&e=<expiry>&s=<signature>, URL-encoded: %s", err)
	}
	if time.Now().After(t.expires) {
		return unauthorizedField(field, "the SAS token expired at %s", t.expires.UTC().Format(time.RFC3339))
	}
	if !t.covers(c.Request().URL.Path) {
		return unauthorizedField(field, "the SAS token is for %s, not for %s", t.scope, c.Request().URL.Path)
	}
	ok, err := s.signedByAccount(c.Request().Context(), t)
	if err != nil {
		return err
	}
	if !ok {
		return unauthorizedField(field, "the SAS token's signature is not valid: no active API key of the account its resource names signed it")
	}
	c.Set(ctxAccount, t.account)
	return nil
}

// signedByAccount tells whether the SAS key of one of the account's active
// API keys signed t.
func (s *Server) signedByAccount(ctx context.Context, t sasToken) (bool, error) {
	hashes, err := s.Store.ActiveKeyHashes(ctx, t.account)
	if err != nil {
		return false, err
	}
	for _, h := range hashes {
		m := hmac.New(sha256.New, sasKeyOf(s.Auth.SASSecret, h))
		m.Write([]byte(t.signed))
		if hmac.Equal(m.Sum(nil), t.sig) {
			return true, nil
		}
	}
	return false, nil
}

// identifySASKey sets the account whose API key an aeg-sas-key header holds.
func (s *Server) identifySASKey(c echo.Context, key string) error {
	id, err := s.Store.AuthenticateKey(c.Request().Context(), key)
	if err != nil {
		return unauthorizedField(headerSASKey, "the aeg-sas-key is not a valid API key (or was revoked)")
	}
	c.Set(ctxAccount, id)
	return nil
}

// eventGridCredentials authenticates an Event Grid route's request that
// has no Authorization header by its aeg-sas-token or aeg-sas-key header;
// handled is false when it has neither.
func (s *Server) eventGridCredentials(c echo.Context) (handled bool, err error) {
	h := c.Request().Header
	if vs, sent := h[http.CanonicalHeaderKey(headerSASToken)]; sent {
		if len(vs) != 1 || strings.TrimSpace(vs[0]) == "" {
			return true, unauthorizedField(headerSASToken, "send one aeg-sas-token header holding the SAS token")
		}
		return true, s.identifySASToken(c, headerSASToken, vs[0])
	}
	if vs, sent := h[http.CanonicalHeaderKey(headerSASKey)]; sent {
		if len(vs) != 1 || strings.TrimSpace(vs[0]) == "" {
			return true, unauthorizedField(headerSASKey, "send one aeg-sas-key header holding one of the account's API keys")
		}
		return true, s.identifySASKey(c, strings.TrimSpace(vs[0]))
	}
	return false, nil
}

// eventGridRoute tells whether the route path is one of the Event Grid
// routes, which take Event Grid's credentials too (the validation URL takes
// none).
func eventGridRoute(path string) bool {
	return strings.HasPrefix(path, "/eventgrid/") && path != validatePath
}

// sasScheme reports whether the Authorization header h holds a SAS token
// ("SharedAccessSignature r=…"), and the token.
func sasScheme(h string) (token string, ok bool) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(h), " ")
	return strings.TrimSpace(token), strings.EqualFold(scheme, schemeSAS)
}

// checkTopicAccount refuses an Event Grid request whose URL names an
// account (?account=, as a SAS token's resource does) other than the one
// its credentials act as.
func checkTopicAccount(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if a := c.QueryParam("account"); a != "" && a != account(c) {
			return forbidden("this URL names account %s, but the credentials are account %s's", a, account(c))
		}
		return next(c)
	}
}
