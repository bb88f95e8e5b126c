package api

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/hookrelay/hookrelay/testenv"
)

// validID is the shape of a store id of kind prefix (store.NewID).
func validID(prefix string) string { return prefix + "_0123456789abcdef0123" }

// craftedTokens are page tokens built to hurt: NUL, invalid UTF-8, wrong
// separators, huge numbers, years past 9999, 10 KB (issue 27).
func craftedTokens(prefix string) map[string]string {
	return map[string]string{
		"NUL":              "a\x00b",
		"invalid UTF-8":    "\xff\xfe",
		"wrong separator":  "2026-01-01T00:00:00Z;" + validID(prefix),
		"two separators":   "2026-01-01T00:00:00Z|" + validID(prefix) + "|x",
		"huge number":      "99999999999999999999999999999999",
		"year past 9999":   "10000-01-01T00:00:00Z|" + validID(prefix),
		"10 KB":            strings.Repeat("A", 10<<10),
		"other kind of id": validID("acct"),
		"upper-case hex":   strings.ToUpper(validID(prefix)),
	}
}

// TestCraftedPageTokens: issue 27. Every paginated route decodes its page
// token as input like any other: a crafted token, raw (the /v1 lists'
// cursor) or base64url-encoded (SAP's nextPage, including a valid time
// with a NUL or invalid UTF-8 in the id part) is a 400 naming the
// parameter, never a 500; a well-formed token of an unknown row is a page.
func TestCraftedPageTokens(t *testing.T) {
	t.Parallel()
	h := newSAPHarness(t, testenvStore(t), testenvClient(t))
	auth := h.newAccount("tokens").Auth
	routes := []struct{ path, param, prefix string }{
		{"/v1/deliveries?cursor=", "cursor", "dlv"},
		{"/v1/dead-letters?cursor=", "cursor", "dl"},
		{"/v1/events?cursor=", "cursor", "evt"},
		{"/notifications/subscriptions/deliveries?where=" + url.QueryEscape("status='queued'") + "&nextPage=", "nextPage", "dlv"},
	}
	sap := func(raw string) string { return base64.RawURLEncoding.EncodeToString([]byte(raw)) }
	for _, r := range routes {
		tokens := craftedTokens(r.prefix)
		if r.param == "nextPage" {
			tokens["NUL in the id"] = sap("2026-01-01T00:00:00Z|a\x00b")
			tokens["invalid UTF-8 in the id"] = sap("2026-01-01T00:00:00Z|\xff\xfe")
			tokens["not base64"] = "!!!"
			for name, raw := range craftedTokens(r.prefix) {
				tokens["encoded "+name] = sap(raw)
			}
		}
		for name, token := range tokens {
			res := h.do(http.MethodGet, r.path+url.QueryEscape(token), auth, "")
			if res.code != http.StatusBadRequest || res.errorField(t) != r.param {
				t.Errorf("%s with %s: %d %s, want 400 naming %s", r.path, name, res.code, res.body, r.param)
			}
		}
		good := validID(r.prefix)
		if r.param == "nextPage" {
			good = sap("2026-01-01T00:00:00.5Z|" + good)
		}
		if res := h.do(http.MethodGet, r.path+url.QueryEscape(good), auth, ""); res.code != http.StatusOK {
			t.Errorf("%s with a well-formed token: %d %s, want 200", r.path, res.code, res.body)
		}
	}
}

// TestAuthorizationSaysWhatIsMissing: issue 27. An Authorization header
// that is empty, white space only or a scheme without its credentials is a
// 401 whose message says what is missing.
func TestAuthorizationSaysWhatIsMissing(t *testing.T) {
	t.Parallel()
	e := New(&Server{Store: testenvStore(t), Logger: testenv.Logger(), Auth: Auth{AdminKey: strings.Repeat("k", 32)}})
	cases := map[string]string{
		"":                         "the Authorization header is empty",
		"   ":                      "the Authorization header is empty",
		"Bearer":                   "the API key is missing after Bearer",
		"Bearer    ":               "the API key is missing after Bearer",
		"bearer\t":                 "the API key is missing after Bearer",
		"User":                     "the User part has no secret",
		"Organization o1":          "the User secret is missing",
		"User u1":                  "the Organization secret is missing",
		"User u1, Organization":    "the Organization part has no secret",
		"User u1, User u2":         "the User part is given twice",
		"Basic":                    `unknown authorization part "Basic"`,
		"Element e1":               "both User and Organization secrets are required",
		"Bearer not-a-key-at-all1": "the API key is not valid",
	}
	for h, want := range cases {
		req := httptest.NewRequest(http.MethodPost, "/accounts", strings.NewReader(`{"name": "a"}`))
		req.Header.Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
		req.Header[echo.HeaderAuthorization] = []string{h}
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		var got map[string]any
		_ = json.Unmarshal(rec.Body.Bytes(), &got)
		msg, _ := jpath(got, "error", "message").(string)
		if rec.Code != http.StatusUnauthorized || !strings.Contains(msg, want) {
			t.Errorf("Authorization %q: %d %q, want 401 saying %q", h, rec.Code, msg, want)
		}
	}
}
