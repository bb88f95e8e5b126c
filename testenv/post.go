package testenv

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Post POSTs a JSON body to url (with an Idempotency-Key when key is set) as
// a careful client does: it tries again, with the same key, while the
// server cannot be reached or answers 5xx (a 503 while a dependency
// restarts), for up to a minute. It returns the last answer's status and
// body, or an error when none came.
func Post(url, key, body string) (int, []byte, error) {
	var last error
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			last = err
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 500 {
			return resp.StatusCode, b, nil
		}
		last = fmt.Errorf("%s", resp.Status)
	}
	return 0, nil, fmt.Errorf("POST %s: not accepted within a minute: %w", url, last)
}
