package store

import "testing"

// TestWithSettings: a setting is added to a URL as a query parameter,
// keeping the ones it has, and to key=value pairs as one more pair.
func TestWithSettings(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://u@127.0.0.1:5432/db?sslmode=disable", "postgres://u@127.0.0.1:5432/db?sslmode=disable&synchronous_commit=off"},
		{"postgresql://127.0.0.1/db", "postgresql://127.0.0.1/db?synchronous_commit=off"},
		{"host=127.0.0.1 dbname=db sslmode=disable ", "host=127.0.0.1 dbname=db sslmode=disable synchronous_commit=off"},
	} {
		if got := withSettings(c.in, "synchronous_commit", "off"); got != c.want {
			t.Errorf("withSettings(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
