package devenv

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ErrExited is WaitReady's error when the process it waits for ended first.
var ErrExited = errors.New("exited before it was ready")

// WaitReady polls url (an API's /readyz) until it answers 200, limit passes
// (an error), or exited, when not nil, is closed (ErrExited).
func WaitReady(url string, limit time.Duration, exited <-chan struct{}) error {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); {
		select {
		case <-exited:
			return ErrExited
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %v", url, limit)
}
