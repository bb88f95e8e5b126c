package console

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Tokens are "<base64url JSON claims>.<base64url HMAC-SHA256>", signed with
// the key the store keeps (store.ConsoleKey), under a purpose that is part
// of what is signed: a portal link is no session cookie, nor the reverse.
const (
	purposeSession = "console-session" // the operator's session cookie
	purposePortal  = "portal-session"  // the portal's session cookie
	purposeLink    = "portal-link"     // the token of a portal link
	purposeCSRF    = "csrf"
	purposeAdmin   = "admin-key"
)

// maxToken bounds a token read from a cookie or a link.
const maxToken = 4096

// Session kinds.
const (
	kindAnon   = "anon"   // not logged in: only the login form's CSRF token
	kindOpen   = "open"   // open mode: the default account, admin too
	kindKey    = "key"    // logged in with an account's API key
	kindAdmin  = "admin"  // logged in with the admin key
	kindPortal = "portal" // a portal, scoped to an account and perhaps less
)

// claims are what a token says.
type claims struct {
	Kind    string `json:"k"`
	Account string `json:"a,omitempty"`
	// KeyID is the API key logged in with, checked live at each request.
	KeyID string `json:"kid,omitempty"`
	// AdminKey is the admin key's fingerprint (adminPrint), so that a new
	// admin key ends the sessions of the old one.
	AdminKey string `json:"adm,omitempty"`
	// Endpoints and Types are a portal's scope (empty: the whole account).
	Endpoints []string `json:"ep,omitempty"`
	Types     []string `json:"et,omitempty"`
	// Nonce makes every session's CSRF token its own.
	Nonce   string `json:"n"`
	Expires int64  `json:"x"`
}

// errToken is any token that is not one of ours, not for this purpose, or
// expired.
var errToken = errors.New("console: invalid or expired token")

// signingKey returns the store's console key, loading it once.
func (h *Console) signingKey(ctx context.Context) ([]byte, error) {
	h.keyMu.Lock()
	defer h.keyMu.Unlock()
	if h.key == nil {
		k, err := h.opts.Store.ConsoleKey(ctx)
		if err != nil {
			return nil, err
		}
		h.key = k
	}
	return h.key, nil
}

// mac is the HMAC-SHA256 of purpose and data under key.
func mac(key []byte, purpose, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(purpose + "\x00" + data))
	return m.Sum(nil)
}

// sign makes a token of cl for purpose.
func (h *Console) sign(ctx context.Context, purpose string, cl claims) (string, error) {
	key, err := h.signingKey(ctx)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(cl)
	if err != nil {
		return "", err
	}
	body := base64.RawURLEncoding.EncodeToString(b)
	return body + "." + base64.RawURLEncoding.EncodeToString(mac(key, purpose, body)), nil
}

// strict decodes base64url only in its one canonical form: a token whose
// last character differs in unused bits is another token.
var strict = base64.RawURLEncoding.Strict()

// verify checks a token for purpose whole: its form, its signature, its
// claims (strictly decoded) and its expiry.
func (h *Console) verify(ctx context.Context, purpose, token string) (claims, error) {
	var cl claims
	body, sig, ok := strings.Cut(token, ".")
	if !ok || len(token) > maxToken || strings.Contains(sig, ".") {
		return cl, errToken
	}
	key, err := h.signingKey(ctx)
	if err != nil {
		return cl, err
	}
	got, err := strict.DecodeString(sig)
	if err != nil || !hmac.Equal(got, mac(key, purpose, body)) {
		return cl, errToken
	}
	raw, err := strict.DecodeString(body)
	if err != nil {
		return cl, errToken
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cl); err != nil || cl.Kind == "" || cl.Nonce == "" {
		return claims{}, errToken
	}
	if time.Now().Unix() >= cl.Expires {
		return claims{}, errToken
	}
	return cl, nil
}

// csrfToken is the CSRF token of the session whose nonce this is.
func (h *Console) csrfToken(ctx context.Context, nonce string) (string, error) {
	key, err := h.signingKey(ctx)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(mac(key, purposeCSRF, nonce)), nil
}

// adminPrint is the admin key's fingerprint a session keeps ("" without
// an admin key).
func (h *Console) adminPrint(ctx context.Context) (string, error) {
	if h.opts.AdminKey == "" {
		return "", nil
	}
	key, err := h.signingKey(ctx)
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(mac(key, purposeAdmin, h.opts.AdminKey)[:12]), nil
}

// newNonce is a fresh random nonce.
func newNonce() string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		panic("console: crypto/rand: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
