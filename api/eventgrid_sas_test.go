package api

import (
	"testing"
	"time"
)

// TestSASTokenForms: the SAS tokens Azure's SDKs write parse the same way:
// the expiry in each SDK's format (RFC 3339 from the Go SDK's tests, en-US
// date and time from .NET, with its offset or without, and from Java,
// Python's str(datetime)), encoded as each encodes it (lowercase or
// uppercase hex, "+" or "%20" for spaces), and the resource with the
// api-version each appends, after "&" or after a second "?".
func TestSASTokenForms(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)
	const sig = "&s=" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA%3d"
	cases := []struct{ name, token, account, scope string }{
		{"Go", "r=https%3A%2F%2Fh%2Feventgrid%2Fevents%3Faccount%3Dacct_1&e=2030-01-02T15%3A04%3A05Z", "acct_1", "/eventgrid/events"},
		{".NET DateTimeOffset", "r=https%3a%2f%2fh%2feventgrid%2fevents%3faccount%3dacct_1%26api-version%3d2018-01-01&e=1%2f2%2f2030+3%3a04%3a05+PM+%2b00%3a00", "acct_1", "/eventgrid/events"},
		{".NET DateTime", "r=https%3a%2f%2fh%2fEventGrid%2fevents%3faccount%3dacct_1&e=1%2f2%2f2030+3%3a04%3a05+PM", "acct_1", "/eventgrid/events"},
		{"Java", "r=https%3A%2F%2Fh%2Fproxy%2Feventgrid%2F%3Faccount%3Dacct_1%3Fapi-version%3D2018-01-01&e=1%2F2%2F2030+3%3A4%3A5+PM", "acct_1", "/eventgrid"},
		{"Python", "r=https%3A//h/eventgrid/events%3Faccount%3Dacct_1%3FapiVersion%3D2018-01-01&e=2030-01-02%2015%3A04%3A05%2B00%3A00", "acct_1", "/eventgrid/events"},
	}
	for _, c := range cases {
		tok, err := parseSASToken(c.token + sig)
		if err != nil || !tok.expires.Equal(at) || tok.account != c.account || tok.scope != c.scope || tok.signed != c.token || len(tok.sig) != 32 {
			t.Errorf("%s: %+v, %v", c.name, tok, err)
		}
	}
	covers := map[string]bool{"/eventgrid/events": true, "/eventgrid/events/": true, "/eventgrid/eventsx": false,
		"/eventgrid/subscriptions/a": false, "/EventGrid/Events": true}
	tok, _ := parseSASToken(cases[0].token + sig)
	for path, want := range covers {
		if tok.covers(path) != want {
			t.Errorf("a token for /eventgrid/events covers %s: %v", path, !want)
		}
	}
	for _, bad := range []string{"", "r=a&e=b", "e=2030-01-02T15%3A04%3A05Z&r=x" + sig, "r=x&r=y&e=2030-01-02T15%3A04%3A05Z" + sig,
		"r=https%3A%2F%2Fh%2Fother%3Faccount%3Da&e=2030-01-02T15%3A04%3A05Z" + sig} {
		if tok, err := parseSASToken(bad); err == nil {
			t.Errorf("%q parsed: %+v", bad, tok)
		}
	}
}
