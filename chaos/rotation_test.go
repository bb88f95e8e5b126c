package chaos

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookrelay/hookrelay/policies"
	"github.com/hookrelay/hookrelay/secrets"
	"github.com/hookrelay/hookrelay/testenv"
)

// verifier is a receiver that checks every request's signature: Svix's
// library for the HMAC subscription (path /hmac), crypto/ed25519 for the
// Ed25519 one (/ed). It answers 200 either way and remembers which event
// ids verified on each path, and what did not.
type verifier struct {
	mu       sync.Mutex
	hmac     *svix.Webhook
	pub      ed25519.PublicKey
	verified map[string]bool // path + " " + webhook-id
	bad      []string
}

func (v *verifier) ServeHTTP(_ http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id := r.Header.Get("Webhook-Id")
	ok := false
	switch r.URL.Path {
	case "/hmac":
		ok = v.hmac.Verify(body, r.Header) == nil
	case "/ed":
		sig, _ := strings.CutPrefix(r.Header.Get("Webhook-Signature"), "v1a,")
		raw, err := base64.StdEncoding.DecodeString(strings.Fields(sig + " ")[0])
		content := id + "." + r.Header.Get("Webhook-Timestamp") + "." + string(body)
		ok = err == nil && ed25519.Verify(v.pub, []byte(content), raw)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if ok {
		v.verified[r.URL.Path+" "+id] = true
	} else {
		v.bad = append(v.bad, r.URL.Path+" "+id)
	}
}

// TestRotateUnderLoad: while events are published at 50/s to an HMAC and an
// Ed25519 subscription, the API and the worker restart with a new key
// first in their ring and `hookrelay secrets rotate` re-encrypts every
// secret under it. Nothing is lost, every delivery verifies, `secrets
// status` shows every secret under the new key; the old key is then
// removed, the processes restart, and deliveries still go out and verify.
func TestRotateUnderLoad(t *testing.T) {
	s := startStack(t)
	v := &verifier{verified: map[string]bool{}}
	rcv := httptest.NewServer(v)
	t.Cleanup(rcv.Close)
	subs := s.verifiedSubscriptions(v, rcv.URL)
	oldID, newKey := keyID(t, s.keys), mustNewKey(t)
	var rotate sync.WaitGroup
	keys := s.publishAt(50, 250, func(i int) {
		switch i {
		case 50:
			s.keys = newKey + "," + s.keys
			s.restart()
		case 120: // while publishing goes on
			rotate.Go(func() {
				if out := s.hookrelayCmd("secrets", "rotate"); !strings.Contains(out, "re-encrypted 2 secrets") {
					t.Errorf("secrets rotate said:\n%s", out)
				}
			})
		}
	})
	rotate.Wait()
	s.checkDelivered(v, subs, keys)
	status := s.hookrelayCmd("secrets", "status")
	for _, line := range strings.Split(status, "\n") {
		if strings.HasPrefix(line, "subscriptions.") && strings.Contains(line, oldID) {
			t.Errorf("after the rotation, secrets under the old key: %s", line)
		}
	}
	if !strings.Contains(status, "all 2 secrets are under "+keyID(t, newKey)) {
		t.Fatalf("secrets status after the rotation:\n%s", status)
	}
	s.keys = newKey
	s.restart()
	s.checkDelivered(v, subs, s.publishAt(50, 20, func(int) {}))
}

// verifiedSubscriptions subscribes v's two paths at url to "rotate" and
// gives v their keys.
func (s *stack) verifiedSubscriptions(v *verifier, url string) []string {
	var ids []string
	for _, scheme := range []string{"hmac-sha256", "ed25519"} {
		path := map[string]string{"hmac-sha256": "/hmac", "ed25519": "/ed"}[scheme]
		code, b, err := testenv.Post(s.api+"/v1/subscriptions", "", fmt.Sprintf(`{"url": %q, "event_types": ["rotate"],
			"signature_scheme": %q, "policy": "custom", "retry_policy": {"custom": {"kind": "fixed", "interval_seconds": 1}, "max_attempts": 30}}`,
			url+path, scheme))
		var sub struct {
			ID               string `json:"id"`
			SigningSecret    string `json:"signing_secret"`
			SigningPublicKey string `json:"signing_public_key"`
		}
		if err != nil || code != http.StatusCreated || json.Unmarshal(b, &sub) != nil {
			s.t.Fatalf("subscribe: %d %s %v", code, b, err)
		}
		ids = append(ids, sub.ID)
		s.setKey(v, sub.SigningSecret, sub.SigningPublicKey)
	}
	return ids
}

// setKey gives v the HMAC secret or the Ed25519 public key.
func (s *stack) setKey(v *verifier, secret, public string) {
	var err error
	if secret != "" {
		v.hmac, err = svix.NewWebhook(secret)
	} else {
		v.pub, err = base64.StdEncoding.DecodeString(strings.TrimPrefix(public, "whpk_"))
	}
	if err != nil {
		s.t.Fatal(err)
	}
}

// publishAt publishes n events of type "rotate" at rate per second,
// calling at(i) before the i-th, and returns the keys of those accepted.
func (s *stack) publishAt(rate float64, n int, at func(i int)) []string {
	var keys []string
	begin := time.Now()
	for i := range n {
		time.Sleep(time.Until(begin.Add(time.Duration(float64(i) / rate * float64(time.Second)))))
		at(i)
		key := fmt.Sprintf("rotate-%d-%d", begin.UnixNano(), i)
		if s.publish(key, "rotate") {
			keys = append(keys, key)
		}
	}
	return keys
}

// checkDelivered waits for every delivery of subs to end, then checks that
// every event of keys was delivered to both and verified on both paths,
// and that no request failed to verify.
func (s *stack) checkDelivered(v *verifier, subs, keys []string) {
	for i, sub := range subs {
		r := result{Tally: Tally{Published: len(keys)}}
		r.Stuck = Settle(s.st.DB(), sub, 3*time.Minute)
		if err := Reconcile(s.st.DB(), sub, keys, &r.Tally); err != nil {
			s.t.Fatal(err)
		}
		// Statuses are those of every delivery of the subscription so far.
		if r.Lost != 0 || r.Stuck != 0 || len(r.Statuses) != 1 || r.Statuses[policies.StatusDelivered] < len(keys) {
			s.t.Fatalf("subscription %d: %d published, %d lost, %d stuck, statuses %v, reasons %v",
				i, len(keys), r.Lost, r.Stuck, r.Statuses, r.Reasons)
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.bad) > 0 {
		s.t.Fatalf("%d requests did not verify, first %s", len(v.bad), v.bad[0])
	}
	for _, k := range keys {
		if !v.verified["/hmac "+k] || !v.verified["/ed "+k] {
			s.t.Fatalf("event %s was not received verified on both paths", k)
		}
	}
}

// restart stops the API and the worker (SIGTERM) and starts them again,
// with the stack's keys.
func (s *stack) restart() {
	terminate(s.worker)
	terminate(s.apiProc)
	s.startAPI()
	s.startWorker()
}

// terminate asks a hookrelay process to stop and waits for it to go.
func terminate(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	for syscall.Kill(cmd.Process.Pid, 0) == nil {
		time.Sleep(20 * time.Millisecond)
	}
}

// hookrelayCmd runs the hookrelay binary with args in the stack's
// environment and returns its output, failing the test if it fails.
func (s *stack) hookrelayCmd(args ...string) string {
	cmd := exec.Command(s.bin, args...)
	cmd.Env = s.env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("hookrelay %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func keyID(t *testing.T, keys string) string {
	r, err := secrets.ParseRing(keys)
	if err != nil {
		t.Fatal(err)
	}
	return r.Primary()
}

func mustNewKey(t *testing.T) string {
	k, err := secrets.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
